/* agent_addr.c - pod addresses: who holds which 127.b.c.d, and the addresses
 * reserved for pods that have not started here yet.
 *
 * Names before commands: a replica's environment names its peers (TF_CONFIG,
 * /etc/volcano/<task>.host, MPI hostfiles, MASTER_ADDR), and a replica may look
 * them up with its first instruction. A peer's name is in the hosts file only
 * while the peer has an address, so an address given when the peer starts
 * here came too late whenever the agent started one member of a gang before
 * it had handled the binding of the next (always, on a loaded machine).
 *
 * So the addresses are given when the gang is bound. The agent keeps the pods
 * that are not bound yet, by gang (the scheduling.k8s.io/group-name
 * annotation the job controllers set); the first time it sees a member of a
 * gang bound here it reserves an address for every member it knows, and for
 * every pod bound here, before it starts any pod of that batch of events. The
 * store's events reach the agent in commit order, and a gang is bound only
 * once all its members exist; so by the time the agent handles any member's
 * binding it knows every other member, and the first hosts file it writes
 * for that member names them all. This holds however late the agent runs: it
 * is an order, not a race won. Pods still waiting in a queue get no address
 * (nor a line in every hosts file of their namespace) until their gang is
 * bound.
 *
 * A reservation becomes the pod's own address when the pod starts here, and
 * is dropped when the pod is bound to another node, ends or goes. Reservations
 * live in memory only: after a server restart a pod that was still pending
 * gets another address (nothing listened on the old one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonget.h"
#include "runtime/local/agent.h"

#define MAX_RESERVED 100000
#define MAX_WAITING 100000
#define GROUP_ANN "scheduling.k8s.io/group-name"

struct rt_resv {
    char ip[16];
    char ns[256];
    uint64_t seen;          /* the listing that last showed the pod (resync) */
    size_t slot;            /* index in rt->resv */
    char uid[];             /* key of rt->resv_by_uid */
};

/* A pod not bound yet, of a gang, with no address: it gets one when a member
 * of its gang is bound here. */
struct addr_wait {
    struct addr_gang *gang;
    size_t slot;            /* index in gang->members */
    size_t all_slot;        /* index in rt->waits */
    char ns[256];
    char uid[];             /* key of rt->waiting */
};

typedef struct addr_gang {
    addr_wait **members;
    size_t n, cap;
    char key[];             /* "<ns>/<group>", key of rt->gangs */
} addr_gang;

/* ---- who holds an address ---- */

/* by_ip maps an address to its holder: an entry (rt_pod) or a reservation. */
static bool ip_free(const rt_local *rt, const char *ip, const void *self)
{
    const void *holder = strmap_get(&rt->by_ip, ip);
    return !holder || holder == self;
}

void addr_forget(rt_local *rt, rt_pod *p)
{
    if (*p->ip && strmap_get(&rt->by_ip, p->ip) == p)
        strmap_del(&rt->by_ip, p->ip);
}

/* p holds its address; "" when the map cannot take it (out of memory). */
static void hold(rt_local *rt, rt_pod *p)
{
    if (*p->ip && strmap_put(&rt->by_ip, p->ip, p) < 0)
        p->ip[0] = '\0';
}

/* 127.b.c.d with b >= 1 and d in 1..254: never 127.0.0.x (the host's own
 * loopback names live there), never a .0 or .255 that tools may treat as a
 * network or broadcast address. "" when none is free. */
static void next_free(rt_local *rt, char ip[16], const void *self)
{
    size_t tries = rt->npods + rt->nidle + rt->nresv + 1024;

    for (size_t i = 0; i < tries; i++) {
        uint32_t a = rt->next_ip++;
        if ((a & 0xff) == 0 || (a & 0xff) == 255 || ((a >> 16) & 0xff) == 0 ||
            (a >> 24) != 127) {
            if ((a >> 24) != 127)
                rt->next_ip = 0x7f010001u;
            continue;
        }
        snprintf(ip, 16, "127.%u.%u.%u", (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
        if (ip_free(rt, ip, self))
            return;
    }
    ip[0] = '\0';
}

/* Each data directory starts in its own 127.b.0.0/16, so that two servers on
 * one machine rarely hand out the same addresses. */
void addr_init(rt_local *rt)
{
    uint32_t h = 2166136261u;

    for (const char *c = rt->data_dir; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    rt->next_ip = 0x7f000001u | ((1 + h % 254) << 16);
}

/* ---- reservations ---- */

static void resv_drop(rt_local *rt, rt_resv *r, bool tell_hosts)
{
    size_t i = r->slot;

    if (tell_hosts && rt_hosts_set_local(rt->hosts, r->ns, r->uid, NULL))
        json_object_set_new(rt->dirty_ns, r->ns, json_true());
    if (strmap_get(&rt->by_ip, r->ip) == r)
        strmap_del(&rt->by_ip, r->ip);
    strmap_del(&rt->resv_by_uid, r->uid);
    if (i < rt->nresv && rt->resv[i] == r) {
        rt->resv[i] = rt->resv[--rt->nresv];
        if (i < rt->nresv)
            rt->resv[i]->slot = i;
    }
    free(r);
}

static rt_resv *resv_add(rt_local *rt, const char *ns, const char *uid)
{
    size_t len = strlen(uid) + 1;
    rt_resv *r;

    if (rt->nresv >= MAX_RESERVED || strlen(ns) >= sizeof(r->ns))
        return NULL;
    if (rt->nresv == rt->resv_cap) {
        size_t cap = rt->resv_cap ? rt->resv_cap * 2 : 64;
        rt_resv **nv = realloc(rt->resv, cap * sizeof(*nv));
        if (!nv)
            return NULL;
        rt->resv = nv;
        rt->resv_cap = cap;
    }
    if (!(r = calloc(1, sizeof(*r) + len)))
        return NULL;
    memcpy(r->uid, uid, len);
    snprintf(r->ns, sizeof(r->ns), "%s", ns);
    next_free(rt, r->ip, r);
    if (!*r->ip || strmap_put(&rt->by_ip, r->ip, r) < 0) {
        free(r);
        return NULL;
    }
    if (strmap_put(&rt->resv_by_uid, r->uid, r) < 0) {
        strmap_del(&rt->by_ip, r->ip);
        free(r);
        return NULL;
    }
    r->slot = rt->nresv;
    rt->resv[rt->nresv++] = r;
    if (rt_hosts_set_local(rt->hosts, r->ns, r->uid, r->ip))
        json_object_set_new(rt->dirty_ns, r->ns, json_true());
    return r;
}

/* ---- pods waiting for their gang ---- */

static void wait_drop(rt_local *rt, addr_wait *w)
{
    addr_gang *g = w->gang;
    size_t i = w->slot;

    strmap_del(&rt->waiting, w->uid);
    if (w->all_slot < rt->nwaits && rt->waits[w->all_slot] == w) {
        rt->waits[w->all_slot] = rt->waits[--rt->nwaits];
        if (w->all_slot < rt->nwaits)
            rt->waits[w->all_slot]->all_slot = w->all_slot;
    }
    if (i < g->n && g->members[i] == w) {
        g->members[i] = g->members[--g->n];
        if (i < g->n)
            g->members[i]->slot = i;
    }
    free(w);
    if (!g->n) {
        strmap_del(&rt->gangs, g->key);
        free(g->members);
        free(g);
    }
}

static void wait_add(rt_local *rt, const char *ns, const char *uid, const char *group)
{
    char key[600];
    size_t len = strlen(uid) + 1;
    addr_gang *g;
    addr_wait *w;

    if (rt->nwaits >= MAX_WAITING || strlen(ns) >= sizeof(w->ns) || strlen(group) > 300)
        return; /* it gets its address when it is bound here */
    if (rt->nwaits == rt->waits_cap) {
        size_t cap = rt->waits_cap ? rt->waits_cap * 2 : 64;
        addr_wait **nv = realloc(rt->waits, cap * sizeof(*nv));
        if (!nv)
            return;
        rt->waits = nv;
        rt->waits_cap = cap;
    }
    snprintf(key, sizeof(key), "%s/%s", ns, group);
    if (!(g = strmap_get(&rt->gangs, key))) {
        if (!(g = calloc(1, sizeof(*g) + strlen(key) + 1)))
            return;
        strcpy(g->key, key);
        if (strmap_put(&rt->gangs, g->key, g) < 0) {
            free(g);
            return;
        }
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 8;
        addr_wait **nv = realloc(g->members, cap * sizeof(*nv));
        if (!nv)
            goto unused;
        g->members = nv;
        g->cap = cap;
    }
    if (!(w = calloc(1, sizeof(*w) + len)))
        goto unused;
    memcpy(w->uid, uid, len);
    snprintf(w->ns, sizeof(w->ns), "%s", ns);
    w->gang = g;
    if (strmap_put(&rt->waiting, w->uid, w) < 0) {
        free(w);
        goto unused;
    }
    w->slot = g->n;
    g->members[g->n++] = w;
    w->all_slot = rt->nwaits;
    rt->waits[rt->nwaits++] = w;
    return;
unused:
    if (!g->n) {
        strmap_del(&rt->gangs, g->key);
        free(g->members);
        free(g);
    }
}

/* A member of ns/group is bound here: every member still waiting gets its
 * address now, before the agent starts any pod of this batch. */
static void gang_bound(rt_local *rt, const char *ns, const char *group)
{
    char key[600];
    addr_gang *g;

    snprintf(key, sizeof(key), "%s/%s", ns, group);
    if (!(g = strmap_get(&rt->gangs, key)))
        return;
    /* Each drop moves the last member into the hole; the last drop frees g. */
    for (size_t left = g->n; left > 0; left--) {
        addr_wait *w = g->members[g->n - 1];
        rt_resv *r = resv_add(rt, w->ns, w->uid);
        if (r)
            r->seen = rt->resv_listing;
        wait_drop(rt, w);
    }
}

/* ---- what the store shows ---- */

void addr_note_pod(rt_local *rt, const json_t *pod, bool deleted)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *uid = ty_jstr(meta, "uid"), *ns = ty_jstr(meta, "namespace");
    const char *node = ty_jstr(json_object_get(pod, "spec"), "nodeName");
    const char *phase = ty_jstr(json_object_get(pod, "status"), "phase");
    const char *group = ty_jstr(json_object_get(meta, "annotations"), GROUP_ANN);
    bool gone = deleted || json_object_get(meta, "deletionTimestamp") ||
                !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
    bool here = !strcmp(node, rt->node_name), unbound = !*node, entry;
    rt_resv *r;
    addr_wait *w;

    if (!*uid || !*ns)
        return;
    entry = agent_find(rt, uid) != NULL; /* an entry holds its own address */
    r = strmap_get(&rt->resv_by_uid, uid);
    w = strmap_get(&rt->waiting, uid);
    if (r && (entry || gone || !(here || unbound))) {
        resv_drop(rt, r, !entry);
        r = NULL;
    }
    if (!entry && !gone && here && !r)
        r = resv_add(rt, ns, uid); /* NULL: it gets one when it starts */
    if (w && (entry || gone || !unbound || r))
        wait_drop(rt, w);
    else if (!w && !entry && !gone && unbound && !r && *group)
        wait_add(rt, ns, uid, group);
    if (r)
        r->seen = rt->resv_listing;
    if (here && !gone && *group)
        gang_bound(rt, ns, group);
}

void addr_note_listing(rt_local *rt, ty_obj *const *items, size_t n)
{
    rt->resv_listing++;
    /* The waiting pods are known again from the listing alone. */
    while (rt->nwaits)
        wait_drop(rt, rt->waits[rt->nwaits - 1]);
    /* Pods not bound yet first: a gang's member bound here then finds every
     * other member waiting, whatever order the listing has. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            const json_t *pod = ty_obj_json(items[i]);
            bool unbound = !*ty_jstr(json_object_get(pod, "spec"), "nodeName");
            if (unbound == (pass == 0))
                addr_note_pod(rt, pod, false);
        }
    /* Backwards: a drop moves the last reservation into the hole. */
    for (size_t i = rt->nresv; i-- > 0;)
        if (i < rt->nresv && rt->resv[i]->seen != rt->resv_listing)
            resv_drop(rt, rt->resv[i], true);
}

/* ---- entries ---- */

void addr_take(rt_local *rt, rt_pod *p)
{
    rt_resv *r = strmap_get(&rt->resv_by_uid, p->uid);

    addr_forget(rt, p);
    if (r) {
        /* The hosts table shows this address for the uid already. */
        snprintf(p->ip, sizeof(p->ip), "%s", r->ip);
        resv_drop(rt, r, false);
    } else {
        next_free(rt, p->ip, p);
    }
    hold(rt, p);
}

void addr_adopt(rt_local *rt, rt_pod *p)
{
    if (!*p->ip || !ip_free(rt, p->ip, p))
        addr_take(rt, p);
    else
        hold(rt, p);
}

void addr_free_all(rt_local *rt)
{
    while (rt->nwaits)
        wait_drop(rt, rt->waits[rt->nwaits - 1]);
    free(rt->waits);
    rt->waits = NULL;
    rt->waits_cap = 0;
    strmap_free(&rt->waiting);
    strmap_free(&rt->gangs);
    while (rt->nresv)
        resv_drop(rt, rt->resv[rt->nresv - 1], false);
    free(rt->resv);
    rt->resv = NULL;
    rt->resv_cap = 0;
    strmap_free(&rt->resv_by_uid);
    strmap_free(&rt->by_ip);
}
