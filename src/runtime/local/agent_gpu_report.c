/* agent_gpu_report.c - the GPUs' readings where a client can read them
 * without the Metrics API (absent) or /metrics (an operator's endpoint):
 * the annotation trainyard.io/gpu-utilization (RT_GPU_REPORT_ANNOTATION)
 *
 *   on the Node:  {"fake":false,"gpus":[{"index":0,"memTotalMiB":81920,
 *                  "memUsedMiB":40960,"util":87}, ...]}   every GPU
 *   on a Pod:     the same, for the GPUs it holds
 *   on its job:   {"fake":false,"gpus":4,"memTotalMiB":...,"memUsedMiB":...,
 *                  "pods":2,"util":62}   over the job's running pods' own
 *
 * The training jobs' status is upstream's schema, so the job's summary is an
 * annotation (docs/compatibility.md). An annotation is written only when
 * its text changed, at most every RT_GPU_REPORT_MS: readings of real GPUs
 * move, and every write is a watch event for every controller. The job's
 * summary is recomputed from its pods' annotations by the agent that wrote
 * one of them, so with pods on several nodes the last writer's view wins;
 * each agent's next change writes it again. Runs on the agent's thread. */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "api/kubeflow.h"
#include "api/registry.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "runtime/local/agent.h"

/* FNV-1a: whether the text changed since the last write. */
static uint64_t text_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ? h : 1;
}

/* The readings of the GPUs in mask (every one when mask is ~0), new
 * reference; NULL when none had a reading. */
static json_t *gpus_report(rt_local *rt, uint64_t mask)
{
    json_t *list = json_array();
    rt_gpu_info d;

    if (!list)
        return NULL;
    for (int i = 0; i < rt->ngpus; i++) {
        json_t *g;
        if (!(mask & (1ull << i)) || rt_gpus_get(rt->gpus, i, &d) < 0 ||
            !(d.has & (RT_GPU_HAS_UTIL | RT_GPU_HAS_MEM)))
            continue;
        if (!(g = json_pack("{s:i}", "index", i)))
            continue;
        if (d.has & RT_GPU_HAS_UTIL)
            json_object_set_new(g, "util", json_integer(d.util_pct));
        if (d.has & RT_GPU_HAS_MEM) {
            json_object_set_new(g, "memUsedMiB", json_integer((json_int_t)d.fb_used_mib));
            json_object_set_new(g, "memTotalMiB", json_integer((json_int_t)d.fb_total_mib));
        }
        json_array_append_new(list, g);
    }
    if (json_array_size(list) == 0) {
        json_decref(list);
        return NULL;
    }
    return json_pack("{s:b, s:o}", "fake", rt_gpus_source(rt->gpus) == RT_GPU_FAKE, "gpus",
                     list);
}

/* Writes text as the object's annotation (a merge patch: nothing else of it
 * is touched, no conflict with status writers). */
static int put_annotation(rt_local *rt, const char *resource, const char *ns, const char *name,
                          const char *text)
{
    json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
                              RT_GPU_REPORT_ANNOTATION, text);
    ty_error err;
    ty_obj *o;
    int rc = 0;

    if (!patch)
        return -1;
    ty_error_init(&err);
    o = kc_patch(rt->s, resource, ns, name, KC_PATCH_MERGE, patch, false, &err);
    if (!o && err.code != TY_ENOTFOUND) {
        ty_debug("runtime: GPU report on %s %s/%s: %s", resource, ns, name, err.text);
        rc = -1;
    }
    ty_obj_unref(o);
    ty_error_clear(&err);
    json_decref(patch);
    return rc;
}

static const char *annotation_of(const json_t *obj)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "annotations"),
        RT_GPU_REPORT_ANNOTATION));
}

/* A training job's kind: the only owners the agent writes a summary to (a
 * pod's ownerReferences are its creator's words, and the agent's writes
 * pass no authorization). */
static bool is_training_job(const api_resource *res)
{
    size_t n;
    const kf_kind *const *all = kf_kinds(&n);

    if (res == &api_vcjob)
        return true;
    for (size_t i = 0; i < n; i++)
        if (all[i]->resource == res)
            return true;
    return false;
}

/* The pod's controlling owner: its store key and name into the buffers. */
static bool controller_of(const json_t *pod, char *key, size_t klen, char *name, size_t nlen,
                          char *uid, size_t ulen)
{
    size_t i;
    json_t *ref;

    json_array_foreach(json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), i,
                       ref) {
        const api_resource *res;
        if (!json_is_true(json_object_get(ref, "controller")))
            continue;
        res = api_find_kind(json_string_value(json_object_get(ref, "apiVersion")),
                            json_string_value(json_object_get(ref, "kind")));
        if (!res || !is_training_job(res) || !json_string_value(json_object_get(ref, "name")) ||
            !json_string_value(json_object_get(ref, "uid")))
            return false;
        snprintf(key, klen, "%s", api_store_key(res));
        snprintf(name, nlen, "%s", json_string_value(json_object_get(ref, "name")));
        snprintf(uid, ulen, "%s", json_string_value(json_object_get(ref, "uid")));
        return true;
    }
    return false;
}

/* A GPU's memory in MiB, at most (64 TiB: far beyond any made). */
#define GPU_MIB_MAX ((json_int_t)64 << 20)

void rt_gpu_job_summary_add(rt_gpu_job_summary *s, const char *pod_report)
{
    json_t *r = pod_report ? json_loads(pod_report, 0, NULL) : NULL;
    size_t i;
    json_t *g;

    if (!json_is_object(r)) {
        json_decref(r);
        return;
    }
    s->pods++;
    if (json_is_true(json_object_get(r, "fake")))
        s->fake = true;
    /* a pod's annotations are its creator's to write too: each figure is
     * taken only within what a GPU can report, so no sum can overflow */
    json_array_foreach(json_object_get(r, "gpus"), i, g) {
        json_int_t u = json_integer_value(json_object_get(g, "util"));
        json_int_t used = json_integer_value(json_object_get(g, "memUsedMiB"));
        json_int_t total = json_integer_value(json_object_get(g, "memTotalMiB"));
        if (i >= RT_MAX_GPUS)
            break;
        s->gpus++;
        if (json_is_integer(json_object_get(g, "util")) && u >= 0 && u <= 100) {
            s->util_sum += u;
            s->util_n++;
        }
        if (used >= 0 && used <= GPU_MIB_MAX)
            s->mem_used += used;
        if (total >= 0 && total <= GPU_MIB_MAX)
            s->mem_total += total;
    }
    json_decref(r);
}

char *rt_gpu_job_summary_text(const rt_gpu_job_summary *s)
{
    json_t *j = json_pack("{s:b, s:I, s:I, s:I, s:I}", "fake", s->fake, "gpus",
                          (json_int_t)s->gpus, "pods", (json_int_t)s->pods, "memUsedMiB",
                          (json_int_t)s->mem_used, "memTotalMiB", (json_int_t)s->mem_total);
    char *text;

    if (!j)
        return NULL;
    if (s->util_n)
        json_object_set_new(j, "util", json_integer(s->util_sum / s->util_n));
    text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(j);
    return text;
}

static bool is_running(const json_t *pod)
{
    const char *phase =
        json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return phase && strcmp(phase, "Running") == 0;
}

/* The job key/ns/name (uid): its summary over its running pods' reports. */
static void report_job(rt_local *rt, const char *key, const char *name, const char *uid,
                       const char *ns)
{
    rt_gpu_job_summary s = {0};
    kc_list l = {0};
    ty_error err;
    ty_obj *job;
    char *text;

    ty_error_init(&err);
    if (kc_list_owned(rt->s, "pods", ns, uid, &l, &err) < 0) {
        kc_list_free(&l);
        ty_error_clear(&err);
        return;
    }
    for (size_t i = 0; i < l.n; i++) {
        const json_t *o = ty_obj_json(l.items[i]);
        if (o && is_running(o))
            rt_gpu_job_summary_add(&s, annotation_of(o));
    }
    kc_list_free(&l);
    if (s.pods == 0 || !(text = rt_gpu_job_summary_text(&s)))
        goto out;
    job = kc_get(rt->s, key, ns, name, &err);
    /* the job the reference names, not another of that name since */
    if (job && ty_obj_json(job) &&
        !strcmp(json_string_value(json_object_get(json_object_get(ty_obj_json(job), "metadata"),
                                                  "uid")) ?: "",
                uid)) {
        const char *now = annotation_of(ty_obj_json(job));
        if (!now || strcmp(now, text) != 0)
            put_annotation(rt, key, ns, name, text);
    }
    ty_obj_unref(job);
    free(text);
out:
    ty_error_clear(&err);
}

/* p's annotation when its readings changed; then its job's summary, once a
 * pass per job (done: the jobs' uids seen), level-triggered: a pod that
 * turned Running since counts even when its readings did not move. */
static void report_pod(rt_local *rt, rt_pod *p, json_t *done)
{
    json_t *r = gpus_report(rt, p->gpus);
    char *text = r ? json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    char key[256], name[256], uid[128];
    const json_t *pod;
    uint64_t h;
    ty_obj *o;

    json_decref(r);
    if (!text)
        return;
    h = text_hash(text);
    if (h != p->gpu_report_hash && put_annotation(rt, "pods", p->ns, p->name, text) == 0)
        p->gpu_report_hash = h;
    free(text);
    if (!(o = kc_get(rt->s, "pods", p->ns, p->name, NULL)))
        return;
    pod = ty_obj_json(o);
    if (pod && controller_of(pod, key, sizeof(key), name, sizeof(name), uid, sizeof(uid)) &&
        !json_object_get(done, uid)) {
        json_object_set_new(done, uid, json_true());
        report_job(rt, key, name, uid, p->ns);
    }
    ty_obj_unref(o);
}

void agent_report_gpus(rt_local *rt)
{
    int64_t now = ty_now_ms();
    json_t *r, *done;
    char *text;

    if (rt->ngpus == 0 || now < rt->next_gpu_report_ms)
        return;
    rt->next_gpu_report_ms = now + RT_GPU_REPORT_MS;
    r = gpus_report(rt, ~0ull);
    text = r ? json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(r);
    if (text) {
        uint64_t h = text_hash(text);
        if (h != rt->gpu_report_hash &&
            put_annotation(rt, "nodes", "", rt->node_name, text) == 0)
            rt->gpu_report_hash = h;
        free(text);
    }
    if (!(done = json_object()))
        return;
    for (size_t k = 0; k < rt->npods; k++) {
        rt_pod *p = rt->pods[k];
        if (p->gpus && p->started && !p->finished && !p->killing)
            report_pod(rt, p, done);
    }
    json_decref(done);
}
