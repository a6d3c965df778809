/* reconcile_status.c - the end of a Volcano Job's pass: counts, phase,
 * runningDuration, and the write of what the pass changed (vc_pass.h). */
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "base/jsonown.h"
#include "base/log.h"
#include "client/events.h"
#include "controller/volcano/vc_pass.h"

void vc_pass_set_counts(pass *p)
{
    json_t *st = p->status;

    json_object_set_new(st, "pending", json_integer(p->obs.pending));
    json_object_set_new(st, "running", json_integer(p->obs.running));
    json_object_set_new(st, "succeeded", json_integer(p->obs.succeeded));
    json_object_set_new(st, "failed", json_integer(p->obs.failed));
    json_object_set_new(st, "terminating", json_integer(p->obs.terminating));
    json_object_set_new(st, "unknown", json_integer(p->obs.unknown));
    json_object_set_new(st, "minAvailable", json_integer(p->obs.min_available));
    if (!json_object_get(st, "version"))
        json_object_set_new(st, "version", json_integer(0));
    if (!json_object_get(st, "retryCount"))
        json_object_set_new(st, "retryCount", json_integer(0));
}

void vc_pass_bump(json_t *st, const char *key)
{
    json_object_set_new(st, key, json_integer(json_integer_value(json_object_get(st, key)) + 1));
}

/* Upstream's runningDuration: time since the job was created, as a Go
 * duration string ("1h2m3s"). */
static void running_duration(pass *p)
{
    time_t created = vc_parse_time(vc_str_at(p->job, "metadata", "creationTimestamp"));
    long long d;
    char buf[64];

    if (!created)
        return;
    d = (long long)(time(NULL) - created);
    if (d < 0)
        d = 0;
    if (d >= 3600)
        snprintf(buf, sizeof(buf), "%lldh%lldm%llds", d / 3600, d / 60 % 60, d % 60);
    else if (d >= 60)
        snprintf(buf, sizeof(buf), "%lldm%llds", d / 60, d % 60);
    else
        snprintf(buf, sizeof(buf), "%llds", d);
    json_object_set_new(p->status, "runningDuration", json_string(buf));
}

void vc_pass_set_phase(pass *p, vc_phase from, vc_phase to, const target *t)
{
    json_t *conds = json_object_get(p->status, "conditions");
    char msg[256];

    if (from == to && json_object_get(p->status, "state"))
        return;
    snprintf(msg, sizeof(msg), "%s%s%s", t->action != VC_SYNC ? vc_action_name(t->action) : "",
             t->event ? " on " : "", t->event ? t->event : "");
    json_object_set_new(p->status, "state",
                        json_pack("{s:s, s:s, s:s, s:s}", "phase", vc_phase_name(to), "reason",
                                  t->event ? t->event : "", "message", msg,
                                  "lastTransitionTime", p->nows));
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(p->status, "conditions", conds);
    }
    json_array_append_new(conds, json_pack("{s:s, s:s}", "status", vc_phase_name(to),
                                           "lastTransitionTime", p->nows));
    if (from != to)
        ty_event(p->s, p->job, to == VC_FAILED || to == VC_ABORTED ? "Warning" : "Normal",
                 vc_phase_name(to), VC_COMPONENT, "Job %s/%s is %s", p->ns, p->name,
                 vc_phase_name(to));
}

typedef struct write_args {
    const char *uid;
    json_t *status;
    const char *consume;
} write_args;

static bool same_job(const json_t *obj, const write_args *w)
{
    const char *uid = vc_str_at(obj, "metadata", "uid");

    return uid && strcmp(uid, w->uid) == 0;
}

static int write_status(json_t *obj, void *arg, ty_error *err)
{
    write_args *w = arg;

    (void)err;
    if (!same_job(obj, w))
        return 0; /* a new job of the same name: its own pass will come */
    json_object_set(obj, "status", w->status);
    return 0;
}

/* The action applied goes from the annotations, unless somebody asked for
 * another one since (that one is the next pass's). */
static int consume_action(json_t *obj, void *arg, ty_error *err)
{
    write_args *w = arg;
    json_t *meta = json_object_get(obj, "metadata");
    const char *now = vc_str_at(meta, "annotations", VC_ANN_ACTION);

    (void)err;
    if (!same_job(obj, w) || !now || strcmp(now, w->consume) != 0)
        return 0;
    json_object_del(ty_json_own(meta, "annotations"), VC_ANN_ACTION);
    return 0;
}

/* The status through the status subresource; a consumed action first, in a
 * metadata write of its own (a status write's annotations are dropped: the
 * action would run again at every pass), in the same kc_write_all (one
 * transaction in the embedded client). */
void vc_pass_commit(pass *p)
{
    const json_t *old = json_object_get(p->job, "status");
    write_args w = {.uid = p->uid, .status = p->status, .consume = p->consume};
    const char *res = api_store_key(&api_vcjob);
    kc_op ops[2];
    size_t n = 0;

    if (json_equal(old, p->status) && !p->consume)
        return;
    /* Only when something else changed, or this pass would wake itself. */
    running_duration(p);
    if (p->consume) /* it changes only metadata: the spec-top hint spares a deep copy */
        ops[n++] = kc_op_mutate(res, p->ns, p->name, consume_action, &w, KC_SPEC_TOP);
    ops[n++] = kc_op_mutate(res, p->ns, p->name, write_status, &w, KC_STATUS);
    kc_write_all(p->s, ops, n);
    for (size_t i = 0; i < n; i++) {
        if (!ops[i].result && ops[i].err.code != TY_ENOTFOUND) {
            ty_warn("vcjob %s/%s: %s: %s", p->ns, p->name,
                    ops[i].fn == write_status ? "status" : "action", ops[i].err.text);
            p->rc = -1;
        }
        kc_op_clear(&ops[i]);
    }
}
