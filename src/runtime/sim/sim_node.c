/* sim_node.c - the simulated Node objects and the --sim-nodes spec.
 *
 * A node is created once with the full shape. Later starts only bring its
 * status to the shape (capacity, allocatable, addresses, a Ready condition)
 * and add labels of ours that are missing: labels, taints and unschedulable
 * set by users are never touched. There is no heartbeat: nothing in Trainyard
 * ages a node out, and 5,000 heartbeats would be 5,000 writes. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonown.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "model/quantity.h"
#include "runtime/agent_kit.h"
#include "runtime/sim/sim_internal.h"

#define LABEL_SIM "trainyard.io/sim"
#define LABEL_RUNTIME "trainyard.io/runtime"
#define LABEL_HOSTNAME "kubernetes.io/hostname"

const char *rt_sim_node_name(const rt_sim *rt, int i, char *buf, size_t len)
{
    snprintf(buf, len, "%s%0*d", rt->prefix, rt->width, i);
    return buf;
}

int sim_node_index(const rt_sim *rt, const char *name)
{
    const char *d;
    int v = 0, n = 0;

    if (!name || strncmp(name, rt->prefix, rt->prefix_len))
        return -1;
    for (d = name + rt->prefix_len; *d; d++, n++) {
        if (*d < '0' || *d > '9' || n >= rt->width)
            return -1;
        v = v * 10 + (*d - '0');
    }
    return n == rt->width && v < rt->count ? v : -1;
}

void sim_node_ip(int i, char *buf, size_t len)
{
    unsigned n = (unsigned)i + 1;
    snprintf(buf, len, "10.%u.%u.%u", (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);
}

static json_t *shape(const rt_sim *rt)
{
    char pods[16];
    json_t *cap;

    snprintf(pods, sizeof(pods), "%d", rt->pods);
    cap = json_pack("{s:s, s:s, s:s}", "cpu", rt->cpu, "memory", rt->memory, "pods", pods);
    if (cap && rt->gpus > 0) {
        char g[16];
        snprintf(g, sizeof(g), "%d", rt->gpus);
        json_object_set_new(cap, "nvidia.com/gpu", json_string(g));
    }
    return cap;
}

static json_t *ready_condition(const char *now)
{
    return ak_node_ready_condition("trainyard simulated node is posting ready status", now);
}

static json_t *addresses(int i, const char *name)
{
    char ip[16];
    sim_node_ip(i, ip, sizeof(ip));
    return json_pack("[{s:s, s:s}, {s:s, s:s}]", "type", "InternalIP", "address", ip, "type",
                     "Hostname", "address", name);
}

static json_t *node_info(void)
{
    return ak_node_info("sim", "", "Trainyard simulated node", "amd64");
}

static json_t *new_node(const rt_sim *rt, int i, const char *now)
{
    char name[256];
    json_t *cap = shape(rt);

    rt_sim_node_name(rt, i, name, sizeof(name));
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s, s:s, s:s}}, s:{},"
                     " s:{s:O, s:o, s:[o], s:o, s:o, s:{s:{s:i}}}}",
                     "apiVersion", "v1", "kind", "Node", "metadata", "name", name, "labels",
                     LABEL_HOSTNAME, name, "kubernetes.io/os", "linux", "kubernetes.io/arch",
                     "amd64", LABEL_SIM, "true", LABEL_RUNTIME, "sim", "spec", "status",
                     "capacity", cap, "allocatable", cap, "conditions", ready_condition(now),
                     "addresses", addresses(i, name), "nodeInfo", node_info(),
                     "daemonEndpoints", "kubeletEndpoint", "Port", 0);
}

typedef struct fix_args {
    const rt_sim *rt;
    int index;
    const char *now;
} fix_args;

static void add_label_if_missing(json_t *labels, const char *k, const char *v)
{
    if (!json_object_get(labels, k))
        json_object_set_new(labels, k, json_string(v));
}

/* An existing node: our labels when missing (a plain write), the status's
 * shape (a status write: an API server takes a node's status only there);
 * nothing else, and a node that already matches is not written at all. */
static int fix_labels(json_t *obj, void *arg, ty_error *err)
{
    json_t *meta = json_object_get(obj, "metadata"), *labels = json_object_get(meta, "labels");
    const char *name = json_string_value(json_object_get(meta, "name"));

    (void)arg, (void)err;
    if (!json_is_object(labels)) {
        labels = json_object();
        json_object_set_new(meta, "labels", labels);
    }
    add_label_if_missing(labels, LABEL_HOSTNAME, name);
    add_label_if_missing(labels, LABEL_SIM, "true");
    add_label_if_missing(labels, LABEL_RUNTIME, "sim");
    return 0;
}

/* What it changes below the status it makes its own first (the rest is
 * shared with the stored version, base/jsonown.h). */
static int fix_status(json_t *obj, void *arg, ty_error *err)
{
    const fix_args *a = arg;
    json_t *st = json_object_get(obj, "status"), *conds, *cap;
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                         "name"));
    bool ready = false;
    size_t i;

    (void)err;
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(obj, "status", st);
    }
    cap = shape(a->rt);
    json_object_set(st, "capacity", cap);
    json_object_set_new(st, "allocatable", cap);
    json_object_set_new(st, "addresses", addresses(a->index, name));
    if (!json_is_object(json_object_get(st, "nodeInfo")))
        json_object_set_new(st, "nodeInfo", node_info());
    conds = ty_json_own(st, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(st, "conditions", conds);
    }
    for (i = 0; i < json_array_size(conds); i++) {
        const json_t *c = json_array_get(conds, i);
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *v = json_string_value(json_object_get(c, "status"));
        if (t && !strcmp(t, "Ready")) {
            ready = v && !strcmp(v, "True");
            if (!ready) {
                json_array_remove(conds, i);
                break;
            }
        }
    }
    if (!ready)
        json_array_append_new(conds, ready_condition(a->now));
    return 0;
}

static json_t *make_node(void *arg)
{
    const fix_args *a = arg;
    return new_node(a->rt, a->index, a->now);
}

static int ensure(rt_sim *rt, int i, const char *now, int *created, ty_error *err)
{
    char name[256];
    fix_args a = {.rt = rt, .index = i, .now = now};
    bool made;

    rt_sim_node_name(rt, i, name, sizeof(name));
    if (ak_node_ensure(rt->s, name, fix_labels, fix_status, make_node, &a, &made, err) < 0)
        return -1;
    if (made && created)
        (*created)++;
    return 0;
}

int sim_node_ensure(rt_sim *rt, int i, ty_error *err)
{
    char now[32];
    ty_time_now(now, sizeof(now));
    return ensure(rt, i, now, NULL, err);
}

typedef struct stale_args {
    const rt_sim *rt;
} stale_args;

/* A sim node of our prefix that is not one of the current count. */
static bool stale_node(const json_t *obj, void *arg)
{
    const stale_args *a = arg;
    const json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *sim = json_string_value(json_object_get(json_object_get(meta, "labels"),
                                                        LABEL_SIM));

    return name && sim && !strcmp(sim, "true") && !strncmp(name, a->rt->prefix,
                                                            a->rt->prefix_len) &&
           sim_node_index(a->rt, name) < 0;
}

static void delete_stale(rt_sim *rt)
{
    stale_args a = {.rt = rt};
    kc_list_opts lo = {.filter = stale_node, .filter_arg = &a};
    kc_list l;

    if (kc_list_objects(rt->s, "nodes", &lo, &l, NULL) < 0)
        return;
    for (size_t i = 0; i < l.n; i++) {
        const char *name = json_string_value(
            json_object_get(json_object_get(ty_obj_json(l.items[i]), "metadata"), "name"));
        ty_error err;
        ty_error_init(&err);
        ty_obj_unref(kc_delete(rt->s, "nodes", "", name, NULL, NULL, &err));
        ty_error_clear(&err);
    }
    if (l.n)
        ty_info("sim: deleted %zu simulated node(s) left by an earlier, larger run", l.n);
    kc_list_free(&l);
}

int sim_nodes_register(rt_sim *rt, ty_error *err)
{
    int64_t t0 = ty_now_ms();
    int created = 0;
    char now[32];

    ty_time_now(now, sizeof(now));
    for (int i = 0; i < rt->count; i++)
        if (ensure(rt, i, now, &created, err) < 0)
            return -1;
    delete_stale(rt);
    ty_info("sim: %d node(s) %s%0*d..%s%0*d ready (%d created) in %lld ms", rt->count,
            rt->prefix, rt->width, 0, rt->prefix, rt->width, rt->count - 1, created,
            (long long)(ty_now_ms() - t0));
    return 0;
}

/* ---- --sim-nodes SPEC ---- */

static int parse_count(const char *s, size_t len, long lo, long hi, long *out)
{
    long v = 0;

    if (len == 0 || len > 9)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_quantity(const char *key, const char *v, size_t len, char *buf,
                          size_t buf_len, ty_error *err)
{
    int64_t milli;

    if (len == 0 || len >= buf_len)
        return ty_seterr(err, TY_EINVALID, "%s: want a quantity such as 64 or 512Gi", key);
    memcpy(buf, v, len);
    buf[len] = '\0';
    if (quantity_parse(buf, &milli, NULL) < 0 || milli <= 0)
        return ty_seterr(err, TY_EINVALID, "%s=%s: want a positive quantity such as 64 or 512Gi",
                         key, buf);
    return 0;
}

static int parse_options(const char *s, rt_sim_opts *o, char *cpu_buf, char *mem_buf,
                         size_t buf_len, ty_error *err)
{
    while (*s) {
        size_t len = strcspn(s, ","), klen;
        const char *eq = memchr(s, '=', len), *v;
        long n;

        if (!eq)
            return ty_seterr(err, TY_EINVALID, "'%.*s': want key=value (cpu, memory, pods)",
                             (int)len, s);
        klen = (size_t)(eq - s);
        v = eq + 1;
        if (klen == 3 && !strncmp(s, "cpu", 3)) {
            if (parse_quantity("cpu", v, len - klen - 1, cpu_buf, buf_len, err) < 0)
                return -1;
            o->cpu = cpu_buf;
        } else if (klen == 6 && !strncmp(s, "memory", 6)) {
            if (parse_quantity("memory", v, len - klen - 1, mem_buf, buf_len, err) < 0)
                return -1;
            o->memory = mem_buf;
        } else if (klen == 4 && !strncmp(s, "pods", 4)) {
            if (parse_count(v, len - klen - 1, 1, 100000, &n) < 0)
                return ty_seterr(err, TY_EINVALID, "pods=%.*s: want 1-100000",
                                 (int)(len - klen - 1), v);
            o->pods = (int)n;
        } else {
            return ty_seterr(err, TY_EINVALID, "unknown key '%.*s': want cpu, memory or pods",
                             (int)klen, s);
        }
        s += len;
        if (*s == ',' && !*++s)
            return ty_seterr(err, TY_EINVALID, "trailing ','");
    }
    return 0;
}

int rt_sim_parse_spec(const char *spec, rt_sim_opts *o, char *cpu_buf, char *mem_buf,
                      size_t buf_len, ty_error *err)
{
    const char *colon = strchr(spec, ':');
    size_t head = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *x = memchr(spec, 'x', head);
    long n, g = 0;

    if (parse_count(spec, x ? (size_t)(x - spec) : head, 1, RT_SIM_MAX_NODES, &n) < 0)
        return ty_seterr(err, TY_EINVALID, "want N, NxG or NxG:cpu=Q,memory=Q,pods=P with "
                                           "N nodes in 1-%d",
                         RT_SIM_MAX_NODES);
    if (x && parse_count(x + 1, head - (size_t)(x + 1 - spec), 0, 1024, &g) < 0)
        return ty_seterr(err, TY_EINVALID, "GPUs per node (after 'x'): want 0-1024");
    o->count = (int)n;
    o->gpus = (int)g;
    if (colon) {
        if (!colon[1])
            return ty_seterr(err, TY_EINVALID, "nothing after ':'");
        return parse_options(colon + 1, o, cpu_buf, mem_buf, buf_len, err);
    }
    return 0;
}
