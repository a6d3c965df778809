/* sl_submit.c - an admitted gang becomes one Slurm job.
 *
 * Trainyard's scheduler admits a PodGroup (its enqueue action: queues,
 * quotas, fair share); the job controller then makes its pods. When as many
 * unsubmitted pods as the gang still lacks exist, they go in one sbatch: a
 * job whose tasks are the pods — a heterogeneous job with a component per
 * distinct shape (CPUs, memory, GPUs) when they differ — so that Slurm starts
 * all of them or none and places each where it fits. Components of a
 * heterogeneous job never share a node and only the backfill scheduler
 * starts them, so pods of one shape share one component.
 * The batch script runs one step per component, a task per pod, each task
 * `trainyard supervise --wait-spec` keeping the pod of its SLURM_PROCID: it
 * says where it runs (where.json) and waits for the spec the server writes
 * once Slurm says where the pod landed (sl_plan.c). Each component's comment names the gang's first pod
 * (ty:<instance>:<uid>), whose gang file lists the others: a server that
 * restarts maps the jobs squeue shows back to their pods. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>

#include "api/registry.h"
#include "base/buf.h"
#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "client/events.h"
#include "model/obj.h"
#include "model/podres.h"
#include "runtime/local/rt_internal.h"
#include "runtime/slurm/sl_int.h"

#define RETRY_MS 30000 /* after sbatch refused a gang */

/* A value for a line of the batch script: single-quoted for sh. */
static void sh_quote(ty_buf *b, const char *v)
{
    ty_buf_puts(b, "'");
    for (; *v; v++) {
        if (*v == '\'')
            ty_buf_puts(b, "'\\''");
        else
            ty_buf_append(b, v, 1);
    }
    ty_buf_puts(b, "'");
}

/* Slurm job names and #SBATCH values: no spaces, quotes or shell
 * characters (an #SBATCH line is not parsed by a shell). */
static void safe_name(char *out, size_t len, const char *ns, const char *name)
{
    size_t j = 0;
    char full[600];

    snprintf(full, sizeof(full), "%s.%s", ns, name);
    for (size_t i = 0; full[i] && j + 1 < len && j < 100; i++) {
        char c = full[i];
        out[j++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                           c == '.' || c == '-' || c == '_'
                       ? c
                       : '_';
    }
    out[j] = '\0';
}

/* What one pod asks of Slurm: the pod's effective requests (the
 * scheduler's rule, model/podres.h). CPUs are whole in Slurm: rounded up,
 * at least 1; memory in MiB, rounded up, per CPU. */
typedef struct shape {
    long long cpus, mem_per_cpu; /* mem_per_cpu 0: none asked */
    int gpus;
} shape;

static shape shape_of(const sl_pod *p)
{
    const json_t *pod = ty_obj_json(p->obj);
    podres r;
    shape sh;
    int64_t mem;

    podres_of_spec(json_object_get(pod, "spec"), &r);
    sh.cpus = (podres_get(&r, "cpu") + 999) / 1000;
    if (sh.cpus < 1)
        sh.cpus = 1;
    mem = podres_get(&r, "memory") / 1000; /* bytes */
    sh.mem_per_cpu = mem > 0 ? (((mem + (1 << 20) - 1) >> 20) + sh.cpus - 1) / sh.cpus : 0;
    sh.gpus = rt_pod_gpu_request(pod);
    return sh;
}

static bool same_shape(shape a, shape b)
{
    return a.cpus == b.cpus && a.mem_per_cpu == b.mem_per_cpu && a.gpus == b.gpus;
}

/* One component: ntasks pods of one shape (tasks of a component may share a
 * node; components of a heterogeneous job never do). */
static void component(const rt_slurm *s, ty_buf *b, shape sh, size_t ntasks, const char *anchor,
                      long long minutes)
{
    ty_buf_printf(b, "#SBATCH --comment=ty:%s:%s\n", s->inst, anchor);
    if (minutes > 0)
        ty_buf_printf(b, "#SBATCH --time=%lld\n", minutes);
    ty_buf_printf(b, "#SBATCH --ntasks=%zu\n#SBATCH --cpus-per-task=%lld\n", ntasks, sh.cpus);
    if (sh.mem_per_cpu > 0)
        ty_buf_printf(b, "#SBATCH --mem-per-cpu=%lldM\n", sh.mem_per_cpu);
    if (sh.gpus > 0)
        ty_buf_printf(b, "#SBATCH --gpus-per-task=%d\n", sh.gpus);
    if (s->partitions)
        ty_buf_printf(b, "#SBATCH --partition=%s\n", s->partitions);
    if (s->account)
        ty_buf_printf(b, "#SBATCH --account=%s\n", s->account);
    if (s->qos)
        ty_buf_printf(b, "#SBATCH --qos=%s\n", s->qos);
}

/* The gang's pods grouped by shape, in order of first appearance: comp[i]
 * is pod i's component, shapes[c] component c's; returns the count. */
static size_t group_shapes(sl_pod *const *pods, size_t n, int *comp, shape *shapes,
                           size_t *counts)
{
    size_t nc = 0;

    for (size_t i = 0; i < n; i++) {
        shape sh = shape_of(pods[i]);
        size_t c = 0;
        while (c < nc && !same_shape(shapes[c], sh))
            c++;
        if (c == nc) {
            shapes[nc] = sh;
            counts[nc++] = 0;
        }
        counts[c]++;
        comp[i] = (int)c;
    }
    return nc;
}

static char *batch_script(const rt_slurm *s, sl_pod *const *pods, size_t n, const int *comp,
                          const shape *shapes, const size_t *counts, size_t nc,
                          long long minutes)
{
    const char *conf = getenv("SLURM_CONF");
    char name[128], dir[PATH_MAX];
    ty_buf b = {0};

    safe_name(name, sizeof(name), pods[0]->ns, *pods[0]->group ? pods[0]->group : pods[0]->name);
    ty_buf_puts(&b, "#!/bin/sh\n");
    for (size_t c = 0; c < nc; c++) {
        if (c)
            ty_buf_puts(&b, "#SBATCH hetjob\n");
        else
            ty_buf_printf(&b,
                          "#SBATCH --job-name=%s\n#SBATCH --output=%s/slurm/%%j.out\n"
                          "#SBATCH --no-requeue\n",
                          name, s->shared);
        component(s, &b, shapes[c], counts[c], pods[0]->uid, minutes);
    }
    /* The steps get a plain PATH, and the cluster's configuration when the
     * server was pointed at one (sbatch_argv). */
    ty_buf_puts(&b, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
                    "export PATH\n");
    if (conf && *conf) {
        ty_buf_puts(&b, "SLURM_CONF=");
        sh_quote(&b, conf);
        ty_buf_puts(&b, "\nexport SLURM_CONF\n");
    }
    /* A step per component, a task per pod: task i keeps the component's
     * i-th pod (the supervisor picks its --pod-dir by SLURM_PROCID, which
     * counts within a het-group's step). One step launch for the gang
     * rather than one per pod (docs/benchmarks.md); --exact with memory and
     * GPUs named again, or the step would take all of them from the exec
     * steps MPI runs beside it; --kill-on-bad-exit=0 and --wait=0: a pod
     * that ends does not end the others, whatever WaitTime says. */
    for (size_t c = 0; c < nc; c++) {
        const shape *sh = &shapes[c];
        ty_buf_puts(&b, "srun ");
        if (nc > 1)
            ty_buf_printf(&b, "--het-group=%zu ", c);
        ty_buf_printf(&b, "--ntasks=%zu --cpus-per-task=%lld ", counts[c], sh->cpus);
        if (sh->mem_per_cpu > 0)
            ty_buf_printf(&b, "--mem-per-cpu=%lldM ", sh->mem_per_cpu);
        if (sh->gpus > 0)
            ty_buf_printf(&b, "--gpus-per-task=%d ", sh->gpus);
        ty_buf_puts(&b, "--exact --export=ALL --kill-on-bad-exit=0 --wait=0 ");
        if (*s->sup) {
            sh_quote(&b, s->sup);
        } else {
            sh_quote(&b, s->exe);
            ty_buf_puts(&b, " supervise");
        }
        for (size_t i = 0; i < n; i++) {
            if ((size_t)comp[i] != c)
                continue;
            sl_pod_dir(s, pods[i]->uid, dir, sizeof(dir));
            ty_buf_puts(&b, " --pod-dir ");
            sh_quote(&b, dir);
        }
        ty_buf_printf(&b, " --wait-spec %d &\n", SL_WAIT_SPEC_S);
    }
    ty_buf_puts(&b, "wait\n");
    return ty_buf_steal(&b, NULL);
}

/* The gang file: which pods (and components) the job with this anchor's
 * comment holds, written before sbatch so that a server restarted at any
 * moment maps the job back to its pods. */
static int write_gang(const rt_slurm *s, sl_pod *const *pods, size_t n, const int *comp,
                      size_t nc)
{
    char path[PATH_MAX + 64];
    json_t *g = json_pack("{s:[], s:[]}", "uids", "components");
    int rc;

    for (size_t i = 0; g && i < n; i++) {
        json_array_append_new(json_object_get(g, "uids"), json_string(pods[i]->uid));
        json_array_append_new(json_object_get(g, "components"),
                              json_integer(nc > 1 ? comp[i] : -1));
    }
    sl_gang_path(s, pods[0]->uid, path, sizeof(path));
    rc = g ? rt_save_json_durable(path, g) : -1;
    json_decref(g);
    return rc;
}

static void refused(rt_slurm *s, sl_pod *const *pods, size_t n, const char *why)
{
    for (size_t i = 0; i < n; i++) {
        pods[i]->retry_at_ms = ty_now_ms() + RETRY_MS;
        sl_pending_reason(s, pods[i], "SlurmRefused", why);
    }
}

/* ---- time limits ---- */

static long long deadline_of(const json_t *spec)
{
    const json_t *v = json_object_get(spec, "activeDeadlineSeconds");
    return json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : 0;
}

long long sl_time_limit_min(json_t *const *pods, size_t n, const json_t *owner, time_t now_s)
{
    long long left = 0; /* seconds, 0 = none */

    for (size_t i = 0; i < n; i++) {
        long long d = deadline_of(json_object_get(pods[i], "spec"));
        if (d && (!left || d < left))
            left = d;
    }
    if (owner) {
        long long d = deadline_of(json_object_get(json_object_get(owner, "spec"), "runPolicy"));
        const char *started = ty_jstr(json_object_get(owner, "status"), "startTime");
        time_t t0;
        if (d && *started && ty_time_parse(started, &t0) == 0 && t0 <= now_s)
            d -= (long long)(now_s - t0);
        if (d && (!left || d < left))
            left = d > 0 ? d : 1;
    }
    return left ? (left + 59) / 60 : 0;
}

/* The owner of the gang's first pod, when it is a kind Trainyard serves
 * (its runPolicy), or NULL. */
static ty_obj *owner_of(rt_slurm *s, const json_t *pod)
{
    const json_t *refs = json_object_get(json_object_get(pod, "metadata"), "ownerReferences");
    const json_t *r;
    size_t i;

    json_array_foreach(refs, i, r) {
        const api_resource *res;
        ty_error err;
        ty_obj *o;
        if (!json_is_true(json_object_get(r, "controller")))
            continue;
        if (!(res = api_find_kind(ty_jstr(r, "apiVersion"), ty_jstr(r, "kind"))))
            return NULL;
        ty_error_init(&err);
        o = kc_get(s->kc, api_store_key(res), ty_jmeta(pod, "namespace"), ty_jstr(r, "name"),
                   &err);
        ty_error_clear(&err);
        return o;
    }
    return NULL;
}

/* Slurm ends the job at the gang's deadline (TIMEOUT: the pods'
 * DeadlineExceeded) even while the server is down; the controllers' own
 * deadline, to the second, normally comes first. */
static long long time_limit(rt_slurm *s, sl_pod *const *pods, size_t n)
{
    json_t *objs[SL_MAX_GANG];
    ty_obj *owner = owner_of(s, ty_obj_json(pods[0]->obj));
    long long m;

    for (size_t i = 0; i < n; i++)
        objs[i] = (json_t *)ty_obj_json(pods[i]->obj);
    m = sl_time_limit_min(objs, n, owner ? ty_obj_json(owner) : NULL, time(NULL));
    ty_obj_unref(owner);
    return m;
}

/* sbatch runs with a plain environment, not the server's: the job
 * inherits what sbatch sees (--export=ALL, Slurm's default). --export=NONE
 * would keep the server's environment out too, but has slurmd load the
 * user's login environment for every job, which measured 0.3-1.1 s of
 * launch latency (docs/benchmarks.md). */
static void sbatch_argv(const char **argv, char *conf, size_t len)
{
    const char *c = getenv("SLURM_CONF");
    size_t n = 0;

    argv[n++] = "env";
    argv[n++] = "-i";
    argv[n++] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    if (c && *c) {
        snprintf(conf, len, "SLURM_CONF=%s", c);
        argv[n++] = conf;
    }
    argv[n++] = "sbatch";
    argv[n++] = "--parsable";
    argv[n] = NULL;
}

static void submit(rt_slurm *s, sl_pod **pods, size_t n)
{
    const char *argv[8];
    char conf[PATH_MAX + 16];
    char dir[PATH_MAX], *script, *end;
    size_t k = 0;
    scli_out out = {0};
    ty_error err;

    /* The finalizer first: a deletion then waits for the job's end. A pod
     * being deleted meanwhile stays out. */
    for (size_t i = 0; i < n; i++) {
        sl_pod_dir(s, pods[i]->uid, dir, sizeof(dir));
        if (pods[i]->deleting || (!pods[i]->finalizer && sl_finalizer(s, pods[i], true) < 0))
            continue;
        if (rt_mkdirs_mode(dir, 0700) < 0) {
            ty_warn("slurm: cannot make %s: %s", dir, strerror(errno));
            continue;
        }
        pods[k++] = pods[i];
    }
    if (!k)
        return;
    n = k;
    sbatch_argv(argv, conf, sizeof(conf));
    ty_error_init(&err);
    int comp[SL_MAX_GANG];
    shape shapes[SL_MAX_GANG];
    size_t counts[SL_MAX_GANG], nc = group_shapes(pods, n, comp, shapes, counts);
    if (write_gang(s, pods, n, comp, nc) < 0) {
        ty_warn("slurm: cannot write the gang file of %s/%s: %s", pods[0]->ns, pods[0]->name,
                strerror(errno));
        return;
    }
    script = batch_script(s, pods, n, comp, shapes, counts, nc, time_limit(s, pods, n));
    if (!script)
        return;
    if (scli_run(argv, script, SL_CMD_TIMEOUT_MS, 4096, &out, &err) < 0 || out.status != 0) {
        char *why = err.code ? strdup(err.text) : scli_describe(argv, &out);
        ty_warn("slurm: %s/%s: %s", pods[0]->ns, *pods[0]->group ? pods[0]->group : pods[0]->name,
                why ? why : "sbatch failed");
        refused(s, pods, n, why ? why : "sbatch failed");
        free(why);
        goto out;
    }
    /* "<id>" or "<id>;<cluster>" */
    long id = strtol(out.out ? out.out : "", &end, 10);
    if (id <= 0 || (*end && *end != ';' && *end != '\n')) {
        refused(s, pods, n, "sbatch --parsable printed no job id");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        /* where.json appearing wakes the agent (on a file system that tells:
         * the tick reads it anyway) */
        if (s->ino_fd >= 0 && pods[i]->wd < 0) {
            char dir[PATH_MAX];
            sl_pod_dir(s, pods[i]->uid, dir, sizeof(dir));
            pods[i]->wd = inotify_add_watch(s->ino_fd, dir, IN_MOVED_TO | IN_CLOSE_WRITE);
        }
        snprintf(pods[i]->job, sizeof(pods[i]->job), "%ld", id);
        pods[i]->comp = nc > 1 ? comp[i] : -1;
        pods[i]->st = SP_SUBMITTED;
        pods[i]->submitted_ms = ty_now_ms();
    }
    s->fast = true;
    ty_info("slurm: %s/%s: Slurm job %ld (%zu pod%s, %zu component%s)", pods[0]->ns,
            *pods[0]->group ? pods[0]->group : pods[0]->name, id, n, n == 1 ? "" : "s", nc,
            nc == 1 ? "" : "s");
    ty_event(s->kc, ty_obj_json(pods[0]->obj), "Normal", "Submitted", SL_COMPONENT,
             "Slurm job %ld: %zu pod%s in %zu component%s", id, n, n == 1 ? "" : "s", nc,
             nc == 1 ? "" : "s");
out:
    free(script);
    scli_out_free(&out);
    ty_error_clear(&err);
}

static bool admitted(const json_t *pg)
{
    const char *phase = ty_jstr(json_object_get(pg, "status"), "phase");
    return !strcmp(phase, "Inqueue") || !strcmp(phase, "Running");
}

static bool waiting(const sl_pod *p, int64_t now)
{
    const json_t *pod = ty_obj_json(p->obj);
    return p->st == SP_NEW && !p->deleting && p->obj && now >= p->retry_at_ms &&
           !*ty_jstr(json_object_get(pod, "spec"), "nodeName") &&
           !strcmp(ty_jstr(json_object_get(pod, "status"), "phase"), "Pending");
}

static bool active(const sl_pod *p)
{
    return (p->st == SP_SUBMITTED || p->st == SP_STARTED) && !p->deleting;
}

void sl_submit_ready(rt_slurm *s)
{
    int64_t now = ty_now_ms();
    json_t *gangs = json_object(); /* "ns/group" -> [index...] */
    json_t *live = json_object();  /* "ns/group" -> members submitted or running */
    const char *key;
    json_t *idx;

    if (!gangs || !live) {
        json_decref(gangs);
        json_decref(live);
        return;
    }
    for (size_t i = 0; i < s->nall; i++) {
        sl_pod *p = s->all[i];
        char k[520];
        if (*p->group && active(p)) {
            snprintf(k, sizeof(k), "%s/%s", p->ns, p->group);
            json_object_set_new(live, k, json_integer(json_integer_value(json_object_get(live, k)) + 1));
        }
        if (!waiting(p, now))
            continue;
        if (!*p->group) {
            submit(s, &p, 1);
            continue;
        }
        snprintf(k, sizeof(k), "%s/%s", p->ns, p->group);
        json_t *arr = json_object_get(gangs, k);
        if (!arr) {
            arr = json_array();
            json_object_set_new(gangs, k, arr);
        }
        json_array_append_new(arr, json_integer((json_int_t)i));
    }
    json_object_foreach(gangs, key, idx) {
        const json_t *pg = json_object_get(s->groups, key);
        long min = (long)json_integer_value(json_object_get(json_object_get(pg, "spec"), "minMember"));
        size_t n = json_array_size(idx);
        size_t running = (size_t)json_integer_value(json_object_get(live, key));
        sl_pod *pods[SL_MAX_GANG];

        if (!pg || !admitted(pg))
            continue;
        if (min < 1)
            min = 1;
        if ((long)(n + running) < min)
            continue; /* the controller has not made them all yet */
        if (n > SL_MAX_GANG) {
            for (size_t i = 0; i < n && i < SL_MAX_GANG; i++)
                pods[i] = s->all[json_integer_value(json_array_get(idx, i))];
            refused(s, pods, SL_MAX_GANG < n ? SL_MAX_GANG : n,
                    "more pods in one gang than one Slurm job takes here (1024)");
            continue;
        }
        for (size_t i = 0; i < n; i++)
            pods[i] = s->all[json_integer_value(json_array_get(idx, i))];
        submit(s, pods, n);
    }
    json_decref(gangs);
    json_decref(live);
}
