/* events.c - recording Events through the client interface.
 *
 * Recording is asynchronous, as in Kubernetes' event recorder: an Event is
 * a RECORD write (kc.h) that nobody waits for; the embedded client queues
 * it to the store, which commits it with another writer's batch, so a
 * controller writing an Event per pod it creates or binds never waits for
 * a transaction of its own. A repeat finds the Event by its name and bumps
 * it (ty_event_bump) instead of a lookup first. */
#include "client/events.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonout.h"
#include "base/log.h"
#include "base/timeutil.h"

/* A repeat: one more, seen now. */
int ty_event_bump(json_t *ev, void *arg, ty_error *err)
{
    json_int_t count = json_integer_value(json_object_get(ev, "count"));
    char now[40];
    (void)arg, (void)err;
    ty_time_now(now, sizeof(now));
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

/* Appends "key":"value" (with a leading comma unless first); false when
 * value is not UTF-8 or memory ran out. */
static bool member(ty_buf *b, bool first, const char *key, const char *value)
{
    return (first || ty_buf_append(b, ",", 1) == 0) && ty_buf_puts(b, key) == 0 &&
           ty_json_append_str(b, value, strlen(value)) == 0;
}

/* The Event's text as kc_op_record_text takes it (*meta_end: the '}'
 * closing its metadata); NULL when a string is not UTF-8 or memory ran out.
 * The members and their order are those of an Event written by a tree. */
static char *event_text(const char *evname, const char *ns, const json_t *involved,
                        const char *name, const char *type, const char *reason,
                        const char *component, const char *msg, size_t *len, size_t *meta_end)
{
    const json_t *meta = json_object_get(involved, "metadata");
    const char *api = json_string_value(json_object_get(involved, "apiVersion"));
    const char *kind = json_string_value(json_object_get(involved, "kind"));
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    char now[40];
    ty_buf b = {0};
    bool ok;

    ty_time_now(now, sizeof(now));
    ok = ty_buf_puts(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{") == 0 &&
         member(&b, true, "\"name\":", evname) && member(&b, false, "\"namespace\":", ns);
    *meta_end = b.len;
    /* involvedObject: what the object has of apiVersion, kind, uid and rv */
    ok = ok && ty_buf_puts(&b, "},\"involvedObject\":{") == 0 &&
         (!api || member(&b, true, "\"apiVersion\":", api)) &&
         (!kind || member(&b, !api, "\"kind\":", kind)) &&
         member(&b, !api && !kind, "\"name\":", name) &&
         member(&b, false, "\"namespace\":", ns) &&
         (!uid || member(&b, false, "\"uid\":", uid)) &&
         (!rv || member(&b, false, "\"resourceVersion\":", rv)) &&
         ty_buf_puts(&b, "}") == 0 && member(&b, false, "\"reason\":", reason) &&
         member(&b, false, "\"message\":", msg) && member(&b, false, "\"type\":", type) &&
         ty_buf_puts(&b, ",\"source\":{") == 0 &&
         member(&b, true, "\"component\":", component) && ty_buf_puts(&b, "}") == 0 &&
         member(&b, false, "\"firstTimestamp\":", now) &&
         member(&b, false, "\"lastTimestamp\":", now) &&
         ty_buf_puts(&b, ",\"count\":1") == 0 &&
         member(&b, false, "\"reportingComponent\":", component) &&
         member(&b, false, "\"reportingInstance\":", component) && ty_buf_puts(&b, "}") == 0;
    *len = b.len;
    /* the name trails the JSON (kc_op_record_text) */
    if (!ok || ty_buf_append(&b, "", 1) < 0 || ty_buf_puts(&b, evname) < 0) {
        ty_buf_free(&b);
        return NULL;
    }
    return ty_buf_steal(&b, NULL);
}

/* The op that records the Event (its namespace borrowed from involved);
 * false when it cannot be built. Built as text: Events are a third of the
 * objects a training job writes and nothing in the server reads them as
 * trees. */
static bool vevent_op(kc_op *op, const json_t *involved, const char *type, const char *reason,
                      const char *component, const char *fmt, va_list ap)
{
    const json_t *meta = json_object_get(involved, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    char msg[1024], evname[320], *text;
    size_t len, meta_end;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (!name)
        return false;
    if (!ns || !*ns)
        ns = "default";
    snprintf(evname, sizeof(evname), "%.200s.%016llx", name,
             (unsigned long long)fnv1a(uid, reason, msg, component));
    text = event_text(evname, ns, involved, name, type, reason, component, msg, &len, &meta_end);
    if (!text) {
        ty_debug("event %s/%s not recorded: not UTF-8, or out of memory", ns, evname);
        return false;
    }
    /* A repeat (same name) bumps the Event that is there. */
    *op = kc_op_record_text("events", ns, text, len, meta_end, ty_event_bump, NULL);
    return true;
}

void ty_event(ty_kc *s, const json_t *involved, const char *type, const char *reason,
              const char *component, const char *fmt, ...)
{
    kc_op op;
    va_list ap;
    bool ok;

    va_start(ap, fmt);
    ok = vevent_op(&op, involved, type, reason, component, fmt, ap);
    va_end(ap);
    /* A record alone: nobody waits, it joins the batch being committed, if
     * any, ahead of whatever this thread writes next. */
    if (ok)
        kc_write_all(s, &op, 1);
}

bool ty_event_op(kc_op *op, const json_t *involved, const char *type, const char *reason,
                 const char *component, const char *fmt, ...)
{
    va_list ap;
    bool ok;

    va_start(ap, fmt);
    ok = vevent_op(op, involved, type, reason, component, fmt, ap);
    va_end(ap);
    return ok;
}
