/* jsonout.h - the compact JSON text of a jansson tree, written fast.
 *
 * The bytes are those of json_dumpb(v, JSON_COMPACT): insertion order of
 * object keys, "," and ":" without spaces, the same escapes (\" \\ \b \f \n
 * \r \t, \u00XX for the other control characters, nothing else escaped),
 * integers in decimal and reals as jansson prints them. jansson writes each
 * string a code point at a time through a callback, which made serialising
 * the largest single cost of a store write (build/bench_jsonout compares
 * the two; docs/benchmarks.md). This scans strings for the few bytes that
 * need an escape and copies the runs between them.
 *
 * Strings are taken as jansson holds them (it validated them as UTF-8 when
 * they were made); a string holding a NUL byte is written with \u0000, as
 * jansson does. */
#ifndef TY_BASE_JSONOUT_H
#define TY_BASE_JSONOUT_H

#include <jansson.h>

#include "base/buf.h"

/* Appends v's compact text to b (NUL-terminated as ty_buf always is).
 * 0, or -1 when memory ran out or v is not a JSON value (b is then left
 * with what was appended so far). */
int ty_json_append(ty_buf *b, const json_t *v);

/* ty_json_append that also says where mark (a node of v, found by its
 * address; the first place it is written when v holds it twice) begins in
 * b: *mark_at is the offset of its first byte. -1 as above, or when mark is
 * not in v (*mark_at then untouched). A writer serialises an object with a
 * placeholder for a value known only later (the store's resourceVersion)
 * and splices the value in at that offset. */
int ty_json_append_mark(ty_buf *b, const json_t *v, const json_t *mark, size_t *mark_at);

/* ty_json_append_mark where the text of known (a node of v, found by its
 * address, or NULL) is known already: known_text[0..known_len) is copied
 * wherever v holds it instead of writing it again. The caller vouches that
 * it is that node's compact text (the store's status writes share the spec
 * of the version before, whose text holds it) and that mark is not under
 * known. */
int ty_json_append_known(ty_buf *b, const json_t *v, const json_t *mark, size_t *mark_at,
                         const json_t *known, const char *known_text, size_t known_len);

/* Appends the JSON string literal of s[0..n) (quotes and escapes as above)
 * to b, for text built without a tree. -1 (b as it was) when s is not
 * well-formed UTF-8 (jansson would refuse it too) or memory ran out. */
int ty_json_append_str(ty_buf *b, const char *s, size_t n);

#endif
