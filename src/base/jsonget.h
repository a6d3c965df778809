/* jsonget.h - reading strings out of a jansson tree without NULL checks.
 *
 * Most readers of an object want "the string at this key, or nothing": a
 * missing key, a null, a number where a string belongs all read as "", so
 * that the answer can go straight to strcmp, printf or a buffer. These are
 * the one copy of that accessor (it used to be written out in a dozen
 * files). Header-only, so that the small programs that link a few base files
 * (trainyard-supervise) can use it too.
 *
 * Every result is borrowed from the tree (or a static ""): valid while the
 * tree holds the value. */
#ifndef TY_BASE_JSONGET_H
#define TY_BASE_JSONGET_H

#include <jansson.h>
#include <stdarg.h>

/* obj[key] when it is a string, else "" (obj NULL or not an object, key
 * missing, value null or of another type). */
static inline const char *ty_jstr(const json_t *obj, const char *key)
{
    const char *v = json_string_value(json_object_get(obj, key));
    return v ? v : "";
}

/* The string at a path of object keys, ended by NULL:
 * ty_jpath(pod, "status", "phase", NULL). "" when any step is missing or
 * not an object, or the last value is not a string. Keys are taken whole
 * (annotation keys with dots and slashes need no escaping). */
static inline const char *ty_jpath(const json_t *obj, ...)
{
    va_list ap;
    const char *key;
    const char *v;

    va_start(ap, obj);
    while ((key = va_arg(ap, const char *)) != NULL)
        obj = json_object_get(obj, key);
    va_end(ap);
    v = json_string_value(obj);
    return v ? v : "";
}

/* obj.metadata[key] as ty_jstr reads it: name, namespace, uid, ... */
static inline const char *ty_jmeta(const json_t *obj, const char *key)
{
    return ty_jstr(json_object_get(obj, "metadata"), key);
}

#endif
