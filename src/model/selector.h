/* selector.h - label and field selectors, as in the Kubernetes list API.
 *
 * Label selector string grammar: comma-separated requirements, each one of
 *   key=value, key==value, key!=value, key in (v1,v2), key notin (v1,v2),
 *   key (exists), !key (does not exist)
 * Keys are qualified names (optional DNS prefix + '/'); values are label values.
 * Field selectors: comma-separated field=value, field==value, field!=value over
 * dotted paths into the object (metadata.name, status.phase, spec.nodeName).
 */
#ifndef TY_MODEL_SELECTOR_H
#define TY_MODEL_SELECTOR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

typedef struct ty_label_selector ty_label_selector;
typedef struct ty_field_selector ty_field_selector;

/* Parses the string form. "" yields a selector that matches everything.
 * Returns NULL with TY_EBADREQUEST and a message naming the problem. Caller frees. */
ty_label_selector *label_selector_parse(const char *s, ty_error *err);

/* From a metav1.LabelSelector JSON object {matchLabels:{}, matchExpressions:[{key,
 * operator In|NotIn|Exists|DoesNotExist, values}]}. NULL or {} matches everything
 * (callers that want "nothing" for NULL decide that themselves). Caller frees. */
ty_label_selector *label_selector_from_json(const json_t *sel, ty_error *err);

/* labels is the object's metadata.labels (may be NULL). Borrowed. */
bool label_selector_matches(const ty_label_selector *sel, const json_t *labels);
bool label_selector_empty(const ty_label_selector *sel);
void label_selector_free(ty_label_selector *sel);

/* allowed: NULL-terminated list of field paths this resource supports; any other
 * field gets TY_EBADREQUEST ("field label not supported: x"). NULL allows all.
 * Caller frees. */
ty_field_selector *field_selector_parse(const char *s, const char *const *allowed,
                                        ty_error *err);
/* A missing field compares as "". Borrowed obj. */
bool field_selector_matches(const ty_field_selector *sel, const json_t *obj);
void field_selector_free(ty_field_selector *sel);

/* Looks up a dotted path ("metadata.name") in obj. Returns a borrowed pointer
 * or NULL. */
const json_t *json_path_get(const json_t *obj, const char *dotted);

/* Kubernetes' checks for names, usable by validation code as well. Each
 * returns true when s is valid; otherwise why (may be NULL) receives the
 * reason in kube-apiserver's words, e.g. "name part must be no more than 63
 * characters".
 *   label_key_valid: a qualified name, [prefix/]name, the prefix a DNS-1123
 *     subdomain, the name at most 63 characters of [A-Za-z0-9_.-] that starts
 *     and ends alphanumeric.
 *   label_value_valid: empty, or at most 63 characters of the same set.
 *   dns1123_subdomain_valid: at most 253 characters of [a-z0-9.-], each
 *     dot-separated part starting and ending alphanumeric. */
bool label_key_valid(const char *s, char *why, size_t len);
bool label_value_valid(const char *s, char *why, size_t len);
bool dns1123_subdomain_valid(const char *s, char *why, size_t len);

#endif
