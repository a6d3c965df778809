/* sl_plan.c - a Slurm job has started: where each pod landed decides its
 * addresses and ports, then its spec is written and it is bound.
 *
 * Names: every pod's hosts file maps the pods and Services of its namespace
 * to the addresses they run at, a Slurm pod's being its node's NodeAddr (node
 * names need not resolve), so the names the job controllers inject
 * (MASTER_ADDR=job-master-0, TF_CONFIG's job-worker-1.ns.svc:2222, Volcano's
 * host files) reach the right machine unchanged.
 *
 * Ports: pods on different nodes keep the ports they declare. Pods sharing a
 * node share its address, so a declared containerPort that another running
 * pod of ours on that node already uses is moved to a free one from the
 * configured range, and the environment and arguments of every pod of the
 * job follow (sl_rewrite_ports): "<name of the pod>:<port>" anywhere in a
 * value, and a variable ending in PORT that holds the bare port when its
 * partner variable (the same prefix ending in ADDR, HOST, URI, ADDRESS or
 * IP) names the pod — MASTER_PORT beside MASTER_ADDR, MS_SCHED_PORT beside
 * MS_SCHED_HOST, DMLC_PS_ROOT_PORT beside DMLC_PS_ROOT_URI — or, without a
 * partner, when the pod itself declares it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "client/events.h"
#include "model/obj.h"
#include "runtime/local/rt_internal.h"
#include "runtime/slurm/sl_int.h"

/* ---- which pod a name means ---- */

/* Whether host (a name as a value holds it) names pod: its name, its
 * hostname, hostname.subdomain, each alone or followed by .<ns>,
 * .<ns>.svc or .<ns>.svc.cluster.local. */
static bool names_pod(const char *host, size_t len, const json_t *pod)
{
    const json_t *spec = json_object_get(pod, "spec");
    const char *ns = ty_jmeta(pod, "namespace"), *hn = ty_jstr(spec, "hostname"),
               *sub = ty_jstr(spec, "subdomain");
    char bases[3][600], full[1024];
    static const char *const suffixes[] = {"", ".%s", ".%s.svc", ".%s.svc.cluster.local"};
    int nb = 0;

    snprintf(bases[nb++], sizeof(bases[0]), "%s", ty_jmeta(pod, "name"));
    if (*hn)
        snprintf(bases[nb++], sizeof(bases[0]), "%s", hn);
    if (*hn && *sub)
        snprintf(bases[nb++], sizeof(bases[0]), "%s.%s", hn, sub);
    for (int b = 0; b < nb; b++)
        for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
            char suf[300];
            snprintf(suf, sizeof(suf), suffixes[k], ns);
            if ((size_t)snprintf(full, sizeof(full), "%.600s%.300s", bases[b], suf) >= sizeof(full))
                continue;
            if (strlen(full) == len && !strncmp(full, host, len))
                return true;
        }
    return false;
}

static int pod_named(json_t *const *pods, size_t n, const char *host, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (names_pod(host, len, pods[i]))
            return (int)i;
    return -1;
}

static bool host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '-' || c == '_';
}

static long moved(const json_t *ports, long port)
{
    char k[24];
    snprintf(k, sizeof(k), "%ld", port);
    const json_t *v = json_object_get(ports, k);
    return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

/* value with every "<pod name>:<moved port>" rewritten; NULL when nothing
 * changed (caller frees). */
static char *rewrite_pairs(const char *value, json_t *const *pods, json_t *const *ports, size_t n)
{
    ty_buf b = {0};
    const char *v = value, *start = value;
    bool changed = false;

    while (*v) {
        if (host_char(*v) && (v == value || !host_char(v[-1]))) {
            const char *h = v;
            while (host_char(*v))
                v++;
            if (*v == ':' && v[1] >= '0' && v[1] <= '9') {
                char *end;
                long port = strtol(v + 1, &end, 10);
                int who = pod_named(pods, n, h, (size_t)(v - h));
                long to = who >= 0 ? moved(ports[who], port) : -1;
                if (to > 0 && !(*end >= '0' && *end <= '9')) {
                    ty_buf_append(&b, start, (size_t)(v + 1 - start));
                    ty_buf_printf(&b, "%ld", to);
                    start = v = end;
                    changed = true;
                }
            }
            continue;
        }
        v++;
    }
    if (!changed) {
        ty_buf_free(&b);
        return NULL;
    }
    ty_buf_puts(&b, start);
    return ty_buf_steal(&b, NULL);
}

/* The value of variable name in env (a container's env array), or NULL. */
static const char *env_value(const json_t *env, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(env, i, e)
        if (!strcmp(ty_jstr(e, "name"), name) && json_is_string(json_object_get(e, "value")))
            return ty_jstr(e, "value");
    return NULL;
}

/* Which pod a bare port in variable name refers to: its partner's pod, else
 * self; -1 when none. */
static int port_owner(const json_t *env, const char *name, json_t *const *pods, size_t n,
                      size_t self)
{
    static const char *const partners[] = {"ADDR", "HOST", "URI", "ADDRESS", "IP"};
    size_t len = strlen(name);
    char want[256];

    if (len < 4 || strcmp(name + len - 4, "PORT") || len >= sizeof(want))
        return -1;
    for (size_t k = 0; k < sizeof(partners) / sizeof(partners[0]); k++) {
        snprintf(want, sizeof(want), "%.*s%s", (int)(len - 4), name, partners[k]);
        const char *host = env_value(env, want);
        if (!host)
            continue;
        if (!strcmp(host, "localhost") || !strcmp(host, "127.0.0.1") || !strcmp(host, "0.0.0.0"))
            return (int)self;
        return pod_named(pods, n, host, strlen(host));
    }
    return (int)self;
}

static void rewrite_container(json_t *ct, json_t *const *pods, json_t *const *ports, size_t n,
                              size_t self)
{
    json_t *env = json_object_get(ct, "env"), *e, *list;
    size_t i;
    static const char *const lists[] = {"command", "args"};

    json_array_foreach(env, i, e) {
        const char *v = json_string_value(json_object_get(e, "value"));
        char *nv;
        if (!v)
            continue;
        if ((nv = rewrite_pairs(v, pods, ports, n))) {
            json_object_set_new(e, "value", json_string_nocheck(nv));
            free(nv);
            continue;
        }
        char *end;
        long port = strtol(v, &end, 10);
        if (*v && !*end && port > 0 && port < 65536) {
            int who = port_owner(env, ty_jstr(e, "name"), pods, n, self);
            long to = who >= 0 ? moved(ports[who], port) : -1;
            if (to > 0)
                json_object_set_new(e, "value", json_sprintf("%ld", to));
        }
    }
    for (size_t l = 0; l < 2; l++) {
        list = json_object_get(ct, lists[l]);
        json_array_foreach(list, i, e) {
            const char *v = json_string_value(e);
            char *nv = v ? rewrite_pairs(v, pods, ports, n) : NULL;
            if (nv) {
                json_array_set_new(list, i, json_string_nocheck(nv));
                free(nv);
            }
        }
    }
}

void sl_rewrite_ports(json_t *const *pods, json_t *const *ports, size_t n)
{
    static const char *const kinds[] = {"initContainers", "containers"};
    bool any = false;

    for (size_t i = 0; i < n; i++)
        any |= json_object_size(ports[i]) > 0;
    if (!any)
        return;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < 2; k++) {
            json_t *cts = json_object_get(json_object_get(pods[i], "spec"), kinds[k]), *ct;
            size_t j;
            json_array_foreach(cts, j, ct)
                rewrite_container(ct, pods, ports, n, i);
        }
}

/* ---- ports on a node ---- */

static void add_declared(const json_t *pod, const json_t *ports, json_t *used)
{
    static const char *const kinds[] = {"initContainers", "containers"};
    for (size_t k = 0; k < 2; k++) {
        const json_t *cts = json_object_get(json_object_get(pod, "spec"), kinds[k]), *ct, *pt;
        size_t i, j;
        json_array_foreach(cts, i, ct) {
            json_array_foreach(json_object_get(ct, "ports"), j, pt) {
                long p = (long)json_integer_value(json_object_get(pt, "containerPort"));
                long to = moved(ports, p);
                char key[24];
                if (p <= 0)
                    continue;
                snprintf(key, sizeof(key), "%ld", to > 0 ? to : p);
                json_object_set_new(used, key, json_true());
            }
        }
    }
}

json_t *sl_ports_in_use(rt_slurm *s, const char *node)
{
    json_t *used = json_object();

    for (size_t i = 0; used && i < s->nall; i++) {
        const sl_pod *p = s->all[i];
        if (p->st == SP_STARTED && p->obj && !strcmp(p->node, node))
            add_declared(ty_obj_json(p->obj), p->ports, used);
    }
    return used;
}

/* The declared ports of pod that collide on its node, each given a free
 * one: {"<port>": moved}; used gains what the pod takes. */
static json_t *plan_ports(const rt_slurm *s, const json_t *pod, json_t *used)
{
    static const char *const kinds[] = {"initContainers", "containers"};
    json_t *out = json_object();

    for (size_t k = 0; k < 2; k++) {
        const json_t *cts = json_object_get(json_object_get(pod, "spec"), kinds[k]), *ct, *pt;
        size_t i, j;
        json_array_foreach(cts, i, ct) {
            json_array_foreach(json_object_get(ct, "ports"), j, pt) {
                long p = (long)json_integer_value(json_object_get(pt, "containerPort"));
                char key[24];
                if (p <= 0 || moved(out, p) > 0)
                    continue;
                snprintf(key, sizeof(key), "%ld", p);
                if (!json_object_get(used, key)) {
                    json_object_set_new(used, key, json_true());
                    continue;
                }
                for (long q = s->port_min; q <= s->port_max; q++) {
                    char qk[24];
                    snprintf(qk, sizeof(qk), "%ld", q);
                    if (!json_object_get(used, qk)) {
                        json_object_set_new(used, qk, json_true());
                        json_object_set_new(out, key, json_integer(q));
                        break;
                    }
                }
            }
        }
    }
    return out;
}

/* ---- writing one pod ---- */

static int write_hosts(rt_slurm *s, sl_pod *p)
{
    char path[PATH_MAX + 16], *text;
    uint64_t gen = 0;
    const char *body = rt_hosts_body(s->hosts, p->ns, &gen);
    int rc;

    if (!body || !(text = rt_hosts_text(body, p->addr)))
        return -1;
    sl_pod_dir(s, p->uid, path, sizeof(path));
    strncat(path, "/hosts", sizeof(path) - strlen(path) - 1);
    rc = rt_hosts_file_update(path, text);
    free(text);
    if (rc == 0)
        p->hosts_gen = gen;
    return rc;
}

static int write_spec(rt_slurm *s, sl_pod *p, const json_t *pod, json_t *exec,
                      ty_error *err)
{
    char dir[PATH_MAX], path[PATH_MAX + 16];
    rt_prep prep = {.data_dir = s->shared, .pod_dir = dir, .node_name = p->node,
                    .shim = *s->shim ? s->shim : NULL, .gpus = 0,
                    .backoff_ms = RT_DEFAULT_BACKOFF_MS, .log_max_bytes = RT_LOG_MAX_DEFAULT};
    const char *backoff = getenv("TY_RESTART_BACKOFF_MS");
    json_t *spec;
    int rc;

    if (backoff && atoi(backoff) > 0)
        prep.backoff_ms = atoi(backoff);
    sl_pod_dir(s, p->uid, dir, sizeof(dir));
    snprintf(prep.pod_ip, sizeof(prep.pod_ip), "%.15s", p->addr);
    snprintf(prep.host_ip, sizeof(prep.host_ip), "%.15s", p->addr);
    if (!(spec = rt_build_spec(s->kc, pod, &prep, err)))
        return -1;
    /* Slurm's step knows the GPUs it gave (gres), and the job's ids. */
    json_object_set_new(spec, "inheritEnv",
                        json_pack("[s, s, s, s, s]", "CUDA_VISIBLE_DEVICES", "SLURM_JOB_ID",
                                  "SLURM_JOB_NODELIST", "SLURMD_NODENAME", "SLURM_CLUSTER_NAME"));
    json_object_set_new(spec, "gpus", json_string(""));
    if (exec)
        json_object_set(spec, "exec", exec);
    /* The moved ports, for a server that adopts the pod after a restart. */
    snprintf(path, sizeof(path), "%s/ports.json", dir);
    if (rt_save_json(path, p->ports ? p->ports : json_object()) < 0) {
        json_decref(spec);
        return ty_seterr(err, TY_EINTERNAL, "cannot write %s: %s", path, strerror(errno));
    }
    snprintf(path, sizeof(path), "%s/spec.json", dir);
    rc = rt_save_json(path, spec);
    json_decref(spec);
    if (rc < 0)
        return ty_seterr(err, TY_EINTERNAL, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

static void bind_pod(rt_slurm *s, sl_pod *p)
{
    ty_error err;

    ty_error_init(&err);
    if (kc_bind(s->kc, p->ns, p->name, p->uid, p->node, &err) < 0 && err.code != TY_ECONFLICT)
        ty_warn("slurm: cannot bind %s/%s to %s: %s", p->ns, p->name, p->node, err.text);
    ty_error_clear(&err);
}

/* spec.json's "exec": what the pod's supervisor needs to run a command in
 * another pod of the job (runtime/local/sv_exec.c: mpirun's rsh agent). */
static json_t *exec_table(const rt_slurm *s, sl_pod *const *pods, size_t n)
{
    json_t *ex = json_pack("{s:s, s:[], s:[]}", "job", n ? pods[0]->job : "", "supervisor", "pods");
    json_t *sup = json_object_get(ex, "supervisor");
    char dir[PATH_MAX];

    if (*s->sup) {
        json_array_append_new(sup, json_string(s->sup));
    } else {
        json_array_append_new(sup, json_string(s->exe));
        json_array_append_new(sup, json_string("supervise"));
    }
    for (size_t i = 0; ex && i < n; i++) {
        const json_t *spec = json_object_get(ty_obj_json(pods[i]->obj), "spec");
        const char *hn = ty_jstr(spec, "hostname");
        json_t *names = json_pack("[s]", pods[i]->name);
        if (*hn)
            json_array_append_new(names, json_string(hn));
        sl_pod_dir(s, pods[i]->uid, dir, sizeof(dir));
        json_array_append_new(json_object_get(ex, "pods"),
                              json_pack("{s:o, s:s, s:i, s:s}", "names", names, "node",
                                        pods[i]->node, "comp", pods[i]->comp, "dir", dir));
    }
    return ex;
}

void sl_plan_started(rt_slurm *s, sl_pod **pods, size_t n)
{
    json_t *copies[SL_MAX_GANG] = {0}, *ports[SL_MAX_GANG] = {0}, *used = json_object();
    char node_used[SL_MAX_GANG][64];
    size_t nused = 0;
    json_t *per_node[SL_MAX_GANG] = {0};

    if (n > SL_MAX_GANG || !used)
        n = 0;
    /* Addresses first: every pod's hosts file shows the whole gang. */
    for (size_t i = 0; i < n; i++) {
        sl_node nd;
        if (!sl_node_find(s, pods[i]->node, &nd)) {
            snprintf(pods[i]->addr, sizeof(pods[i]->addr), "%s", pods[i]->node);
        } else {
            snprintf(pods[i]->addr, sizeof(pods[i]->addr), "%s", nd.addr);
        }
        rt_hosts_set_local(s->hosts, pods[i]->ns, pods[i]->uid, pods[i]->addr);
    }
    /* Ports, node by node, against what runs there already. A pod adopted
     * after a restart keeps the ports its spec was written with. */
    for (size_t i = 0; i < n; i++) {
        json_t *inuse = NULL;
        for (size_t k = 0; k < nused; k++)
            if (!strcmp(node_used[k], pods[i]->node))
                inuse = per_node[k];
        if (!inuse && nused < SL_MAX_GANG) {
            inuse = per_node[nused] = sl_ports_in_use(s, pods[i]->node);
            snprintf(node_used[nused++], sizeof(node_used[0]), "%s", pods[i]->node);
        }
        copies[i] = json_deep_copy(ty_obj_json(pods[i]->obj));
        if (!pods[i]->ports)
            pods[i]->ports = plan_ports(s, copies[i], inuse ? inuse : used);
        ports[i] = pods[i]->ports;
    }
    sl_rewrite_ports(copies, ports, n);
    json_t *exec = exec_table(s, pods, n);
    for (size_t i = 0; i < n; i++) {
        sl_pod *p = pods[i];
        ty_error err;
        const char *k;
        json_t *v;

        ty_error_init(&err);
        if (!copies[i] || write_hosts(s, p) < 0 || write_spec(s, p, copies[i], exec, &err) < 0) {
            if (!p->plan_failed)
                ty_warn("slurm: pod %s/%s: %s", p->ns, p->name,
                        err.code ? err.text : "cannot write its hosts file");
            p->plan_failed = true;
            sl_pending_reason(s, p, "CreateContainerConfigError",
                              err.code ? err.text : "cannot write the pod's hosts file");
            ty_error_clear(&err);
            continue;
        }
        p->plan_failed = false;
        sl_unwatch(s, p);
        json_object_foreach(p->ports, k, v)
            ty_event(s->kc, ty_obj_json(p->obj), "Normal", "PortMoved", SL_COMPONENT,
                     "containerPort %s is %lld on node %s (another pod there has it)", k,
                     (long long)json_integer_value(v), p->node);
        bind_pod(s, p);
        p->st = SP_STARTED;
        char id[48];
        ty_event(s->kc, ty_obj_json(p->obj), "Normal", "Scheduled", SL_COMPONENT,
                 "Slurm job %s started it on %s (%s)", sl_job_text(p, id, sizeof(id)), p->node,
                 p->addr);
        sl_report_state(s, p);
        ty_error_clear(&err);
    }
    json_decref(exec);
    for (size_t i = 0; i < n; i++)
        json_decref(copies[i]);
    for (size_t k = 0; k < nused; k++)
        json_decref(per_node[k]);
    json_decref(used);
}
