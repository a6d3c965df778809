/* patch.h - the three patch types of the Kubernetes API.
 *
 * All functions leave their inputs untouched and return a new value (caller
 * owns the reference), or NULL with the error filled in.
 */
#ifndef TY_MODEL_PATCH_H
#define TY_MODEL_PATCH_H

#include <jansson.h>

#include "base/error.h"

/* RFC 7386 JSON merge patch (application/merge-patch+json). Never fails for
 * valid JSON inputs. */
json_t *patch_merge(const json_t *target, const json_t *patch);

/* RFC 6902 JSON patch (application/json-patch+json): add, remove, replace,
 * move, copy, test, with RFC 6901 pointers ("~0", "~1", "-" for append).
 * Errors: TY_EBADREQUEST for a malformed patch document (not an array, unknown
 * op, missing "path"/"value"); TY_EINVALID (422, as kube-apiserver answers) for
 * an op that does not apply: a missing path, an index out of range, a failed
 * "test". The message names the op and the path. More than 10000 operations:
 * TY_ETOOLARGE, as kube-apiserver refuses them. The values "copy" operations
 * copy may add up to PATCH_JSON_MAX_COPY_BYTES of JSON text, as
 * kube-apiserver's JSONPatchMaxCopyBytes; past it TY_EINVALID ("Unable to
 * complete the copy, ..."), before anything is copied. */
#define PATCH_JSON_MAX_COPY_BYTES (3 * 1024 * 1024)
json_t *patch_json(const json_t *target, const json_t *ops, ty_error *err);

/* Strategic merge patch (application/strategic-merge-patch+json) for built-in
 * kinds. kind is the object's kind ("Pod", "Service", "ConfigMap", ...); it
 * selects the merge keys of lists (containers by name, ports by
 * containerPort/port, env by name, volumes by name, ownerReferences by uid,
 * conditions by type, ...). Lists without a merge key are replaced.
 * Supports the directives $patch (replace, merge, delete), $retainKeys,
 * $deleteFromPrimitiveList/<field> and $setElementOrder/<field>.
 * Any other kind (NULL, or a custom resource such as PyTorchJob) merges the
 * pod-template lists (containers, env, volumes, ...) by their keys wherever
 * they appear, and metadata/conditions as for built-in kinds; Kubernetes would
 * refuse the patch for a custom resource, so a server that wants that answer
 * must decide it before calling. Malformed directives or list items without
 * their merge key: TY_EBADREQUEST. */
json_t *patch_strategic(const json_t *target, const json_t *patch, const char *kind,
                        ty_error *err);

/* Two-way merge patch that turns a into b (RFC 7386 form). Used by the CLI's
 * apply to send only what changed. Caller owns the result; {} when equal. */
json_t *patch_merge_diff(const json_t *a, const json_t *b);

#endif
