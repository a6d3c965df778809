/* decode.h - internal to src/server: request bodies and field validation. */
#ifndef TY_SERVER_DECODE_H
#define TY_SERVER_DECODE_H

#include "server/http.h"

typedef enum { FV_WARN, FV_STRICT, FV_IGNORE } field_validation;

/* Reads ?fieldValidation= (default Warn, as kube-apiserver). */
int decode_field_validation(http_req *r, field_validation *out, ty_error *err);

/* The body as JSON (JSON or YAML by Content-Type). Duplicate keys: an error
 * under Strict, a Warning under Warn. 400 with line and column on bad syntax.
 * Caller owns the result. */
json_t *decode_body(http_req *r, field_validation fv, ty_error *err);

/* Unknown fields of obj: Strict -> 400 naming them; Warn -> Warning headers;
 * both Warn and Ignore then drop them, as the API server does. */
int decode_check_fields(http_req *r, const api_resource *res, json_t *obj,
                        field_validation fv, ty_error *err);

/* Composes the kube-apiserver message of a 422 from its causes:
 * `Kind.group "name" is invalid: field: message` (a [list] when several). */
void decode_invalid_message(ty_error *err, const api_resource *res, const char *name);

#endif
