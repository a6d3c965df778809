/* status.c - metav1.Status objects: the one place errors become wire format. */
#include <string.h>

#include "server/http.h"

static json_t *status_base(const char *status, int code)
{
    return json_pack("{s:s, s:s, s:{}, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                     "metadata", "status", status, "code", code);
}

json_t *status_from_error(const ty_error *err, const api_resource *res, const char *name)
{
    json_t *st = status_base("Failure", ty_errcode_http(err->code));
    json_t *details = json_object();

    json_object_set_new(st, "message", json_string(err->text));
    json_object_set_new(st, "reason", json_string(ty_errcode_reason(err->code)));
    if (name && *name)
        json_object_set_new(details, "name", json_string(name));
    if (res) {
        if (*res->group)
            json_object_set_new(details, "group", json_string(res->group));
        /* kube-apiserver names the Kind for Invalid and the resource otherwise. */
        json_object_set_new(details, "kind",
                            json_string(err->code == TY_EINVALID ? res->kind : res->plural));
    }
    if (err->causes && json_array_size(err->causes) > 0)
        json_object_set(details, "causes", err->causes);
    if (json_object_size(details) > 0)
        json_object_set_new(st, "details", details);
    else
        json_decref(details);
    return st;
}

json_t *status_success(const api_resource *res, const char *name, const char *uid)
{
    json_t *st = status_base("Success", 200);
    json_t *details = json_object();

    if (name)
        json_object_set_new(details, "name", json_string(name));
    if (res) {
        if (*res->group)
            json_object_set_new(details, "group", json_string(res->group));
        json_object_set_new(details, "kind", json_string(res->plural));
    }
    if (uid)
        json_object_set_new(details, "uid", json_string(uid));
    json_object_set_new(st, "details", details);
    return st;
}
