/* scli_hostlist.c - Slurm's compact forms: hostlist expressions, GRES
 * strings, memory sizes (scli.h). */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/slurm/scli.h"

/* Digits of a range bound; 18 keeps every bound and count in 64 bits. */
#define BOUND_DIGITS 18

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.';
}

/* One bound: 1 to BOUND_DIGITS digits at *p, advanced past them. */
static int parse_bound(const char **p, const char *end, unsigned long long *v, int *width)
{
    const char *s = *p;
    unsigned long long x = 0;

    while (*p < end && **p >= '0' && **p <= '9' && *p - s < BOUND_DIGITS + 1) {
        x = x * 10 + (unsigned long long)(**p - '0');
        (*p)++;
    }
    if (*p == s || *p - s > BOUND_DIGITS)
        return -1;
    *v = x;
    *width = (int)(*p - s);
    return 0;
}

static int digits_of(unsigned long long v)
{
    int n = 1;

    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* The names of prefix[ranges]suffix: checked whole first (syntax, count
 * against *left, lengths), then expanded, so a huge range costs nothing. */
static int expand_group(json_t *out, const char *prefix, size_t plen, const char *r,
                        const char *rend, const char *suffix, size_t slen, size_t *left,
                        size_t max, ty_error *err)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *p = r;
        for (;;) {
            unsigned long long lo, hi;
            int wlo, whi;
            if (parse_bound(&p, rend, &lo, &wlo) < 0)
                return ty_seterr(err, TY_EINVALID,
                                 "hostlist: bad range in \"[%.*s]\": want numbers like 1-3,5",
                                 (int)(rend - r), r);
            hi = lo;
            if (p < rend && *p == '-') {
                p++;
                if (parse_bound(&p, rend, &hi, &whi) < 0)
                    return ty_seterr(err, TY_EINVALID, "hostlist: bad range in \"[%.*s]\"",
                                     (int)(rend - r), r);
                if (hi < lo)
                    return ty_seterr(err, TY_EINVALID,
                                     "hostlist: range %llu-%llu in \"[%.*s]\" runs backwards", lo,
                                     hi, (int)(rend - r), r);
            }
            if (p < rend && *p != ',')
                return ty_seterr(err, TY_EINVALID, "hostlist: unexpected '%c' in \"[%.*s]\"", *p,
                                 (int)(rend - r), r);
            int width = digits_of(hi) > wlo ? digits_of(hi) : wlo;
            if (plen + (size_t)width + slen > SCLI_NAME_MAX)
                return ty_seterr(err, TY_EINVALID, "hostlist: a name of \"%.*s[%.*s]%.*s\" is "
                                 "longer than %d characters", (int)plen, prefix, (int)(rend - r),
                                 r, (int)slen, suffix, SCLI_NAME_MAX);
            if (pass == 0) {
                unsigned long long count = hi - lo + 1;
                if (count > *left)
                    return ty_seterr(err, TY_EINVALID, "hostlist: more than %zu names", max);
                *left -= (size_t)count;
            } else {
                for (unsigned long long v = lo;; v++) {
                    char name[SCLI_NAME_MAX + 1];
                    snprintf(name, sizeof(name), "%.*s%0*llu%.*s", (int)plen, prefix, wlo, v,
                             (int)slen, suffix);
                    if (json_array_append_new(out, json_string(name)) < 0)
                        return ty_seterr(err, TY_EINTERNAL, "hostlist: out of memory");
                    if (v == hi)
                        break;
                }
            }
            if (p >= rend)
                break;
            p++; /* ',' */
        }
    }
    return 0;
}

/* One comma-separated item at *p (advanced to its end): a name, or
 * prefix[ranges]suffix. */
static int parse_item(json_t *out, const char **pp, size_t *left, size_t max, ty_error *err)
{
    const char *p = *pp, *prefix = p, *r, *rend, *suffix;

    while (*p && *p != ',' && *p != '[') {
        if (!is_name_char(*p))
            return ty_seterr(err, TY_EINVALID, "hostlist: unexpected character 0x%02x in \"%.40s\"",
                             (unsigned char)*p, prefix);
        p++;
    }
    size_t plen = (size_t)(p - prefix);
    if (*p != '[') {
        if (plen == 0)
            return ty_seterr(err, TY_EINVALID, "hostlist: empty name");
        if (plen > SCLI_NAME_MAX)
            return ty_seterr(err, TY_EINVALID, "hostlist: name \"%.40s...\" is longer than %d "
                             "characters", prefix, SCLI_NAME_MAX);
        if (*left == 0)
            return ty_seterr(err, TY_EINVALID, "hostlist: more than %zu names", max);
        (*left)--;
        if (json_array_append_new(out, json_stringn(prefix, plen)) < 0)
            return ty_seterr(err, TY_EINTERNAL, "hostlist: out of memory");
        *pp = p;
        return 0;
    }
    r = p + 1;
    rend = r;
    while (*rend && *rend != ']') {
        if (*rend == '[')
            return ty_seterr(err, TY_EINVALID, "hostlist: '[' inside brackets in \"%.40s\"",
                             prefix);
        rend++;
    }
    if (*rend != ']')
        return ty_seterr(err, TY_EINVALID, "hostlist: unclosed '[' in \"%.40s\"", prefix);
    if (rend == r)
        return ty_seterr(err, TY_EINVALID, "hostlist: empty brackets in \"%.40s\"", prefix);
    suffix = p = rend + 1;
    while (*p && *p != ',') {
        if (*p == '[')
            return ty_seterr(err, TY_EINVALID, "hostlist: more than one bracket group in "
                             "\"%.40s\" (not supported)", prefix);
        if (!is_name_char(*p))
            return ty_seterr(err, TY_EINVALID, "hostlist: unexpected character 0x%02x in \"%.40s\"",
                             (unsigned char)*p, prefix);
        p++;
    }
    if (expand_group(out, prefix, plen, r, rend, suffix, (size_t)(p - suffix), left, max, err) < 0)
        return -1;
    *pp = p;
    return 0;
}

json_t *scli_hostlist(const char *expr, size_t max, ty_error *err)
{
    json_t *out;
    const char *p = expr;
    size_t left = max;

    if (!expr) {
        ty_seterr(err, TY_EINVALID, "hostlist: none given");
        return NULL;
    }
    if (!(out = json_array())) {
        ty_seterr(err, TY_EINTERNAL, "hostlist: out of memory");
        return NULL;
    }
    if (!*expr || strcmp(expr, "(null)") == 0)
        return out;
    for (;;) {
        if (parse_item(out, &p, &left, max, err) < 0) {
            json_decref(out);
            return NULL;
        }
        if (*p != ',')
            break;
        p++;
        if (!*p) {
            json_decref(out);
            ty_seterr(err, TY_EINVALID, "hostlist: trailing comma in \"%.40s\"", expr);
            return NULL;
        }
    }
    return out;
}

/* A count with an optional binary suffix ("100", "4K"), at most INT_MAX. */
static long long gres_count(const char *s, size_t len)
{
    long long v = 0, mult = 1;
    size_t i = 0;

    if (len && strchr("KMGT", s[len - 1])) {
        mult = s[len - 1] == 'K' ? 1024LL : s[len - 1] == 'M' ? 1024LL * 1024 :
               s[len - 1] == 'G' ? 1024LL * 1024 * 1024 : 1024LL * 1024 * 1024 * 1024;
        len--;
    }
    if (len == 0 || len > 10)
        return -1;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v > INT_MAX / mult)
        return -1;
    return v * mult;
}

/* The GPUs of one entry [s, e): name[:type...][:count][(...)], or -1. */
static long long gres_entry(const char *s, const char *e)
{
    const char *paren = memchr(s, '(', (size_t)(e - s)), *body_end = paren ? paren : e;
    const char *seg = s, *last = s;
    int nseg = 0;
    bool last_is_name = true;

    if (paren && (e[-1] != ')' || memchr(paren + 1, '(', (size_t)(e - paren - 1)) ||
                  memchr(paren, ')', (size_t)(e - paren - 1))))
        return -1;
    if (body_end == s)
        return -1;
    for (const char *p = s;; p++) {
        if (p == body_end || *p == ':') {
            if (p == seg || ++nseg > 8)
                return -1;
            last = seg;
            last_is_name = true;
            for (const char *q = seg; q < p; q++)
                if (!is_name_char(*q))
                    last_is_name = false;
            if (!last_is_name && nseg == 1)
                return -1;
            if (p == body_end)
                break;
            seg = p + 1;
        } else if (*p == ')' || *p == ',') {
            return -1;
        }
    }
    long long count = 1;
    if (nseg > 1) {
        /* A last part that starts with a digit is the count; else a type. */
        if (*last >= '0' && *last <= '9') {
            if ((count = gres_count(last, (size_t)(body_end - last))) < 0)
                return -1;
        } else if (!last_is_name) {
            return -1;
        }
    }
    const char *colon = memchr(s, ':', (size_t)(body_end - s));
    const char *name_end = colon ? colon : body_end;
    return name_end - s == 3 && memcmp(s, "gpu", 3) == 0 ? count : 0;
}

int scli_gres_gpus(const char *gres)
{
    long long total = 0;
    const char *s;

    if (!gres || !*gres || strcmp(gres, "(null)") == 0 || strcmp(gres, "N/A") == 0)
        return 0;
    s = gres;
    for (;;) {
        const char *e = s;
        int depth = 0;
        while (*e && (*e != ',' || depth)) {
            if (*e == '(' && depth++)
                return -1;
            if (*e == ')' && --depth < 0)
                return -1;
            e++;
        }
        if (depth)
            return -1;
        long long g = gres_entry(s, e);
        if (g < 0 || (total += g) > INT_MAX)
            return -1;
        if (!*e)
            break;
        s = e + 1;
    }
    return (int)total;
}

long long scli_mem_mb_from_bytes(long long bytes)
{
    const long long mib = 1024LL * 1024;

    if (bytes <= 0)
        return 0;
    return (bytes - 1) / mib + 1;
}
