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

    json_t *msg = json_string(err->text);
    if (!msg) {
        /* A message that quotes input cut mid-character is not UTF-8, and a
         * Status without its message says nothing: the bytes past ASCII go. */
        char text[sizeof(err->text)];
        size_t i;
        for (i = 0; err->text[i] && i < sizeof(text) - 1; i++)
            text[i] = (unsigned char)err->text[i] < 0x80 ? err->text[i] : '?';
        text[i] = '\0';
        msg = json_string(text);
    }
    json_object_set_new(st, "message", msg);
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
