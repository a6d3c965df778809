/* cron.c - cron schedules: parsing and the next time (see cron.h). */
#include "base/cron.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/timeutil.h"

#define YEARS_AHEAD 5

typedef struct {
    const char *what; /* for messages: "minute" */
    int min, max;
    const char *const *names; /* names[i] stands for min + i, or NULL */
} cron_field;

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
                                          "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

static const cron_field fields[5] = {
    {"minute", 0, 59, NULL},
    {"hour", 0, 23, NULL},
    {"day of month", 1, 31, NULL},
    {"month", 1, 12, month_names},
    {"day of week", 0, 6, dow_names},
};

/* A number or a name of f in s[0..len). -1 when it is neither. */
static int value_of(const char *s, size_t len, const cron_field *f)
{
    int v = 0;

    for (size_t i = 0; f->names && f->names[i]; i++)
        if (strlen(f->names[i]) == len && strncasecmp(s, f->names[i], len) == 0)
            return f->min + (int)i;
    if (len == 0 || len > 4)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* One comma-separated part of a field into *bits; *star when it is `*` or
 * `?` with no step above 1. */
static int parse_range(const char *s, size_t len, const cron_field *f, uint64_t *bits,
                       bool *star, ty_error *err)
{
    const char *slash = memchr(s, '/', len), *dash;
    size_t rlen = slash ? (size_t)(slash - s) : len;
    int lo, hi, step = 1;
    bool is_star = (rlen == 1 && (s[0] == '*' || s[0] == '?'));

    if (slash) {
        size_t slen = len - rlen - 1;
        const char *st = slash + 1;
        if (slen == 0 || slen > 4 || memchr(st, '/', slen))
            goto bad;
        step = 0;
        for (size_t i = 0; i < slen; i++) {
            if (!isdigit((unsigned char)st[i]))
                goto bad;
            step = step * 10 + (st[i] - '0');
        }
        if (step == 0)
            goto bad;
    }
    if (is_star) {
        lo = f->min;
        hi = f->max;
    } else {
        dash = memchr(s, '-', rlen);
        if (dash) {
            lo = value_of(s, (size_t)(dash - s), f);
            hi = value_of(dash + 1, rlen - (size_t)(dash - s) - 1, f);
        } else {
            lo = value_of(s, rlen, f);
            /* "a/n" means a up to the maximum, every n. */
            hi = slash ? f->max : lo;
        }
        if (lo < 0 || hi < 0)
            goto bad;
    }
    if (lo < f->min || hi > f->max || lo > hi)
        goto bad;
    for (int v = lo; v <= hi; v += step)
        *bits |= (uint64_t)1 << v;
    if (is_star && step == 1)
        *star = true;
    return 0;
bad:
    return ty_seterr(err, TY_EINVALID, "invalid %s in cron expression: \"%.*s\"", f->what,
                     (int)(len > 32 ? 32 : len), s);
}

static int parse_field(const char *s, size_t len, const cron_field *f, uint64_t *bits,
                       bool *star, ty_error *err)
{
    *bits = 0;
    *star = false;
    while (len > 0) {
        const char *comma = memchr(s, ',', len);
        size_t n = comma ? (size_t)(comma - s) : len;
        if (n == 0)
            return ty_seterr(err, TY_EINVALID, "empty %s in cron expression", f->what);
        if (parse_range(s, n, f, bits, star, err) < 0)
            return -1;
        if (!comma)
            break;
        s += n + 1;
        len -= n + 1;
        if (len == 0)
            return ty_seterr(err, TY_EINVALID, "empty %s in cron expression", f->what);
    }
    return 0;
}

static const struct {
    const char *name;
    const char *expr;
} descriptors[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
    {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
    {"@hourly", "0 * * * *"},
};

int cron_parse(const char *expr, cron_spec *out, ty_error *err)
{
    const char *p;
    cron_spec spec = {0};
    uint64_t bits[5];
    bool star[5];
    int n = 0;

    if (!expr || !*expr)
        return ty_seterr(err, TY_EINVALID, "empty cron expression");
    if (strlen(expr) > CRON_MAX_LEN)
        return ty_seterr(err, TY_EINVALID, "cron expression longer than %d bytes", CRON_MAX_LEN);
    while (isspace((unsigned char)*expr))
        expr++;
    if (*expr == '@') {
        size_t len = strcspn(expr, " \t\n");
        for (size_t i = 0; i < sizeof(descriptors) / sizeof(descriptors[0]); i++)
            if (strlen(descriptors[i].name) == len && strncmp(expr, descriptors[i].name, len) == 0 &&
                !expr[len + strspn(expr + len, " \t\n")])
                return cron_parse(descriptors[i].expr, out, err);
        if (len == 6 && strncmp(expr, "@every", 6) == 0) {
            char dur[64];
            int64_t ms;
            const char *d = expr + len + strspn(expr + len, " \t");
            size_t dl = strcspn(d, " \t\n");
            if (dl == 0 || dl >= sizeof(dur) || d[dl + strspn(d + dl, " \t\n")])
                return ty_seterr(err, TY_EINVALID, "failed to parse duration in @every");
            memcpy(dur, d, dl);
            dur[dl] = '\0';
            if (ty_duration_parse(dur, &ms) < 0)
                return ty_seterr(err, TY_EINVALID, "failed to parse duration %s", dur);
            /* Whole seconds, at least one, as robfig's ConstantDelaySchedule. */
            spec.every = ms / 1000 > 0 ? ms / 1000 : 1;
            *out = spec;
            return 0;
        }
        return ty_seterr(err, TY_EINVALID, "unrecognized descriptor: %.*s",
                         (int)(len > 32 ? 32 : len), expr);
    }
    p = expr;
    while (*p) {
        size_t len = strcspn(p, " \t\n");
        if (n == 5)
            return ty_seterr(err, TY_EINVALID, "expected exactly 5 fields, found more: %s", expr);
        if (parse_field(p, len, &fields[n], &bits[n], &star[n], err) < 0)
            return -1;
        n++;
        p += len;
        p += strspn(p, " \t\n");
    }
    if (n != 5)
        return ty_seterr(err, TY_EINVALID, "expected exactly 5 fields, found %d: %s", n, expr);
    spec.minute = bits[0];
    spec.hour = (uint32_t)bits[1];
    spec.dom = (uint32_t)bits[2];
    spec.month = (uint32_t)bits[3];
    spec.dow = (uint32_t)bits[4];
    spec.dom_star = star[2];
    spec.dow_star = star[4];
    *out = spec;
    return 0;
}

/* ---- the next time ------------------------------------------------------ */

static bool day_matches(const cron_spec *s, const struct tm *tm)
{
    bool dom = s->dom >> tm->tm_mday & 1, dow = s->dow >> tm->tm_wday & 1;

    if (s->dom_star || s->dow_star)
        return dom && dow;
    return dom || dow;
}

/* The UTC instant to look at next, given that no wall-clock time before
 * local (seconds since the epoch, as if the wall clock were UTC) matches and
 * we are at u. An offset that changes on the way could make the plain
 * conversion land past `local`'s instant; the earlier of the conversions with
 * the offsets at both ends is never past it. */
static int64_t toward(const tz_zone *z, int64_t u, int64_t local)
{
    int64_t u1 = local - tz_offset(z, u), u2 = local - tz_offset(z, u1);
    int64_t next = u1 < u2 ? u1 : u2;

    return next > u ? next : u + 60;
}

int64_t cron_next(const cron_spec *spec, const tz_zone *z, int64_t t)
{
    int64_t u, local;
    struct tm tm;
    time_t lt;
    int year0;

    if (spec->every > 0)
        return t + spec->every;
    /* The next local minute boundary after t. */
    local = t + tz_offset(z, t);
    local = (local >= 0 ? local / 60 : (local - 59) / 60) * 60 + 60;
    u = toward(z, t, local);
    lt = (time_t)(t + tz_offset(z, t));
    if (!gmtime_r(&lt, &tm))
        return 0;
    year0 = tm.tm_year;
    for (;;) {
        local = u + tz_offset(z, u);
        lt = (time_t)local;
        if (!gmtime_r(&lt, &tm) || tm.tm_year > year0 + YEARS_AHEAD)
            return 0;
        if (!(spec->month >> (tm.tm_mon + 1) & 1)) {
            tm.tm_mon++;
            tm.tm_mday = 1;
            tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        } else if (!day_matches(spec, &tm)) {
            tm.tm_mday++;
            tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        } else if (!(spec->hour >> tm.tm_hour & 1)) {
            tm.tm_hour++;
            tm.tm_min = tm.tm_sec = 0;
        } else if (!(spec->minute >> tm.tm_min & 1)) {
            tm.tm_min++;
            tm.tm_sec = 0;
        } else {
            return u;
        }
        u = toward(z, u, (int64_t)timegm(&tm));
    }
}
