/* error.h - the one error convention of Trainyard.
 *
 * Functions return 0 / -1 (or a pointer / NULL) and fill a ty_error the caller
 * passes in (it may be NULL when the caller does not care). The error code maps
 * one-to-one to an HTTP status and a Kubernetes Status reason; that mapping is
 * done here and nowhere else.
 */
#ifndef TY_BASE_ERROR_H
#define TY_BASE_ERROR_H

#include <jansson.h>
#include <stdarg.h>

typedef enum ty_errcode {
    TY_OK = 0,
    TY_EBADREQUEST,   /* 400 BadRequest: malformed body, bad query, strict field errors */
    TY_EUNAUTH,       /* 401 Unauthorized */
    TY_EFORBIDDEN,    /* 403 Forbidden */
    TY_ENOTFOUND,     /* 404 NotFound */
    TY_EMETHOD,       /* 405 MethodNotAllowed */
    TY_ENOTACCEPT,    /* 406 NotAcceptable */
    TY_EEXISTS,       /* 409 AlreadyExists */
    TY_ECONFLICT,     /* 409 Conflict: stale resourceVersion */
    TY_EGONE,         /* 410 Expired: watch/list resourceVersion too old */
    TY_ETOOLARGE,     /* 413 RequestEntityTooLarge */
    TY_EMEDIATYPE,    /* 415 UnsupportedMediaType */
    TY_EINVALID,      /* 422 Invalid: validation failed, causes name the fields */
    TY_ETIMEOUT,      /* 504 Timeout */
    TY_EUNAVAILABLE,  /* 503 ServiceUnavailable */
    TY_EINTERNAL,     /* 500 InternalError */
    TY_ETOOMANY,      /* 429 TooManyRequests: over the in-flight limits */
} ty_errcode;

typedef struct ty_error {
    ty_errcode code;
    char text[1024];
    /* For TY_EINVALID (and strict decoding errors): a JSON array of
     * {"reason","message","field"} objects. Owned by the error; NULL if none. */
    json_t *causes;
} ty_error;

/* Sets code and printf-style text. Safe with err == NULL. Returns -1 so that
 * callers can write `return ty_seterr(err, TY_ENOTFOUND, "...")`. */
int ty_seterr(ty_error *err, ty_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int ty_vseterr(ty_error *err, ty_errcode code, const char *fmt, va_list ap);

/* Appends one cause. reason is a metav1.CauseType such as "FieldValueInvalid",
 * "FieldValueRequired", "FieldValueNotSupported", "FieldValueDuplicate",
 * "FieldValueForbidden", "FieldValueTooLong"; field is a path such as
 * "spec.pytorchReplicaSpecs.Master.replicas". Does not change code/text. */
void ty_error_add_cause(ty_error *err, const char *reason, const char *field,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Number of causes collected so far. */
size_t ty_error_ncauses(const ty_error *err);

/* Frees causes and resets to TY_OK. */
void ty_error_clear(ty_error *err);
void ty_error_init(ty_error *err);

/* The HTTP status and Status.reason of a code. */
int ty_errcode_http(ty_errcode code);
const char *ty_errcode_reason(ty_errcode code);

#endif
