/* hosts.c - the /etc/hosts a pod sees: its namespace's pods and services.
 *
 * There is no cluster DNS in embedded mode. Every pod has its own loopback
 * address, and names the injected environment uses (pod names, Volcano's
 * <hostname>.<subdomain>, headless Service names) are written into a hosts
 * file that the supervisor bind-mounts over /etc/hosts for the pod only.
 *
 * The agent keeps the table here up to date from the store's watch events
 * (and reloads it from a listing when events may have been missed), so that
 * rendering a namespace's lines costs O(pods with an address + Services that
 * do not name the pod they select), never a listing of the namespace: a
 * namespace full of finished jobs (thousands of pods and Services) made every
 * pod start re-read all of them from the store, O(n^2) for a burst of jobs.
 *
 * Every pod is kept (name, uid, labels, what its line would show), finished
 * or not, because a Service named as a pod it selects is left out even when
 * that pod shows no line (see service_shadowed). Only "shown" pods (those
 * with an address, kept sorted by name, each with its line made once) and
 * "candidate" Services (not so shadowed) are walked when the lines are
 * rendered, and the text is cached until something it depends on changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/strmap.h"
#include "runtime/local/rt_internal.h"

#define MAX_HOSTS_BYTES (8u << 20)
#define NOWHERE ((size_t)-1)

typedef struct hpod {
    char *uid, *name;
    char *ip, *host, *sub;  /* status.podIP, spec.hostname, spec.subdomain; NULL = none */
    json_t *labels;         /* own copy, NULL = none */
    bool gone;              /* being deleted, or finished: its status address shows nothing */
    bool shown;             /* in ns->shown: it has an address */
    char *line;             /* its line as last rendered, NULL = to be made */
    size_t at;              /* index in ns->all */
} hpod;

typedef struct hsvc {
    char *name;
    json_t *sel;            /* non-empty, string values only (others never select) */
    bool shadowed;          /* the pod of the same name exists and is selected */
    size_t at, cand_at;     /* index in ns->svcs_all, in ns->cands (NOWHERE = shadowed) */
} hsvc;

typedef struct hlocal {
    char ip[64];
    char uid[];             /* the key */
} hlocal;

typedef struct hvec {
    void **v;
    size_t n, cap;
} hvec;

typedef struct hns {
    char *name;
    strmap pods;            /* name -> hpod, every pod of the namespace */
    strmap uids;            /* uid -> hpod */
    strmap svcs;            /* name -> hsvc */
    strmap locals;          /* uid -> hlocal: addresses this node gave its pods */
    hvec all;               /* hpod */
    hvec shown;             /* hpod with an address, sorted by name */
    hvec svcs_all, cands;   /* hsvc */
    char *body;             /* rendered lines, NULL = never rendered */
    uint64_t gen;           /* changes with body */
    bool stale;             /* body may no longer be what the table says */
} hns;

struct rt_hosts {
    strmap by_name;         /* namespace -> hns */
    hvec nss;
    uint64_t next_gen;
};

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* ---- small sets: a vector whose members know their index ---- */

static int vec_add(hvec *v, void *item, size_t *slot)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        void **nv = realloc(v->v, cap * sizeof(*nv));
        if (!nv)
            return -1;
        v->v = nv;
        v->cap = cap;
    }
    *slot = v->n;
    v->v[v->n++] = item;
    return 0;
}

/* Removes the member at *slot; slot_of gives the index field of a member. */
static void vec_del(hvec *v, size_t *slot, size_t *(*slot_of)(void *))
{
    size_t i = *slot;

    if (i == NOWHERE || i >= v->n)
        return;
    v->v[i] = v->v[--v->n];
    if (i < v->n)
        *slot_of(v->v[i]) = i;
    *slot = NOWHERE;
}

static size_t *pod_at(void *p) { return &((hpod *)p)->at; }
static size_t *svc_at(void *s) { return &((hsvc *)s)->at; }
static size_t *svc_cand_at(void *s) { return &((hsvc *)s)->cand_at; }

/* ---- matching (the semantics of the hosts file) ---- */

static bool selector_matches(const json_t *sel, const json_t *labels)
{
    const char *k;
    json_t *v;

    if (!json_object_size(sel))
        return false;
    json_object_foreach((json_t *)sel, k, v) {
        const char *have = str(labels, k);
        if (!have || !json_is_string(v) || strcmp(have, json_string_value(v)))
            return false;
    }
    return true;
}

/* A selector that can select anything: non-empty, every value a string. */
static bool usable_selector(const json_t *sel)
{
    const char *k;
    json_t *v;

    if (!json_is_object(sel) || !json_object_size(sel))
        return false;
    json_object_foreach((json_t *)sel, k, v)
        if (!json_is_string(v))
            return false;
    return true;
}

/* The address a pod's line shows: the one this node gave it while it runs
 * here, else its status address unless it is going or finished (a finished
 * pod listens on nothing: its name need not resolve). NULL = no line. */
static const char *pod_addr(const hns *ns, const hpod *p)
{
    const hlocal *l = strmap_get(&ns->locals, p->uid);

    if (l)
        return l->ip;
    return p->gone ? NULL : p->ip;
}

/* Where p is, or would go, in ns->shown (sorted by name). */
static size_t shown_pos(const hns *ns, const hpod *p)
{
    size_t lo = 0, hi = ns->shown.n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(((const hpod *)ns->shown.v[mid])->name, p->name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void shown_remove(hns *ns, hpod *p)
{
    size_t at = shown_pos(ns, p); /* names are unique: p's own place */

    if (!p->shown || at >= ns->shown.n || ns->shown.v[at] != p)
        return;
    memmove(&ns->shown.v[at], &ns->shown.v[at + 1], (ns->shown.n - at - 1) * sizeof(void *));
    ns->shown.n--;
    p->shown = false;
}

/* Keeps ns->shown in step with pod_addr; true when p's membership changed.
 * Kept sorted (a memmove of pointers) so that a rendering walks it once. */
static bool update_shown(hns *ns, hpod *p)
{
    const char *ip = pod_addr(ns, p);
    bool show = ip && *ip;
    size_t at, slot;

    if (show == p->shown)
        return false;
    if (!show) {
        shown_remove(ns, p);
        return true;
    }
    at = shown_pos(ns, p);
    if (vec_add(&ns->shown, p, &slot) < 0)
        return false; /* out of memory: the line is missing until the next change */
    memmove(&ns->shown.v[at + 1], &ns->shown.v[at], (slot - at) * sizeof(void *));
    ns->shown.v[at] = p;
    p->shown = true;
    return true;
}

/* A Service named as a pod it selects adds nothing: the pod's own line
 * resolves that name. The training operators make one such Service per pod,
 * so these are most Services; leaving them out of the candidates keeps a
 * rendering from walking them (and the pods) at all. The pod counts even when
 * it shows no line: then neither name resolves. */
static bool service_shadowed(const hns *ns, const hsvc *s)
{
    const hpod *p = strmap_get(&ns->pods, s->name);
    return p && selector_matches(s->sel, p->labels);
}

/* Re-evaluates s after it or the pod of its name changed; true when it
 * became or stopped being a candidate. */
static bool update_cand(hns *ns, hsvc *s)
{
    bool sh = service_shadowed(ns, s), was = s->cand_at != NOWHERE;

    s->shadowed = sh;
    if (sh != was)
        return false;
    if (!sh && vec_add(&ns->cands, s, &s->cand_at) < 0)
        return false;
    if (sh)
        vec_del(&ns->cands, &s->cand_at, svc_cand_at);
    return true;
}

/* ---- namespaces ---- */

static hns *get_ns(rt_hosts *h, const char *name, bool create)
{
    hns *ns = strmap_get(&h->by_name, name);
    size_t slot;

    if (ns || !create)
        return ns;
    if (!(ns = calloc(1, sizeof(*ns))) || !(ns->name = strdup(name)))
        goto error;
    strmap_init(&ns->pods);
    strmap_init(&ns->uids);
    strmap_init(&ns->svcs);
    strmap_init(&ns->locals);
    ns->stale = true;
    if (vec_add(&h->nss, ns, &slot) < 0)
        goto error;
    if (strmap_put(&h->by_name, ns->name, ns) < 0) {
        h->nss.n--;
        goto error;
    }
    return ns;
error:
    if (ns)
        free(ns->name);
    free(ns);
    return NULL;
}

static void pod_free(hpod *p)
{
    if (!p)
        return;
    free(p->uid);
    free(p->name);
    free(p->ip);
    free(p->host);
    free(p->sub);
    free(p->line);
    json_decref(p->labels);
    free(p);
}

static void svc_free(hsvc *s)
{
    if (!s)
        return;
    free(s->name);
    json_decref(s->sel);
    free(s);
}

/* Forgets every pod and Service of ns (not the local addresses). */
static void ns_clear(hns *ns)
{
    for (size_t i = 0; i < ns->all.n; i++)
        pod_free(ns->all.v[i]);
    for (size_t i = 0; i < ns->svcs_all.n; i++)
        svc_free(ns->svcs_all.v[i]);
    ns->all.n = ns->shown.n = ns->svcs_all.n = ns->cands.n = 0;
    strmap_free(&ns->pods);
    strmap_free(&ns->uids);
    strmap_free(&ns->svcs);
    ns->stale = true;
}

static void ns_free(hns *ns)
{
    ns_clear(ns);
    strmap_free_values(&ns->locals);
    free(ns->all.v);
    free(ns->shown.v);
    free(ns->svcs_all.v);
    free(ns->cands.v);
    free(ns->body);
    free(ns->name);
    free(ns);
}

rt_hosts *rt_hosts_new(void)
{
    rt_hosts *h = calloc(1, sizeof(*h));

    if (h)
        strmap_init(&h->by_name);
    return h;
}

void rt_hosts_free(rt_hosts *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->nss.n; i++)
        ns_free(h->nss.v[i]);
    free(h->nss.v);
    strmap_free(&h->by_name);
    free(h);
}

void rt_hosts_clear(rt_hosts *h)
{
    for (size_t i = 0; i < h->nss.n; i++)
        ns_clear(h->nss.v[i]);
}

/* ---- pods ---- */

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* strdup of a non-empty string, NULL for NULL or "". */
static char *dup_nonempty(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

static bool pod_gone(const json_t *pod)
{
    const char *phase = str(json_object_get(pod, "status"), "phase");

    if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"))
        return true;
    return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

/* Drops p from ns; true when the rendering may change. */
static bool drop_pod(hns *ns, hpod *p)
{
    bool shown = p->shown;
    hsvc *same;

    shown_remove(ns, p);
    vec_del(&ns->all, &p->at, pod_at);
    strmap_del(&ns->pods, p->name);
    strmap_del(&ns->uids, p->uid);
    same = strmap_get(&ns->svcs, p->name);
    pod_free(p);
    return (same && update_cand(ns, same)) || shown;
}

static hpod *add_pod(hns *ns, const char *uid, const char *name)
{
    hpod *p = calloc(1, sizeof(*p));

    if (!p || !(p->uid = strdup(uid)) || !(p->name = strdup(name)))
        goto error;
    p->at = NOWHERE;
    if (vec_add(&ns->all, p, &p->at) < 0)
        goto error;
    if (strmap_put(&ns->pods, p->name, p) < 0) {
        vec_del(&ns->all, &p->at, pod_at);
        goto error;
    }
    if (strmap_put(&ns->uids, p->uid, p) < 0) {
        strmap_del(&ns->pods, p->name);
        vec_del(&ns->all, &p->at, pod_at);
        goto error;
    }
    return p;
error:
    pod_free(p);
    return NULL;
}

bool rt_hosts_put_pod(rt_hosts *h, const json_t *pod, bool deleted)
{
    const json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
    const char *uid = str(meta, "uid"), *name = str(meta, "name"), *nsname = str(meta, "namespace");
    const json_t *labels = json_object_get(meta, "labels");
    const char *ip = str(json_object_get(pod, "status"), "podIP");
    const char *host = str(spec, "hostname"), *sub = str(spec, "subdomain");
    bool changed = false, shown_before, shown_now, gone = pod_gone(pod), relabel, fields;
    hns *ns;
    hpod *p;
    hsvc *same;

    if (!uid || !name || !nsname || !(ns = get_ns(h, nsname, !deleted)))
        return false;
    p = strmap_get(&ns->pods, name);
    if (p && strcmp(p->uid, uid)) {
        if (deleted)
            return false; /* an older pod of that name: the newer one stays */
        changed = drop_pod(ns, p); /* replaced while we did not look */
        p = NULL;
    }
    if (deleted) {
        if (p && drop_pod(ns, p))
            changed = true;
        goto out;
    }
    if (!p && !(p = add_pod(ns, uid, name)))
        goto out;
    shown_before = p->shown;
    relabel = !json_equal(p->labels, (json_t *)labels) &&
              !(p->labels == NULL && !json_object_size(labels));
    fields = relabel || p->gone != gone || !same_str(p->ip, ip && *ip ? ip : NULL) ||
             !same_str(p->host, host && *host ? host : NULL) ||
             !same_str(p->sub, sub && *sub ? sub : NULL);
    if (fields) {
        free(p->ip);
        free(p->host);
        free(p->sub);
        p->ip = dup_nonempty(ip);
        p->host = dup_nonempty(host);
        p->sub = dup_nonempty(sub);
        p->gone = gone;
        free(p->line);
        p->line = NULL;
        if (relabel) {
            json_decref(p->labels);
            p->labels = json_object_size(labels) ? json_deep_copy(labels) : NULL;
        }
    }
    update_shown(ns, p); /* also for a new pod that has only this node's address */
    shown_now = p->shown;
    /* Its line, or the Services that resolve to it, may differ. */
    if ((fields && (shown_before || shown_now)) || shown_before != shown_now)
        changed = true;
    if (relabel && (same = strmap_get(&ns->svcs, name)) && update_cand(ns, same))
        changed = true;
out:
    if (changed)
        ns->stale = true;
    return changed;
}

/* ---- Services ---- */

static void drop_svc(hns *ns, hsvc *s)
{
    vec_del(&ns->cands, &s->cand_at, svc_cand_at);
    vec_del(&ns->svcs_all, &s->at, svc_at);
    strmap_del(&ns->svcs, s->name);
    svc_free(s);
}

bool rt_hosts_put_service(rt_hosts *h, const json_t *svc, bool deleted)
{
    const json_t *meta = json_object_get(svc, "metadata");
    const char *name = str(meta, "name"), *nsname = str(meta, "namespace");
    const json_t *sel = json_object_get(json_object_get(svc, "spec"), "selector");
    bool usable = !deleted && usable_selector(sel), was_cand;
    hns *ns;
    hsvc *s;

    if (!name || !nsname || !(ns = get_ns(h, nsname, usable)))
        return false;
    s = strmap_get(&ns->svcs, name);
    was_cand = s && s->cand_at != NOWHERE;
    if (!usable) {
        /* It selects nothing: it never had a line of its own. */
        if (s)
            drop_svc(ns, s);
        s = NULL;
    } else if (s && json_equal(s->sel, (json_t *)sel)) {
        return false;
    } else {
        if (!s) {
            if (!(s = calloc(1, sizeof(*s))) || !(s->name = strdup(name))) {
                svc_free(s);
                return false;
            }
            s->at = s->cand_at = NOWHERE;
            if (vec_add(&ns->svcs_all, s, &s->at) < 0 ||
                strmap_put(&ns->svcs, s->name, s) < 0) {
                vec_del(&ns->svcs_all, &s->at, svc_at);
                svc_free(s);
                return false;
            }
        }
        json_decref(s->sel);
        s->sel = json_deep_copy(sel);
        update_cand(ns, s);
    }
    /* A Service shadowed before and after had no line either way. */
    if (!was_cand && !(s && s->cand_at != NOWHERE))
        return false;
    ns->stale = true;
    return true;
}

/* ---- this node's addresses ---- */

bool rt_hosts_set_local(rt_hosts *h, const char *nsname, const char *uid, const char *ip)
{
    hns *ns = get_ns(h, nsname, ip != NULL);
    char before[64] = "";
    const char *now;
    hlocal *l;
    hpod *p;
    bool changed;

    if (!ns || !uid)
        return false;
    l = strmap_get(&ns->locals, uid);
    if ((l && ip && !strcmp(l->ip, ip)) || (!l && !ip))
        return false;
    p = strmap_get(&ns->uids, uid);
    if (p && pod_addr(ns, p))
        snprintf(before, sizeof(before), "%s", pod_addr(ns, p));
    if (!ip) {
        strmap_del(&ns->locals, uid);
        free(l);
    } else {
        size_t len = strlen(uid) + 1;
        if (!l) {
            if (!(l = calloc(1, sizeof(*l) + len)))
                return false;
            memcpy(l->uid, uid, len);
            if (strmap_put(&ns->locals, l->uid, l) < 0) {
                free(l);
                return false;
            }
        }
        snprintf(l->ip, sizeof(l->ip), "%s", ip);
    }
    if (!p)
        return false; /* no line until the store shows the pod */
    now = pod_addr(ns, p);
    free(p->line);
    p->line = NULL;
    changed = update_shown(ns, p) || strcmp(before, now ? now : "");
    if (changed)
        ns->stale = true;
    return changed;
}

/* ---- rendering ---- */

/* "<name> <name>.<ns> <name>.<ns>.svc <name>.<ns>.svc.cluster.local" */
static void names(ty_buf *b, const char *name, const char *ns)
{
    ty_buf_printf(b, " %s %s.%s %s.%s.svc %s.%s.svc.cluster.local", name, name, ns, name, ns,
                  name, ns);
}

static int by_svc_name(const void *a, const void *b)
{
    return strcmp((*(hsvc *const *)a)->name, (*(hsvc *const *)b)->name);
}

/* p's line, made once per change of what it shows. */
static const char *pod_line(const hns *ns, hpod *p)
{
    ty_buf b = {0};

    if (p->line)
        return p->line;
    ty_buf_printf(&b, "%s", pod_addr(ns, p));
    names(&b, p->name, ns->name);
    if (p->host && p->sub) {
        char fq[512];
        snprintf(fq, sizeof(fq), "%s.%s", p->host, p->sub);
        names(&b, fq, ns->name);
    }
    ty_buf_puts(&b, "\n");
    p->line = ty_buf_steal(&b, NULL);
    return p->line;
}

/* Pods by name, each with its line; then each candidate Service (by name)
 * as the address of the first pod (by name) it selects. */
static char *render(const hns *ns)
{
    hsvc **svcs = malloc((ns->cands.n + 1) * sizeof(*svcs));
    ty_buf b = {0};

    if (!svcs)
        return NULL;
    if (ns->cands.n) {
        memcpy(svcs, ns->cands.v, ns->cands.n * sizeof(*svcs));
        qsort(svcs, ns->cands.n, sizeof(*svcs), by_svc_name);
    }
    ty_buf_puts(&b, "");
    for (size_t i = 0; i < ns->shown.n && b.len < MAX_HOSTS_BYTES; i++)
        ty_buf_puts(&b, pod_line(ns, ns->shown.v[i]));
    for (size_t i = 0; i < ns->cands.n && b.len < MAX_HOSTS_BYTES; i++) {
        for (size_t k = 0; k < ns->shown.n; k++) {
            const hpod *p = ns->shown.v[k];
            if (!selector_matches(svcs[i]->sel, p->labels))
                continue;
            ty_buf_printf(&b, "%s", pod_addr(ns, p));
            names(&b, svcs[i]->name, ns->name);
            ty_buf_puts(&b, "\n");
            break;
        }
    }
    free(svcs);
    return ty_buf_steal(&b, NULL);
}

const char *rt_hosts_body(rt_hosts *h, const char *nsname, uint64_t *gen)
{
    hns *ns = get_ns(h, nsname, true);
    char *text;

    if (!ns)
        return NULL;
    if (ns->stale || !ns->body) {
        if (!(text = render(ns)))
            return NULL;
        if (!ns->body || strcmp(ns->body, text)) {
            free(ns->body);
            ns->body = text;
            ns->gen = ++h->next_gen;
        } else {
            free(text);
        }
        ns->stale = false;
    }
    *gen = ns->gen;
    return ns->body;
}

char *rt_hosts_text(const char *body, const char *own_ip)
{
    ty_buf b = {0};

    /* "localhost" is the pod's own address, as a pod's loopback is its own:
     * a process that binds the wildcard (moved to the pod address by the bind
     * shim) and then dials localhost must reach itself. The pods' lines come
     * first: a reverse lookup of the pod address takes the first line that
     * holds it, and socket.getfqdn() (torchrun's MASTER_ADDR) must give the
     * pod's name, not "localhost". */
    ty_buf_printf(&b, "# written by trainyard's local runtime; rewritten as pods come and go\n"
                      "%s%s\tlocalhost\n127.0.0.1\tlocalhost.localdomain\n"
                      "::1\tip6-localhost ip6-loopback\n",
                  body, own_ip && *own_ip ? own_ip : "127.0.0.1");
    return ty_buf_steal(&b, NULL);
}
