/* bench_util.h - clocks, latency summaries and /proc readings shared by the
 * benchmark drivers (each bench .c file is its own program, so these are static
 * inline rather than a library). */
#ifndef TY_BENCH_UTIL_H
#define TY_BENCH_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_MS 1000000.0

typedef struct lat_summary {
    size_t n;
    double mean_ms, p50_ms, p90_ms, p99_ms, max_ms;
} lat_summary;

static inline int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t mono_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

/* Delivery across processes uses the wall clock that both share on one host. */
static inline int64_t real_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

static inline void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static inline int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array; permille 500 = p50. */
static inline double pct_ms(const int64_t *sorted, size_t n, unsigned permille)
{
    size_t k = (permille * n + 999) / 1000;
    if (n == 0)
        return 0;
    if (k == 0)
        k = 1;
    return (double)sorted[(k > n ? n : k) - 1] / NS_PER_MS;
}

/* Sorts v in place. */
static inline void lat_summarize(int64_t *v, size_t n, lat_summary *out)
{
    double sum = 0;
    memset(out, 0, sizeof(*out));
    if (n == 0)
        return;
    qsort(v, n, sizeof(*v), cmp_i64);
    for (size_t i = 0; i < n; i++)
        sum += (double)v[i];
    out->n = n;
    out->mean_ms = sum / (double)n / NS_PER_MS;
    out->p50_ms = pct_ms(v, n, 500);
    out->p90_ms = pct_ms(v, n, 900);
    out->p99_ms = pct_ms(v, n, 990);
    out->max_ms = (double)v[n - 1] / NS_PER_MS;
}

/* utime + stime of a process, from /proc/PID/stat; -1 when unreadable. */
static inline double proc_cpu_s(long pid)
{
    char path[64], line[1024], *p;
    unsigned long long ut, st;
    FILE *f;

    if (pid <= 0)
        return -1;
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    p = fgets(line, sizeof(line), f);
    fclose(f);
    /* The command name may hold spaces; fields count from its closing ')'. */
    if (!p || !(p = strrchr(line, ')')))
        return -1;
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

#endif
