/* sl_sync.c - what Slurm and the supervisors say, turned into pod status.
 *
 * One squeue of this user's jobs per tick (every second; more often while
 * a job is about to start) says which of our jobs wait and why, which run
 * and where, which ended. A pod whose component started is planned
 * (sl_plan.c); from then on its supervisor's state.json in the shared
 * directory is the truth about its containers (read when its mtime moves),
 * as on one machine. Slurm's word decides only what the supervisor could not
 * say: a job cancelled or timed out before or while it ran, a node that
 * failed. Deleting a pod asks its supervisor to stop (stop.json, with the
 * grace period: the supervisor is on another machine), cancels a job that
 * has not started, and cancels a job whose pods outlive their grace. */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "client/events.h"
#include "model/obj.h"
#include "runtime/local/rt_internal.h"
#include "runtime/slurm/sl_int.h"

#define GONE_AFTER_MS 10000 /* submitted, yet not in squeue: gone */

/* ---- status writes ---- */

typedef struct status_args {
    const char *uid;
    json_t *status; /* the new status (owned by the caller) */
} status_args;

static int edit_status(json_t *obj, void *arg, ty_error *err)
{
    const status_args *a = arg;
    const char *phase = ty_jstr(json_object_get(obj, "status"), "phase");

    if (strcmp(ty_jmeta(obj, "uid"), a->uid))
        return ty_seterr(err, TY_ENOTFOUND, "pod replaced");
    if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
        return 0; /* an end once reported stays */
    json_object_set(obj, "status", a->status);
    return 0;
}

static void write_status(rt_slurm *s, sl_pod *p, json_t *status)
{
    status_args a = {.uid = p->uid, .status = status};
    ty_error err;
    ty_obj *o;

    ty_error_init(&err);
    o = kc_mutate(s->kc, "pods", p->ns, p->name, edit_status, &a, KC_STATUS, &err);
    if (!o && err.code != TY_ENOTFOUND)
        ty_warn("slurm: status of pod %s/%s: %s", p->ns, p->name, err.text);
    ty_obj_unref(o);
    ty_error_clear(&err);
}

void sl_report_state(rt_slurm *s, sl_pod *p)
{
    json_t *st;

    if (!p->obj)
        return;
    st = rt_pod_status(ty_obj_json(p->obj), p->state, p->addr, p->addr, NULL, NULL);
    if (st)
        write_status(s, p, st);
    json_decref(st);
    if (p->state && ak_pod_is_final(p->state))
        p->st = SP_DONE;
}

static int edit_pending(json_t *obj, void *arg, ty_error *err)
{
    const json_t *cond = arg;
    json_t *st = json_object_get(obj, "status"), *conds, *c;
    size_t i;

    if (strcmp(ty_jmeta(obj, "uid"), ty_jstr(cond, "uid")))
        return ty_seterr(err, TY_ENOTFOUND, "pod replaced");
    if (*ty_jstr(json_object_get(obj, "spec"), "nodeName"))
        return ty_seterr(err, TY_ECONFLICT, "bound meanwhile");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(obj, "status", st);
    }
    if (!*ty_jstr(st, "phase"))
        json_object_set_new(st, "phase", json_string("Pending"));
    conds = json_object_get(st, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(st, "conditions", conds);
    }
    json_array_foreach(conds, i, c) {
        if (!strcmp(ty_jstr(c, "type"), "PodScheduled")) {
            json_array_remove(conds, i);
            break;
        }
    }
    json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "PodScheduled",
                                           "status", "False", "reason", ty_jstr(cond, "reason"),
                                           "message", ty_jstr(cond, "message"),
                                           "lastTransitionTime", ty_jstr(cond, "time")));
    return 0;
}

void sl_pending_reason(rt_slurm *s, sl_pod *p, const char *reason, const char *msg)
{
    char now[40];
    json_t *cond;
    ty_error err;
    ty_obj *o;

    if (!strcmp(p->reason, msg) || !p->obj)
        return;
    snprintf(p->reason, sizeof(p->reason), "%s", msg);
    ty_time_now(now, sizeof(now));
    cond = json_pack("{s:s, s:s, s:s, s:s}", "uid", p->uid, "reason", reason, "message", msg,
                     "time", now);
    ty_error_init(&err);
    o = kc_mutate(s->kc, "pods", p->ns, p->name, edit_pending, cond, KC_STATUS, &err);
    ty_obj_unref(o);
    ty_error_clear(&err);
    json_decref(cond);
    ty_event(s->kc, ty_obj_json(p->obj), "Warning", "FailedScheduling", SL_COMPONENT, "%s", msg);
    /* The job's too (the pod's controller): `kubectl describe` of the
     * PyTorchJob or Volcano Job says why it waits. */
    const json_t *refs = json_object_get(json_object_get(ty_obj_json(p->obj), "metadata"),
                                         "ownerReferences"), *r;
    size_t i;
    json_array_foreach(refs, i, r) {
        if (!json_is_true(json_object_get(r, "controller")))
            continue;
        json_t *owner = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion",
                                  ty_jstr(r, "apiVersion"), "kind", ty_jstr(r, "kind"),
                                  "metadata", "name", ty_jstr(r, "name"), "namespace", p->ns,
                                  "uid", ty_jstr(r, "uid"));
        if (owner)
            ty_event(s->kc, owner, "Warning", "Unschedulable", SL_COMPONENT, "pod %s: %s",
                     p->name, msg);
        json_decref(owner);
        break;
    }
    if (*p->group) {
        char key[520];
        snprintf(key, sizeof(key), "%s/%s", p->ns, p->group);
        const json_t *pg = json_object_get(s->groups, key);
        if (pg)
            ty_event(s->kc, pg, "Warning", "Unschedulable", SL_COMPONENT, "%s", msg);
    }
}

/* The pod ended without its supervisor saying how: what Slurm says, as a
 * kubelet reports containers it lost. */
static void report_lost(rt_slurm *s, sl_pod *p, const char *why)
{
    const json_t *cts = json_object_get(json_object_get(ty_obj_json(p->obj), "spec"), "containers");
    size_t n = json_array_size(cts);
    ak_container *c = calloc(n ? n : 1, sizeof(*c));
    char now[40], msg[200];
    ty_error err;

    if (!c)
        return;
    ty_time_now(now, sizeof(now));
    snprintf(msg, sizeof(msg), "Slurm ended the job: %s", why);
    for (size_t i = 0; i < n; i++)
        c[i] = (ak_container){.name = ty_jstr(json_array_get(cts, i), "name"),
                              .state = AK_TERMINATED, .reason = why, .message = msg,
                              .exit_code = 137, .started_at = now, .finished_at = now};
    ak_pod_state st = {.phase = "Failed", .host_ip = *p->addr ? p->addr : NULL,
                       .pod_ip = *p->addr ? p->addr : NULL, .containers = c, .n = n};
    ty_error_init(&err);
    if (ak_pod_report(s->kc, p->ns, p->name, p->uid, &st, &err) < 0 && err.code != TY_ENOTFOUND)
        ty_warn("slurm: status of pod %s/%s: %s", p->ns, p->name, err.text);
    ty_error_clear(&err);
    free(c);
    ty_event(s->kc, ty_obj_json(p->obj), "Warning", "SlurmJobEnded", SL_COMPONENT, "%s", msg);
    p->st = SP_DONE;
}

/* ---- state.json ---- */

static void read_state(rt_slurm *s, sl_pod *p)
{
    char path[PATH_MAX + 16];
    struct stat sb;
    json_t *st;

    sl_pod_dir(s, p->uid, path, sizeof(path));
    strncat(path, "/state.json", sizeof(path) - strlen(path) - 1);
    if (stat(path, &sb) < 0)
        return;
    int64_t mt = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
    if (mt == p->state_mtime && p->state)
        return;
    if (!(st = rt_load_json(path)))
        return;
    p->state_mtime = mt;
    if (p->obj)
        rt_state_events(s->kc, ty_obj_json(p->obj), p->state, st);
    json_decref(p->state);
    p->state = st;
    sl_report_state(s, p);
}

/* ---- Slurm's commands ---- */

static void scancel(const char *job)
{
    const char *argv[] = {"scancel", job, NULL};
    scli_out out = {0};
    ty_error err;

    ty_error_init(&err);
    if (scli_run(argv, NULL, SL_CMD_TIMEOUT_MS, 4096, &out, &err) < 0 || out.status) {
        char *why = err.code ? NULL : scli_describe(argv, &out);
        ty_warn("slurm: %s", why ? why : err.text);
        free(why);
    } else {
        ty_info("slurm: cancelled job %s", job);
    }
    scli_out_free(&out);
    ty_error_clear(&err);
}

static const char *me(void)
{
    static char name[64];
    if (!*name) {
        struct passwd *pw = getpwuid(geteuid());
        snprintf(name, sizeof(name), "%s", pw ? pw->pw_name : "root");
    }
    return name;
}

/* Where a started step's supervisor runs: where.json, which it writes
 * before it waits for its spec. */
static bool read_where(rt_slurm *s, sl_pod *p)
{
    char path[PATH_MAX + 16];
    json_t *w;

    sl_pod_dir(s, p->uid, path, sizeof(path));
    strncat(path, "/where.json", sizeof(path) - strlen(path) - 1);
    if (!(w = rt_load_json(path)))
        return false;
    snprintf(p->node, sizeof(p->node), "%s", ty_jstr(w, "node"));
    json_decref(w);
    return *p->node != '\0';
}

/* The pods of job (leader) whose steps started: planned together once every
 * one of them said where it runs (each pod's hosts file shows them all). */
static void start_job(rt_slurm *s, const json_t *idx, bool running)
{
    sl_pod *pods[SL_MAX_GANG];
    size_t n = 0, i;
    json_t *v;

    json_array_foreach(idx, i, v) {
        sl_pod *p = s->all[json_integer_value(v)];
        if (p->deleting || p->st == SP_DONE || p->st == SP_STARTED)
            continue;
        if (!read_where(s, p)) {
            s->fast |= running; /* Slurm says it runs: look again soon */
            return;
        }
        if (n < SL_MAX_GANG)
            pods[n++] = p;
    }
    if (n)
        sl_plan_started(s, pods, n);
}

/* A pod whose spec was written by an earlier server: running already. */
static bool adopt_started(rt_slurm *s, sl_pod *p)
{
    char path[PATH_MAX + 16];
    sl_node nd;

    sl_pod_dir(s, p->uid, path, sizeof(path));
    strncat(path, "/spec.json", sizeof(path) - strlen(path) - 1);
    if (!*p->node || access(path, F_OK) < 0)
        return false;
    if (sl_node_find(s, p->node, &nd))
        snprintf(p->addr, sizeof(p->addr), "%s", nd.addr);
    sl_pod_dir(s, p->uid, path, sizeof(path));
    strncat(path, "/ports.json", sizeof(path) - strlen(path) - 1);
    json_decref(p->ports);
    p->ports = rt_load_json(path);
    rt_hosts_set_local(s->hosts, p->ns, p->uid, p->addr);
    p->st = SP_STARTED;
    return true;
}

/* The pods of each job we know of, by leader id: {"<leader>": [index in
 * s->all...]} (valid while no pod is forgotten: during one sync). */
static json_t *by_job(rt_slurm *s)
{
    json_t *m = json_object();

    for (size_t i = 0; m && i < s->nall; i++) {
        json_t *arr;
        if (!*s->all[i]->job)
            continue;
        if (!(arr = json_object_get(m, s->all[i]->job))) {
            arr = json_array();
            json_object_set_new(m, s->all[i]->job, arr);
        }
        json_array_append_new(arr, json_integer((json_int_t)i));
    }
    return m;
}

/* A job squeue shows whose pods this server does not know yet (submitted
 * by an earlier run): its gang file says which pods it holds. */
static void adopt_job(rt_slurm *s, const char *leader, const char *anchor, json_t *jobs)
{
    char path[PATH_MAX + 64];
    json_t *g, *uids, *comps, *arr = json_object_get(jobs, leader);
    size_t i;

    sl_gang_path(s, anchor, path, sizeof(path));
    if (!(g = rt_load_json(path)))
        return;
    uids = json_object_get(g, "uids");
    comps = json_object_get(g, "components");
    for (i = 0; i < json_array_size(uids); i++) {
        sl_pod *p = sl_find(s, json_string_value(json_array_get(uids, i)) ?: "");
        if (!p || *p->job)
            continue;
        snprintf(p->job, sizeof(p->job), "%s", leader);
        p->comp = (int)json_integer_value(json_array_get(comps, i));
        if (p->st == SP_NEW)
            p->st = SP_SUBMITTED;
        if (!arr) {
            arr = json_array();
            json_object_set_new(jobs, leader, arr);
        }
        json_array_append_new(arr, json_integer((json_int_t)p->idx));
    }
    json_decref(g);
}

static void seen_line(rt_slurm *s, const scli_job *j, json_t *jobs, json_t *starting,
                      json_t *orphans)
{
    char prefix[64], leader[32];
    scli_state st = scli_state_of(j->state);
    json_t *idx, *v;
    size_t i, mine = 0;

    snprintf(prefix, sizeof(prefix), "ty:%s:", s->inst);
    if (strncmp(j->comment, prefix, strlen(prefix)))
        return;
    snprintf(leader, sizeof(leader), "%ld", j->leader);
    if (!json_object_get(jobs, leader))
        adopt_job(s, leader, j->comment + strlen(prefix), jobs);
    idx = json_object_get(jobs, leader);
    json_array_foreach(idx, i, v) {
        sl_pod *p = s->all[json_integer_value(v)];
        if (j->component >= 0 && p->comp != j->component)
            continue;
        mine++;
        /* Bound by an earlier run of this server: it started (the server
         * binds only what it planned), whatever state Slurm shows now. */
        if (p->st == SP_SUBMITTED && *p->node)
            adopt_started(s, p);
        p->seen_ms = ty_now_ms();
        snprintf(p->slurm_state, sizeof(p->slurm_state), "%s", j->state);
        switch (st) {
        case SCLI_PENDING: {
            char msg[200];
            /* "None": Slurm's scheduler has not looked at it yet, which
             * is no reason to wait (most jobs start before it says more). */
            snprintf(msg, sizeof(msg), "Slurm job %s is pending: %s", j->id, j->reason);
            if (p->st == SP_SUBMITTED && !p->deleting && *j->reason && strcmp(j->reason, "None"))
                sl_pending_reason(s, p, "Unschedulable", msg);
            break;
        }
        case SCLI_RUNNING:
        case SCLI_SUSPENDED:
        case SCLI_COMPLETING:
            if ((p->st == SP_SUBMITTED || p->plan_failed) && !adopt_started(s, p))
                json_object_set(starting, leader, idx);
            break;
        default:
            if (!p->ended_ms) {
                p->ended_ms = ty_now_ms();
                snprintf(p->end_reason, sizeof(p->end_reason), "%s", j->state);
            }
            break;
        }
    }
    /* Ours, and no pod of ours any more (deleted while this server was
     * down, or force-deleted): nothing may keep running for it. */
    if (!mine && st != SCLI_DONE_OK && st != SCLI_DONE_FAILED && st != SCLI_UNKNOWN)
        json_object_set_new(orphans, leader, json_true());
}

static void squeue(rt_slurm *s, json_t *starting, json_t *orphans)
{
    const char *argv[] = {"squeue", "-h", "--states=all", "-u", me(), "-o",
                          "%i|%T|%r|%N|%k|%j", NULL};
    scli_out out = {0};
    scli_job *jobs;
    size_t n = 0;
    ty_error err;

    ty_error_init(&err);
    if (scli_run(argv, NULL, SL_CMD_TIMEOUT_MS, SL_CMD_MAX_OUT, &out, &err) < 0 || out.status) {
        char *why = err.code ? NULL : scli_describe(argv, &out);
        ty_warn("slurm: %s", why ? why : err.text);
        free(why);
        goto out;
    }
    if (!(jobs = scli_parse_squeue(out.out ? out.out : "", &n, &err))) {
        ty_warn("slurm: squeue: %s", err.text);
        goto out;
    }
    int64_t asked = ty_now_ms();
    json_t *m = by_job(s);
    for (size_t i = 0; m && i < n; i++)
        seen_line(s, &jobs[i], m, starting, orphans);
    json_decref(m);
    free(jobs);
    s->synced_once = true;
    s->listed_ms = asked;
out:
    scli_out_free(&out);
    ty_error_clear(&err);
}

/* ---- deletion ---- */

static bool job_all_deleting(rt_slurm *s, const char *job)
{
    for (size_t i = 0; i < s->nall; i++)
        if (!strcmp(s->all[i]->job, job) && !s->all[i]->deleting && s->all[i]->st != SP_DONE)
            return false;
    return true;
}

static void write_stop(rt_slurm *s, sl_pod *p)
{
    char path[PATH_MAX + 16];
    json_t *stop = json_pack("{s:i}", "gracePeriodSeconds", p->grace_s);

    sl_pod_dir(s, p->uid, path, sizeof(path));
    strncat(path, "/stop.json", sizeof(path) - strlen(path) - 1);
    if (rt_save_json(path, stop) < 0)
        ty_warn("slurm: cannot write %s: %s", path, strerror(errno));
    json_decref(stop);
}

static void deleting(rt_slurm *s, sl_pod *p, int64_t now)
{
    switch (p->st) {
    case SP_NEW:
        break;
    case SP_SUBMITTED:
        /* Not started: nothing to stop gracefully. */
        if (!p->cancel_sent && *p->job && job_all_deleting(s, p->job)) {
            scancel(p->job);
            p->cancel_sent = true;
        }
        if (!p->cancel_sent)
            return;
        break;
    case SP_STARTED:
        if (!p->stop_sent) {
            write_stop(s, p);
            p->stop_sent = true;
            p->kill_at_ms = now + ((int64_t)p->grace_s + SL_KILL_AFTER_S) * 1000;
            s->fast = true;
        }
        if (now >= p->kill_at_ms && !p->cancel_sent && job_all_deleting(s, p->job)) {
            scancel(p->job);
            p->cancel_sent = true;
        }
        return; /* its end comes through state.json or Slurm */
    case SP_DONE:
        break;
    }
    if (p->finalizer)
        sl_finalizer(s, p, false);
}

void sl_unwatch(rt_slurm *s, sl_pod *p)
{
    if (p->wd >= 0 && s->ino_fd >= 0)
        inotify_rm_watch(s->ino_fd, p->wd);
    p->wd = -1;
}

void sl_start_ready(rt_slurm *s)
{
    json_t *m = by_job(s), *idx;
    const char *job;

    json_object_foreach(m, job, idx) {
        size_t i;
        json_t *v;
        bool waiting = false;
        json_array_foreach(idx, i, v) {
            const sl_pod *p = s->all[json_integer_value(v)];
            waiting |= p->st == SP_SUBMITTED && !p->deleting;
        }
        if (waiting)
            start_job(s, idx, false);
    }
    json_decref(m);
}

/* ---- the tick ---- */

void sl_sync(rt_slurm *s)
{
    json_t *starting = json_object(), *orphans = json_object(), *v;
    int64_t now = ty_now_ms();
    const char *job;

    if (!starting || !orphans)
        goto out;
    squeue(s, starting, orphans);
    json_object_foreach(starting, job, v)
        start_job(s, v, true);
    json_object_foreach(orphans, job, v) {
        bool ours = false;
        for (size_t i = 0; i < s->nall && !ours; i++)
            ours = !strcmp(s->all[i]->job, job) && !s->all[i]->deleting;
        if (!ours)
            scancel(job);
    }
    now = ty_now_ms();
    for (size_t i = 0; i < s->nall; i++) {
        sl_pod *p = s->all[i];
        /* Bound by an earlier run of this server (its spec written): it
         * runs, whatever squeue shows now; its state.json says how. */
        if (p->st == SP_SUBMITTED && *p->node)
            adopt_started(s, p);
        if (p->st == SP_SUBMITTED && p->submitted_ms && now - p->submitted_ms < 20000)
            s->fast = true;
        /* Gone: squeue has answered for GONE_AFTER_MS without it. Measured
         * from the last listing, not the clock: a slurmctld that does not
         * answer (busy, restarting) makes nothing gone. */
        if (((p->st == SP_SUBMITTED && *p->job) || p->st == SP_STARTED) && s->synced_once &&
            p->seen_ms < s->listed_ms - GONE_AFTER_MS &&
            p->submitted_ms < s->listed_ms - GONE_AFTER_MS && !p->ended_ms) {
            p->ended_ms = now;
            snprintf(p->end_reason, sizeof(p->end_reason), "SlurmJobGone");
        }
        if (p->st == SP_STARTED) {
            read_state(s, p);
            if (!p->state)
                s->fast = true;
            else if (p->hosts_gen) {
                /* names of the namespace changed: its hosts file follows */
                uint64_t gen = 0;
                if (rt_hosts_body(s->hosts, p->ns, &gen) && gen != p->hosts_gen) {
                    char path[PATH_MAX + 16], *text;
                    sl_pod_dir(s, p->uid, path, sizeof(path));
                    strncat(path, "/hosts", sizeof(path) - strlen(path) - 1);
                    if ((text = rt_hosts_text(rt_hosts_body(s->hosts, p->ns, &gen), p->addr)) &&
                        rt_hosts_file_update(path, text) == 0)
                        p->hosts_gen = gen;
                    free(text);
                }
            }
        }
        if ((p->st == SP_SUBMITTED || p->st == SP_STARTED) && p->ended_ms &&
            now - p->ended_ms >= (p->st == SP_STARTED ? SL_LOST_AFTER_MS : 0)) {
            if (p->st == SP_STARTED)
                read_state(s, p);
            if (p->st != SP_DONE) {
                const char *why = !strcmp(p->end_reason, "TIMEOUT")     ? "DeadlineExceeded"
                                  : !strcmp(p->end_reason, "NODE_FAIL") ? "NodeLost"
                                  : !strcmp(p->end_reason, "CANCELLED") ? "SlurmCancelled"
                                  : !strcmp(p->end_reason, "OUT_OF_MEMORY") ? "OOMKilled"
                                                                           : "SlurmJobEnded";
                if (p->st == SP_SUBMITTED || !p->deleting)
                    report_lost(s, p, why);
                p->st = SP_DONE;
            }
        }
        if (p->deleting)
            deleting(s, p, now);
        else if (p->st == SP_DONE && p->finalizer)
            sl_finalizer(s, p, false); /* its end is reported: nothing to hold */
    }
out:
    json_decref(starting);
    json_decref(orphans);
}
