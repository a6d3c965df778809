/* reconcile.c - one pass over one Volcano Job: observe its pods, pick the
 * action (a user action annotation, else the first pod event a policy
 * matches), step the state machine (policy.c), act (kill, create) and write
 * the status. Level-triggered and idempotent: everything it needs is in the
 * job, its status and its pods. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/jsonown.h"
#include "base/log.h"
#include "client/events.h"
#include "base/timeutil.h"
#include "controller/kit.h"
#include "controller/volcano/vc_int.h"

#include "controller/volcano/vc_pass.h"

static const json_t *tasks_of(const pass *p)
{
    return json_object_get(json_object_get(p->job, "spec"), "tasks");
}

static json_t *list_owned(pass *p, const char *resource)
{
    json_t *out;

    /* Each as the job engines' view (kit_owned): the engine reads a few
     * fields of its pods, never their spec, and never changes them. */
    if (kit_list_owned_views(p->s, resource, p->ns, p->uid, NULL, NULL, &out) < 0)
        p->rc = -1;
    return out;
}

static const char *pod_task(const json_t *pod)
{
    return vc_str_at(json_object_get(pod, "metadata"), "annotations", VC_ANN_TASK_SPEC);
}

/* ---- observe ---- */

static void count_pod(pass *p, const json_t *pod, json_t *tsc)
{
    const char *phase = kit_pod_phase(pod), *task = pod_task(pod);
    json_t *tp, *n;

    if (kit_is_terminating(pod))
        p->obs.terminating++;
    else if (!strcmp(phase, "Running"))
        p->obs.running++;
    else if (!strcmp(phase, "Succeeded"))
        p->obs.succeeded++;
    else if (!strcmp(phase, "Failed"))
        p->obs.failed++;
    else if (!strcmp(phase, "Unknown"))
        p->obs.unknown++;
    else
        p->obs.pending++;
    if (!task || kit_is_terminating(pod))
        return;
    if (!(tp = json_object_get(json_object_get(tsc, task), "phase"))) {
        tp = json_object();
        json_object_set_new(tsc, task, json_pack("{s:o}", "phase", tp));
    }
    n = json_object_get(tp, *phase ? phase : "Pending");
    json_object_set_new(tp, *phase ? phase : "Pending",
                        json_integer(json_integer_value(n) + 1));
}

static long long task_count(const json_t *tsc, const char *task, const char *phase)
{
    return json_integer_value(json_object_get(
        json_object_get(json_object_get(tsc, task), "phase"), phase));
}

static void observe(pass *p)
{
    const json_t *spec = json_object_get(p->job, "spec");
    json_t *tsc = json_object(), *pod, *t;
    size_t i;

    json_array_foreach(p->pods, i, pod)
        count_pod(p, pod, tsc);
    json_array_foreach(tasks_of(p), i, t) {
        const char *name = json_string_value(json_object_get(t, "name"));
        long long reps = json_integer_value(json_object_get(t, "replicas"));
        long long min = json_integer_value(json_object_get(t, "minAvailable"));
        p->obs.replicas += reps;
        if (name && task_count(tsc, name, "Succeeded") < min)
            p->obs.task_below_min = true;
        if (name && task_count(tsc, name, "Failed") > reps - min)
            p->obs.task_unreachable = true;
    }
    p->obs.min_available = json_integer_value(json_object_get(spec, "minAvailable"));
    p->obs.min_success = json_integer_value(json_object_get(spec, "minSuccess"));
    p->obs.max_retry = json_integer_value(json_object_get(spec, "maxRetry"));
    p->obs.retry_count = json_integer_value(json_object_get(p->status, "retryCount"));
    json_object_set_new(p->status, "taskStatusCount", tsc);
}

/* ---- choose the action ---- */

static const json_t *task_named(const pass *p, const char *name)
{
    json_t *t;
    size_t i;

    json_array_foreach(tasks_of(p), i, t)
        if (name && !strcmp(name, json_string_value(json_object_get(t, "name"))))
            return t;
    return NULL;
}

/* The event a pod raises now, or NULL, and since when (wall seconds; 0 when
 * unknown). Evicted pods (status.reason Evicted) raise PodEvicted rather
 * than PodFailed. */
static const char *pod_event(const json_t *pod, time_t *since)
{
    const char *phase = kit_pod_phase(pod);
    json_t *cs;
    size_t i;

    *since = 0;
    if (kit_is_terminating(pod))
        return NULL;
    if (!strcmp(phase, "Failed")) {
        const char *reason = vc_str_at(pod, "status", "reason");
        json_array_foreach(json_object_get(json_object_get(pod, "status"), "containerStatuses"),
                           i, cs) {
            time_t t = vc_parse_time(vc_str_at(json_object_get(cs, "state"), "terminated",
                                         "finishedAt"));
            if (t > *since)
                *since = t;
        }
        return reason && !strcmp(reason, "Evicted") ? "PodEvicted" : "PodFailed";
    }
    if (!*phase || !strcmp(phase, "Pending")) {
        *since = vc_parse_time(vc_str_at(pod, "metadata", "creationTimestamp"));
        return "PodPending";
    }
    return !strcmp(phase, "Unknown") ? "Unknown" : NULL;
}

static bool try_event(pass *p, target *t, const json_t *task, const json_t *pod,
                      const char *event, int code, time_t since)
{
    long long elapsed = since ? ((long long)time(NULL) - since) * 1000 : 0;
    long long wait = -1;
    vc_action a = vc_policy_match(json_object_get(task, "policies"),
                                  json_object_get(json_object_get(p->job, "spec"), "policies"),
                                  event, code, elapsed, &wait);

    /* A delayed action: look again when it is due; it is cancelled by itself
     * if the pod has recovered by then (the event is gone). */
    if (wait >= 0) {
        time_t due = time(NULL) + (time_t)((wait + 999) / 1000);
        if (!*p->wake_at || due < *p->wake_at)
            *p->wake_at = due;
    }
    if (a == VC_SYNC)
        return false;
    *t = (target){a, event, task, pod};
    return true;
}

static target choose(pass *p, vc_phase phase)
{
    const char *user = vc_str_at(json_object_get(p->job, "metadata"), "annotations", VC_ANN_ACTION);
    json_t *generation = json_object_get(json_object_get(p->job, "metadata"), "generation");
    target t = {.action = VC_SYNC};
    bool updated;
    json_t *pod, *task;
    size_t i;

    if (user) {
        p->consume = user;
        t.action = vc_action_parse(user);
        t.event = "CommandIssued";
        return t; /* a spec update is looked at in the next pass */
    }
    updated = vc_spec_updated(p->job, p->status);
    if (json_is_integer(generation))
        json_object_set(p->status, "observedGeneration", generation);
    if (phase != VC_PENDING && phase != VC_RUNNING)
        return t;
    /* A job-level event, raised once per update: only the job's policies.
     * The update itself (scaling) is applied by the sync when no policy
     * matches, or after the action (RestartJob recreates every pod). */
    if (updated && try_event(p, &t, NULL, NULL, "JobUpdated", 0, 0))
        return t;
    json_array_foreach(p->pods, i, pod) {
        time_t since;
        const char *ev = pod_event(pod, &since);
        if (ev && try_event(p, &t, task_named(p, pod_task(pod)), pod, ev,
                            kit_pod_exit_code(pod, NULL), since))
            return t;
    }
    json_array_foreach(tasks_of(p), i, task) {
        const char *name = json_string_value(json_object_get(task, "name"));
        long long reps = json_integer_value(json_object_get(task, "replicas"));
        long long min = json_integer_value(json_object_get(task, "minAvailable"));
        json_t *tsc = json_object_get(p->status, "taskStatusCount");
        if (reps > 0 && task_count(tsc, name, "Succeeded") >= reps &&
            try_event(p, &t, task, NULL, "TaskCompleted", 0, 0))
            return t;
        if (task_count(tsc, name, "Failed") > reps - min &&
            try_event(p, &t, task, NULL, "TaskFailed", 0, 0))
            return t;
    }
    return t;
}

/* ---- act ---- */

static void kill_pods(pass *p, vc_kill kill, const target *t)
{
    const char *task = t->task ? json_string_value(json_object_get(t->task, "name")) : NULL;
    json_t *pod;
    size_t i;

    if (kill == VC_KILL_NONE)
        return;
    json_array_foreach(p->pods, i, pod) {
        const char *phase = kit_pod_phase(pod);
        bool finished = !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
        if ((kill == VC_KILL_LIVE && finished) ||
            (kill == VC_KILL_TASK && (!task || !pod_task(pod) || strcmp(task, pod_task(pod)))) ||
            (kill == VC_KILL_POD && pod != t->pod))
            continue;
        if (kit_delete(p->s, api_store_key(&api_pod), pod, p->job, VC_COMPONENT) < 0)
            p->rc = -1;
    }
}

/* The PodGroup carries the job's labels and annotations, as upstream's
 * controller makes it (the scheduler reads volcano.sh/preemptable there);
 * kubectl's last-applied copy of the whole job is left out. */
static void copy_meta(const json_t *job, json_t *pg)
{
    const json_t *jm = json_object_get(job, "metadata");
    json_t *pm = json_object_get(pg, "metadata"), *ann;

    if (json_object_size(json_object_get(jm, "labels")))
        json_object_set_new(pm, "labels", json_deep_copy(json_object_get(jm, "labels")));
    ann = json_deep_copy(json_object_get(jm, "annotations"));
    if (json_is_object(ann)) {
        json_object_del(ann, "kubectl.kubernetes.io/last-applied-configuration");
        if (json_object_size(ann))
            json_object_set(pm, "annotations", ann);
    }
    json_decref(ann);
}

/* Creates the job's PodGroup, keeps its spec in line with the job and reads
 * whether it is admitted (pods are created only then). */
static void ensure_podgroup(pass *p)
{
    const json_t *spec = json_object_get(p->job, "spec");
    const char *queue = vc_str_at(p->job, "spec", "queue");
    json_t *mtm = json_object(), *t, *pg;
    char name[512];
    size_t i;

    json_int_t min_member = json_integer_value(json_object_get(spec, "minAvailable"));
    json_int_t first_stage = 0;
    bool staged = false;

    /* Tasks that wait for others (dependsOn) are created later: the gang is
     * the tasks that start first, so the group does not wait for pods its
     * job will only create once the group runs. */
    json_array_foreach(tasks_of(p), i, t) {
        const json_t *min = json_object_get(t, "minAvailable");
        if (json_object_get(t, "dependsOn")) {
            staged = true;
            continue;
        }
        json_object_set(mtm, json_string_value(json_object_get(t, "name")), (json_t *)min);
        first_stage += json_is_integer(min) ? json_integer_value(min)
                                            : json_integer_value(json_object_get(t, "replicas"));
    }
    if (staged && first_stage < min_member)
        min_member = first_stage;
    snprintf(name, sizeof(name), "%s-%s", p->name, p->uid);
    pg = json_pack("{s:s, s:s, s:{s:s, s:s, s:[o]}, s:{s:I, s:o, s:s}}", "apiVersion",
                   "scheduling.volcano.sh/v1beta1", "kind", "PodGroup", "metadata", "name", name,
                   "namespace", p->ns, "ownerReferences", kit_owner_ref(p->job), "spec",
                   "minMember", min_member, "minTaskMember", mtm, "queue",
                   queue ? queue : "default");
    if (json_is_string(json_object_get(spec, "priorityClassName")))
        json_object_set(json_object_get(pg, "spec"), "priorityClassName",
                        json_object_get(spec, "priorityClassName"));
    copy_meta(p->job, pg);
    json_object_set_new(json_object_get(pg, "spec"), "minResources",
                        vc_min_resources(p->s, tasks_of(p), min_member, staged));
    /* The job's minAvailable, task minAvailable and priorityClassName may be
     * updated: the PodGroup follows. The gang scheduler admits it (Pending ->
     * Inqueue); pods wait for that (kit_pg_gate, the Kubeflow kinds' too). */
    switch (kit_pg_gate(p->s, p->ns, pg)) {
    case 1:
        p->admitted = true;
        break;
    case 0:
        break;
    default:
        p->rc = -1;
    }
}

static void ensure_svc(pass *p)
{
    char cm_name[300];
    json_t *labels, *cm;
    ty_error err;

    if (!vc_plugin_on(p->job, "svc"))
        return;
    ty_error_init(&err);
    labels = json_pack("{s:s}", VC_ANN_JOB_NAME, p->name);
    if (kit_create(p->s, &api_service,
                    kit_service_new(p->job, p->name, labels, labels, NULL, true), p->job,
                    VC_COMPONENT, &err) < 0)
        p->rc = -1;
    ty_error_clear(&err);
    json_decref(labels);
    snprintf(cm_name, sizeof(cm_name), "%s-svc", p->name);
    cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:[o]}, s:o}", "apiVersion", "v1", "kind",
                   "ConfigMap", "metadata", "name", cm_name, "namespace", p->ns,
                   "ownerReferences", kit_owner_ref(p->job), "data",
                   vc_svc_configmap_data(p->job));
    if (kit_create(p->s, &api_configmap, cm, p->job, VC_COMPONENT, &err) < 0)
        p->rc = -1;
    ty_error_clear(&err);
}

/* The claims of spec.volumes that give a volumeClaim: made (owned by the job)
 * when missing, as upstream's controller does; one that names only
 * volumeClaimName must exist (its pods wait for it). */
static void ensure_claims(pass *p)
{
    const json_t *v;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(p->job, "spec"), "volumes"), i, v) {
        char name[300];
        json_t *pvc;
        ty_error err;
        if (!vc_volume_claim(p->job, v, i, name, sizeof(name)) ||
            !json_is_object(json_object_get(v, "volumeClaim")))
            continue;
        pvc = json_pack("{s:s, s:s, s:{s:s, s:s, s:[o]}, s:O}", "apiVersion", "v1", "kind",
                        "PersistentVolumeClaim", "metadata", "name", name, "namespace", p->ns,
                        "ownerReferences", kit_owner_ref(p->job), "spec",
                        json_object_get(v, "volumeClaim"));
        ty_error_init(&err);
        if (pvc && kit_create(p->s, &api_pvc, pvc, p->job, VC_COMPONENT, &err) < 0)
            p->rc = -1;
        ty_error_clear(&err);
    }
}

/* The mpi plugin's ConfigMap `<job>-mpi`: the rsh agent mpirun uses. */
static void ensure_mpi(pass *p)
{
    char cm_name[300];
    json_t *cm;
    ty_error err;

    if (!vc_plugin_on(p->job, "mpi"))
        return;
    snprintf(cm_name, sizeof(cm_name), "%s-mpi", p->name);
    cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:[o]}, s:o}", "apiVersion", "v1", "kind",
                   "ConfigMap", "metadata", "name", cm_name, "namespace", p->ns,
                   "ownerReferences", kit_owner_ref(p->job), "data",
                   vc_mpi_configmap_data(p->job));
    ty_error_init(&err);
    if (kit_create(p->s, &api_configmap, cm, p->job, VC_COMPONENT, &err) < 0)
        p->rc = -1;
    ty_error_clear(&err);
}

/* The ray plugin's Service `<job>-head-svc`. false when the job has no head
 * task: upstream's plugin fails every pod's creation then, so no pod is made
 * (and the job says why). */
static bool ensure_ray(pass *p)
{
    json_t *svc;
    ty_error err;
    vc_ray_args a;

    if (!vc_plugin_on(p->job, "ray"))
        return true;
    if (!vc_ray_has_head(p->job)) {
        vc_ray_args_of(p->job, &a);
        ty_event(p->s, p->job, "Warning", "FailedCreatePod", VC_COMPONENT,
                 "Error creating pods: ray plugin: job %s doesn't have head task %s", p->name,
                 a.head);
        return false;
    }
    svc = vc_ray_service(p->job, p->ns);
    json_object_set_new(json_object_get(svc, "metadata"), "ownerReferences",
                        json_pack("[o]", kit_owner_ref(p->job)));
    ty_error_init(&err);
    if (kit_create(p->s, &api_service, svc, p->job, VC_COMPONENT, &err) < 0)
        p->rc = -1;
    ty_error_clear(&err);
    return true;
}

/* The ssh plugin's Secret `<job>-ssh`, made once: its key pair is the user's
 * (--ssh-private-key and --ssh-public-key) or a new one from ssh-keygen.
 * false while it does not exist: pods would not start without it. */
static bool ensure_ssh(pass *p)
{
    const char *user_priv = vc_plugin_arg(p->job, "ssh", "ssh-private-key", NULL);
    const char *user_pub = vc_plugin_arg(p->job, "ssh", "ssh-public-key", NULL);
    char secret_name[300], *priv = NULL, *pub = NULL;
    json_t *secret;
    ty_error err;
    ty_obj *o;

    if (!vc_plugin_on(p->job, "ssh"))
        return true;
    snprintf(secret_name, sizeof(secret_name), "%s-ssh", p->name);
    ty_error_init(&err);
    if ((o = kc_get(p->s, api_store_key(&api_secret), p->ns, secret_name, &err))) {
        ty_obj_unref(o);
        return true;
    }
    ty_error_clear(&err);
    if (user_priv && user_pub) {
        priv = strdup(user_priv);
        pub = strdup(user_pub);
    } else if (vc_ssh_keygen(p->name, &priv, &pub, &err) < 0) {
        ty_warn("vcjob %s/%s: ssh plugin: %s", p->ns, p->name, err.text);
        ty_event(p->s, p->job, "Warning", "PluginError", VC_COMPONENT, "ssh plugin: %s",
                 err.text);
        ty_error_clear(&err);
        p->rc = -1;
        return false;
    }
    secret = json_pack("{s:s, s:s, s:{s:s, s:s, s:[o]}, s:s, s:o}", "apiVersion", "v1", "kind",
                       "Secret", "metadata", "name", secret_name, "namespace", p->ns,
                       "ownerReferences", kit_owner_ref(p->job), "type", "Opaque",
                       "stringData", vc_ssh_secret_data(p->job, priv ? priv : "",
                                                        pub ? pub : ""));
    free(priv);
    free(pub);
    if (kit_create(p->s, &api_secret, secret, p->job, VC_COMPONENT, &err) < 0) {
        ty_error_clear(&err);
        p->rc = -1;
        return false;
    }
    return true;
}

static bool pod_exists(const pass *p, const char *name)
{
    json_t *pod;
    size_t i;

    json_array_foreach(p->pods, i, pod)
        if (!strcmp(vc_str_at(pod, "metadata", "name"), name))
            return true;
    return false;
}

static json_t *build_pod(pass *p, const json_t *task, int index, const char *pod_name)
{
    const char *tname = json_string_value(json_object_get(task, "name"));
    const json_t *tmpl = json_object_get(task, "template");
    const char *rp = vc_str_at(tmpl, "spec", "restartPolicy");
    const char *queue = vc_str_at(p->job, "spec", "queue");
    const char *sched = vc_str_at(p->job, "spec", "schedulerName");
    const char *prio = vc_str_at(p->job, "spec", "priorityClassName");
    json_t *env = json_array(), *labels, *pod, *meta, *ann, *extra;
    char idx[16], ver[32], group[512];

    snprintf(idx, sizeof(idx), "%d", index);
    snprintf(ver, sizeof(ver), "%lld",
             (long long)json_integer_value(json_object_get(p->status, "version")));
    snprintf(group, sizeof(group), "%s-%s", p->name, p->uid);
    queue = queue ? queue : "default";
    vc_plugins_env(p->job, tname, index, env);
    labels = json_pack("{s:s, s:s, s:s, s:s, s:s}", VC_ANN_JOB_NAME, p->name, VC_ANN_TASK_SPEC,
                       tname, VC_ANN_TASK_INDEX, idx, VC_ANN_QUEUE, queue,
                       VC_LABEL_JOB_NAMESPACE, p->ns);
    pod = kit_pod_new(&(kit_pod_params){.owner = p->job, .name = pod_name, .template = tmpl,
                                          .restart_policy = rp ? rp : "Always",
                                          .labels = labels, .env = env});
    json_decref(labels);
    json_decref(env);
    meta = json_object_get(pod, "metadata");
    if (!json_is_object(ann = json_object_get(meta, "annotations"))) {
        ann = json_object();
        json_object_set_new(meta, "annotations", ann);
    }
    extra = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", VC_ANN_TASK_INDEX, idx, VC_ANN_TASK_SPEC,
                      tname, VC_ANN_JOB_NAME, p->name, VC_ANN_QUEUE, queue, VC_ANN_JOB_VERSION,
                      ver, VC_ANN_GROUP, group);
    json_object_update(ann, extra);
    json_decref(extra);
    /* A template's own schedulerName and priorityClassName stay; the job's
     * fill in where it names none, as upstream's controller does. */
    if (!json_string_length(json_object_get(json_object_get(pod, "spec"), "schedulerName")))
        json_object_set_new(json_object_get(pod, "spec"), "schedulerName",
                            json_string(sched ? sched : "volcano"));
    if (prio && *prio &&
        !json_string_length(json_object_get(json_object_get(pod, "spec"), "priorityClassName")))
        json_object_set_new(json_object_get(pod, "spec"), "priorityClassName", json_string(prio));
    vc_job_volumes(p->job, pod);
    vc_plugins_decorate(p->job, pod);
    return pod;
}

/* Task replicas may be lowered (or a task renamed away) by an update: pods
 * past the task's replicas go. */
static void prune_pods(pass *p)
{
    json_t *pod;
    size_t i;

    json_array_foreach(p->pods, i, pod) {
        const json_t *task = task_named(p, pod_task(pod));
        const char *idx = vc_str_at(json_object_get(pod, "metadata"), "annotations",
                                 VC_ANN_TASK_INDEX);
        if (task && idx && atoll(idx) < json_integer_value(json_object_get(task, "replicas")))
            continue;
        if (kit_delete(p->s, api_store_key(&api_pod), pod, p->job, VC_COMPONENT) < 0)
            p->rc = -1;
    }
}

static void create_pods(pass *p)
{
    const char *dep = vc_str_at(json_object_get(p->job, "metadata"), "annotations",
                             VC_ANN_DEPENDS_ON);
    bool want_succeeded = dep && strcmp(dep, "Succeeded") == 0;
    json_t *t;
    size_t i;

    ensure_svc(p);
    ensure_mpi(p);
    ensure_claims(p);
    if (!ensure_ssh(p) || !ensure_ray(p))
        return;
    prune_pods(p);
    json_array_foreach(tasks_of(p), i, t) {
        const char *tname = json_string_value(json_object_get(t, "name"));
        long long reps = json_integer_value(json_object_get(t, "replicas"));
        if (!vc_depends_ready(t, tasks_of(p), json_object_get(p->status, "taskStatusCount"),
                              want_succeeded))
            continue;
        for (int k = 0; tname && k < reps; k++) {
            char pod_name[512];
            ty_error err;
            snprintf(pod_name, sizeof(pod_name), "%s-%s-%d", p->name, tname, k);
            if (pod_exists(p, pod_name))
                continue;
            ty_error_init(&err);
            if (kit_create(p->s, &api_pod, build_pod(p, t, k, pod_name), p->job, VC_COMPONENT,
                            &err) < 0)
                p->rc = -1;
            ty_error_clear(&err);
        }
    }
}

/* ttlSecondsAfterFinished: a Completed, Failed or Terminated job is deleted
 * that long after it finished (its dependents go with it through the garbage
 * collector); until then the pass asks to be woken. */
static void expire(pass *p, vc_phase phase)
{
    json_t *ttl = json_object_get(json_object_get(p->job, "spec"), "ttlSecondsAfterFinished");
    time_t done = vc_parse_time(vc_str_at(p->status, "state", "lastTransitionTime"));
    int rc;

    if (!json_is_integer(ttl) ||
        (phase != VC_COMPLETED && phase != VC_FAILED && phase != VC_TERMINATED))
        return;
    rc = kit_ttl_expire(p->s, api_store_key(&api_vcjob), p->job, done,
                        json_integer_value(ttl), time(NULL), p->wake_at);
    if (rc < 0)
        p->rc = -1;
}

static void run_pass(pass *p)
{
    vc_phase phase = vc_phase_parse(vc_str_at(p->status, "state", "phase"));
    vc_step step;
    target t;

    if (!vc_phase_final(phase))
        ensure_podgroup(p);
    p->pods = list_owned(p, api_store_key(&api_pod));
    observe(p);
    t = choose(p, phase);
    step = vc_transition(phase, t.action, &p->obs);
    if (t.action != VC_SYNC)
        ty_event(p->s, p->job, "Normal", "ExecuteAction", VC_COMPONENT,
                 "Start to execute action %s%s%s", vc_action_name(t.action),
                 t.event ? " on " : "", t.event ? t.event : "");
    kill_pods(p, step.kill, &t);
    if (step.retry && vc_counts_as_retry(t.event))
        vc_pass_bump(p->status, "retryCount");
    if (step.new_version)
        vc_pass_bump(p->status, "version");
    if (step.create && p->admitted)
        create_pods(p);
    vc_pass_set_counts(p);
    vc_pass_set_phase(p, phase, step.next, &t);
    vc_pass_commit(p);
    if (p->rc == 0)
        expire(p, step.next);
}

int vc_reconcile(ty_kc *s, const char *ns, const char *name, time_t *wake_at)
{
    pass p = {.s = s, .ns = ns, .name = name, .wake_at = wake_at};
    const json_t *st;
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_get(s, api_store_key(&api_vcjob), ns, name, &err);
    if (!o) {
        int rc = err.code == TY_ENOTFOUND ? 0 : -1;
        ty_error_clear(&err);
        return rc;
    }
    p.job = ty_obj_json_copy(o);
    ty_obj_unref(o);
    p.uid = vc_str_at(p.job, "metadata", "uid");
    if (!p.uid || kit_is_terminating(p.job)) {
        json_decref(p.job);
        return 0;
    }
    st = json_object_get(p.job, "status");
    p.status = json_is_object(st) ? json_deep_copy(st) : json_object();
    ty_time_now(p.nows, sizeof(p.nows));
    run_pass(&p);
    json_decref(p.pods);
    json_decref(p.status);
    json_decref(p.job);
    return p.rc;
}
