/* trainer_admit.c - the TrainJob rules that read its runtime (trainer.h).
 *
 * Upstream's webhook refuses a TrainJob whose runtime does not exist yet
 * (it would otherwise sit with no JobSet and no reason), and JobSet refuses
 * a set whose Jobs' pods' host names would pass 63 characters; both are
 * checked here,
 * at admission, where the runtime can be read. The torch runtime's
 * reserved PET_* names may not be set by the job's env either, and a
 * runtime labelled trainer.kubeflow.org/support: deprecated gets a warning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/trainer.h"

#define JOB_NAME_MAX 63

static const char *const torch_reserved_env[] = {"PET_NNODES", "PET_NPROC_PER_NODE",
                                                 "PET_NODE_RANK", "PET_MASTER_ADDR",
                                                 "PET_MASTER_PORT", NULL};

static int digits(long long v)
{
    int n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

int trainer_elastic_bounds(const char *text, long long *min, long long *max)
{
    const char *c = text;
    char *end;
    long long lo, hi;

    if (!text || *c < '0' || *c > '9')
        return -1;
    lo = strtoll(c, &end, 10);
    if (*end != ':' || end - c > 5 || end[1] < '0' || end[1] > '9')
        return -1;
    c = end + 1;
    hi = strtoll(c, &end, 10);
    if (*end || end - c > 5 || lo < 1 || lo > hi || hi > TRAINER_ELASTIC_MAX_NODES)
        return -1;
    *min = lo;
    *max = hi;
    return 0;
}

/* The job's elastic bounds (its annotation's, else the runtime's v2.0
 * mlPolicy.torch.elasticPolicy): true with *max set, when it has any. */
static bool elastic_max(const json_t *job, const json_t *rt, long long *max)
{
    const char *v = meta_str(json_object_get(json_object_get(job, "metadata"), "annotations"),
                             TRAINER_ANN_ELASTIC);
    const json_t *ep = json_object_get(json_object_get(json_object_get(
        json_object_get(rt, "spec"), "mlPolicy"), "torch"), "elasticPolicy");
    long long min;

    if (v)
        return trainer_elastic_bounds(v, &min, max) == 0;
    if (!json_is_integer(json_object_get(ep, "maxNodes")))
        return false;
    *max = json_integer_value(json_object_get(ep, "maxNodes"));
    return true;
}

/* How many pods (completion indexes) replicated job rj's Jobs have: the
 * trainer step's the job's numNodes, else the runtime's; any other step its
 * Job template's completions (parallelism, 1). */
static long long step_pods(const json_t *job, const json_t *rt, const json_t *rj)
{
    const json_t *labels = json_object_get(json_object_get(json_object_get(rj, "template"),
                                                           "metadata"), "labels");
    const json_t *jspec = json_object_get(json_object_get(rj, "template"), "spec");
    const char *step = meta_str(labels, TRAINER_ANCESTOR_LABEL);

    if (step && strcmp(step, "trainer") == 0) {
        const json_t *tr = json_object_get(json_object_get(job, "spec"), "trainer");
        const json_t *ml = json_object_get(json_object_get(rt, "spec"), "mlPolicy");
        long long max;
        if (json_is_integer(json_object_get(tr, "numNodes")))
            return meta_int(tr, "numNodes", 1);
        if (elastic_max(job, rt, &max)) /* an elastic job's nodes default to its most */
            return max;
        return meta_int(ml, "numNodes", 1);
    }
    return meta_int(jspec, "completions", meta_int(jspec, "parallelism", 1));
}

/* JobSet names Job j of replicated job R `<jobset>-R-j`, and its pods' host
 * names add the completion index: the longest must be a DNS label, or no pod
 * of the job could ever be made. */
static void check_host_names(const char *name, const json_t *job, const json_t *rt,
                             ty_error *err)
{
    const json_t *jobs = json_object_get(json_object_get(json_object_get(
        json_object_get(rt, "spec"), "template"), "spec"), "replicatedJobs"), *rj;
    size_t i, longest = 0;

    json_array_foreach(jobs, i, rj) {
        const char *r = meta_str(rj, "name");
        long long replicas = meta_int(rj, "replicas", 1), pods = step_pods(job, rt, rj);
        size_t len;
        if (!r)
            continue;
        len = strlen(name) + 1 + strlen(r) + 1 + (size_t)digits(replicas > 1 ? replicas - 1 : 0) +
              1 + (size_t)digits(pods > 1 ? pods - 1 : 0);
        if (len > longest)
            longest = len;
    }
    if (longest > JOB_NAME_MAX)
        meta_invalid_str(err, "metadata.name", name,
                         "TrainJob name is too long, pod host names generated for this TrainJob "
                         "(%zu characters) will exceed 63 characters", longest);
}

static void check_reserved_env(const json_t *job, const json_t *rt, ty_error *err)
{
    const json_t *env = json_object_get(json_object_get(json_object_get(job, "spec"),
                                                        "trainer"), "env"), *e;
    const json_t *ml = json_object_get(json_object_get(rt, "spec"), "mlPolicy");
    size_t i;

    if (!json_object_get(ml, "torch"))
        return;
    json_array_foreach(env, i, e) {
        const char *name = meta_str(e, "name");
        char f[64];
        for (size_t k = 0; name && torch_reserved_env[k]; k++)
            if (strcmp(name, torch_reserved_env[k]) == 0) {
                snprintf(f, sizeof(f), "spec.trainer.env[%zu].name", i);
                meta_invalid_str(err, f, name, "must not have reserved envs, the torch "
                                 "runtime sets it");
            }
    }
}

/* The extension TRAINER_ANN_ELASTIC, at admission: on a torch runtime (the
 * nodes run torchrun). Its form is trainer_check_annotations'. */
static void check_elastic(const json_t *job, const json_t *rt, ty_error *err)
{
    const char *v = meta_str(json_object_get(json_object_get(job, "metadata"), "annotations"),
                             TRAINER_ANN_ELASTIC);
    const json_t *ml = json_object_get(json_object_get(rt, "spec"), "mlPolicy");
    long long min, max;

    if (v && trainer_elastic_bounds(v, &min, &max) == 0 &&
        !json_is_object(json_object_get(ml, "torch")))
        meta_invalid_str(err, "metadata.annotations[" TRAINER_ANN_ELASTIC "]", v,
                         "an elastic TrainJob needs a runtime with mlPolicy.torch (its nodes "
                         "run torchrun)");
}

/* Upstream's label for a runtime on its way out: a job may still use it,
 * with a warning. */
static void warn_deprecated(const api_lookup *lk, const json_t *rt, const char *kind,
                            const char *name)
{
    const char *support = meta_str(json_object_get(json_object_get(rt, "metadata"), "labels"),
                                   "trainer.kubeflow.org/support");
    char text[256];

    if (!lk->warn || !support || strcmp(support, "deprecated") != 0)
        return;
    snprintf(text, sizeof(text), "%s \"%s\" is deprecated and will be removed in a future "
             "release", kind, name);
    lk->warn(lk->hook_ctx, text);
}

void trainer_check_annotations(const json_t *job, ty_error *err)
{
    static const char ttl_key[] = "trainyard.io/ttl-seconds-after-finished";
    const json_t *ann = json_object_get(json_object_get(job, "metadata"), "annotations");
    const char *ttl = meta_str(ann, ttl_key), *el = meta_str(ann, TRAINER_ANN_ELASTIC), *c;
    const json_t *nn = json_object_get(json_object_get(json_object_get(job, "spec"), "trainer"),
                                       "numNodes");
    long long min, max;

    /* a whole number of seconds, as runPolicy.ttlSecondsAfterFinished */
    for (c = ttl; c && *c >= '0' && *c <= '9'; c++)
        ;
    if (ttl && (!*ttl || *c || c - ttl > 9))
        meta_invalid_str(err, "metadata.annotations[trainyard.io/ttl-seconds-after-finished]",
                         ttl, "must be a whole number of seconds (0 to 999999999)");
    if (!el)
        return;
    if (trainer_elastic_bounds(el, &min, &max) < 0)
        meta_invalid_str(err, "metadata.annotations[" TRAINER_ANN_ELASTIC "]", el,
                         "must be MIN:MAX, whole numbers with 1 <= MIN <= MAX <= %d",
                         TRAINER_ELASTIC_MAX_NODES);
    else if (json_is_integer(nn) &&
             (json_integer_value(nn) < min || json_integer_value(nn) > max))
        meta_invalid(err, "spec.trainer.numNodes", nn, "must be within the elastic bounds %s",
                     el);
}

int trainer_admit_trainjob(const api_lookup *lk, const api_resource *res, const json_t *obj,
                           ty_error *err)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const json_t *ref = json_object_get(json_object_get(obj, "spec"), "runtimeRef");
    const char *name = meta_str(meta, "name"), *ns = meta_str(meta, "namespace");
    const char *rname = meta_str(ref, "name"), *kind = meta_str(ref, "kind");
    const api_resource *rres;
    size_t before = ty_error_ncauses(err);
    json_t *rt;

    if (res != &api_trainjob)
        return 0;
    if (!rname || !kind) {
        if (ty_error_ncauses(err) == before)
            return 0;
        err->code = TY_EINVALID;
        api_format_invalid(res, name ? name : meta_str(meta, "generateName"), err, err->text,
                           sizeof(err->text));
        return -1;
    }
    rres = strcmp(kind, "TrainingRuntime") == 0 ? &api_trainingruntime
                                                : &api_clustertrainingruntime;
    rt = lk->get(lk->ctx, rres, rres->namespaced ? (ns ? ns : "") : "", rname);
    if (!rt) {
        char gr[128];
        api_group_resource(rres, gr, sizeof(gr));
        meta_invalid(err, "spec.runtimeRef", ref, "%s \"%s\" not found: specified %s must be "
                     "created before the TrainJob is created", gr, rname,
                     rres == &api_trainingruntime ? "trainingRuntime"
                                                  : "clusterTrainingRuntime");
    } else {
        if (name && *name)
            check_host_names(name, obj, rt, err);
        check_reserved_env(obj, rt, err);
        check_elastic(obj, rt, err);
        if (ty_error_ncauses(err) == before)
            warn_deprecated(lk, rt, rres->kind, rname);
        json_decref(rt);
    }
    if (ty_error_ncauses(err) == before)
        return 0;
    err->code = TY_EINVALID;
    api_format_invalid(res, name ? name : meta_str(meta, "generateName"), err, err->text,
                       sizeof(err->text));
    return -1;
}
