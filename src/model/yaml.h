/* yaml.h - YAML <-> JSON for manifests.
 *
 * Loading follows what Kubernetes' YAML decoder does: plain scalars resolve to
 * null (~, null, empty), booleans (true/false, and YAML 1.1 yes/no/on/off in any
 * case), integers (decimal, 0x hex, 0o octal), floats, else strings; quoted
 * scalars are strings. Anchors and aliases are expanded; merge keys (<<) too.
 * Mapping keys must be strings. JSON is valid input (it is YAML).
 */
#ifndef TY_MODEL_YAML_H
#define TY_MODEL_YAML_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"

/* Every document of a multi-document stream, as a JSON array (empty and
 * null documents are skipped). On a syntax error: NULL, TY_EBADREQUEST and a
 * message "yaml: line L, column C: <problem>" (1-based). Caller owns result. */
json_t *yaml_load_all(const char *buf, size_t len, ty_error *err);

/* Exactly one document (an empty stream is an error). Caller owns result. */
json_t *yaml_load_one(const char *buf, size_t len, ty_error *err);

/* Block-style YAML the way kubectl prints objects: two-space indent, lists
 * under a key not indented further ("- name: x"), strings quoted only when
 * they would otherwise read as another type or are not plain-safe, keys in
 * the order of the JSON object. Returns a malloc'd string; caller frees. */
char *yaml_dump(const json_t *value);

#endif
