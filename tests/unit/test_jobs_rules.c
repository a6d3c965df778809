/* test_jobs_rules.c - the job engine's decisions as tables: each framework's
 * success rule, exit-code classification, back-off arithmetic and condition
 * transitions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/jobs/jobs_int.h"

/* A job of kind k with the given replicas per type ("Master=1,Worker=2") and
 * spec extras (JSON members, may be NULL). */
static json_t *job_with(const kf_kind *k, const char *replicas, const char *extra)
{
    json_t *map = json_object(), *spec, *job;
    char buf[256], *save = NULL, *tok;

    snprintf(buf, sizeof(buf), "%s", replicas);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        *eq = '\0';
        json_object_set_new(map, tok, json_pack("{s:i}", "replicas", atoi(eq + 1)));
    }
    spec = extra ? json_loads(extra, 0, NULL) : json_object();
    assert_non_null(spec);
    json_object_set_new(spec, k->replica_field, map);
    job = json_pack("{s:{s:s, s:s}, s:o}", "metadata", "name", "j", "namespace", "default",
                    "spec", spec);
    return job;
}

typedef struct row {
    const char *types;     /* replicas per type */
    const char *extra;     /* spec members */
    const char *counts;    /* "Worker:succeeded:first" entries, ';'-separated */
    bool want;
} row;

/* Fills counts from "Type:succeeded:first_succeeded;...". */
static size_t parse_counts(const json_t *job, const kf_kind *k, const char *spec, jf_counts *c)
{
    char buf[256], *save = NULL, *tok;
    size_t n = 0;

    for (size_t i = 0; i < KF_MAX_REPLICA_TYPES && k->types[i].name; i++) {
        if (!kf_replica_spec(k, job, k->types[i].name))
            continue;
        c[n] = (jf_counts){.type = k->types[i].name,
                           .replicas = kf_replicas(k, job, k->types[i].name)};
        n++;
    }
    snprintf(buf, sizeof(buf), "%s", spec);
    for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        char type[32];
        int succ = 0, first = 0;
        assert_int_equal(sscanf(tok, "%31[^:]:%d:%d", type, &succ, &first), 3);
        for (size_t i = 0; i < n; i++) {
            if (strcmp(c[i].type, type) == 0) {
                c[i].succeeded = succ;
                c[i].first_succeeded = first;
            }
        }
    }
    return n;
}

static void check_table(const jobs_framework *fw, const row *rows, size_t nrows)
{
    for (size_t r = 0; r < nrows; r++) {
        json_t *job = job_with(fw->kind, rows[r].types, rows[r].extra);
        job_ctx c = {fw->kind, job, "j", "default"};
        jf_counts counts[KF_MAX_REPLICA_TYPES];
        size_t n = parse_counts(job, fw->kind, rows[r].counts, counts);
        bool got = fw->succeeded(&c, counts, n);
        if (got != rows[r].want)
            fail_msg("%s row %zu (%s | %s): got %d", fw->kind->kind, r, rows[r].types,
                     rows[r].counts, got);
        json_decref(job);
    }
}

#define TABLE(fw, rows) check_table(&(fw), rows, sizeof(rows) / sizeof(rows[0]))

static void test_success_rules(void **state)
{
    static const row tf[] = {
        {"Chief=1,Worker=2", NULL, "Chief:1:1", true},
        {"Chief=1,Worker=2", NULL, "Worker:2:1", false},       /* the chief decides */
        {"Master=1,Worker=2", NULL, "Master:1:1", true},
        {"PS=1,Worker=2", NULL, "Worker:1:1", true},           /* worker 0 is enough */
        {"PS=1,Worker=2", NULL, "Worker:1:0", false},          /* worker 1 is not */
        {"PS=1,Worker=2", NULL, "Worker:2:1", true},
        {"PS=1,Worker=2", "{\"successPolicy\":\"AllWorkers\"}", "Worker:1:1", false},
        {"PS=1,Worker=2", "{\"successPolicy\":\"AllWorkers\"}", "Worker:2:1", true},
        {"PS=1,Worker=2", NULL, "PS:1:1", false},
    };
    static const row pt[] = {
        {"Master=1,Worker=2", NULL, "Master:1:1", true},
        {"Master=1,Worker=2", NULL, "Worker:2:1", false},
        {"Worker=3", NULL, "Worker:2:1", false},
        {"Worker=3", NULL, "Worker:3:1", true},
        {"Worker=3", "{\"elasticPolicy\":{\"minReplicas\":1,\"maxReplicas\":3}}", "Worker:1:0",
         true},
        {"Worker=3", "{\"elasticPolicy\":{\"minReplicas\":1,\"maxReplicas\":3}}", "Worker:0:0",
         false},
    };
    static const row xgb[] = {
        {"Master=1,Worker=2", NULL, "Master:1:1", true},
        {"Master=1,Worker=2", NULL, "Worker:2:1", false},
    };
    static const row mpi[] = {
        {"Launcher=1,Worker=2", NULL, "Launcher:1:1", true},
        {"Launcher=1,Worker=2", NULL, "Worker:2:1", false},
    };
    static const row paddle[] = {
        {"Master=1,Worker=2", NULL, "Master:1:1", true},
        {"Master=1,Worker=2", NULL, "Worker:2:1", false},
        {"Worker=2", NULL, "Worker:1:1", false},
        {"Worker=2", NULL, "Worker:2:1", true},
    };
    static const row jax[] = {
        {"Worker=2", NULL, "Worker:1:1", false},
        {"Worker=2", NULL, "Worker:2:1", true},
    };
    static const row mx[] = {
        {"Scheduler=1,Server=1,Worker=2", NULL, "Scheduler:1:1", true},
        {"Scheduler=1,Server=1,Worker=2", NULL, "Worker:2:1;Server:1:1", false},
    };
    static const row ms[] = {
        {"Scheduler=1,Worker=2", NULL, "Worker:1:1", true},
        {"Scheduler=1,Worker=2", NULL, "Worker:1:0", false},
        {"Scheduler=1,Worker=2", NULL, "Scheduler:1:1", false},
        {"Scheduler=1,Worker=2", "{\"successPolicy\":\"AllWorkers\"}", "Worker:1:1", false},
        {"Scheduler=1,Worker=2", "{\"successPolicy\":\"AllWorkers\"}", "Worker:2:1", true},
    };

    (void)state;
    TABLE(jf_tensorflow, tf);
    TABLE(jf_pytorch, pt);
    TABLE(jf_xgboost, xgb);
    TABLE(jf_mpi, mpi);
    TABLE(jf_paddle, paddle);
    TABLE(jf_jax, jax);
    TABLE(jf_mxnet, mx);
    TABLE(jf_mindspore, ms);
}

static void test_every_kind_has_a_plugin(void **state)
{
    size_t n;
    const kf_kind *const *kinds = kf_kinds(&n);

    (void)state;
    assert_int_equal(n, 10);
    for (size_t i = 0; i < n; i++) {
        const jobs_framework *fw = jobs_framework_for(kinds[i]);
        assert_non_null(fw);
        assert_ptr_equal(fw->kind, kinds[i]);
        /* MPIJob v2beta1's env goes to the first container, from decorate */
        assert_non_null(fw->kind == &kf_mpijob_v2 ? (void *)fw->decorate : (void *)fw->env);
        assert_non_null(fw->succeeded);
    }
}

static void test_exit_codes(void **state)
{
    static const struct {
        const char *policy;
        int code;
        jobs_exit_class want;
    } rows[] = {
        {"ExitCode", 137, JOBS_EXIT_RETRY},   {"ExitCode", 143, JOBS_EXIT_RETRY},
        {"ExitCode", 128, JOBS_EXIT_RETRY},   {"ExitCode", 255, JOBS_EXIT_RETRY},
        {"ExitCode", 127, JOBS_EXIT_PERMANENT}, {"ExitCode", 1, JOBS_EXIT_PERMANENT},
        {"ExitCode", -1, JOBS_EXIT_PERMANENT},  {"Never", 137, JOBS_EXIT_PERMANENT},
        {"Never", 1, JOBS_EXIT_PERMANENT},    {"OnFailure", 1, JOBS_EXIT_RETRY},
        {"Always", 0, JOBS_EXIT_RETRY},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (jobs_classify_exit(rows[i].policy, rows[i].code) != rows[i].want)
            fail_msg("%s %d", rows[i].policy, rows[i].code);
}

static void test_backoff(void **state)
{
    (void)state;
    assert_false(jobs_backoff_exceeded(-1, 1000));
    assert_false(jobs_backoff_exceeded(0, 0));
    assert_true(jobs_backoff_exceeded(0, 1));
    assert_false(jobs_backoff_exceeded(3, 2));
    assert_true(jobs_backoff_exceeded(3, 3));
    assert_true(jobs_backoff_exceeded(3, 4));
}

static void test_pod_observations(void **state)
{
    json_t *pod = json_loads(
        "{\"status\":{\"phase\":\"Failed\",\"containerStatuses\":["
        "{\"name\":\"side\",\"restartCount\":2,\"state\":{\"terminated\":{\"exitCode\":0}}},"
        "{\"name\":\"pytorch\",\"restartCount\":3,\"state\":{\"waiting\":{}},"
        "\"lastState\":{\"terminated\":{\"exitCode\":137}}}]}}", 0, NULL);

    (void)state;
    assert_int_equal(jobs_pod_exit_code(pod, "pytorch"), 137);
    assert_int_equal(jobs_pod_exit_code(pod, "side"), 0);
    assert_int_equal(jobs_pod_exit_code(pod, "missing"), 0); /* first container */
    assert_int_equal(jobs_pod_restarts(pod), 5);
    assert_string_equal(jobs_pod_phase(pod), "Failed");
    json_decref(pod);
}

/* What a pass sees of a pod is its view (jobs_owned): everything the
 * engine reads of a pod must be in it, the spec must not. */
static void test_owned_view(void **state)
{
    json_t *pod = json_loads(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"j-worker-1\","
        "\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"7\","
        "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",\"annotations\":{\"a\":\"b\"},"
        "\"creationTimestamp\":\"2025-12-31T00:00:00Z\",\"generateName\":\"j-\","
        "\"labels\":{\"training.kubeflow.org/job-name\":\"j\","
        "\"training.kubeflow.org/replica-type\":\"worker\","
        "\"training.kubeflow.org/replica-index\":\"1\"},"
        "\"ownerReferences\":[{\"kind\":\"PyTorchJob\",\"name\":\"j\",\"controller\":true}]},"
        "\"spec\":{\"containers\":[{\"name\":\"pytorch\",\"image\":\"x\"}]},"
        "\"status\":{\"phase\":\"Failed\",\"reason\":\"Evicted\",\"podIP\":\"10.0.0.1\","
        "\"containerStatuses\":["
        "{\"name\":\"side\",\"restartCount\":2,\"image\":\"y\","
        "\"state\":{\"terminated\":{\"exitCode\":0}}},"
        "{\"name\":\"pytorch\",\"restartCount\":3,\"state\":{\"waiting\":{}},"
        "\"lastState\":{\"terminated\":{\"exitCode\":137}}}]}}",
        0, NULL);
    json_t *v, *meta;

    (void)state;
    assert_non_null(pod);
    v = jobs_owned.make(pod);
    assert_non_null(v);
    assert_int_equal(jobs_pod_exit_code(v, "pytorch"), 137);
    assert_int_equal(jobs_pod_exit_code(v, "side"), 0);
    assert_int_equal(jobs_pod_restarts(v), 5);
    assert_string_equal(jobs_pod_phase(v), "Failed");
    assert_true(jobs_is_terminating(v));
    meta = json_object_get(v, "metadata");
    for (const char *const *k = (const char *const[]){"name", "namespace", "uid", "labels",
                                                       "annotations", "creationTimestamp",
                                                       NULL};
         *k; k++)
        assert_true(json_equal(json_object_get(meta, *k),
                               json_object_get(json_object_get(pod, "metadata"), *k)));
    /* Not read by the engine, not kept. */
    assert_null(json_object_get(v, "spec"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(v, "status"), "reason")),
                        "Evicted");
    assert_null(json_object_get(meta, "generateName"));
    assert_null(json_object_get(meta, "ownerReferences"));
    assert_null(json_object_get(json_object_get(v, "status"), "podIP"));
    /* The members the view says it reads are all it reads: made from them
     * alone (what the store parses of a pod whose tree was dropped), it is
     * the same view. */
    json_t *only = json_object(), *again;
    for (const char *const *n = jobs_owned.members; *n; n++) {
        const char *dot = strchr(*n, '.');
        char top[64];
        json_t *to;
        assert_non_null(dot); /* the view asks for members of members */
        snprintf(top, sizeof(top), "%.*s", (int)(dot - *n), *n);
        if (!(to = json_object_get(only, top)))
            json_object_set_new(only, top, to = json_object());
        if (json_object_get(json_object_get(pod, top), dot + 1))
            json_object_set(to, dot + 1, json_object_get(json_object_get(pod, top), dot + 1));
    }
    again = jobs_owned.make(only);
    assert_true(json_equal(again, v));
    json_decref(again);
    json_decref(only);
    json_decref(v);
    json_decref(pod);
}

static const json_t *cond(const json_t *status, const char *type)
{
    size_t i;
    json_t *c;

    json_array_foreach(json_object_get(status, "conditions"), i, c)
        if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
            return c;
    return NULL;
}

static const char *field(const json_t *status, const char *type, const char *key)
{
    return json_string_value(json_object_get(cond(status, type), key));
}

static const char *last_type(const json_t *status)
{
    const json_t *conds = json_object_get(status, "conditions");
    return json_string_value(
        json_object_get(json_array_get(conds, json_array_size(conds) - 1), "type"));
}

static void test_conditions(void **state)
{
    json_t *st = json_object();

    (void)state;
    assert_true(jobs_cond_set(st, "Created", "True", "PyTorchJobCreated", "c", "T1"));
    assert_false(jobs_cond_set(st, "Created", "True", "PyTorchJobCreated", "c", "T2"));
    assert_string_equal(field(st, "Created", "lastUpdateTime"), "T1");

    assert_true(jobs_cond_set(st, "Running", "True", "PyTorchJobRunning", "r", "T2"));
    assert_string_equal(last_type(st), "Running");
    /* Restarting turns Running False and becomes the state. */
    assert_true(jobs_cond_set(st, "Restarting", "True", "PyTorchJobRestarting", "x", "T3"));
    assert_string_equal(field(st, "Running", "status"), "False");
    assert_string_equal(field(st, "Running", "lastTransitionTime"), "T3");
    assert_string_equal(last_type(st), "Restarting");
    /* And back: only one of the two is ever True. */
    assert_true(jobs_cond_set(st, "Running", "True", "PyTorchJobRunning", "r", "T4"));
    assert_string_equal(field(st, "Restarting", "status"), "False");
    assert_string_equal(field(st, "Running", "status"), "True");
    assert_string_equal(last_type(st), "Running");
    assert_int_equal(json_array_size(json_object_get(st, "conditions")), 3);
    /* Same status, new message: update time moves, transition time stays. */
    assert_true(jobs_cond_set(st, "Running", "True", "PyTorchJobRunning", "r2", "T5"));
    assert_string_equal(field(st, "Running", "lastUpdateTime"), "T5");
    assert_string_equal(field(st, "Running", "lastTransitionTime"), "T4");
    /* Failed ends Running. */
    assert_true(jobs_cond_set(st, "Failed", "True", "PyTorchJobFailed", "f", "T6"));
    assert_string_equal(field(st, "Running", "status"), "False");
    assert_true(jobs_finished(st));
    assert_string_equal(last_type(st), "Failed");
    json_decref(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_success_rules), cmocka_unit_test(test_every_kind_has_a_plugin),
        cmocka_unit_test(test_exit_codes),    cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_pod_observations), cmocka_unit_test(test_owned_view),
        cmocka_unit_test(test_conditions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
