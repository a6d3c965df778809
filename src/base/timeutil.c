#include "base/timeutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ty_time_format(time_t t, char *buf, size_t len)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int ty_time_parse(const char *s, time_t *out)
{
    struct tm tm = {0};
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    long off = 0;

    if (!p)
        return -1;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int hh, mm;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
            return -1;
        off = (hh * 3600L + mm * 60L) * (*p == '+' ? 1 : -1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    *out = timegm(&tm) - off;
    return 0;
}

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
