/* nsrange.c - namespaces' id blocks (see nsrange.h). */
#include "api/nsrange.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"

int nsrange_parse(const char *text, nsrange *r)
{
    char *end;
    long long start, size;

    if (!text || *text < '0' || *text > '9')
        return -1;
    start = strtoll(text, &end, 10);
    if (*end != '/' || end[1] < '0' || end[1] > '9')
        return -1;
    size = strtoll(end + 1, &end, 10);
    /* ids are 32-bit; uid 4294967295 is (uid_t)-1, never a user */
    if (*end || size < 1 || start < 0 || start > 4294967294LL || size > 4294967295LL - start)
        return -1;
    r->start = start;
    r->size = size;
    return 0;
}

static const char *annotation(const json_t *obj, const char *key)
{
    return meta_str(json_object_get(json_object_get(obj, "metadata"), "annotations"), key);
}

int nsrange_of(const json_t *ns, nsrange *uids, nsrange *groups)
{
    nsrange u, g;

    if (nsrange_parse(annotation(ns, NSRANGE_UID_ANNOTATION), &u) < 0 ||
        nsrange_parse(annotation(ns, NSRANGE_GROUPS_ANNOTATION), &g) < 0)
        return -1;
    if (uids)
        *uids = u;
    if (groups)
        *groups = g;
    return 0;
}

/* ---- assignment ---------------------------------------------------------- */

/* Blocks handed out by this process whose namespaces the store may not show
 * yet: a create admitted but not yet written. Far more than can be in flight
 * at once (the server bounds its mutating requests in flight). */
#define RECENT 1024

static pthread_mutex_t assign_mu = PTHREAD_MUTEX_INITIALIZER;
static int next_block;            /* past every block this process handed out */
static int recent[RECENT];
static size_t nrecent, recent_at;

typedef struct used_blocks {
    unsigned char *bits;
    int max; /* highest block in use, -1 when none */
} used_blocks;

static void mark(used_blocks *u, const nsrange *r)
{
    long long first, last;

    if (r->start + r->size <= NSRANGE_BASE ||
        r->start >= NSRANGE_BASE + NSRANGE_SIZE * NSRANGE_BLOCKS)
        return;
    first = r->start < NSRANGE_BASE ? 0 : (r->start - NSRANGE_BASE) / NSRANGE_SIZE;
    last = (r->start + r->size - 1 - NSRANGE_BASE) / NSRANGE_SIZE;
    if (last >= NSRANGE_BLOCKS)
        last = NSRANGE_BLOCKS - 1;
    for (long long b = first; b <= last; b++) {
        u->bits[b / 8] |= (unsigned char)(1u << (b % 8));
        if (b > u->max)
            u->max = (int)b;
    }
}

/* A count filter that records the blocks each namespace holds. */
static bool note_namespace(const json_t *ns, void *arg)
{
    nsrange r;

    if (nsrange_parse(annotation(ns, NSRANGE_UID_ANNOTATION), &r) == 0)
        mark(arg, &r);
    if (nsrange_parse(annotation(ns, NSRANGE_GROUPS_ANNOTATION), &r) == 0)
        mark(arg, &r);
    return false;
}

static bool is_free(const used_blocks *u, int b)
{
    if (u->bits[b / 8] & (1u << (b % 8)))
        return false;
    for (size_t i = 0; i < nrecent; i++)
        if (recent[i] == b)
            return false;
    return true;
}

static int pick_block(const used_blocks *u)
{
    int start = next_block > u->max + 1 ? next_block : u->max + 1;

    for (int b = start; b < NSRANGE_BLOCKS; b++)
        if (is_free(u, b))
            return b;
    for (int b = 0; b < start && b < NSRANGE_BLOCKS; b++)
        if (is_free(u, b))
            return b;
    return -1;
}

int nsrange_assign(const api_lookup *lk, json_t *obj, ty_error *err)
{
    used_blocks u = {calloc(NSRANGE_BLOCKS / 8 + 1, 1), -1};
    json_t *ann;
    char text[64];
    int b;

    if (!u.bits)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    pthread_mutex_lock(&assign_mu);
    lk->count(lk->ctx, &api_namespace, note_namespace, &u);
    b = pick_block(&u);
    if (b >= 0) {
        recent[recent_at] = b;
        recent_at = (recent_at + 1) % RECENT;
        if (nrecent < RECENT)
            nrecent++;
        next_block = b + 1;
    }
    pthread_mutex_unlock(&assign_mu);
    free(u.bits);
    if (b < 0)
        return ty_seterr(err, TY_EFORBIDDEN,
                         "unable to allocate a uid range: all %d blocks of %lld ids from %lld "
                         "are taken",
                         NSRANGE_BLOCKS, NSRANGE_SIZE, NSRANGE_BASE);
    snprintf(text, sizeof(text), "%lld/%lld", NSRANGE_BASE + (long long)b * NSRANGE_SIZE,
             NSRANGE_SIZE);
    ann = meta_child(meta_child(obj, "metadata"), "annotations");
    if (!json_is_object(ann))
        return ty_seterr(err, TY_EINVALID, "metadata.annotations is not an object");
    json_object_set_new(ann, NSRANGE_UID_ANNOTATION, json_string(text));
    json_object_set_new(ann, NSRANGE_GROUPS_ANNOTATION, json_string(text));
    return 0;
}

int nsrange_check_update(const json_t *obj, const json_t *old, ty_error *err)
{
    static const char *const keys[] = {NSRANGE_UID_ANNOTATION, NSRANGE_GROUPS_ANNOTATION};
    int n = 0;

    for (size_t i = 0; i < 2; i++) {
        const char *now = annotation(obj, keys[i]), *was = annotation(old, keys[i]);
        char field[128];
        if ((!now && !was) || (now && was && strcmp(now, was) == 0))
            continue;
        snprintf(field, sizeof(field), "metadata.annotations[%s]", keys[i]);
        if (was)
            meta_invalid_str(err, field, now ? now : "", "field is immutable");
        else
            meta_forbidden(err, field, "assigned by the server when the namespace is created");
        n++;
    }
    return n;
}

/* ---- pods ---------------------------------------------------------------- */

static bool unset(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return !v || json_is_null(v);
}

void nsrange_default_pod(const json_t *ns, json_t *pod)
{
    json_t *spec = json_object_get(pod, "spec"), *sc;
    nsrange u, g;

    if (!json_is_object(spec) || nsrange_of(ns, &u, &g) < 0)
        return;
    sc = meta_child(spec, "securityContext");
    if (!json_is_object(sc))
        return;
    if (unset(sc, "runAsUser"))
        json_object_set_new(sc, "runAsUser", json_integer(u.start));
    if (unset(sc, "runAsGroup"))
        json_object_set_new(sc, "runAsGroup", json_integer(g.start));
    if (unset(sc, "fsGroup"))
        json_object_set_new(sc, "fsGroup", json_integer(g.start));
}

static void check_in(const json_t *v, const char *field, const nsrange *r, ty_error *err,
                     int *n)
{
    long long id;

    if (!v || json_is_null(v))
        return;
    id = json_is_integer(v) ? (long long)json_integer_value(v) : -1;
    if (id >= r->start && id < r->start + r->size)
        return;
    if (json_is_integer(v))
        meta_invalid_int(err, field, id, "must be in the ranges: [%lld, %lld]", r->start,
                         r->start + r->size - 1);
    else
        meta_invalid(err, field, v, "must be in the ranges: [%lld, %lld]", r->start,
                     r->start + r->size - 1);
    (*n)++;
}

static const char *const lists[] = {"initContainers", "containers", "ephemeralContainers"};

/* A container's effective uid is 0 while its effective runAsNonRoot is true. */
static void check_non_root(const json_t *spec, ty_error *err, int *n)
{
    const json_t *psc = json_object_get(spec, "securityContext");
    bool pod_reported = false;

    for (size_t k = 0; k < 3; k++) {
        const json_t *c;
        size_t i;
        json_array_foreach(json_object_get(spec, lists[k]), i, c) {
            const json_t *sc = json_object_get(c, "securityContext");
            const json_t *nr = unset(sc, "runAsNonRoot") ? json_object_get(psc, "runAsNonRoot")
                                                         : json_object_get(sc, "runAsNonRoot");
            bool own = !unset(sc, "runAsUser");
            const json_t *uid = own ? json_object_get(sc, "runAsUser")
                                    : json_object_get(psc, "runAsUser");
            char field[160];
            if (!json_is_true(nr) || !json_is_integer(uid) || json_integer_value(uid) != 0)
                continue;
            if (!own && pod_reported)
                continue;
            if (own)
                snprintf(field, sizeof(field), "spec.%s[%zu].securityContext.runAsUser", lists[k],
                         i);
            else
                snprintf(field, sizeof(field), "spec.securityContext.runAsUser");
            pod_reported |= !own;
            meta_invalid_int(err, field, 0,
                             "must not be 0: container \"%s\" has runAsNonRoot true",
                             meta_str(c, "name") ? meta_str(c, "name") : "");
            (*n)++;
        }
    }
}

int nsrange_check_pod(const json_t *ns, const json_t *pod, bool enforce_privileged,
                      ty_error *err)
{
    const json_t *spec = json_object_get(pod, "spec");
    const json_t *psc = json_object_get(spec, "securityContext"), *v;
    nsrange u, g;
    int n = 0;
    size_t i;

    check_non_root(spec, err, &n);
    if (enforce_privileged)
        return n;
    if (nsrange_of(ns, &u, &g) < 0) {
        /* (a namespace the server did not make: no ids to allow) */
        u = (nsrange){-1, 0};
        g = u;
    }
    check_in(json_object_get(psc, "runAsUser"), "spec.securityContext.runAsUser", &u, err, &n);
    check_in(json_object_get(psc, "runAsGroup"), "spec.securityContext.runAsGroup", &g, err, &n);
    check_in(json_object_get(psc, "fsGroup"), "spec.securityContext.fsGroup", &g, err, &n);
    json_array_foreach(json_object_get(psc, "supplementalGroups"), i, v) {
        char field[96];
        snprintf(field, sizeof(field), "spec.securityContext.supplementalGroups[%zu]", i);
        check_in(v, field, &g, err, &n);
    }
    for (size_t k = 0; k < 3; k++) {
        const json_t *c;
        json_array_foreach(json_object_get(spec, lists[k]), i, c) {
            const json_t *sc = json_object_get(c, "securityContext");
            char field[160];
            snprintf(field, sizeof(field), "spec.%s[%zu].securityContext.runAsUser", lists[k], i);
            check_in(json_object_get(sc, "runAsUser"), field, &u, err, &n);
            snprintf(field, sizeof(field), "spec.%s[%zu].securityContext.runAsGroup", lists[k],
                     i);
            check_in(json_object_get(sc, "runAsGroup"), field, &g, err, &n);
        }
    }
    return n;
}
