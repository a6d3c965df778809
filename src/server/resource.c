/* resource.c - routing of resource paths and the read verbs (get, list).
 * The write verbs live in resource_write.c, watch in watch.c. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/kinds.h"
#include "base/buf.h"
#include "model/selector.h"
#include "server/http.h"
#include "server/resource_internal.h"

int resource_parse_path(http_req *r, res_path *p, ty_error *err)
{
    const char *group, *version;
    char **rest;
    int nrest;

    memset(p, 0, sizeof(*p));
    if (r->nsegs >= 2 && strcmp(r->segs[0], "api") == 0) {
        group = "";
        version = r->segs[1];
        rest = r->segs + 2;
        nrest = r->nsegs - 2;
    } else if (r->nsegs >= 3 && r->nsegs <= HTTP_MAX_SEGMENTS &&
               strcmp(r->segs[0], "apis") == 0) {
        group = r->segs[1];
        version = r->segs[2];
        rest = r->segs + 3;
        nrest = r->nsegs - 3;
    } else {
        return ty_seterr(err, TY_ENOTFOUND, "the server could not find the requested resource");
    }
    if (r->nsegs > HTTP_MAX_SEGMENTS || nrest < 1)
        return ty_seterr(err, TY_ENOTFOUND, "the server could not find the requested resource");

    /* /namespaces/<ns>/<plural>/... when <plural> is a namespaced resource;
     * otherwise the path names a cluster-scoped object (incl. namespaces/<ns>). */
    if (nrest >= 3 && strcmp(rest[0], "namespaces") == 0) {
        const api_resource *res = api_find(group, version, rest[2]);
        if (res && res->namespaced) {
            p->res = res;
            p->ns = rest[1];
            rest += 2;
            nrest -= 2;
        }
    }
    if (!p->res) {
        p->res = api_find(group, version, rest[0]);
        if (!p->res)
            return ty_seterr(err, TY_ENOTFOUND,
                             "the server could not find the requested resource");
    }
    if (nrest > 3)
        return ty_seterr(err, TY_ENOTFOUND, "the server could not find the requested resource");
    p->name = nrest >= 2 ? rest[1] : NULL;
    p->sub = nrest >= 3 ? rest[2] : NULL;
    if (p->sub) {
        bool known = strcmp(p->sub, "status") == 0 && p->res->has_status;
        for (int i = 0; i < 4 && p->res->subresources[i] && !known; i++)
            known = strcmp(p->sub, p->res->subresources[i]) == 0;
        if (!known)
            return ty_seterr(err, TY_ENOTFOUND,
                             "the server could not find the requested resource");
    }
    /* A namespaced object is addressed through its namespace; listing across
     * namespaces is the only cluster-wide form. */
    if (p->res->namespaced && !p->ns && p->name)
        return ty_seterr(err, TY_ENOTFOUND, "the server could not find the requested resource");
    return 0;
}

/* ---- selectors ---- */

typedef struct list_filter {
    ty_label_selector *labels;
    ty_field_selector *fields;
} list_filter;

static bool filter_match(const json_t *obj, void *arg)
{
    list_filter *f = arg;
    const json_t *meta = json_object_get(obj, "metadata");
    if (f->labels && !label_selector_matches(f->labels, json_object_get(meta, "labels")))
        return false;
    if (f->fields && !field_selector_matches(f->fields, obj))
        return false;
    return true;
}

static const char *const event_fields[] = {
    "involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
    "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
    "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type", NULL};

int resource_filter_init(http_req *r, const api_resource *res, resource_filter *out,
                         ty_error *err)
{
    const char *ls = http_query(r, "labelSelector");
    const char *fs = http_query(r, "fieldSelector");
    const char *allowed[48];
    size_t n = 0;
    list_filter *f = calloc(1, sizeof(*f));

    out->fn = NULL;
    out->arg = NULL;
    if (!f)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    if (ls && *ls) {
        f->labels = label_selector_parse(ls, err);
        if (!f->labels)
            goto error;
    }
    if (fs && *fs) {
        allowed[n++] = "metadata.name";
        if (res->namespaced)
            allowed[n++] = "metadata.namespace";
        for (size_t i = 0; res->field_selectors && res->field_selectors[i] && n < 40; i++)
            allowed[n++] = res->field_selectors[i];
        if (strcmp(res->kind, "Event") == 0 && !*res->group)
            for (size_t i = 0; event_fields[i]; i++)
                allowed[n++] = event_fields[i];
        allowed[n] = NULL;
        f->fields = field_selector_parse(fs, allowed, err);
        if (!f->fields)
            goto error;
    }
    if (f->labels || f->fields) {
        out->fn = filter_match;
        out->arg = f;
    } else {
        free(f);
    }
    return 0;
error:
    label_selector_free(f->labels);
    free(f);
    return -1;
}

void resource_filter_free(resource_filter *rf)
{
    list_filter *f = rf->arg;
    if (!f)
        return;
    label_selector_free(f->labels);
    field_selector_free(f->fields);
    free(f);
    rf->arg = NULL;
}

/* ---- tables ---- */

json_t *resource_table_row(const api_resource *res, const json_t *obj, const char *include)
{
    json_t *row = json_pack("{s:o}", "cells", api_table_cells(res, obj, time(NULL)));
    if (include && strcmp(include, "None") == 0)
        return row;
    if (include && strcmp(include, "Object") == 0) {
        json_object_set_new(row, "object", json_deep_copy(obj));
    } else {
        json_t *meta = json_deep_copy(json_object_get(obj, "metadata"));
        json_object_del(meta, "managedFields");
        json_object_set_new(row, "object",
                            json_pack("{s:s, s:s, s:o}", "kind", "PartialObjectMetadata",
                                      "apiVersion", "meta.k8s.io/v1", "metadata", meta));
    }
    return row;
}

json_t *resource_table(const api_resource *res, bool with_columns)
{
    return json_pack("{s:s, s:s, s:{}, s:o, s:[]}", "kind", "Table", "apiVersion",
                     "meta.k8s.io/v1", "metadata", "columnDefinitions",
                     with_columns ? api_table_columns(res) : json_array(), "rows");
}

/* ---- get ---- */

static enum MHD_Result do_get(http_req *r, const res_path *p)
{
    ty_error err;
    store_obj *o;
    enum MHD_Result ret;

    ty_error_init(&err);
    o = store_get(server_store(r->srv), api_store_key(p->res), p->ns ? p->ns : "", p->name,
                  &err);
    if (!o) {
        resource_not_found(&err, p->res, p->name);
        ret = http_send_error(r, &err, p->res, p->name);
        ty_error_clear(&err);
        return ret;
    }
    if (http_wants_table(r) && !p->sub) {
        json_t *t = resource_table(p->res, true);
        json_array_append_new(json_object_get(t, "rows"),
                              resource_table_row(p->res, store_obj_json(o),
                                                 http_query(r, "includeObject")));
        json_object_set_new(json_object_get(t, "metadata"), "resourceVersion",
                            json_sprintf("%llu", (unsigned long long)store_obj_rv(o)));
        ret = http_send_json(r, 200, t);
    } else {
        size_t len;
        const char *text = store_obj_text(o, &len);
        ret = http_send_text(r, 200, "application/json", text, len);
    }
    store_obj_unref(o);
    return ret;
}

/* ---- list ---- */

static enum MHD_Result send_list_json(http_req *r, const api_resource *res, store_list *l)
{
    ty_buf b = {0};
    char av[128];

    api_version_string(res, av, sizeof(av));
    ty_buf_printf(&b, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%llu\"",
                  res->list_kind, av, (unsigned long long)l->rv);
    if (l->continue_token) {
        ty_buf_printf(&b, ",\"continue\":\"%s\"", l->continue_token);
        if (l->remaining >= 0)
            ty_buf_printf(&b, ",\"remainingItemCount\":%lld", (long long)l->remaining);
    }
    ty_buf_puts(&b, "},\"items\":[");
    for (size_t i = 0; i < l->n; i++) {
        size_t len;
        char *owned;
        /* a listing reads each object once: a cold one stays cold */
        const char *text = store_obj_text_read(l->items[i], &len, &owned);
        if (!text) {
            ty_buf_free(&b);
            return MHD_NO;
        }
        if (i)
            ty_buf_append(&b, ",", 1);
        ty_buf_append(&b, text, len);
        free(owned);
    }
    if (ty_buf_puts(&b, "]}") < 0) {
        ty_buf_free(&b);
        return MHD_NO;
    }
    size_t len;
    char *data = ty_buf_steal(&b, &len);
    return http_send_buffer(r, 200, "application/json", data, len);
}

static enum MHD_Result send_list_table(http_req *r, const api_resource *res, store_list *l)
{
    json_t *t = resource_table(res, true);
    json_t *rows = json_object_get(t, "rows");
    json_t *meta = json_object_get(t, "metadata");
    const char *include = http_query(r, "includeObject");

    json_object_set_new(meta, "resourceVersion", json_sprintf("%llu", (unsigned long long)l->rv));
    if (l->continue_token)
        json_object_set_new(meta, "continue", json_string(l->continue_token));
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(rows,
                              resource_table_row(res, store_obj_json(l->items[i]), include));
    return http_send_json(r, 200, t);
}

static enum MHD_Result do_list(http_req *r, const res_path *p)
{
    ty_error err;
    resource_filter rf;
    store_list l = {0};
    store_list_opts opts = {.ns = p->ns};
    const char *limit = http_query(r, "limit");
    enum MHD_Result ret;

    ty_error_init(&err);
    if (resource_filter_init(r, p->res, &rf, &err) < 0)
        goto fail;
    opts.filter = rf.fn;
    opts.filter_arg = rf.arg;
    if (limit && *limit) {
        char *end;
        long long v = strtoll(limit, &end, 10);
        if (*end || v < 0) {
            ty_seterr(&err, TY_EBADREQUEST, "invalid limit %s: must be a non-negative integer",
                      limit);
            resource_filter_free(&rf);
            goto fail;
        }
        opts.limit = (size_t)v;
    }
    opts.continue_token = http_query(r, "continue");
    if (opts.continue_token && !*opts.continue_token)
        opts.continue_token = NULL;
    if (store_list_objects(server_store(r->srv), api_store_key(p->res), &opts, &l, &err) < 0) {
        resource_filter_free(&rf);
        goto fail;
    }
    resource_filter_free(&rf);
    ret = http_wants_table(r) ? send_list_table(r, p->res, &l) : send_list_json(r, p->res, &l);
    store_list_free(&l);
    return ret;
fail:
    ret = http_send_error(r, &err, p->res, NULL);
    ty_error_clear(&err);
    return ret;
}

void resource_not_found(ty_error *err, const api_resource *res, const char *name)
{
    char gr[160];
    if (err->code != TY_ENOTFOUND)
        return;
    api_group_resource(res, gr, sizeof(gr));
    ty_seterr(err, TY_ENOTFOUND, "%s \"%s\" not found", gr, name ? name : "");
}

enum MHD_Result resource_handle(http_req *r)
{
    res_path p;
    ty_error err;
    enum MHD_Result ret;
    const char *m = r->method;

    ty_error_init(&err);
    if (resource_parse_path(r, &p, &err) < 0) {
        ret = http_send_error(r, &err, NULL, NULL);
        ty_error_clear(&err);
        return ret;
    }
    if (p.sub && strcmp(p.sub, "log") == 0) {
        if (strcmp(m, "GET") == 0)
            return podlog_handle(r, &p);
    } else if (p.sub && strcmp(p.sub, "binding") == 0) {
        if (strcmp(m, "POST") == 0)
            return resource_bind(r, &p);
    } else if (!p.name) {
        if (strcmp(m, "GET") == 0)
            return http_query_bool(r, "watch") ? watch_handle(r, &p) : do_list(r, &p);
        if (strcmp(m, "POST") == 0 && (p.ns || !p.res->namespaced))
            return resource_create(r, &p);
        if (strcmp(m, "DELETE") == 0 && p.res != &api_namespace) /* discovery.c */
            return resource_delete_collection(r, &p);
    } else {
        if (strcmp(m, "GET") == 0)
            return do_get(r, &p);
        if (strcmp(m, "PUT") == 0)
            return resource_update(r, &p);
        if (strcmp(m, "PATCH") == 0)
            return resource_patch(r, &p);
        if (strcmp(m, "DELETE") == 0 && !p.sub)
            return resource_delete(r, &p);
    }
    ty_seterr(&err, TY_EMETHOD, "the server does not allow this method on the requested resource");
    ret = http_send_error(r, &err, p.res, p.name);
    ty_error_clear(&err);
    return ret;
}
