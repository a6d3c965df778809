/* agent_addr.c - pod addresses: who holds which 127.b.c.d, and the addresses
 * reserved for pods that are not running here yet.
 *
 * Names before commands: a replica's environment names its peers (TF_CONFIG,
 * /etc/volcano/<task>.host, MPI hostfiles, MASTER_ADDR), and a replica may look
 * them up with its first instruction. A peer's name is in the hosts file only
 * while the peer has an address, so an address given when the peer starts
 * here came too late whenever the agent started one member of a gang before
 * it had seen the binding of the next (always, on a loaded machine).
 *
 * So a pod gets its address when the agent first sees it, bound here or not
 * bound yet, and its line is in the hosts table from then on. The store's
 * events reach the agent in commit order, and a gang is bound only once all
 * of its members exist; so by the time the agent handles any member's
 * binding it has reserved an address for every other member, and the first
 * hosts file it writes for that member names them all. This holds however
 * late the agent runs: it is an order, not a race won.
 *
 * A reservation becomes the pod's own address when the pod starts here, and
 * is dropped when the pod is bound to another node, ends or goes. Reservations
 * live in memory only: after a server restart a pod that was still pending
 * gets another address (nothing listened on the old one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/local/agent.h"

#define MAX_RESERVED 100000

struct rt_resv {
    char ip[16];
    char ns[256];
    uint64_t seen;          /* the listing that last showed the pod (resync) */
    size_t slot;            /* index in rt->resv */
    char uid[];             /* key of rt->resv_by_uid */
};

static const char *str(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

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

/* Whether a pod with no entry here should have an address held for it: it
 * may still start here (bound here, or not bound yet) and has not ended. */
static bool wants_address(const rt_local *rt, const json_t *pod)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *node = str(json_object_get(pod, "spec"), "nodeName");
    const char *phase = str(json_object_get(pod, "status"), "phase");

    if (json_object_get(meta, "deletionTimestamp"))
        return false;
    if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
        return false;
    return !*node || !strcmp(node, rt->node_name);
}

void addr_note_pod(rt_local *rt, const json_t *pod, bool deleted)
{
    const json_t *meta = json_object_get(pod, "metadata");
    const char *uid = str(meta, "uid"), *ns = str(meta, "namespace");
    rt_resv *r;

    if (!*uid || !*ns || agent_find(rt, uid))
        return; /* an entry holds its own address */
    r = strmap_get(&rt->resv_by_uid, uid);
    if (!deleted && wants_address(rt, pod)) {
        if (!r)
            r = resv_add(rt, ns, uid); /* NULL: it gets one when it starts */
        if (r)
            r->seen = rt->resv_listing;
    } else if (r) {
        resv_drop(rt, r, true);
    }
}

void addr_listing_begin(rt_local *rt)
{
    rt->resv_listing++;
}

void addr_listing_end(rt_local *rt)
{
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
    while (rt->nresv)
        resv_drop(rt, rt->resv[rt->nresv - 1], false);
    free(rt->resv);
    rt->resv = NULL;
    rt->resv_cap = 0;
    strmap_free(&rt->resv_by_uid);
    strmap_free(&rt->by_ip);
}
