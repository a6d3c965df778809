/* timeutil.h - wall-clock helpers in the formats Kubernetes uses. */
#ifndef TY_BASE_TIMEUTIL_H
#define TY_BASE_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* RFC 3339 in UTC with second precision: "2026-11-21T23:38:50Z". buf >= 21 bytes. */
void ty_time_format(time_t t, char *buf, size_t len);
/* Parses RFC 3339 ("...Z" or "+hh:mm", fractional seconds allowed). -1 on error. */
int ty_time_parse(const char *s, time_t *out);
/* Kubernetes' short human duration as kubectl prints ages: "45s", "3m12s", "5h", "2d3h". */
void ty_duration_human(int64_t seconds, char *buf, size_t len);
/* A duration as Go writes one (kube-apiserver's --event-ttl): numbers with
 * units h, m, s or ms, fractions allowed ("1h", "1h30m", "90s", "1.5h",
 * "250ms"), or "0". Milliseconds into *ms; -1 when s is not one. */
int ty_duration_parse(const char *s, int64_t *ms);
/* Monotonic milliseconds. */
int64_t ty_now_ms(void);
/* The absolute time ms milliseconds from now on clock (for
 * pthread_cond_timedwait, futex waits: the clock the waiter uses). */
struct timespec ty_deadline_ms(clockid_t clock, int64_t ms);

#endif
