/* cron.h - cron schedules as Volcano's and Kubernetes' CronJobs read them.
 *
 * The syntax is the "standard" one their controllers parse (robfig/cron's
 * ParseStandard): five fields, minute hour day-of-month month day-of-week,
 * each `*`, `?` (day fields), a value, a range `a-b`, a step `*`/n, `a-b/n`
 * or `a/n` (a up to the field's maximum), or a comma list of those; months
 * JAN-DEC and days SUN-SAT by name (any case), days of week 0-6 (Sunday 0);
 * or a descriptor @yearly, @annually, @monthly, @weekly, @daily, @midnight,
 * @hourly, or @every <duration> (Go's syntax: "1h30m", "90s"). When both day
 * fields are restricted, a day matches either; when one is `*` or `?` (or a
 * `*`/1 step), both must match.
 *
 * Debian ships no C library for this (cron daemons keep their parsers to
 * themselves), hence this small one. Times are computed in a zone of
 * base/tzfile.h, so any thread may use any zone.
 */
#ifndef TY_BASE_CRON_H
#define TY_BASE_CRON_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/tzfile.h"

#define CRON_MAX_LEN 256 /* longer expressions are refused */

typedef struct cron_spec {
    uint64_t minute;  /* bit m: minute m (0-59) */
    uint32_t hour;    /* bit h: hour h (0-23) */
    uint32_t dom;     /* bit d: day of month d (1-31) */
    uint32_t month;   /* bit m: month m (1-12) */
    uint32_t dow;     /* bit d: day of week d (0-6, Sunday 0) */
    bool dom_star;    /* the field was `*` or `?`: it does not widen the days */
    bool dow_star;
    int64_t every;    /* @every: the interval in seconds (at least 1); else 0 */
} cron_spec;

/* Parses expr into *out. -1 with TY_EINVALID (a message naming the bad field)
 * when it is not a schedule; *out is untouched then. */
int cron_parse(const char *expr, cron_spec *out, ty_error *err);

/* The first time of spec strictly after t (seconds since the epoch), its
 * fields read as wall-clock time in zone z (NULL: UTC). A wall-clock time
 * that a daylight-saving change skips does not happen; one that it repeats
 * happens at each occurrence. 0 when none comes within five years (a
 * schedule for February 30th). */
int64_t cron_next(const cron_spec *spec, const tz_zone *z, int64_t t);

#endif
