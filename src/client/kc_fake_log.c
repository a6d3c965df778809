/* kc_fake_log.c - what a test looks at and steers in the fake client (see
 * kc_fake.h): the log of writes, injected failures, and watches over the
 * history of changes. */
#include "client/kc_fake_int.h"

#include <stdlib.h>
#include <string.h>

/* "pods" names pods without a subresource, "pods/binding" their bindings;
 * NULL anything. */
bool kc_fake_what_matches(const char *what, const char *resource, const char *sub)
{
    const char *slash;

    if (!what)
        return true;
    if (!(slash = strchr(what, '/')))
        return !strcmp(what, resource) && !*sub;
    return strlen(resource) == (size_t)(slash - what) &&
           !strncmp(what, resource, (size_t)(slash - what)) && !strcmp(slash + 1, sub);
}

/* ---- the action log and injected failures ---- */

void kc_fake_record(fake *f, const char *verb, const char *resource, const char *sub,
                   const char *ns, const char *name, ty_errcode code, ty_obj *obj)
{
    kc_fake_action *a;
    char *n = strdup(ns ? ns : ""), *m = strdup(name ? name : "");
    const char *r = kc_fake_intern(f, resource);

    if (!n || !m || !r || kc_fake_grow(&f->acts, &f->capacts, f->nacts, sizeof(*f->acts)) < 0) {
        free(n);
        free(m);
        return; /* out of memory in a test: the assertions will say */
    }
    a = &f->acts[f->nacts++];
    *a = (kc_fake_action){.verb = verb, .resource = r, .subresource = sub, .ns = n,
                          .name = m, .code = code, .obj = ty_obj_ref(obj)};
}

void kc_fake_action_clear(kc_fake_action *a)
{
    free((char *)a->ns);
    free((char *)a->name);
    ty_obj_unref(a->obj);
}

/* Whether an injected failure takes this call: err filled and the failure
 * recorded (reads are not) when it does. */
bool kc_fake_injected(fake *f, const char *verb, const char *resource, const char *sub,
                     const char *ns, const char *name, ty_error *err)
{
    for (size_t i = 0; i < f->nfails; i++) {
        ffail *x = &f->fails[i];
        if ((x->verb && strcmp(x->verb, verb)) || !kc_fake_what_matches(x->what, resource, sub))
            continue;
        ty_seterr(err, x->code, "injected failure: %s %s%s%s %s/%s", verb, resource,
                  *sub ? "/" : "", sub, ns ? ns : "", name ? name : "");
        if (strcmp(verb, "get") && strcmp(verb, "list"))
            kc_fake_record(f, verb, resource, sub, ns, name, x->code, NULL);
        free(x->verb);
        free(x->what);
        memmove(x, x + 1, (f->nfails - i - 1) * sizeof(*x));
        f->nfails--;
        return true;
    }
    return false;
}

const kc_fake_action *kc_fake_actions(ty_kc *c, size_t *n)
{
    *n = F(c)->nacts;
    return F(c)->acts;
}

void kc_fake_clear_actions(ty_kc *c)
{
    fake *f = F(c);

    pthread_mutex_lock(&f->mu);
    for (size_t i = 0; i < f->nacts; i++)
        kc_fake_action_clear(&f->acts[i]);
    f->nacts = 0;
    pthread_mutex_unlock(&f->mu);
}

static bool action_matches(const kc_fake_action *a, const char *verb, const char *what)
{
    return (!verb || !strcmp(verb, a->verb)) && kc_fake_what_matches(what, a->resource, a->subresource);
}

size_t kc_fake_count(ty_kc *c, const char *verb, const char *what)
{
    size_t n = 0;

    for (size_t i = 0; i < F(c)->nacts; i++)
        n += action_matches(&F(c)->acts[i], verb, what);
    return n;
}

const kc_fake_action *kc_fake_find(ty_kc *c, const char *verb, const char *what,
                                   const char *name)
{
    for (size_t i = F(c)->nacts; i-- > 0;) {
        const kc_fake_action *a = &F(c)->acts[i];
        if (action_matches(a, verb, what) && (!name || !strcmp(name, a->name)))
            return a;
    }
    return NULL;
}

void kc_fake_fail_next(ty_kc *c, const char *verb, const char *what, ty_errcode code)
{
    fake *f = F(c);
    ffail x = {verb ? strdup(verb) : NULL, what ? strdup(what) : NULL, code};

    pthread_mutex_lock(&f->mu);
    if (kc_fake_grow(&f->fails, &f->capfails, f->nfails, sizeof(*f->fails)) == 0)
        f->fails[f->nfails++] = x;
    else
        free(x.verb), free(x.what);
    pthread_mutex_unlock(&f->mu);
}

/* ---- watches ---- */

kc_watch *kc_fake_op_watch_open(ty_kc *c, const char *const *only, const char *from_rv,
                              ty_error *err)
{
    fake *f = F(c);
    fwatch *w = calloc(1, sizeof(*w));
    size_t n = 0;
    uint64_t rv = 0;

    if (!w) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    if (from_rv && kc_rv_parse(from_rv, &rv, err) < 0) {
        free(w);
        return NULL;
    }
    while (only && only[n])
        n++;
    if (only && !(w->only = calloc(n + 1, sizeof(*w->only)))) {
        free(w);
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!(w->only[i] = strdup(only[i]))) {
            ty_seterr(err, TY_EINTERNAL, "out of memory");
            w->base.ops = c->ops;
            kc_watch_close(&w->base);
            return NULL;
        }
    w->base.ops = c->ops;
    w->f = f;
    pthread_mutex_lock(&f->mu);
    w->pos = f->nhist;
    if (from_rv)
        for (w->pos = 0; w->pos < f->nhist && f->hist[w->pos].rv <= rv; w->pos++)
            ;
    pthread_mutex_unlock(&f->mu);
    return &w->base;
}

static bool watched(const fwatch *w, const char *resource)
{
    if (!w->only)
        return true;
    for (size_t i = 0; w->only[i]; i++)
        if (!strcmp(w->only[i], resource))
            return true;
    return false;
}

/* Never waits: nothing else can write while the test's one thread is here. */
int kc_fake_op_watch_next(kc_watch *kw, int timeout_ms, kc_event *ev, ty_error *err)
{
    fwatch *w = (fwatch *)kw;
    fake *f = w->f;
    int rc = 0;

    (void)timeout_ms;
    pthread_mutex_lock(&f->mu);
    if (w->cancelled) {
        ty_seterr(err, TY_EUNAVAILABLE, "watch cancelled");
        rc = -1;
    }
    while (rc == 0 && w->pos < f->nhist) {
        const fhist *h = &f->hist[w->pos++];
        if (!watched(w, h->resource))
            continue;
        *ev = (kc_event){.type = h->type, .resource = h->resource, .obj = ty_obj_ref(h->obj)};
        rc = 1;
    }
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void kc_fake_op_watch_cancel(kc_watch *kw)
{
    fwatch *w = (fwatch *)kw;

    pthread_mutex_lock(&w->f->mu);
    w->cancelled = true;
    pthread_mutex_unlock(&w->f->mu);
}

void kc_fake_op_watch_close(kc_watch *kw)
{
    fwatch *w = (fwatch *)kw;

    for (size_t i = 0; w->only && w->only[i]; i++)
        free(w->only[i]);
    free(w->only);
    free(w);
}

