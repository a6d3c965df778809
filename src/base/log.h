/* log.h - leveled logging to stderr, one line per message. */
#ifndef TY_BASE_LOG_H
#define TY_BASE_LOG_H

typedef enum { TY_LOG_DEBUG, TY_LOG_INFO, TY_LOG_WARN, TY_LOG_ERROR } ty_log_level;

void ty_log_set_level(ty_log_level level);
/* Parses "debug", "info", "warn", "error". Returns -1 on an unknown name. */
int ty_log_parse_level(const char *name, ty_log_level *out);
void ty_log(ty_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define ty_debug(...) ty_log(TY_LOG_DEBUG, __VA_ARGS__)
#define ty_info(...) ty_log(TY_LOG_INFO, __VA_ARGS__)
#define ty_warn(...) ty_log(TY_LOG_WARN, __VA_ARGS__)
#define ty_errlog(...) ty_log(TY_LOG_ERROR, __VA_ARGS__)

#endif
