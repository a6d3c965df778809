/* timeutil.h - wall-clock helpers in the formats Kubernetes uses. */
#ifndef TY_BASE_TIMEUTIL_H
#define TY_BASE_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* RFC 3339 timestamps, the one place that writes and reads them (objects'
 * metav1.Time and MicroTime, container log lines, the server's log, the
 * store's quarantine rows, trace files). Writing needs no locale and no TZ;
 * a buffer too small gets "" (never a cut timestamp). */

/* Buffer sizes: seconds ("2026-11-21T23:38:50Z") and with 9 digits of
 * fraction and an offset ("2026-11-21T23:38:50.123456789+05:30"). */
#define TY_TIME_LEN 21
#define TY_TIME_FRAC_LEN 36

/* RFC 3339 in UTC with second precision: "2026-11-21T23:38:50Z" (metav1.Time:
 * creationTimestamp, conditions' lastTransitionTime, ...). */
void ty_time_format(time_t t, char *buf, size_t len);
/* ty_time_format of the wall clock now. */
void ty_time_now(char *buf, size_t len);
/* With `digits` digits of fraction, always written (0..9; outside, clamped):
 * 6 is metav1.MicroTime ("2026-11-21T23:38:50.000123Z": Events' eventTime,
 * Leases' renewTime), 9 a container log line's timestamp, 3 the log's. */
void ty_time_format_frac(struct timespec ts, int digits, char *buf, size_t len);
/* ty_time_format_frac of the wall clock now. */
void ty_time_now_frac(int digits, char *buf, size_t len);
/* In a zone `offset` seconds east of UTC, as Go writes RFC 3339: the local
 * wall time and "+05:30", or "Z" for a zero offset. t is UTC seconds. */
void ty_time_format_offset(time_t t, int32_t offset, char *buf, size_t len);

/* Parses RFC 3339: YYYY-MM-DDTHH:MM:SS, a fraction of any number of digits
 * (the first 9 kept), then "Z" or "+hh:mm"/"-hh:mm"; upper case 'T' and
 * 'Z' only, as Go's time.RFC3339 (kube-apiserver) reads them. Every field
 * is range-checked (the day against its month and leap years, hours < 24,
 * seconds < 60 as Go has it); nothing may follow. 0, or -1 with *out
 * untouched. */
int ty_time_parse(const char *s, time_t *out);
/* The same keeping the fraction in tv_nsec. */
int ty_time_parse_ts(const char *s, struct timespec *out);
/* Looser forms for inputs that are not RFC 3339 (trace files):
 * TY_TIME_SPACE lets a space separate date and time, TY_TIME_NOZONE lets
 * the zone be missing (then UTC). */
#define TY_TIME_SPACE 1u
#define TY_TIME_NOZONE 2u
int ty_time_parse_flags(const char *s, unsigned flags, struct timespec *out);
/* Days from 1970-01-01 to a proleptic Gregorian date (month 1-12): the
 * calendar arithmetic the above use, free of the C library's zone. */
int64_t ty_days_from_civil(int64_t y, int m, int d);
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
