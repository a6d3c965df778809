/* sl_nodes.c - the Slurm nodes of the configured partitions as Node
 * objects: `sinfo -N` read every 10 s (backend_slurm.c's thread), each node
 * registered or fixed through the agent kit, and the list the backend
 * answers nodes/owns_node and NodeAddr lookups from. */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "runtime/slurm/sl_int.h"

/* ---- Nodes ---- */

typedef struct node_args {
    const sl_node *n;
    const char *now;
} node_args;

static json_t *node_capacity(const sl_node *n)
{
    json_t *cap = json_object();

    json_object_set_new(cap, "cpu", json_sprintf("%d", n->cpus));
    json_object_set_new(cap, "memory", json_sprintf("%lldMi", n->mem_mb));
    json_object_set_new(cap, "pods", json_string("110"));
    if (n->gpus > 0)
        json_object_set_new(cap, "nvidia.com/gpu", json_sprintf("%d", n->gpus));
    return cap;
}

static int fix_node_meta(json_t *obj, void *arg, ty_error *err)
{
    const node_args *a = arg;
    json_t *meta = json_object_get(obj, "metadata"), *labels;
    (void)err;

    labels = json_object_get(meta, "labels");
    if (!json_is_object(labels)) {
        labels = json_object();
        json_object_set_new(meta, "labels", labels);
    }
    json_object_set_new(labels, "kubernetes.io/hostname", json_string(a->n->name));
    json_object_set_new(labels, "kubernetes.io/os", json_string("linux"));
    json_object_set_new(labels, "trainyard.io/runtime", json_string("slurm"));
    json_object_set_new(labels, SL_PARTITION_LABEL, json_string(a->n->partition));
    return 0;
}

static json_t *ready_condition(const sl_node *n, const char *now, const json_t *old)
{
    const char *was = ty_jstr(old, "status"), *since = ty_jstr(old, "lastTransitionTime");
    const char *status = n->ready ? "True" : "False";
    json_t *c;

    if (n->ready) {
        c = ak_node_ready_condition("Slurm node is up", now);
    } else {
        char msg[160];
        snprintf(msg, sizeof(msg), "Slurm node state is %s", n->state);
        c = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", "Ready", "status", "False",
                      "reason", "SlurmNodeNotUsable", "message", msg, "lastHeartbeatTime", now,
                      "lastTransitionTime", now);
    }
    if (c && *since && !strcmp(was, status))
        json_object_set_new(c, "lastTransitionTime", json_string(since));
    return c;
}

static int fix_node_status(json_t *obj, void *arg, ty_error *err)
{
    const node_args *a = arg;
    json_t *st = json_object_get(obj, "status"), *conds, *c, *old = NULL, *cap;
    size_t i;
    (void)err;

    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(obj, "status", st);
    }
    cap = node_capacity(a->n);
    json_object_set(st, "capacity", cap);
    json_object_set_new(st, "allocatable", cap);
    json_object_set_new(st, "addresses",
                        json_pack("[{s:s, s:s}, {s:s, s:s}]", "type", "InternalIP", "address",
                                  a->n->addr, "type", "Hostname", "address", a->n->name));
    if (!json_is_object(json_object_get(st, "nodeInfo")))
        json_object_set_new(st, "nodeInfo",
                            ak_node_info("slurm", "", "Slurm", "amd64"));
    conds = json_object_get(st, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(st, "conditions", conds);
    }
    json_array_foreach(conds, i, c) {
        if (!strcmp(ty_jstr(c, "type"), "Ready")) {
            old = json_incref(c);
            json_array_remove(conds, i);
            break;
        }
    }
    /* The heartbeat time moves only with the state: an unchanged node writes
     * nothing. */
    c = ready_condition(a->n, a->now, old);
    if (old && !strcmp(ty_jstr(old, "status"), ty_jstr(c, "status")) &&
        !strcmp(ty_jstr(old, "message"), ty_jstr(c, "message")))
        json_object_set_new(c, "lastHeartbeatTime", json_string(ty_jstr(old, "lastHeartbeatTime")));
    json_array_append_new(conds, c);
    json_decref(old);
    return 0;
}

static json_t *make_node(void *arg)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s}, s:{}, s:{}}", "apiVersion", "v1", "kind", "Node",
                          "metadata", "name", ((const node_args *)arg)->n->name, "spec",
                          "status");
    fix_node_meta(o, arg, NULL);
    fix_node_status(o, arg, NULL);
    return o;
}

/* A node's IPv4 address: NodeAddr as sinfo shows it (an address, or a name
 * resolved here; unresolvable names are kept, and fail loudly later). */
static void node_address(const char *addr, char *out, size_t len)
{
    struct in_addr a;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;

    if (inet_pton(AF_INET, addr, &a) == 1 || getaddrinfo(addr, NULL, &hints, &res) != 0 || !res) {
        snprintf(out, len, "%s", addr);
        return;
    }
    inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, out, (socklen_t)len);
    freeaddrinfo(res);
}

/* sinfo: the nodes of the partitions, and their Node objects kept. */
void sl_refresh_nodes(rt_slurm *s)
{
    const char *argv[8] = {"sinfo", "-h", "-N", "-o", "%N|%o|%c|%m|%G|%T|%P", NULL};
    scli_out out = {0};
    scli_node *got;
    size_t n = 0;
    ty_error err;
    char now[40];

    ty_error_init(&err);
    if (s->partitions) {
        argv[5] = "-p";
        argv[6] = s->partitions;
    }
    if (scli_run(argv, NULL, SL_CMD_TIMEOUT_MS, SL_CMD_MAX_OUT, &out, &err) < 0 || out.status) {
        char *why = err.code ? NULL : scli_describe(argv, &out);
        ty_warn("slurm: cannot list nodes: %s", why ? why : err.text);
        free(why);
        goto out;
    }
    if (!(got = scli_parse_sinfo(out.out ? out.out : "", &n, &err))) {
        ty_warn("slurm: sinfo: %s", err.text);
        goto out;
    }
    sl_node *nodes = calloc(n ? n : 1, sizeof(*nodes));
    if (!nodes) {
        free(got);
        goto out;
    }
    ty_time_now(now, sizeof(now));
    for (size_t i = 0; i < n; i++) {
        sl_node *d = &nodes[i];
        snprintf(d->name, sizeof(d->name), "%s", got[i].name);
        node_address(*got[i].addr ? got[i].addr : got[i].name, d->addr, sizeof(d->addr));
        snprintf(d->partition, sizeof(d->partition), "%s", got[i].partition);
        snprintf(d->state, sizeof(d->state), "%s", got[i].state);
        d->cpus = got[i].cpus;
        d->gpus = got[i].gpus;
        d->mem_mb = got[i].mem_mb;
        d->ready = !got[i].drain && !got[i].down && got[i].responding;
        node_args a = {.n = d, .now = now};
        ty_error e2;
        ty_error_init(&e2);
        if (ak_node_ensure(s->kc, d->name, fix_node_meta, fix_node_status, make_node, &a, NULL,
                           &e2) < 0)
            ty_warn("slurm: node %s: %s", d->name, e2.text);
        ty_error_clear(&e2);
    }
    free(got);
    pthread_mutex_lock(&s->mu);
    free(s->nodes);
    s->nodes = nodes;
    s->nnodes = n;
    pthread_mutex_unlock(&s->mu);
out:
    scli_out_free(&out);
    ty_error_clear(&err);
}
