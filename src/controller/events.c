/* events.c - recording Events through the store.
 *
 * Recording is asynchronous, as in Kubernetes' event recorder: an Event is
 * queued to the store (store_create_async) and the caller goes on while
 * another writer commits it with its own batch. A controller writing an
 * Event per pod it creates or binds used to wait for a transaction of its
 * own each time (after a failed lookup for a repeat, which cost a round
 * through the writer too). */
#include "controller/events.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/timeutil.h"

/* A repeat: one more, seen now. */
int ty_event_bump(json_t *ev, void *arg, ty_error *err)
{
    json_int_t count = json_integer_value(json_object_get(ev, "count"));
    char now[40];
    (void)arg, (void)err;
    ty_time_format(time(NULL), now, sizeof(now));
    json_object_set_new(ev, "count", json_integer(count > 0 ? count + 1 : 2));
    json_object_set_new(ev, "lastTimestamp", json_string(now));
    return 0;
}

/* FNV-1a: a short, stable suffix that names one (object, reason, message). */
static uint64_t fnv1a(const char *a, const char *b, const char *c, const char *d)
{
    const char *parts[] = {a, b, c, d};
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < 4; i++) {
        for (const char *p = parts[i] ? parts[i] : ""; *p; p++) {
            h ^= (unsigned char)*p;
            h *= 1099511628211ULL;
        }
        h ^= 0xff;
        h *= 1099511628211ULL;
    }
    return h;
}

/* The op that records the Event (its namespace borrowed from involved);
 * false when it cannot be built. */
static bool vevent_op(store_op *op, const json_t *involved, const char *type, const char *reason,
                      const char *component, const char *fmt, va_list ap)
{
    const json_t *meta = json_object_get(involved, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    char msg[1024], evname[320], now[40];
    json_t *ev;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (!name)
        return false;
    if (!ns || !*ns)
        ns = "default";
    ty_time_format(time(NULL), now, sizeof(now));
    snprintf(evname, sizeof(evname), "%.200s.%016llx", name,
             (unsigned long long)fnv1a(uid, reason, msg, component));
    ev = json_pack(
        "{s:s, s:s, s:{s:s, s:s}, s:{s:O*, s:O*, s:s, s:s, s:O*, s:O*}, s:s, s:s, s:s, "
        "s:{s:s}, s:s, s:s, s:i, s:s, s:s}",
        "apiVersion", "v1", "kind", "Event", "metadata", "name", evname, "namespace", ns,
        "involvedObject", "apiVersion", json_object_get(involved, "apiVersion"), "kind",
        json_object_get(involved, "kind"), "name", name, "namespace", ns, "uid",
        json_object_get(meta, "uid"), "resourceVersion", json_object_get(meta, "resourceVersion"),
        "reason", reason, "message", msg, "type", type, "source", "component", component,
        "firstTimestamp", now, "lastTimestamp", now, "count", 1, "reportingComponent",
        component, "reportingInstance", component);
    if (!ev) {
        ty_debug("event %s/%s not recorded: out of memory", ns, evname);
        return false;
    }
    /* A repeat (same name) bumps the Event that is there. */
    *op = store_op_record("events", ns, ev, ty_event_bump, NULL);
    return true;
}

void ty_event(ty_store *s, const json_t *involved, const char *type, const char *reason,
              const char *component, const char *fmt, ...)
{
    store_op op;
    va_list ap;
    bool ok;

    va_start(ap, fmt);
    ok = vevent_op(&op, involved, type, reason, component, fmt, ap);
    va_end(ap);
    /* A record alone: nobody waits, it joins the batch being committed, if
     * any, ahead of whatever this thread writes next. */
    if (ok)
        store_write_all(s, &op, 1);
}

bool ty_event_op(store_op *op, const json_t *involved, const char *type, const char *reason,
                 const char *component, const char *fmt, ...)
{
    va_list ap;
    bool ok;

    va_start(ap, fmt);
    ok = vevent_op(op, involved, type, reason, component, fmt, ap);
    va_end(ap);
    return ok;
}
