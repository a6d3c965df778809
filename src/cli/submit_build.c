/* submit_build.c - `trainyard submit KIND`'s manifests: Arena's flags turned
 * into the job a user would have written for that upstream kind.
 *
 * Each kind is a row of kinds[] (its apiVersion, kind, replica field and
 * container name, an image that stands in when --image is not given) and a
 * layout: the replica types it makes from --workers, --ps, --chief and so
 * on. Every replica gets the same container (the command, env, resources,
 * mounts) except where a role says otherwise: parameter servers and
 * schedulers get no GPUs, MPI's launcher has its own resources and MPI's
 * workers no command (mpirun starts the ranks in them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/timeutil.h"
#include "cli/submit_build.h"
#include "model/quantity.h"

/* Bounds on what a command line may ask for: far past any real job, small
 * enough that a typo (--workers 1000000) is refused before the server. */
#define MAX_REPLICAS 10000
#define MAX_GPUS 1024

enum {
    K_PS = 0x1,       /* takes --ps */
    K_CHIEF = 0x2,    /* --chief, --evaluator */
    K_LAUNCHER = 0x4, /* --launcher-cpu/-memory, --slots */
    K_NPROC = 0x8,    /* --nproc-per-node */
    K_RUNPOLICY = 0x10, /* a Kubeflow runPolicy: --running-timeout, --clean-task-policy */
};

#define KF K_RUNPOLICY

typedef struct kind_def {
    const char *name;
    const char *api_version;
    const char *kind;
    const char *replica_field; /* NULL: a Volcano Job's tasks */
    const char *container;
    const char *image;
    unsigned flags;
} kind_def;

static const kind_def kinds[] = {
    {"pytorch", "kubeflow.org/v1", "PyTorchJob", "pytorchReplicaSpecs", "pytorch",
     "docker.io/pytorch/pytorch:latest", K_NPROC | KF},
    {"tf", "kubeflow.org/v1", "TFJob", "tfReplicaSpecs", "tensorflow",
     "docker.io/tensorflow/tensorflow:latest", K_PS | K_CHIEF | KF},
    {"mpi", "kubeflow.org/v2beta1", "MPIJob", "mpiReplicaSpecs", "mpi",
     "docker.io/mpioperator/openmpi:latest", K_LAUNCHER | KF},
    {"xgboost", "kubeflow.org/v1", "XGBoostJob", "xgbReplicaSpecs", "xgboost",
     "docker.io/kubeflow/xgboost-dist-iris:latest", KF},
    {"paddle", "kubeflow.org/v1", "PaddleJob", "paddleReplicaSpecs", "paddle",
     "docker.io/paddlepaddle/paddle:latest", KF},
    {"jax", "kubeflow.org/v1", "JAXJob", "jaxReplicaSpecs", "jax",
     "docker.io/kubeflow/jaxjob-simple:latest", KF},
    {"mx", "kubeflow.org/v1", "MXJob", "mxReplicaSpecs", "mxnet",
     "docker.io/kubeflow/mxnet-gpu:latest", K_PS | KF},
    {"ms", "mindspore.gitee.com/v1", "MSJob", "msReplicaSpecs", "mindspore",
     "docker.io/mindspore/mindspore:latest", K_PS | KF},
    {"volcano", "batch.volcano.sh/v1alpha1", "Job", NULL, "main", "docker.io/library/busybox:latest",
     K_PS},
};

/* One replica type (or Volcano task) of the layout. */
typedef struct replica {
    const char *type;
    int count;
    bool gpus;     /* gets --gpus */
    bool command;  /* runs the command */
    bool launcher; /* MPI's launcher: --launcher-cpu/-memory */
} replica;
#define MAX_TYPES 4

void submit_opts_init(submit_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->workers = o->gpus = o->ps = o->slots = o->retry = -1;
    o->ttl = o->running_timeout = -1;
}

const char *submit_kinds(void)
{
    return "pytorch tf mpi xgboost paddle jax mx ms volcano";
}

static const kind_def *find_kind(const char *name)
{
    for (size_t i = 0; name && i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kinds[i].name, name) == 0)
            return &kinds[i];
    return NULL;
}

int submit_parse_seconds(const char *s, int64_t *secs)
{
    char *end;
    int64_t ms;

    if (!s || !*s)
        return -1;
    long long v = strtoll(s, &end, 10);
    if (*end == '\0' && v >= 0 && s[0] != '-' && s[0] != '+') {
        *secs = v;
        return 0;
    }
    if (s[0] == '-' || ty_duration_parse(s, &ms) < 0 || ms < 0)
        return -1;
    *secs = ms / 1000; /* whole seconds, as Arena's Duration.Seconds() truncated */
    return 0;
}

/* ---- the layouts -------------------------------------------------------- */

static void add(replica *r, size_t *n, const char *type, int count, bool gpus, bool command)
{
    if (count <= 0)
        return;
    r[*n] = (replica){.type = type, .count = count, .gpus = gpus, .command = command};
    (*n)++;
}

/* The replicas of o's kind; 0, or -1 with a usage error. */
static int layout(const submit_opts *o, const kind_def *k, replica *r, size_t *n, ty_error *err)
{
    int w = o->workers < 0 ? 1 : o->workers;
    int ps = o->ps;

    *n = 0;
    if (strcmp(k->name, "pytorch") == 0 || strcmp(k->name, "xgboost") == 0) {
        /* Arena counts the rank-0 Master as one of the workers. */
        if (w < 1)
            return ty_seterr(err, TY_EINVALID, "--workers must be at least 1 (it counts the "
                                               "Master): use --workers 1 for a single process");
        add(r, n, "Master", 1, true, true);
        add(r, n, "Worker", w - 1, true, true);
    } else if (strcmp(k->name, "tf") == 0) {
        if (w == 0 && !o->chief)
            return ty_seterr(err, TY_EINVALID, "--workers must be greater than 0 in "
                                               "distributed training (or add --chief)");
        add(r, n, "Chief", o->chief ? 1 : 0, true, true);
        add(r, n, "PS", ps, false, true);
        add(r, n, "Worker", w, true, true);
        add(r, n, "Evaluator", o->evaluator ? 1 : 0, true, true);
    } else if (strcmp(k->name, "mpi") == 0) {
        if (w < 1)
            return ty_seterr(err, TY_EINVALID, "--workers must be at least 1: mpirun on the "
                                               "launcher starts its ranks in the workers");
        add(r, n, "Launcher", 1, false, true);
        r[*n - 1].launcher = true;
        add(r, n, "Worker", w, true, false);
    } else if (strcmp(k->name, "mx") == 0) {
        if (w < 1)
            return ty_seterr(err, TY_EINVALID, "--workers must be at least 1");
        add(r, n, "Scheduler", 1, false, true);
        add(r, n, "Server", ps < 0 ? 1 : ps, false, true);
        add(r, n, "Worker", w, true, true);
    } else if (strcmp(k->name, "ms") == 0) {
        if (w < 1)
            return ty_seterr(err, TY_EINVALID, "--workers must be at least 1");
        add(r, n, "Scheduler", 1, false, true);
        add(r, n, "PS", ps, false, true);
        add(r, n, "Worker", w, true, true);
    } else if (strcmp(k->name, "volcano") == 0) {
        if (w < 1)
            return ty_seterr(err, TY_EINVALID, "--workers must be at least 1");
        add(r, n, "ps", ps, false, true);
        add(r, n, "worker", w, true, true);
    } else { /* paddle, jax: collective workers only */
        if (w < 1)
            return ty_seterr(err, TY_EINVALID, "--workers must be at least 1");
        add(r, n, "Worker", w, true, true);
    }
    return 0;
}

/* ---- checks ------------------------------------------------------------- */

/* A flag the kind does not take: named, with the kinds that do. */
static int check_kind_flags(const submit_opts *o, const kind_def *k, ty_error *err)
{
    const struct {
        bool given;
        const char *flag;
        unsigned bit;
        const char *kinds;
    } flags[] = {
        {o->ps >= 0, "--ps", K_PS, "tf, mx, ms and volcano"},
        {o->chief, "--chief", K_CHIEF, "tf"},
        {o->evaluator, "--evaluator", K_CHIEF, "tf"},
        {o->slots >= 0, "--slots", K_LAUNCHER, "mpi"},
        {o->launcher_cpu != NULL, "--launcher-cpu", K_LAUNCHER, "mpi"},
        {o->launcher_memory != NULL, "--launcher-memory", K_LAUNCHER, "mpi"},
        {o->nproc_per_node != NULL, "--nproc-per-node", K_NPROC, "pytorch"},
        {o->running_timeout > 0, "--running-timeout", K_RUNPOLICY, "the Kubeflow kinds"},
        {o->clean_policy != NULL, "--clean-task-policy", K_RUNPOLICY, "the Kubeflow kinds"},
    };

    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (flags[i].given && !(k->flags & flags[i].bit))
            return ty_seterr(err, TY_EINVALID, "%s is not a flag of `submit %s`: only %s take it",
                             flags[i].flag, k->name, flags[i].kinds);
    return 0;
}

static int check_quantity(const char *v, const char *flag, ty_error *err)
{
    int64_t milli;
    ty_error qe;

    if (!v)
        return 0;
    ty_error_init(&qe);
    if (quantity_parse(v, &milli, &qe) < 0 || milli <= 0) {
        ty_error_clear(&qe);
        return ty_seterr(err, TY_EINVALID, "%s \"%s\" is not a quantity: use a number with an "
                                           "optional unit, like 2, 500m, 4Gi",
                         flag, v);
    }
    ty_error_clear(&qe);
    return 0;
}

/* KEY=VALUE with a non-empty KEY; the split into key (up to klen) and *val. */
static int split_kv(const char *s, const char *flag, char *key, size_t klen, const char **val,
                    ty_error *err)
{
    const char *eq = strchr(s, '=');

    if (!eq || eq == s)
        return ty_seterr(err, TY_EINVALID, "%s \"%s\": expected KEY=VALUE", flag, s);
    if ((size_t)(eq - s) >= klen)
        return ty_seterr(err, TY_EINVALID, "%s: the key of \"%.40s...\" is longer than %zu "
                                           "characters",
                         flag, s, klen - 1);
    memcpy(key, s, (size_t)(eq - s));
    key[eq - s] = '\0';
    *val = eq + 1;
    return 0;
}

static int check_opts(const submit_opts *o, const kind_def *k, ty_error *err)
{
    if (!o->name || !*o->name)
        return ty_seterr(err, TY_EINVALID, "--name is required: name the job, "
                                           "e.g. --name mnist");
    if (o->workers > MAX_REPLICAS || o->ps > MAX_REPLICAS)
        return ty_seterr(err, TY_EINVALID, "%s must be at most %d",
                         o->workers > MAX_REPLICAS ? "--workers" : "--ps", MAX_REPLICAS);
    if (o->gpus > MAX_GPUS)
        return ty_seterr(err, TY_EINVALID, "--gpus must be at most %d (it is per replica)",
                         MAX_GPUS);
    if (o->slots == 0 || o->slots > MAX_GPUS)
        return ty_seterr(err, TY_EINVALID, "--slots must be between 1 and %d", MAX_GPUS);
    if (check_kind_flags(o, k, err) < 0 || check_quantity(o->cpu, "--cpu", err) < 0 ||
        check_quantity(o->memory, "--memory", err) < 0 ||
        check_quantity(o->launcher_cpu, "--launcher-cpu", err) < 0 ||
        check_quantity(o->launcher_memory, "--launcher-memory", err) < 0)
        return -1;
    if (o->nproc_per_node && strcmp(o->nproc_per_node, "auto") != 0 &&
        strcmp(o->nproc_per_node, "cpu") != 0 && strcmp(o->nproc_per_node, "gpu") != 0) {
        char *end;
        long v = strtol(o->nproc_per_node, &end, 10);
        if (*end || v < 1 || v > MAX_GPUS)
            return ty_seterr(err, TY_EINVALID, "--nproc-per-node \"%s\": use a positive "
                                               "number, auto, cpu or gpu",
                             o->nproc_per_node);
    }
    if (o->clean_policy && strcmp(o->clean_policy, "None") != 0 &&
        strcmp(o->clean_policy, "Running") != 0 && strcmp(o->clean_policy, "All") != 0)
        return ty_seterr(err, TY_EINVALID, "--clean-task-policy \"%s\": use None, Running "
                                           "or All",
                         o->clean_policy);
    if (o->working_dir && o->working_dir[0] != '/')
        return ty_seterr(err, TY_EINVALID, "--working-dir \"%s\" must be an absolute path",
                         o->working_dir);
    if ((!o->shell || !*o->shell) && o->argc == 0)
        return ty_seterr(err, TY_EINVALID, "no command: give it last, as one string "
                                           "(\"python train.py --epochs 3\", run by sh -c) "
                                           "or after -- as its words");
    return 0;
}

/* ---- the manifest ------------------------------------------------------- */

/* KEY=VALUE strings into an object (labels, annotations); NULL when none. */
static json_t *kv_object(const char *const *list, size_t n, const char *flag, ty_error *err)
{
    json_t *obj;

    if (n == 0)
        return NULL;
    obj = json_object();
    for (size_t i = 0; i < n; i++) {
        char key[320];
        const char *val;
        if (split_kv(list[i], flag, key, sizeof(key), &val, err) < 0) {
            json_decref(obj);
            return NULL;
        }
        json_object_set_new(obj, key, json_string(val));
    }
    return obj;
}

/* One mount spec "SRC[:PATH]" into *vols and *mounts. --data's SRC is a
 * PersistentVolumeClaim's name, or a host directory when it starts with /;
 * --data-dir's is always a host directory (Arena's meanings). */
static int add_mount(const char *spec, const char *flag, bool host_only, size_t idx,
                     json_t *vols, json_t *mounts, ty_error *err)
{
    const char *colon = strchr(spec, ':');
    char src[1024], vname[64];
    const char *path;
    size_t slen = colon ? (size_t)(colon - spec) : strlen(spec);
    bool host;

    if (slen == 0 || slen >= sizeof(src))
        return ty_seterr(err, TY_EINVALID, "%s \"%s\": expected %s", flag, spec,
                         host_only ? "HOST_DIR[:MOUNT_PATH]" : "CLAIM:MOUNT_PATH or "
                                                               "/HOST_DIR[:MOUNT_PATH]");
    memcpy(src, spec, slen);
    src[slen] = '\0';
    host = host_only || src[0] == '/';
    path = colon ? colon + 1 : (host ? src : "");
    if (host && src[0] != '/')
        return ty_seterr(err, TY_EINVALID, "%s \"%s\": the host directory must be an "
                                           "absolute path",
                         flag, spec);
    if (path[0] != '/')
        return ty_seterr(err, TY_EINVALID, "%s \"%s\": the mount path must be an absolute "
                                           "path (CLAIM:/data)",
                         flag, spec);
    snprintf(vname, sizeof(vname), "%s-%zu", host_only ? "data-dir" : "data", idx);
    if (host)
        json_array_append_new(vols, json_pack("{s:s, s:{s:s}}", "name", vname, "hostPath",
                                              "path", src));
    else
        json_array_append_new(vols, json_pack("{s:s, s:{s:s}}", "name", vname,
                                              "persistentVolumeClaim", "claimName", src));
    json_array_append_new(mounts, json_pack("{s:s, s:s}", "name", vname, "mountPath", path));
    return 0;
}

/* requests = limits for cpu and memory (Arena's), nvidia.com/gpu as a
 * limit (the scheduler takes the request from it); NULL when none. */
static json_t *resources(const char *cpu, const char *memory, int gpus)
{
    json_t *req = json_object(), *lim = json_object();

    if (cpu) {
        json_object_set_new(req, "cpu", json_string(cpu));
        json_object_set_new(lim, "cpu", json_string(cpu));
    }
    if (memory) {
        json_object_set_new(req, "memory", json_string(memory));
        json_object_set_new(lim, "memory", json_string(memory));
    }
    if (gpus > 0) {
        char n[16];
        snprintf(n, sizeof(n), "%d", gpus);
        json_object_set_new(lim, "nvidia.com/gpu", json_string(n));
    }
    if (json_object_size(lim) == 0) {
        json_decref(req);
        json_decref(lim);
        return NULL;
    }
    if (json_object_size(req) == 0) {
        json_decref(req);
        return json_pack("{s:o}", "limits", lim);
    }
    return json_pack("{s:o, s:o}", "requests", req, "limits", lim);
}

static json_t *command_of(const submit_opts *o)
{
    json_t *cmd;

    if (o->argc == 0)
        return json_pack("[s, s, s]", "sh", "-c", o->shell);
    cmd = json_array();
    for (size_t i = 0; i < o->argc; i++)
        json_array_append_new(cmd, json_string(o->argv[i]));
    return cmd;
}

static json_t *container(const submit_opts *o, const kind_def *k, const replica *r,
                         json_t *mounts, ty_error *err)
{
    json_t *c = json_object(), *res;
    const char *name = k->container;

    if (strcmp(k->name, "mpi") == 0)
        name = r->launcher ? "launcher" : "worker";
    json_object_set_new(c, "name", json_string(name));
    json_object_set_new(c, "image", json_string(o->image ? o->image : k->image));
    if (r->command)
        json_object_set_new(c, "command", command_of(o));
    if (o->working_dir)
        json_object_set_new(c, "workingDir", json_string(o->working_dir));
    if (o->nenv > 0) {
        json_t *env = json_array();
        for (size_t i = 0; i < o->nenv; i++) {
            char key[256];
            const char *val;
            if (split_kv(o->env[i], "--env", key, sizeof(key), &val, err) < 0) {
                json_decref(env);
                json_decref(c);
                return NULL;
            }
            json_array_append_new(env, json_pack("{s:s, s:s}", "name", key, "value", val));
        }
        json_object_set_new(c, "env", env);
    }
    if (r->launcher)
        res = resources(o->launcher_cpu, o->launcher_memory, 0);
    else
        res = resources(o->cpu, o->memory, r->gpus ? o->gpus : 0);
    if (res)
        json_object_set_new(c, "resources", res);
    if (json_array_size(mounts) > 0)
        json_object_set(c, "volumeMounts", mounts); /* each template has its own */
    return c;
}

/* The pod template of one replica type; restartPolicy goes in the
 * template for a Volcano task, beside it for a Kubeflow replica. */
static json_t *pod_template(const submit_opts *o, const kind_def *k, const replica *r,
                            const char *restart, json_t *labels, json_t *annotations,
                            ty_error *err)
{
    json_t *vols = json_array(), *mounts = json_array(), *spec = json_object(), *tmpl, *c;

    for (size_t i = 0; i < o->ndata; i++)
        if (add_mount(o->data[i], "--data", false, i, vols, mounts, err) < 0)
            goto error;
    for (size_t i = 0; i < o->ndata_dir; i++)
        if (add_mount(o->data_dir[i], "--data-dir", true, i, vols, mounts, err) < 0)
            goto error;
    if (!(c = container(o, k, r, mounts, err)))
        goto error;
    if (!k->replica_field)
        json_object_set_new(spec, "restartPolicy", json_string(restart));
    if (o->priority)
        json_object_set_new(spec, "priorityClassName", json_string(o->priority));
    json_object_set_new(spec, "containers", json_pack("[o]", c));
    if (json_array_size(vols) > 0)
        json_object_set(spec, "volumes", vols);
    tmpl = json_object();
    if (labels || annotations) {
        json_t *md = json_object();
        if (labels)
            json_object_set_new(md, "labels", json_deep_copy(labels));
        if (annotations)
            json_object_set_new(md, "annotations", json_deep_copy(annotations));
        json_object_set_new(tmpl, "metadata", md);
    }
    json_object_set_new(tmpl, "spec", spec);
    json_decref(vols);
    json_decref(mounts);
    return tmpl;
error:
    json_decref(vols);
    json_decref(mounts);
    json_decref(spec);
    return NULL;
}

/* Kubeflow's runPolicy (NULL when nothing in it is set). */
static json_t *run_policy(const submit_opts *o)
{
    json_t *rp = json_object();

    if (o->clean_policy)
        json_object_set_new(rp, "cleanPodPolicy", json_string(o->clean_policy));
    if (o->ttl >= 0)
        json_object_set_new(rp, "ttlSecondsAfterFinished", json_integer(o->ttl));
    /* Arena's 0 (its default) is no timeout: a deadline of 0 s failed the job at once */
    if (o->running_timeout > 0)
        json_object_set_new(rp, "activeDeadlineSeconds", json_integer(o->running_timeout));
    if (o->retry >= 0)
        json_object_set_new(rp, "backoffLimit", json_integer(o->retry));
    if (o->queue || o->priority) {
        json_t *sp = json_object();
        if (o->queue)
            json_object_set_new(sp, "queue", json_string(o->queue));
        if (o->priority)
            json_object_set_new(sp, "priorityClass", json_string(o->priority));
        json_object_set_new(rp, "schedulingPolicy", sp);
    }
    if (json_object_size(rp) == 0) {
        json_decref(rp);
        return NULL;
    }
    return rp;
}

static json_t *kubeflow_spec(const submit_opts *o, const kind_def *k, const replica *r,
                             size_t n, const char *restart, json_t *labels, json_t *annotations,
                             ty_error *err)
{
    json_t *spec = json_object(), *specs = json_object(), *rp;

    if (strcmp(k->name, "mpi") == 0)
        json_object_set_new(spec, "slotsPerWorker",
                            json_integer(o->slots > 0 ? o->slots : o->gpus > 0 ? o->gpus : 1));
    if (strcmp(k->name, "mx") == 0)
        json_object_set_new(spec, "jobMode", json_string("MXTrain"));
    if (o->nproc_per_node)
        json_object_set_new(spec, "nprocPerNode", json_string(o->nproc_per_node));
    if ((rp = run_policy(o)))
        json_object_set_new(spec, "runPolicy", rp);
    for (size_t i = 0; i < n; i++) {
        json_t *t = pod_template(o, k, &r[i], restart, labels, annotations, err);
        if (!t) {
            json_decref(specs);
            json_decref(spec);
            return NULL;
        }
        json_object_set_new(specs, r[i].type,
                            json_pack("{s:i, s:s, s:o}", "replicas", r[i].count, "restartPolicy",
                                      restart, "template", t));
    }
    json_object_set_new(spec, k->replica_field, specs);
    return spec;
}

/* A Volcano Job: every task in the gang (minAvailable = all pods), the env
 * and svc plugins (VC_TASK_INDEX, the hosts files and the headless
 * Service), as the Volcano examples of distributed training are written. */
static json_t *volcano_spec(const submit_opts *o, const kind_def *k, const replica *r, size_t n,
                            const char *restart, json_t *labels, json_t *annotations,
                            ty_error *err)
{
    json_t *spec = json_object(), *tasks = json_array();
    int total = 0;

    for (size_t i = 0; i < n; i++)
        total += r[i].count;
    json_object_set_new(spec, "minAvailable", json_integer(total));
    json_object_set_new(spec, "schedulerName", json_string("volcano"));
    json_object_set_new(spec, "queue", json_string(o->queue ? o->queue : "default"));
    if (o->priority)
        json_object_set_new(spec, "priorityClassName", json_string(o->priority));
    if (o->retry >= 0)
        json_object_set_new(spec, "maxRetry", json_integer(o->retry));
    if (o->ttl >= 0)
        json_object_set_new(spec, "ttlSecondsAfterFinished", json_integer(o->ttl));
    json_object_set_new(spec, "plugins", json_pack("{s:[], s:[]}", "env", "svc"));
    for (size_t i = 0; i < n; i++) {
        json_t *t = pod_template(o, k, &r[i], restart, labels, annotations, err);
        if (!t) {
            json_decref(tasks);
            json_decref(spec);
            return NULL;
        }
        json_array_append_new(tasks, json_pack("{s:s, s:i, s:o}", "name", r[i].type, "replicas",
                                               r[i].count, "template", t));
    }
    json_object_set_new(spec, "tasks", tasks);
    return spec;
}

json_t *submit_build(const submit_opts *o, ty_error *err)
{
    const kind_def *k = find_kind(o->kind);
    replica r[MAX_TYPES];
    size_t n;
    json_t *labels = NULL, *annotations = NULL, *spec, *md, *obj = NULL;
    /* --retry asks for restarts: a failed pod is restarted (and counted
     * against backoffLimit) only under OnFailure; without it a failure is
     * final, as Arena's Never. */
    const char *restart = o->retry > 0 ? "OnFailure" : "Never";

    if (!k) {
        ty_seterr(err, TY_EINVALID, "unknown kind \"%s\": use one of %s", o->kind ? o->kind : "",
                  submit_kinds());
        return NULL;
    }
    if (check_opts(o, k, err) < 0 || layout(o, k, r, &n, err) < 0)
        return NULL;
    if ((o->nlabels && !(labels = kv_object(o->labels, o->nlabels, "--label", err))) ||
        (o->nannotations &&
         !(annotations = kv_object(o->annotations, o->nannotations, "--annotation", err))))
        goto done;
    if (k->replica_field)
        spec = kubeflow_spec(o, k, r, n, restart, labels, annotations, err);
    else
        spec = volcano_spec(o, k, r, n, restart, labels, annotations, err);
    if (!spec)
        goto done;
    md = json_pack("{s:s}", "name", o->name);
    if (o->ns)
        json_object_set_new(md, "namespace", json_string(o->ns));
    if (labels)
        json_object_set(md, "labels", labels);
    if (annotations)
        json_object_set(md, "annotations", annotations);
    obj = json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", k->api_version, "kind", k->kind,
                    "metadata", md, "spec", spec);
done:
    json_decref(labels);
    json_decref(annotations);
    return obj;
}

/* ---- the summary line --------------------------------------------------- */

static void describe_one(const char *type, json_int_t count, char *buf, size_t len, size_t *off)
{
    int w;

    if (*off >= len)
        return;
    /* "2 PS", "2 ps": parameter servers are not pluralised */
    bool plural = count != 1 && strcasecmp(type, "ps") != 0;
    w = snprintf(buf + *off, len - *off, "%s%lld %s%s", *off ? " + " : "", (long long)count,
                 type, plural ? "s" : "");
    if (w > 0)
        *off += (size_t)w;
}

void submit_describe(const json_t *manifest, char *buf, size_t len)
{
    const json_t *spec = json_object_get(manifest, "spec");
    const json_t *tasks = json_object_get(spec, "tasks");
    size_t off = 0, i;
    const char *key;
    json_t *v;

    buf[0] = '\0';
    if (tasks) {
        json_array_foreach(tasks, i, v)
            describe_one(json_string_value(json_object_get(v, "name")),
                         json_integer_value(json_object_get(v, "replicas")), buf, len, &off);
        return;
    }
    json_object_foreach((json_t *)spec, key, v) {
        size_t klen = strlen(key);
        if (klen < 12 || strcmp(key + klen - 12, "ReplicaSpecs") != 0)
            continue;
        const char *type;
        json_t *rs;
        json_object_foreach(v, type, rs)
            describe_one(type, json_integer_value(json_object_get(rs, "replicas")), buf, len,
                         &off);
    }
}
