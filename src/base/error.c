#include "base/error.h"

#include <stdio.h>
#include <string.h>

void ty_error_init(ty_error *err)
{
    if (!err)
        return;
    err->code = TY_OK;
    err->text[0] = '\0';
    err->causes = NULL;
}

void ty_error_clear(ty_error *err)
{
    if (!err)
        return;
    json_decref(err->causes);
    ty_error_init(err);
}

int ty_vseterr(ty_error *err, ty_errcode code, const char *fmt, va_list ap)
{
    if (!err)
        return -1;
    err->code = code;
    vsnprintf(err->text, sizeof(err->text), fmt, ap);
    return -1;
}

int ty_seterr(ty_error *err, ty_errcode code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ty_vseterr(err, code, fmt, ap);
    va_end(ap);
    return -1;
}

void ty_error_add_cause(ty_error *err, const char *reason, const char *field,
                        const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (!err)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!err->causes)
        err->causes = json_array();
    json_array_append_new(err->causes, json_pack("{s:s, s:s, s:s}", "reason", reason,
                                                 "message", msg, "field", field ? field : ""));
}

size_t ty_error_ncauses(const ty_error *err)
{
    return err && err->causes ? json_array_size(err->causes) : 0;
}

static const struct {
    int http;
    const char *reason;
} errtab[] = {
    [TY_OK] = {200, ""},
    [TY_EBADREQUEST] = {400, "BadRequest"},
    [TY_EUNAUTH] = {401, "Unauthorized"},
    [TY_EFORBIDDEN] = {403, "Forbidden"},
    [TY_ENOTFOUND] = {404, "NotFound"},
    [TY_EMETHOD] = {405, "MethodNotAllowed"},
    [TY_ENOTACCEPT] = {406, "NotAcceptable"},
    [TY_EEXISTS] = {409, "AlreadyExists"},
    [TY_ECONFLICT] = {409, "Conflict"},
    [TY_EGONE] = {410, "Expired"},
    [TY_ETOOLARGE] = {413, "RequestEntityTooLarge"},
    [TY_EMEDIATYPE] = {415, "UnsupportedMediaType"},
    [TY_EINVALID] = {422, "Invalid"},
    [TY_ETIMEOUT] = {504, "Timeout"},
    [TY_EUNAVAILABLE] = {503, "ServiceUnavailable"},
    [TY_EINTERNAL] = {500, "InternalError"},
    [TY_ETOOMANY] = {429, "TooManyRequests"},
};

int ty_errcode_http(ty_errcode code)
{
    if ((size_t)code >= sizeof(errtab) / sizeof(errtab[0]))
        return 500;
    return errtab[code].http;
}

const char *ty_errcode_reason(ty_errcode code)
{
    if ((size_t)code >= sizeof(errtab) / sizeof(errtab[0]))
        return "InternalError";
    return errtab[code].reason;
}
