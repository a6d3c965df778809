/* kc_fake_int.h - what the fake client's files share (see kc_fake.h):
 * kc_fake.c the map and the writes, kc_fake_read.c the reads, kc_fake_log.c
 * the action log, injected failures and watches. Not for tests. */
#ifndef TY_CLIENT_KC_FAKE_INT_H
#define TY_CLIENT_KC_FAKE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "client/kc_fake.h"

typedef struct fobj {
    const char *resource; /* interned */
    char *ns, *name;
    ty_obj *obj;
} fobj;

typedef struct fhist {
    kc_event_type type;
    const char *resource; /* interned */
    uint64_t rv;
    ty_obj *obj;
} fhist;

typedef struct ffail {
    char *verb, *what; /* NULL: any */
    ty_errcode code;
} ffail;

typedef struct fake {
    ty_kc base;
    pthread_mutex_t mu;
    uint64_t rv, uids, names;
    time_t now; /* 0: the wall clock */
    bool lax_status; /* kc_fake_set_lax_status */
    char **res;
    size_t nres, capres;
    fobj *objs;
    size_t nobjs, capobjs;
    fhist *hist;
    size_t nhist, caphist;
    kc_fake_action *acts;
    size_t nacts, capacts;
    ffail *fails;
    size_t nfails, capfails;
} fake;

typedef struct fwatch {
    kc_watch base;
    fake *f;
    char **only; /* NULL-terminated, or NULL for every resource */
    size_t pos;  /* the next history entry to look at */
    bool cancelled;
} fwatch;

#define F(c) ((fake *)(c))

static inline json_t *meta_of(const json_t *obj)
{
    return json_object_get(obj, "metadata");
}

/* Room for one more element in *arr (n used of *cap, each size bytes). */
int kc_fake_grow(void *arr, size_t *cap, size_t n, size_t size);
/* resource as held by f for its life; NULL when out of memory. */
const char *kc_fake_intern(fake *f, const char *resource);
/* The index of (resource, ns, name) in f->objs, or -1. */
long kc_fake_index(const fake *f, const char *resource, const char *ns, const char *name);

/* kc_fake_log.c: what (NULL, "pods", "pods/binding") matches resource and
 * sub; a write recorded (obj referenced); an injected failure taking this
 * call (err filled, a write recorded as failed) or not. Called with f->mu
 * held. */
bool kc_fake_what_matches(const char *what, const char *resource, const char *sub);
void kc_fake_record(fake *f, const char *verb, const char *resource, const char *sub,
                    const char *ns, const char *name, ty_errcode code, ty_obj *obj);
void kc_fake_action_clear(kc_fake_action *a);
bool kc_fake_injected(fake *f, const char *verb, const char *resource, const char *sub,
                      const char *ns, const char *name, ty_error *err);

/* The ops of kc_fake_read.c and kc_fake_log.c (as kc_ops' members). */
ty_obj *kc_fake_op_get(ty_kc *c, const char *res, const char *ns, const char *name,
                       ty_error *err);
int kc_fake_op_list(ty_kc *c, const char *res, const kc_list_opts *o, kc_list *out,
                    ty_error *err);
int kc_fake_op_list_owned(ty_kc *c, const char *res, const char *ns, const char *uid,
                          kc_list *out, ty_error *err);
size_t kc_fake_op_count(ty_kc *c, const char *res);
json_t *kc_fake_op_resources(ty_kc *c);
kc_watch *kc_fake_op_watch_open(ty_kc *c, const char *const *only, const char *from_rv,
                                ty_error *err);
int kc_fake_op_watch_next(kc_watch *kw, int timeout_ms, kc_event *ev, ty_error *err);
void kc_fake_op_watch_cancel(kc_watch *kw);
void kc_fake_op_watch_close(kc_watch *kw);

#endif
