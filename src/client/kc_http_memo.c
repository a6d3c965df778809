/* kc_http_memo.c - the answers of the HTTP client's last writes, the base
 * of its next kc_mutate of the same object instead of a GET.
 *
 * A writer that keeps no cache (the gang scheduler writing a PodGroup's
 * status a few times as its gang goes Pending, Inqueue, Running) reads the
 * object before each write. Its last write's answer is, most often, still
 * the object: h_mutate starts from it and writes with its resourceVersion,
 * which the server takes only if nobody wrote meanwhile; a 409 forgets it
 * and reads (kc_http.c). A function that changes nothing on the remembered
 * copy is asked again on a fresh read: "nothing to write" is decided only
 * on the server's state, so a stale copy never hides a needed write.
 *
 * Remembered: what h_mutate wrote, and later PUT/PATCH answers of an object
 * already remembered (so that writes by other paths keep it current);
 * forgotten on a delete, a 409, and beyond KH_MEMO_MAX objects (the least
 * recently used first). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/kc_http_int.h"

/* Objects remembered at most: a few hundred gangs writing at once. */
#define KH_MEMO_MAX 512

struct kh_memo_entry {
    kh_memo_entry *prev, *next; /* most recently used first */
    ty_obj *obj;
    char key[]; /* store key, ns, name */
};

static void make_key(char *key, size_t len, const char *res, const char *ns, const char *name)
{
    snprintf(key, len, "%s\x01%s\x01%s", res, ns ? ns : "", name ? name : "");
}

static void unlink_entry(kh_memo *m, kh_memo_entry *e)
{
    *(e->prev ? &e->prev->next : &m->head) = e->next;
    *(e->next ? &e->next->prev : &m->tail) = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(kh_memo *m, kh_memo_entry *e)
{
    e->next = m->head;
    if (m->head)
        m->head->prev = e;
    m->head = e;
    if (!m->tail)
        m->tail = e;
}

static void drop(kh_memo *m, kh_memo_entry *e)
{
    unlink_entry(m, e);
    strmap_del(&m->by_key, e->key);
    m->n--;
    ty_obj_unref(e->obj);
    free(e);
}

void kh_memo_init(kh_memo *m)
{
    memset(m, 0, sizeof(*m));
    pthread_mutex_init(&m->mu, NULL);
    strmap_init(&m->by_key);
}

void kh_memo_free(kh_memo *m)
{
    while (m->head)
        drop(m, m->head);
    strmap_free(&m->by_key);
    pthread_mutex_destroy(&m->mu);
}

ty_obj *kh_memo_get(kh_memo *m, const char *res, const char *ns, const char *name)
{
    char key[1024];
    kh_memo_entry *e;
    ty_obj *o = NULL;

    make_key(key, sizeof(key), res, ns, name);
    pthread_mutex_lock(&m->mu);
    if ((e = strmap_get(&m->by_key, key))) {
        o = ty_obj_ref(e->obj);
        unlink_entry(m, e);
        push_front(m, e);
    }
    pthread_mutex_unlock(&m->mu);
    return o;
}

void kh_memo_put(kh_memo *m, const char *res, const char *ns, const char *name, ty_obj *o,
                 bool add)
{
    char key[1024];
    size_t len;
    kh_memo_entry *e;

    make_key(key, sizeof(key), res, ns, name);
    len = strlen(key) + 1;
    pthread_mutex_lock(&m->mu);
    if ((e = strmap_get(&m->by_key, key))) {
        if (o) {
            ty_obj_unref(e->obj);
            e->obj = ty_obj_ref(o);
            unlink_entry(m, e);
            push_front(m, e);
        } else {
            drop(m, e);
        }
    } else if (o && add && (e = calloc(1, sizeof(*e) + len))) {
        memcpy(e->key, key, len);
        e->obj = ty_obj_ref(o);
        if (strmap_put(&m->by_key, e->key, e) < 0) {
            ty_obj_unref(e->obj);
            free(e);
        } else {
            push_front(m, e);
            if (++m->n > KH_MEMO_MAX)
                drop(m, m->tail);
        }
    }
    pthread_mutex_unlock(&m->mu);
}

void kh_memo_stats(kh_memo *m, uint64_t *used, uint64_t *stale, size_t *held)
{
    pthread_mutex_lock(&m->mu);
    if (used)
        *used = m->used;
    if (stale)
        *stale = m->stale;
    if (held)
        *held = m->n;
    pthread_mutex_unlock(&m->mu);
}

void kh_memo_count(kh_memo *m, bool stale)
{
    pthread_mutex_lock(&m->mu);
    m->used++;
    if (stale)
        m->stale++;
    pthread_mutex_unlock(&m->mu);
}

void kc_http_memo_stats(ty_kc *kc, uint64_t *used, uint64_t *stale, size_t *held)
{
    kh_memo_stats(&((kh_client *)kc)->memo, used, stale, held);
}
