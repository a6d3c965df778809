/* kind_core_int.h - small helpers shared by the core kind files
 * (kind_core.c, kind_service.c). */
#ifndef TY_API_KIND_CORE_INT_H
#define TY_API_KIND_CORE_INT_H

#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "api/registry.h"

#define PATH_LEN 256

static inline bool in_set(const char *s, const char *const *set)
{
    for (size_t i = 0; s && set[i]; i++)
        if (strcmp(s, set[i]) == 0)
            return true;
    return false;
}

static inline const char *or_str(const char *s, const char *dflt)
{
    return s && *s ? s : dflt;
}

static inline void age_cell(const json_t *obj, time_t now, json_t *cells)
{
    char buf[32];
    api_age(obj, now, buf, sizeof(buf));
    json_array_append_new(cells, json_string(buf));
}

static inline int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

#define AGE_COLUMN {"Age", "string", "", "CreationTimestamp is a timestamp representing " \
    "the server time when this object was created.", 0}
#define NCOLS(a) (sizeof(a) / sizeof((a)[0]))

#endif
