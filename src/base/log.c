#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/timeutil.h"

static ty_log_level min_level = TY_LOG_INFO;
static const char *names[] = {"debug", "info", "warn", "error"};

void ty_log_set_level(ty_log_level level)
{
    min_level = level;
}

int ty_log_parse_level(const char *name, ty_log_level *out)
{
    for (int i = 0; i < 4; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (ty_log_level)i;
            return 0;
        }
    }
    return -1;
}

void ty_log(ty_log_level level, const char *fmt, ...)
{
    char line[2048], now[TY_TIME_FRAC_LEN];
    va_list ap;
    int n;

    if (level < min_level)
        return;
    ty_time_now_frac(3, now, sizeof(now));
    n = snprintf(line, sizeof(line), "%s %-5s ", now, names[level]);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    /* One fputs per line keeps lines from different threads whole. */
    strncat(line, "\n", sizeof(line) - strlen(line) - 1);
    fputs(line, stderr);
}
