#include "base/timeutil.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- RFC 3339 ---------------------------------------------------------- */

int64_t ty_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Date and time of t (UTC seconds) into "YYYY-MM-DDTHH:MM:SS"; the number
 * of bytes written, or 0 when it does not fit (buf then ""). */
static size_t format_seconds(time_t t, char *buf, size_t len)
{
    struct tm tm;
    int n;

    if (!len)
        return 0;
    buf[0] = '\0';
    if (!gmtime_r(&t, &tm))
        return 0;
    n = snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    if (n < 0 || (size_t)n >= len) {
        buf[0] = '\0';
        return 0;
    }
    return (size_t)n;
}

/* Appends text to buf[n..len), or makes buf "" when it does not fit. */
static void finish(char *buf, size_t len, size_t n, const char *text)
{
    size_t tl = strlen(text);

    if (!n || n + tl >= len) {
        if (len)
            buf[0] = '\0';
        return;
    }
    memcpy(buf + n, text, tl + 1);
}

void ty_time_format(time_t t, char *buf, size_t len)
{
    finish(buf, len, format_seconds(t, buf, len), "Z");
}

void ty_time_now(char *buf, size_t len)
{
    ty_time_format(time(NULL), buf, len);
}

void ty_time_format_frac(struct timespec ts, int digits, char *buf, size_t len)
{
    char frac[32]; /* room for any long: -Wformat-truncation cannot see ns < 1e9 */
    long ns = ts.tv_nsec;

    if (digits < 0)
        digits = 0;
    if (digits > 9)
        digits = 9;
    if (ns < 0 || ns > 999999999L)
        ns = 0;
    for (int i = digits; i < 9; i++)
        ns /= 10;
    if (digits)
        snprintf(frac, sizeof(frac), ".%0*ldZ", digits, ns);
    else
        snprintf(frac, sizeof(frac), "Z");
    finish(buf, len, format_seconds(ts.tv_sec, buf, len), frac);
}

void ty_time_now_frac(int digits, char *buf, size_t len)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ty_time_format_frac(ts, digits, buf, len);
}

void ty_time_format_offset(time_t t, int32_t offset, char *buf, size_t len)
{
    char zone[8];
    int32_t a = offset < 0 ? -offset : offset;

    if (offset == 0) {
        ty_time_format(t, buf, len);
        return;
    }
    snprintf(zone, sizeof(zone), "%c%02d:%02d", offset < 0 ? '-' : '+', (int)(a / 3600 % 100),
             (int)(a % 3600 / 60));
    finish(buf, len, format_seconds(t + offset, buf, len), zone);
}

/* n decimal digits at *p into *v; false when one is not a digit. */
static bool digits_at(const char **p, int n, int *v)
{
    int x = 0;

    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return false;
        x = x * 10 + (c - '0');
    }
    *p += n;
    *v = x;
    return true;
}

static bool leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : days[m - 1];
}

int ty_time_parse_flags(const char *s, unsigned flags, struct timespec *out)
{
    int y, mo, d, h, mi, sec, oh = 0, om = 0;
    long ns = 0;
    int64_t off = 0;
    const char *p = s;

    if (!s || !digits_at(&p, 4, &y) || *p++ != '-' || !digits_at(&p, 2, &mo) || *p++ != '-' ||
        !digits_at(&p, 2, &d))
        return -1;
    if (!(*p == 'T' || (*p == ' ' && (flags & TY_TIME_SPACE))))
        return -1;
    p++;
    if (!digits_at(&p, 2, &h) || *p++ != ':' || !digits_at(&p, 2, &mi) || *p++ != ':' ||
        !digits_at(&p, 2, &sec))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) || h > 23 || mi > 59 || sec > 59)
        return -1;
    if (*p == '.') {
        int nd = 0;
        p++;
        for (; *p >= '0' && *p <= '9'; p++, nd++)
            if (nd < 9)
                ns = ns * 10 + (*p - '0');
        if (!nd)
            return -1;
        for (; nd < 9; nd++)
            ns *= 10;
    }
    if (*p == 'Z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '+' ? 1 : -1;
        if (!digits_at(&p, 2, &oh) || *p++ != ':' || !digits_at(&p, 2, &om) || oh > 23 ||
            om > 59)
            return -1;
        off = sign * (oh * 3600 + om * 60);
    } else if (!(*p == '\0' && (flags & TY_TIME_NOZONE))) {
        return -1;
    }
    if (*p)
        return -1;
    out->tv_sec = (time_t)(ty_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
                           off);
    out->tv_nsec = ns;
    return 0;
}

int ty_time_parse_ts(const char *s, struct timespec *out)
{
    return ty_time_parse_flags(s, 0, out);
}

int ty_time_parse(const char *s, time_t *out)
{
    struct timespec ts;

    if (ty_time_parse_flags(s, 0, &ts) < 0)
        return -1;
    *out = ts.tv_sec;
    return 0;
}

/* ---- durations ----------------------------------------------------------- */

int ty_duration_parse(const char *s, int64_t *ms)
{
    static const struct {
        const char *unit;
        double ms;
    } units[] = {{"ms", 1}, {"h", 3600e3}, {"m", 60e3}, {"s", 1e3}};
    double total = 0;

    if (!s || !*s)
        return -1;
    if (strcmp(s, "0") == 0) {
        *ms = 0;
        return 0;
    }
    while (*s) {
        size_t len = strspn(s, "0123456789."), digits = 0, points = 0, i;
        size_t n = sizeof(units) / sizeof(units[0]);
        char num[32];

        for (size_t k = 0; k < len; k++)
            isdigit((unsigned char)s[k]) ? digits++ : points++;
        /* Digits with at most one point (strtod alone would take "1e3"). */
        if (!digits || points > 1 || len >= sizeof(num))
            return -1;
        memcpy(num, s, len);
        num[len] = '\0';
        s += len;
        for (i = 0; i < n && strncmp(s, units[i].unit, strlen(units[i].unit)) != 0; i++)
            ;
        if (i == n)
            return -1;
        total += strtod(num, NULL) * units[i].ms;
        s += strlen(units[i].unit);
    }
    if (total > 9.2e15)
        return -1;
    *ms = (int64_t)(total + 0.5);
    return 0;
}

/* Mirrors the rounding kubectl's HumanDuration uses so ages read the same. */
void ty_duration_human(int64_t s, char *buf, size_t len)
{
    if (s < 0)
        s = 0;
    if (s < 120) {
        snprintf(buf, len, "%llds", (long long)s);
    } else if (s < 600) {
        int64_t m = s / 60, r = s % 60;
        if (r == 0)
            snprintf(buf, len, "%lldm", (long long)m);
        else
            snprintf(buf, len, "%lldm%llds", (long long)m, (long long)r);
    } else if (s < 3 * 3600) {
        snprintf(buf, len, "%lldm", (long long)(s / 60));
    } else if (s < 8 * 3600) {
        int64_t h = s / 3600, m = (s % 3600) / 60;
        if (m == 0)
            snprintf(buf, len, "%lldh", (long long)h);
        else
            snprintf(buf, len, "%lldh%lldm", (long long)h, (long long)m);
    } else if (s < 48 * 3600) {
        snprintf(buf, len, "%lldh", (long long)(s / 3600));
    } else if (s < 8 * 86400) {
        int64_t d = s / 86400, h = (s % 86400) / 3600;
        if (h == 0)
            snprintf(buf, len, "%lldd", (long long)d);
        else
            snprintf(buf, len, "%lldd%lldh", (long long)d, (long long)h);
    } else if (s < 2 * 365 * 86400LL) {
        snprintf(buf, len, "%lldd", (long long)(s / 86400));
    } else {
        snprintf(buf, len, "%lldy", (long long)(s / (365 * 86400LL)));
    }
}

int64_t ty_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct timespec ty_deadline_ms(clockid_t clock, int64_t ms)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}
