/* kc_record.c - RECORD ops (kc.h: Events) run one request at a time, over
 * a client whose writes are requests (HTTP), with repeats made cheap.
 *
 * A repeat of an Event (the same name: events.c names one by its object,
 * reason, message and component) is a create that finds the name taken;
 * alone that costs three requests (POST 409, GET, PUT). Kubernetes' event
 * recorder keeps the Events it wrote in a bounded cache and sends a repeat
 * as one PATCH of count and lastTimestamp; so does this: the last count
 * written under each name is remembered (at most KCR_MAX names, the least
 * recently used forgotten first), and a repeat is fn applied to
 * {"count": N}, sent as a merge patch. An Event gone meanwhile (the
 * server's Event TTL) is created again. Another writer's bumps of the same
 * Event are not known here: the count then says this process's repeats, as
 * upstream's does. */
#include "client/kc_record.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/strmap.h"

/* Names remembered at most (client-go's cache holds 4,096 Events). */
#define KCR_MAX 4096

typedef struct kcr_entry {
    struct kcr_entry *prev, *next; /* most recently used first */
    const ty_kc *client;
    json_int_t count;
    char key[]; /* client pointer, resource, ns, name */
} kcr_entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static strmap by_key;
static kcr_entry *head, *tail;
static size_t n_entries;

static void unlink_entry(kcr_entry *e)
{
    *(e->prev ? &e->prev->next : &head) = e->next;
    *(e->next ? &e->next->prev : &tail) = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(kcr_entry *e)
{
    e->next = head;
    if (head)
        head->prev = e;
    head = e;
    if (!tail)
        tail = e;
}

static void drop(kcr_entry *e)
{
    unlink_entry(e);
    strmap_del(&by_key, e->key);
    n_entries--;
    free(e);
}

static void make_key(char *key, size_t len, const ty_kc *c, const char *resource,
                     const char *ns, const char *name)
{
    snprintf(key, len, "%p\x01%s\x01%s\x01%s", (const void *)c, resource, ns ? ns : "", name);
}

/* The count last written under key, 0 when not known. */
static json_int_t recall(const char *key)
{
    json_int_t n = 0;
    kcr_entry *e;

    pthread_mutex_lock(&mu);
    if (by_key.cap && (e = strmap_get(&by_key, key))) {
        n = e->count;
        unlink_entry(e);
        push_front(e);
    }
    pthread_mutex_unlock(&mu);
    return n;
}

static void forget(const char *key)
{
    kcr_entry *e;

    pthread_mutex_lock(&mu);
    if (by_key.cap && (e = strmap_get(&by_key, key)))
        drop(e);
    pthread_mutex_unlock(&mu);
}

/* Remembers the count of o (what the server answered) under key. */
static void remember(const ty_kc *c, const char *key, const ty_obj *o)
{
    json_int_t count = json_integer_value(json_object_get(ty_obj_json(o), "count"));
    size_t len = strlen(key) + 1;
    kcr_entry *e;

    if (count < 1)
        count = 1;
    pthread_mutex_lock(&mu);
    if (!by_key.cap)
        strmap_init(&by_key);
    if ((e = strmap_get(&by_key, key))) {
        e->count = count;
        unlink_entry(e);
        push_front(e);
    } else if ((e = calloc(1, sizeof(*e) + len))) {
        memcpy(e->key, key, len);
        e->client = c;
        e->count = count;
        if (strmap_put(&by_key, e->key, e) < 0) {
            free(e);
        } else {
            push_front(e);
            if (++n_entries > KCR_MAX)
                drop(tail);
        }
    }
    pthread_mutex_unlock(&mu);
}

/* A repeat as a patch: 1 done (or dropped), 0 when the object is not there
 * (create it). */
static int repeat(ty_kc *c, kc_op *op, const char *name, json_int_t count, const char *key)
{
    json_t *was = json_pack("{s:I}", "count", count), *now = json_deep_copy(was), *patch;
    ty_error err;
    ty_obj *o = NULL;
    int rc = 1;

    ty_error_init(&err);
    if (!was || !now || op->fn(now, op->arg, &err) != 0 ||
        !(patch = kc_merge_diff(was, now))) {
        json_decref(was);
        json_decref(now);
        ty_error_clear(&err);
        return 0; /* as a first time, then */
    }
    if (json_object_size(patch))
        o = kc_patch(c, op->resource, op->ns, name, KC_PATCH_MERGE, patch, false, &err);
    if (o)
        remember(c, key, o);
    else if (err.code == TY_ENOTFOUND)
        rc = 0;
    else if (err.code)
        ty_debug("%s %s/%s: repeat not recorded: %s", op->resource, op->ns ? op->ns : "",
                 name, err.text);
    if (err.code)
        forget(key);
    ty_obj_unref(o);
    json_decref(patch);
    json_decref(was);
    json_decref(now);
    ty_error_clear(&err);
    return rc;
}

void kc_record_run(ty_kc *c, kc_op *op, bool remembers)
{
    json_t *obj = op->obj;
    const char *name = NULL;
    char *keep = NULL, key[1024];
    ty_obj *o = NULL;

    op->obj = NULL;
    if (op->text)
        name = op->text + op->text_len + 1; /* the name trails the text */
    else
        name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    if (name && op->fn && (keep = strdup(name)))
        make_key(key, sizeof(key), c, op->resource, op->ns, keep);
    else
        remembers = false;
    if (remembers) {
        json_int_t n = recall(key);
        if (n > 0 && repeat(c, op, keep, n, key)) {
            json_decref(obj);
            goto out;
        }
    }
    if (!obj && op->text)
        obj = json_loadb(op->text, op->text_len, 0, NULL);
    if (obj) {
        o = kc_create(c, op->resource, op->ns, obj, &op->err);
        if (!o && op->err.code == TY_EEXISTS && keep) {
            ty_error_clear(&op->err);
            o = kc_mutate(c, op->resource, op->ns, keep, op->fn, op->arg, 0, &op->err);
        }
        if (o && remembers)
            remember(c, key, o);
    }
out:
    free(op->text);
    op->text = NULL;
    free(keep);
    ty_obj_unref(o);
    ty_error_clear(&op->err); /* records report nothing */
}

void kc_record_forget_client(const ty_kc *c)
{
    pthread_mutex_lock(&mu);
    for (kcr_entry *e = head, *next; e; e = next) {
        next = e->next;
        if (e->client == c)
            drop(e);
    }
    pthread_mutex_unlock(&mu);
}

size_t kc_record_remembered(void)
{
    size_t n;

    pthread_mutex_lock(&mu);
    n = n_entries;
    pthread_mutex_unlock(&mu);
    return n;
}
