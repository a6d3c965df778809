/* meta.h - common validation helpers in kube-apiserver's wording.
 *
 * The name and label rules of Kubernetes (RFC 1123 labels and subdomains,
 * DNS-1035 labels, qualified names, label values, config keys) and helpers
 * that append causes worded the way kube-apiserver words them:
 *
 *     field "metadata.name", message `Invalid value: "Foo_1": a lowercase RFC
 *     1123 label must consist of ...`
 *
 * Every meta_check_* returns the number of causes it added (0 = valid).
 * They are shared by every kind file, the Kubeflow kinds included.
 */
#ifndef TY_API_META_H
#define TY_API_META_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

#define META_DNS1123_LABEL_MAX 63
#define META_DNS1123_SUBDOMAIN_MAX 253
#define META_ANNOTATIONS_MAX (256 * 1024)
/* The TrainJob controller's snapshot of a job's runtime: outside the total
 * META_ANNOTATIONS_MAX counts (meta.c). */
#define META_ANN_RUNTIME_SNAPSHOT "trainyard.io/runtime-snapshot"

bool meta_is_dns1123_label(const char *s);
bool meta_is_dns1123_subdomain(const char *s);
bool meta_is_dns1035_label(const char *s);

/* Name rules: one cause per broken rule (format, length), reason
 * "FieldValueInvalid", field as given. */
int meta_check_dns1123_label(const char *field, const char *value, ty_error *err);
int meta_check_dns1123_subdomain(const char *field, const char *value, ty_error *err);
int meta_check_dns1035_label(const char *field, const char *value, ty_error *err);
/* kube's path segment names (RBAC objects): not "." or "..", no '/' or '%'. */
int meta_check_path_segment(const char *field, const char *value, ty_error *err);
/* A label key or annotation key: [prefix/]name. */
int meta_check_qualified_name(const char *field, const char *value, ty_error *err);
/* An environment variable's name as kube-apiserver takes it:
 * [-._a-zA-Z][-._a-zA-Z0-9]*, with its message. 0, or -1 with a cause. */
int meta_check_env_var_name(const char *field, const char *value, ty_error *err);

/* The index of the item of items (an array of objects) whose "name" is
 * name, or -1 (name NULL, or none has it). */
long meta_named_index(const json_t *items, const char *name);

/* Whether a chain of dependencies among items (an array of objects, each
 * named by its "name") leads from item i back to an item on the chain:
 * deps(item) is the array of what an item depends on, each a name or an
 * object whose "name" is one; names no item has are not followed. state:
 * one byte per item, zeroed by the caller, kept across calls on the same
 * items (what was searched is not searched again). */
bool meta_depends_cycle(const json_t *items, size_t i, const json_t *(*deps)(const json_t *item),
                        unsigned char *state);
/* metadata.labels (keys and values) and metadata.annotations (keys and the
 * 256 KiB total). Non-object values are reported as invalid. */
int meta_check_labels(const char *field, const json_t *labels, ty_error *err);
int meta_check_annotations(const char *field, const json_t *annotations, ty_error *err);
/* A ConfigMap / Secret key; field is the key's path, "data[key]". */
int meta_check_config_key(const char *field, const char *key, ty_error *err);
/* Every value of a labelSelector-style map ("matchLabels", "selector"). */
int meta_check_selector_map(const char *field, const json_t *map, ty_error *err);

/* Cause writers. value is shown like Go's %#v: strings quoted, numbers bare. */
void meta_invalid(ty_error *err, const char *field, const json_t *value, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void meta_invalid_str(ty_error *err, const char *field, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void meta_invalid_int(ty_error *err, const char *field, long long value, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* `Required value` (detail appended after ": " when not NULL). */
void meta_required(ty_error *err, const char *field, const char *detail);
/* `Unsupported value: "X": supported values: "A", "B"`; supported is NULL-terminated. */
void meta_not_supported(ty_error *err, const char *field, const json_t *value,
                        const char *const *supported);
void meta_duplicate(ty_error *err, const char *field, const json_t *value);
void meta_forbidden(ty_error *err, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void meta_too_long(ty_error *err, const char *field, long long max_bytes);
/* FieldValueTooMany: a list of n items, past max_items. */
void meta_too_many(ty_error *err, const char *field, size_t n, long long max_items);

/* Go-%#v-like text of a JSON value into buf (truncated). */
void meta_value_text(const json_t *value, char *buf, size_t len);

/* Small JSON accessors that tolerate missing or mistyped members. */
const char *meta_str(const json_t *obj, const char *key);          /* NULL if absent */
json_int_t meta_int(const json_t *obj, const char *key, json_int_t dflt);
/* Sets obj[key] = value only when key is absent (steals value either way). */
void meta_default(json_t *obj, const char *key, json_t *value);
/* obj[key], created as {} when absent or not an object. Borrowed. */
json_t *meta_child(json_t *obj, const char *key);

/* The standard object metadata check done by api_prepare: name (with name_rule),
 * generateName, namespace presence, labels, annotations. */
typedef enum meta_name_rule {
    META_NAME_SUBDOMAIN = 0,
    META_NAME_DNS1123_LABEL,
    META_NAME_DNS1035_LABEL,
    META_NAME_PATH_SEGMENT, /* RBAC's names: anything but ".", ".." and '/' or '%' */
} meta_name_rule;
int meta_check_object_meta(const json_t *meta, meta_name_rule rule, bool namespaced,
                           ty_error *err);

/* Pod spec rules shared by pods and every pod template (kind_pod.c).
 * meta_pod_spec_defaults fills what kube-apiserver defaults in a PodSpec
 * (restartPolicy, dnsPolicy, schedulerName, grace period, container pull
 * policy, termination message path/policy, port protocol, requests from
 * limits). meta_pod_spec_validate adds causes under path ("spec",
 * "spec.tasks[0].template.spec"); restart_policies is the NULL-terminated set
 * allowed here (NULL = Always, OnFailure, Never). Returns causes added. */
void meta_pod_spec_defaults(json_t *spec);
int meta_pod_spec_validate(const json_t *spec, const char *path,
                           const char *const *restart_policies, ty_error *err);
/* The image pull policy Kubernetes defaults for an image reference:
 * "Always" for ":latest" or no tag (digests excepted), else "IfNotPresent". */
const char *meta_default_pull_policy(const char *image);

#endif
