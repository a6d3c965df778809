/* resource_internal.h - shared between resource.c, resource_write.c and watch.c. */
#ifndef TY_SERVER_RESOURCE_INTERNAL_H
#define TY_SERVER_RESOURCE_INTERNAL_H

#include "server/http.h"

typedef struct resource_filter {
    store_filter_fn fn; /* NULL = no filtering */
    void *arg;
} resource_filter;

/* Parses labelSelector and fieldSelector from the query. */
int resource_filter_init(http_req *r, const api_resource *res, resource_filter *out,
                         ty_error *err);
void resource_filter_free(resource_filter *rf);

/* A Table (meta.k8s.io/v1) with or without column definitions; rows empty. */
json_t *resource_table(const api_resource *res, bool with_columns);
/* One row; include is the includeObject parameter (None|Metadata|Object). */
json_t *resource_table_row(const api_resource *res, const json_t *obj, const char *include);

/* Rewrites a store NotFound into `<resource>.<group> "name" not found`. */
void resource_not_found(ty_error *err, const api_resource *res, const char *name);

enum MHD_Result resource_create(http_req *r, const res_path *p);
enum MHD_Result resource_update(http_req *r, const res_path *p);
enum MHD_Result resource_patch(http_req *r, const res_path *p);
enum MHD_Result resource_delete(http_req *r, const res_path *p);
enum MHD_Result resource_delete_collection(http_req *r, const res_path *p);
enum MHD_Result resource_bind(http_req *r, const res_path *p);

#endif
