/* podsecurity_admit.c - the admission rules of Pod Security and the
 * namespaces' id blocks (podsecurity.h, nsrange.h), as api_admit_mutate and
 * api_admit run them.
 *
 * Pods: on create, the namespace's enforce level refuses (403, upstream's
 * message), its audit level annotates the audit event and its warn level
 * warns; the ids the pod runs as must lie in the namespace's block unless
 * the namespace is privileged. Workloads (the job kinds, whose pod templates
 * the controllers turn into pods) are warned about when created, as
 * kube-apiserver warns about a Deployment (updates: where the HTTP API runs
 * the update rules, a dry run); their pods meet the enforce level when a
 * controller creates them. Namespaces get their id block on create;
 * their labels must parse and the block stays (psa_namespace_validate, part
 * of the kind's validation, so that it runs under the store's write).
 * And the labels' parsing (psa_policy_of). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "api/nsrange.h"
#include "api/podsecurity.h"

#define MSG_LEN 900

static const char *obj_name(const json_t *obj)
{
    const json_t *md = json_object_get(obj, "metadata");
    const char *n = meta_str(md, "name");

    if (!n || !*n)
        n = meta_str(md, "generateName");
    return n ? n : "";
}

static void warn(const api_lookup *lk, const char *text)
{
    if (lk->warn)
        lk->warn(lk->hook_ctx, text);
}

static void annotate(const api_lookup *lk, const char *key, const char *value)
{
    if (lk->annotate)
        lk->annotate(lk->hook_ctx, key, value);
}

static bool same_lv(psa_lv a, psa_lv b)
{
    return a.level == b.level && a.minor == b.minor;
}

/* `would violate PodSecurity "restricted:latest": ...` into out, or false
 * when the pod meets lv. */
static bool would_violate(psa_lv lv, const json_t *meta, const json_t *spec, char *out,
                          size_t len)
{
    char lvt[64], detail[MSG_LEN];

    if (psa_check(lv, meta, spec, detail, sizeof(detail)))
        return false;
    psa_lv_text(lv, lvt, sizeof(lvt));
    snprintf(out, len, "would violate PodSecurity \"%s\": %s", lvt, detail);
    return true;
}

static json_t *namespace_of(const api_lookup *lk, const json_t *obj)
{
    const char *ns = meta_str(json_object_get(obj, "metadata"), "namespace");

    return ns && *ns ? lk->get(lk->ctx, &api_namespace, "", ns) : NULL;
}

static const json_t *labels_of(const json_t *obj)
{
    return json_object_get(json_object_get(obj, "metadata"), "labels");
}

/* ---- labels ----------------------------------------------------------- */

static const char *const level_names[] = {"privileged", "baseline", "restricted"};

void psa_lv_text(psa_lv lv, char *out, size_t len)
{
    if (lv.minor == PSA_LATEST)
        snprintf(out, len, "%s:latest", level_names[lv.level]);
    else
        snprintf(out, len, "%s:v1.%d", level_names[lv.level], lv.minor);
}

static int parse_level(const char *s, psa_level *l)
{
    for (int i = 0; i < 3; i++)
        if (s && strcmp(s, level_names[i]) == 0) {
            *l = (psa_level)i;
            return 0;
        }
    return -1;
}

/* "latest" or v1.<n> (no leading zeros, as upstream's ^v1\.([0-9]|[1-9][0-9]*)$). */
static int parse_version(const char *s, int *minor)
{
    long n = 0;

    if (s && strcmp(s, "latest") == 0) {
        *minor = PSA_LATEST;
        return 0;
    }
    if (!s || strncmp(s, "v1.", 3) != 0 || !s[3] || (s[3] == '0' && s[4]))
        return -1;
    for (const char *p = s + 3; *p; p++) {
        if (*p < '0' || *p > '9' || n > 100000)
            return -1;
        n = n * 10 + (*p - '0');
    }
    *minor = (int)n;
    return 0;
}

static int label_level(const json_t *labels, const char *key, psa_level fail, psa_level *l,
                       ty_error *err)
{
    const json_t *v = json_object_get(labels, key);
    char field[128];

    if (!v)
        return 0;
    if (parse_level(json_string_value(v), l) == 0)
        return 0;
    *l = fail;
    snprintf(field, sizeof(field), "metadata.labels[%s]", key);
    meta_invalid(err, field, v, "must be one of privileged, baseline, restricted");
    return 1;
}

static int label_version(const json_t *labels, const char *key, int *minor, ty_error *err)
{
    const json_t *v = json_object_get(labels, key);
    char field[128];

    if (!v)
        return 0;
    if (parse_version(json_string_value(v), minor) == 0)
        return 0;
    *minor = PSA_LATEST;
    snprintf(field, sizeof(field), "metadata.labels[%s]", key);
    meta_invalid(err, field, v, "must be \"latest\" or \"v1.x\"");
    return 1;
}

int psa_policy_of(const json_t *labels, psa_policy *p, ty_error *err)
{
    const psa_lv dflt = {PSA_BASELINE, PSA_LATEST};
    int bad = 0;
    bool warn_set, audit_set, warn_v, audit_v;

    p->enforce = p->warn = p->audit = dflt;
    if (!json_is_object(labels))
        return 0;
    bad += label_level(labels, PSA_LABEL_ENFORCE, PSA_RESTRICTED, &p->enforce.level, err);
    bad += label_version(labels, PSA_LABEL_ENFORCE_VERSION, &p->enforce.minor, err);
    /* An absent warn or audit label follows enforce (see podsecurity.h). */
    warn_set = json_object_get(labels, PSA_LABEL_WARN) != NULL;
    warn_v = json_object_get(labels, PSA_LABEL_WARN_VERSION) != NULL;
    audit_set = json_object_get(labels, PSA_LABEL_AUDIT) != NULL;
    audit_v = json_object_get(labels, PSA_LABEL_AUDIT_VERSION) != NULL;
    if (!warn_set)
        p->warn.level = p->enforce.level;
    if (!warn_v)
        p->warn.minor = p->enforce.minor;
    if (!audit_set)
        p->audit.level = p->enforce.level;
    if (!audit_v)
        p->audit.minor = p->enforce.minor;
    bad += label_level(labels, PSA_LABEL_WARN, PSA_PRIVILEGED, &p->warn.level, err);
    bad += label_version(labels, PSA_LABEL_WARN_VERSION, &p->warn.minor, err);
    bad += label_level(labels, PSA_LABEL_AUDIT, PSA_PRIVILEGED, &p->audit.level, err);
    bad += label_version(labels, PSA_LABEL_AUDIT_VERSION, &p->audit.minor, err);
    return bad;
}

/* ---- pods ---------------------------------------------------------------- */

/* The causes of err as `f1: m1, f2: m2`. */
static void causes_text(const ty_error *err, char *out, size_t len)
{
    size_t i, used = 0;
    json_t *c;

    out[0] = '\0';
    json_array_foreach(err->causes, i, c) {
        int n = snprintf(out + used, len - used, "%s%s: %s", i ? ", " : "",
                         meta_str(c, "field") ? meta_str(c, "field") : "",
                         meta_str(c, "message") ? meta_str(c, "message") : "");
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
}

static int admit_pod(const api_lookup *lk, const json_t *pod, ty_error *err)
{
    const json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
    const char *name = obj_name(pod);
    json_t *ns = namespace_of(lk, pod);
    psa_policy p;
    char text[MSG_LEN + 100], lvt[64];
    bool allowed;
    ty_error ids;

    if (!ns)
        return ty_seterr(err, TY_ENOTFOUND, "namespaces \"%s\" not found",
                         meta_str(meta, "namespace") ? meta_str(meta, "namespace") : "");
    psa_policy_of(labels_of(ns), &p, NULL);
    allowed = psa_check(p.enforce, meta, spec, text, MSG_LEN);
    if (!allowed) {
        psa_lv_text(p.enforce, lvt, sizeof(lvt));
        ty_seterr(err, TY_EFORBIDDEN, "pods \"%s\" is forbidden: violates PodSecurity \"%s\": %s",
                  name, lvt, text);
    }
    if (would_violate(p.audit, meta, spec, text, sizeof(text)))
        annotate(lk, PSA_AUDIT_ANNOTATION, text);
    if (!allowed) {
        json_decref(ns);
        return -1;
    }
    if (nsrange_of(ns, NULL, NULL) < 0) {
        ty_seterr(err, TY_EFORBIDDEN,
                  "pods \"%s\" is forbidden: unable to find annotation %s on namespace \"%s\": "
                  "no user id to run the pod as",
                  name, NSRANGE_UID_ANNOTATION, obj_name(ns));
        json_decref(ns);
        return -1;
    }
    ty_error_init(&ids);
    if (nsrange_check_pod(ns, pod, p.enforce.level == PSA_PRIVILEGED, &ids) > 0) {
        causes_text(&ids, text, sizeof(text));
        ty_seterr(err, TY_EFORBIDDEN, "pods \"%s\" is forbidden: %s", name, text);
        err->causes = ids.causes; /* the causes move with it */
        json_decref(ns);
        return -1;
    }
    ty_error_clear(&ids);
    if (!same_lv(p.warn, p.enforce) && would_violate(p.warn, meta, spec, text, sizeof(text)))
        warn(lk, text);
    json_decref(ns);
    return 0;
}

/* ---- workloads ----------------------------------------------------------- */

typedef struct walk {
    const api_lookup *lk;
    psa_lv lv;            /* the warn level */
    const json_t *ns;     /* its id block, for ids_too */
    bool ids_too;         /* the namespace is not privileged: ids are held to the block */
    json_t *said;         /* the warnings given, to give each once */
    int nodes;
} walk;

static void warn_once(walk *w, const char *text)
{
    if (json_object_get(w->said, text))
        return;
    json_object_set_new(w->said, text, json_true());
    warn(w->lk, text);
}

/* A template's pods would be refused for their ids (Trainyard's own
 * warning: the job is accepted, its pods would not be). */
static void warn_ids(walk *w, const json_t *tmpl)
{
    ty_error ids;
    char causes[MSG_LEN], text[MSG_LEN + 100];

    ty_error_init(&ids);
    if (nsrange_check_pod(w->ns, tmpl, false, &ids) > 0) {
        causes_text(&ids, causes, sizeof(causes));
        snprintf(text, sizeof(text), "pods of this template would be refused: %s", causes);
        warn_once(w, text);
    }
    ty_error_clear(&ids);
}

/* Every pod template under o (a job kind's replica specs, tasks, ...):
 * an object's "template" with a spec that lists containers. */
static void warn_templates(walk *w, const json_t *o, int depth)
{
    const char *k;
    const json_t *v;
    size_t i;

    if (depth > 8 || ++w->nodes > 10000)
        return;
    if (json_is_array(o)) {
        json_array_foreach(o, i, v)
            warn_templates(w, v, depth + 1);
        return;
    }
    json_object_foreach((json_t *)o, k, v) {
        const json_t *spec = json_object_get(v, "spec");
        char text[MSG_LEN + 100];
        if (strcmp(k, "template") == 0 && json_is_array(json_object_get(spec, "containers"))) {
            if (w->lv.level != PSA_PRIVILEGED &&
                would_violate(w->lv, json_object_get(v, "metadata"), spec, text, sizeof(text)))
                warn_once(w, text);
            if (w->ids_too)
                warn_ids(w, v);
        } else if (json_is_object(v) || json_is_array(v)) {
            warn_templates(w, v, depth + 1);
        }
    }
}

static void admit_workload(const api_lookup *lk, const json_t *obj)
{
    json_t *ns;
    psa_policy p;
    walk w = {lk, {PSA_PRIVILEGED, PSA_LATEST}, NULL, false, NULL, 0};

    if (!lk->warn || !json_is_object(json_object_get(obj, "spec")) ||
        !(ns = namespace_of(lk, obj)))
        return;
    psa_policy_of(labels_of(ns), &p, NULL);
    w.lv = p.warn;
    w.ns = ns;
    w.ids_too = p.enforce.level != PSA_PRIVILEGED && nsrange_of(ns, NULL, NULL) == 0;
    if ((w.lv.level != PSA_PRIVILEGED || w.ids_too) && (w.said = json_object()))
        warn_templates(&w, json_object_get(obj, "spec"), 0);
    json_decref(w.said);
    json_decref(ns);
}

/* ---- a namespace made stricter ------------------------------------------ */

/* Upstream's cap on the existing pods a relabelling evaluates. */
#define MAX_PODS_TO_CHECK 3000

typedef struct ns_pods {
    const char *ns;
    psa_lv lv;
    json_t *by_reasons; /* reasons -> {"name": first pod by name, "count": n} */
    size_t total, checked;
} ns_pods;

/* A count filter over every pod: evaluates those of a->ns. */
static bool eval_existing(const json_t *pod, void *arg)
{
    ns_pods *a = arg;
    const json_t *md = json_object_get(pod, "metadata");
    const char *ns = meta_str(md, "namespace"), *name = meta_str(md, "name");
    char reasons[MSG_LEN];
    json_t *e;

    if (!ns || strcmp(ns, a->ns) != 0 || !name)
        return false;
    if (++a->total > MAX_PODS_TO_CHECK)
        return false;
    a->checked++;
    if (psa_check_ex(a->lv, md, json_object_get(pod, "spec"), false, reasons, sizeof(reasons)))
        return false;
    e = json_object_get(a->by_reasons, reasons);
    if (!e) {
        json_object_set_new(a->by_reasons, reasons,
                            json_pack("{s:s, s:i}", "name", name, "count", 1));
        return false;
    }
    json_object_set_new(e, "count",
                        json_integer(json_integer_value(json_object_get(e, "count")) + 1));
    if (strcmp(name, meta_str(e, "name")) < 0)
        json_object_set_new(e, "name", json_string(name));
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* kube's warnings when an update makes a namespace's enforce level
 * stricter: which existing pods would not be admitted now. */
static void warn_existing_pods(const api_lookup *lk, const json_t *obj, const char *name)
{
    json_t *old = lk->get(lk->ctx, &api_namespace, "", name);
    psa_policy was, now;
    ns_pods a = {name, {0, 0}, NULL, 0, 0};
    size_t n = 0, i = 0;
    const char *reasons;
    json_t *e;
    char **lines, text[MSG_LEN + 300], lvt[64];

    if (!old)
        return;
    psa_policy_of(labels_of(old), &was, NULL);
    json_decref(old);
    psa_policy_of(labels_of(obj), &now, NULL);
    if (same_lv(now.enforce, was.enforce) || now.enforce.level == PSA_PRIVILEGED ||
        (now.enforce.minor == was.enforce.minor && now.enforce.level <= was.enforce.level))
        return;
    a.lv = now.enforce;
    if (!(a.by_reasons = json_object()))
        return;
    lk->count(lk->ctx, &api_pod, eval_existing, &a);
    psa_lv_text(now.enforce, lvt, sizeof(lvt));
    if (a.checked < a.total) {
        snprintf(text, sizeof(text), "new PodSecurity enforce level only checked against the "
                 "first %zu of %zu existing pods", a.checked, a.total);
        warn(lk, text);
    }
    n = json_object_size(a.by_reasons);
    if (n) {
        snprintf(text, sizeof(text), "existing pods in namespace \"%s\" violate the new "
                 "PodSecurity enforce level \"%s\"", name, lvt);
        warn(lk, text);
    }
    lines = n ? calloc(n, sizeof(*lines)) : NULL;
    json_object_foreach(a.by_reasons, reasons, e) {
        json_int_t count = json_integer_value(json_object_get(e, "count"));
        if (!lines)
            break;
        if (count == 1)
            snprintf(text, sizeof(text), "%s: %s", meta_str(e, "name"), reasons);
        else if (count == 2)
            snprintf(text, sizeof(text), "%s (and 1 other pod): %s", meta_str(e, "name"),
                     reasons);
        else
            snprintf(text, sizeof(text), "%s (and %lld other pods): %s", meta_str(e, "name"),
                     (long long)count - 1, reasons);
        lines[i++] = strdup(text);
    }
    if (lines) {
        qsort(lines, i, sizeof(*lines), cmp_str);
        for (size_t j = 0; j < i; j++) {
            if (lines[j])
                warn(lk, lines[j]);
            free(lines[j]);
        }
        free(lines);
    }
    json_decref(a.by_reasons);
}

/* ---- namespaces ---------------------------------------------------------- */

static bool psa_labels_equal(const json_t *a, const json_t *b)
{
    static const char *const keys[] = {PSA_LABEL_ENFORCE, PSA_LABEL_ENFORCE_VERSION,
                                       PSA_LABEL_WARN,    PSA_LABEL_WARN_VERSION,
                                       PSA_LABEL_AUDIT,   PSA_LABEL_AUDIT_VERSION};
    for (size_t i = 0; i < 6; i++) {
        const json_t *x = json_object_get(a, keys[i]), *y = json_object_get(b, keys[i]);
        if (!x != !y || (x && !json_equal(x, y)))
            return false;
    }
    return true;
}

int psa_namespace_validate(const json_t *obj, const json_t *old, ty_error *err)
{
    ty_error labels;
    int bad;

    ty_error_init(&labels);
    bad = psa_policy_of(labels_of(obj), &(psa_policy){0}, &labels);
    /* A label that was bad already may stay (upstream's rule): the update is
     * about something else. */
    if (bad && old && psa_labels_equal(labels_of(obj), labels_of(old)))
        bad = 0;
    if (bad) {
        size_t i;
        json_t *c;
        json_array_foreach(labels.causes, i, c)
            ty_error_add_cause(err, meta_str(c, "reason"), meta_str(c, "field"), "%s",
                               meta_str(c, "message"));
    }
    ty_error_clear(&labels);
    if (old)
        bad += nsrange_check_update(obj, old, err);
    return bad;
}

/* ---- the entry points ---------------------------------------------------- */

int psa_admit_mutate(const api_lookup *lk, api_admit_op op, const api_resource *res,
                     json_t *obj, ty_error *err)
{
    json_t *ns;

    if (op != API_ADMIT_CREATE)
        return 0;
    if (res == &api_namespace)
        return nsrange_assign(lk, obj, err);
    if (res == &api_pod && (ns = namespace_of(lk, obj))) {
        nsrange_default_pod(ns, obj);
        json_decref(ns);
    }
    return 0;
}

int psa_admit(const api_lookup *lk, api_admit_op op, const api_resource *res,
              const json_t *obj, const char *name, ty_error *err)
{
    if (op == API_ADMIT_DELETE || !obj)
        return 0;
    if (res == &api_namespace) {
        if (op == API_ADMIT_UPDATE && lk->warn && name)
            warn_existing_pods(lk, obj, name);
        return 0;
    }
    if (res == &api_pod)
        return op == API_ADMIT_CREATE ? admit_pod(lk, obj, err) : 0;
    if (!res->builtin)
        admit_workload(lk, obj);
    return 0;
}
