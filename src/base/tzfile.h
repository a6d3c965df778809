/* tzfile.h - UTC offsets from the system's time zone database, without TZ.
 *
 * localtime_r answers for one zone per process, the one in the TZ variable,
 * and changing that variable while other threads read it is undefined. A
 * CronJob's spec.timeZone names its own zone, so the zone's TZif file
 * (RFC 8536) under /usr/share/zoneinfo is read here into a table of
 * transitions that any thread may consult.
 *
 * Past the file's last transition the last offset holds: the POSIX rule in
 * the file's footer is not read. Debian's tzdata files list transitions up to
 * 2037, so this matters only for schedules decades ahead.
 */
#ifndef TY_BASE_TZFILE_H
#define TY_BASE_TZFILE_H

#include <stdint.h>

#include "base/error.h"

typedef struct tz_zone tz_zone;

/* Loads zone name ("Europe/Berlin", "UTC") from dir (NULL: /usr/share/zoneinfo),
 * or, when name is NULL, the process's local zone (/etc/localtime; UTC when
 * that is missing). A name that is empty, absolute, has a "." or ".." part, or
 * names no valid TZif file fails with TY_EINVALID. Caller frees with tz_free. */
tz_zone *tz_load(const char *dir, const char *name, ty_error *err);

/* A zone from TZif bytes (tests and fuzzing). Caller frees. */
tz_zone *tz_parse(const unsigned char *data, size_t len, ty_error *err);

/* The zone that is always UTC. Caller frees. */
tz_zone *tz_utc(void);

/* Seconds east of UTC in effect at utc (seconds since the epoch). */
int32_t tz_offset(const tz_zone *z, int64_t utc);

/* NULL is fine. */
void tz_free(tz_zone *z);

#endif
