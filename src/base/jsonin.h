/* jsonin.h - jansson trees from JSON text, read fast.
 *
 * jansson's parser reads its input a byte at a time through a stream
 * callback, copies every string into a growing buffer a byte at a time and
 * then again into the value: parsing a stored pod (2.6 KB) took as long as
 * building its tree, and the store parses every object a write or a view
 * finds without its tree (an ended pod, a job's next pass), so at scale the
 * parse was a large share of the server's CPU. This reads the text in
 * place: a string is scanned for its closing quote and copied once, a key
 * goes straight into its object.
 *
 * The tree is what json_loadb(text, len, JSON_DECODE_ANY, NULL) gives:
 * same values, key order and types. Where jansson would fail, and for what
 * this leaves to it (a real number, \u0000, an integer out of range, input
 * that is not UTF-8), it returns NULL and the caller parses with jansson
 * (ty_json_load does), which then says why. */
#ifndef TY_BASE_JSONIN_H
#define TY_BASE_JSONIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The value in text[0..len) (whitespace around it allowed), or NULL: not
 * JSON, or something left to jansson (above). */
json_t *ty_json_parse(const char *text, size_t len);

/* ty_json_parse, else json_loadb(text, len, flags, err): the tree jansson
 * gives, and its error when it gives none. flags are json_loadb's
 * (JSON_DECODE_ANY: a scalar is accepted; without it, only an object or an
 * array; JSON_REJECT_DUPLICATES: an object that repeats a key is jansson's
 * to refuse, with its error; any other flag: jansson parses). */
json_t *ty_json_load(const char *text, size_t len, size_t flags, json_error_t *err);

/* Whether s[0..n) is well-formed UTF-8 (no overlong forms, surrogates or
 * code points past U+10FFFF), as jansson requires of its strings. */
bool ty_utf8_valid(const unsigned char *s, size_t n);

/* Nesting that ty_json_check_loadable allows: well inside what this
 * parser and jansson's read back (2048). */
#define TY_JSON_LOADABLE_DEPTH 1024

/* Whether v's JSON text could be read back by this parser or jansson: no
 * string (value or object key) holds a NUL byte (jansson writes \u0000 and
 * refuses it on reading) or bytes that are not UTF-8, and arrays and
 * objects nest at most TY_JSON_LOADABLE_DEPTH deep. A tree made by a YAML
 * or protobuf decoder, or by a JSON patch, can be any of these; stored, the
 * next open of the store could not load it. 0, or -1 with path filled with
 * where (`data.a`, `spec.containers[0].args[1]`, truncated to fit) and
 * *why with a static phrase saying what. */
int ty_json_check_loadable(const json_t *v, char *path, size_t pathlen, const char **why);

#endif
