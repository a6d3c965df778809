/* test_trainer_progress.c - the pod side of a TrainJob's progress endpoint
 * (controller/trainer_progress.h) against the fake client: the token
 * Secret made once and owned by its job, never a user's Secret taken over,
 * an earlier job's replaced, and the volume, mounts and variables every
 * container gets. */
#include "ctl_fixture.h"

#include "controller/trainer_progress.h"

#define SECRET "train-progress-token"
#define JOB_YAML                                                                             \
    "apiVersion: trainer.kubeflow.org/v1alpha1\n"                                            \
    "kind: TrainJob\n"                                                                       \
    "metadata: {name: train, namespace: team}\n"                                             \
    "spec: {runtimeRef: {name: torch-distributed}}\n"

static const trainer_progress_cfg tls_cfg = {
    .server_url = "https://127.0.0.1:6443",
    .ca_pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
};
static const trainer_progress_cfg plain_cfg = {.server_url = "http://127.0.0.1:8080"};

static json_t *job_of(ty_kc *c)
{
    json_t *j = ctl_get_in(c, "trainjobs.trainer.kubeflow.org", "team", "train");
    assert_non_null(j);
    return j;
}

static json_t *secret_of(ty_kc *c)
{
    return ctl_get_in(c, "secrets", "team", SECRET);
}

static void test_secret_made_once(void **state)
{
    ty_kc *c = kc_fake_new();
    const char *uid = ctl_put_yaml(c, JOB_YAML);
    char juid[64];
    json_t *job, *s, *again;
    const json_t *ref;
    const char *tok;
    ty_error err;
    (void)state;

    snprintf(juid, sizeof(juid), "%s", uid);
    ty_error_init(&err);
    job = job_of(c);
    assert_int_equal(trainer_progress_ensure_secret(c, &tls_cfg, job, &err), 0);
    s = secret_of(c);
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(ctl_at(s, "metadata"), "labels"),
                            "trainer.kubeflow.org/trainjob-name")),
                        "train");
    ref = json_array_get(ctl_at(s, "metadata.ownerReferences"), 0);
    assert_string_equal(json_string_value(json_object_get(ref, "kind")), "TrainJob");
    assert_string_equal(json_string_value(json_object_get(ref, "uid")), juid);
    assert_true(json_is_true(json_object_get(ref, "controller")));
    tok = ctl_str(s, "data.token");
    assert_non_null(tok);
    /* 32 random bytes as 64 hex digits, base64 of which is 88 characters */
    assert_int_equal(strlen(tok), 88);
    assert_non_null(json_object_get(ctl_at(s, "data"), "ca.crt"));

    /* a second pass writes nothing and keeps the token */
    kc_fake_clear_actions(c);
    assert_int_equal(trainer_progress_ensure_secret(c, &tls_cfg, job, &err), 0);
    assert_int_equal(kc_fake_count(c, NULL, NULL), 0);
    again = secret_of(c);
    assert_string_equal(ctl_str(again, "data.token"), tok);

    /* the server's CA changed (or TLS went): ca.crt follows, token kept */
    assert_int_equal(trainer_progress_ensure_secret(c, &plain_cfg, job, &err), 0);
    json_decref(again);
    again = secret_of(c);
    assert_null(json_object_get(ctl_at(again, "data"), "ca.crt"));
    assert_string_equal(ctl_str(again, "data.token"), tok);

    /* two jobs, two tokens */
    {
        json_t *other;
        ctl_put_yaml(c, "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
                        "metadata: {name: other, namespace: team}\n"
                        "spec: {runtimeRef: {name: torch-distributed}}\n");
        other = ctl_get_in(c, "trainjobs.trainer.kubeflow.org", "team", "other");
        assert_int_equal(trainer_progress_ensure_secret(c, &tls_cfg, other, &err), 0);
        json_decref(other);
        other = ctl_get_in(c, "secrets", "team", "other-progress-token");
        assert_non_null(other);
        assert_string_not_equal(ctl_str(other, "data.token"), tok);
        json_decref(other);
    }
    json_decref(again);
    json_decref(s);
    json_decref(job);
    kc_free(c);
}

/* Derived tokens (operator mode): the Secret holds token_for's token, and
 * one that holds another (a planted value, an older key) is rewritten. */
/* base64 of a text (caller frees). */
static char *ctl_b64(const char *in)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *s = (const unsigned char *)in;
    size_t n = strlen(in), i, o = 0;
    char *out = malloc((n + 2) / 3 * 4 + 1);

    for (i = 0; i + 2 < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
        out[o++] = tab[v >> 18 & 63], out[o++] = tab[v >> 12 & 63];
        out[o++] = tab[v >> 6 & 63], out[o++] = tab[v & 63];
    }
    if (i < n) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0);
        out[o++] = tab[v >> 18 & 63], out[o++] = tab[v >> 12 & 63];
        out[o++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
    return out;
}

static int derive_calls;
static char derive_key = 'a';
static int derive(const char *ns, const char *name, const char *uid, char *out, size_t len)
{
    derive_calls++;
    snprintf(out, len, "%c-%s-%s-%s", derive_key, ns, name, uid);
    return 0;
}

static void test_derived_token(void **state)
{
    ty_kc *c = kc_fake_new();
    const char *uid = ctl_put_yaml(c, JOB_YAML);
    trainer_progress_cfg cfg = tls_cfg;
    char want[128], *b64;
    json_t *job, *s;
    ty_error err;
    (void)state;

    cfg.token_for = derive;
    snprintf(want, sizeof(want), "a-team-train-%s", uid);
    ty_error_init(&err);
    job = job_of(c);
    assert_int_equal(trainer_progress_ensure_secret(c, &cfg, job, &err), 0);
    s = secret_of(c);
    b64 = ctl_b64(want);
    assert_string_equal(ctl_str(s, "data.token"), b64);
    free(b64);
    json_decref(s);

    /* the same key: nothing written; a new key: the token follows */
    kc_fake_clear_actions(c);
    assert_int_equal(trainer_progress_ensure_secret(c, &cfg, job, &err), 0);
    assert_int_equal(kc_fake_count(c, NULL, NULL), 0);
    derive_key = 'b';
    assert_int_equal(trainer_progress_ensure_secret(c, &cfg, job, &err), 0);
    s = secret_of(c);
    snprintf(want, sizeof(want), "b-team-train-%s", uid);
    b64 = ctl_b64(want);
    assert_string_equal(ctl_str(s, "data.token"), b64);
    free(b64);
    json_decref(s);
    derive_key = 'a';
    json_decref(job);
    kc_free(c);
}

/* A Secret of the name that the job does not control is a user's: never
 * taken over, never changed. */
static void test_user_secret_not_taken(void **state)
{
    ty_kc *c = kc_fake_new();
    json_t *job, *s;
    ty_error err;
    (void)state;

    ctl_put_yaml(c, JOB_YAML);
    ctl_put_yaml(c, "apiVersion: v1\nkind: Secret\nmetadata: {name: " SECRET
                    ", namespace: team}\ndata: {token: bWluZQ==}\n");
    ty_error_init(&err);
    job = job_of(c);
    kc_fake_clear_actions(c);
    assert_int_equal(trainer_progress_ensure_secret(c, &tls_cfg, job, &err), -1);
    assert_int_equal(err.code, TY_EEXISTS);
    assert_non_null(strstr(err.text, "not controlled by TrainJob"));
    assert_int_equal(kc_fake_count(c, NULL, NULL), 0);
    s = secret_of(c);
    assert_string_equal(ctl_str(s, "data.token"), "bWluZQ==");
    ty_error_clear(&err);
    json_decref(s);
    json_decref(job);
    kc_free(c);
}

/* The Secret of an earlier TrainJob of the same name (deleted, its Secret
 * not yet collected) is replaced by one the new job controls. */
static void test_earlier_jobs_secret_replaced(void **state)
{
    ty_kc *c = kc_fake_new();
    json_t *job, *s;
    const json_t *ref;
    char juid[64];
    ty_error err;
    (void)state;

    snprintf(juid, sizeof(juid), "%s", ctl_put_yaml(c, JOB_YAML));
    ctl_put_yaml(c, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " SECRET "\n"
                    "  namespace: team\n  ownerReferences:\n"
                    "  - {apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, "
                    "name: train, uid: old-uid, controller: true}\n"
                    "data: {token: b2xk}\n");
    ty_error_init(&err);
    job = job_of(c);
    assert_int_equal(trainer_progress_ensure_secret(c, &plain_cfg, job, &err), 0);
    s = secret_of(c);
    ref = json_array_get(ctl_at(s, "metadata.ownerReferences"), 0);
    assert_string_equal(json_string_value(json_object_get(ref, "uid")), juid);
    assert_string_not_equal(ctl_str(s, "data.token"), "b2xk");
    json_decref(s);
    json_decref(job);
    kc_free(c);
}

static const json_t *find(const json_t *list, const char *key, const char *value)
{
    const json_t *e;
    size_t i;

    json_array_foreach(list, i, e)
        if (!strcmp(json_string_value(json_object_get(e, key)) ?: "", value))
            return e;
    return NULL;
}

static size_t count(const json_t *list, const char *key, const char *value)
{
    const json_t *e;
    size_t i, n = 0;

    json_array_foreach(list, i, e)
        n += !strcmp(json_string_value(json_object_get(e, key)) ?: "", value);
    return n;
}

static void check_container(const json_t *ctr, bool tls)
{
    const json_t *env = json_object_get(ctr, "env"), *m;

    m = find(json_object_get(ctr, "volumeMounts"), "name", TRAINER_PROGRESS_VOLUME);
    assert_non_null(m);
    assert_string_equal(json_string_value(json_object_get(m, "mountPath")),
                        "/var/run/secrets/trainer.kubeflow.org");
    assert_true(json_is_true(json_object_get(m, "readOnly")));
    assert_int_equal(count(json_object_get(ctr, "volumeMounts"), "name",
                           TRAINER_PROGRESS_VOLUME), 1);
    assert_string_equal(json_string_value(json_object_get(
                            find(env, "name", "KUBEFLOW_TRAINER_SERVER_URL"), "value")),
                        tls ? "https://127.0.0.1:6443/apis/trainer.kubeflow.org/v1alpha1/"
                              "namespaces/team/trainjobs/train/status"
                            : "http://127.0.0.1:8080/apis/trainer.kubeflow.org/v1alpha1/"
                              "namespaces/team/trainjobs/train/status");
    assert_int_equal(count(env, "name", "KUBEFLOW_TRAINER_SERVER_URL"), 1);
    assert_string_equal(json_string_value(json_object_get(
                            find(env, "name", "KUBEFLOW_TRAINER_SERVER_TOKEN"), "value")),
                        "/var/run/secrets/trainer.kubeflow.org/token");
    if (tls)
        assert_string_equal(json_string_value(json_object_get(
                                find(env, "name", "KUBEFLOW_TRAINER_SERVER_CA_CERT"), "value")),
                            "/var/run/secrets/trainer.kubeflow.org/ca.crt");
    else
        assert_null(find(env, "name", "KUBEFLOW_TRAINER_SERVER_CA_CERT"));
    /* what the template had stays */
    assert_non_null(find(env, "name", "KEEP"));
}

static void test_inject(void **state)
{
    ty_kc *c = kc_fake_new();
    json_t *job, *tpl;
    const json_t *spec, *vol;
    ty_error err;
    (void)state;

    ctl_put_yaml(c, JOB_YAML);
    job = job_of(c);
    tpl = json_pack("{s:{s:{s:s}}, s:{s:[{s:s, s:[{s:s,s:s},{s:s,s:s}]}, "
                    "{s:s, s:[{s:s,s:s}], s:[{s:s,s:s}]}], s:[{s:s, s:[{s:s,s:s}]}], "
                    "s:[{s:s, s:{}}]}}",
                    "metadata", "labels", "a", "b", "spec", "containers", "name", "node", "env",
                    "name", "KEEP", "value", "1", "name", "KUBEFLOW_TRAINER_SERVER_URL", "value",
                    "http://elsewhere", "name", "sidecar", "env", "name", "KEEP", "value", "2",
                    "volumeMounts", "name", "data", "mountPath", "/data", "initContainers",
                    "name", "dataset-initializer", "env", "name", "KEEP", "value", "3",
                    "volumes", "name", "data", "emptyDir");
    ty_error_init(&err);
    assert_int_equal(trainer_progress_prepare(c, &tls_cfg, job, tpl, &err), 0);
    /* twice: the same result (a pass runs again on the same template) */
    trainer_progress_inject(&tls_cfg, job, tpl);
    spec = json_object_get(tpl, "spec");
    assert_int_equal(count(json_object_get(spec, "volumes"), "name", TRAINER_PROGRESS_VOLUME),
                     1);
    vol = find(json_object_get(spec, "volumes"), "name", TRAINER_PROGRESS_VOLUME);
    assert_string_equal(ctl_str(vol, "secret.secretName"), SECRET);
    assert_int_equal(json_array_size(ctl_at(vol, "secret.items")), 2);
    assert_non_null(find(json_object_get(spec, "volumes"), "name", "data"));
    for (size_t i = 0; i < 2; i++)
        check_container(json_array_get(json_object_get(spec, "containers"), i), true);
    check_container(json_array_get(json_object_get(spec, "initContainers"), 0), true);
    assert_non_null(find(json_object_get(json_array_get(json_object_get(spec, "containers"), 1),
                                         "volumeMounts"), "name", "data"));

    /* plain HTTP: no CA path, no ca.crt item, the one set before removed */
    trainer_progress_inject(&plain_cfg, job, tpl);
    vol = find(json_object_get(spec, "volumes"), "name", TRAINER_PROGRESS_VOLUME);
    assert_int_equal(json_array_size(ctl_at(vol, "secret.items")), 1);
    check_container(json_array_get(json_object_get(spec, "containers"), 0), false);
    json_decref(tpl);
    json_decref(job);
    kc_free(c);
}

/* Without a server URL the endpoint is off: nothing made, nothing added. */
static void test_off(void **state)
{
    ty_kc *c = kc_fake_new();
    trainer_progress_cfg off = {0};
    json_t *job, *tpl = json_pack("{s:{s:[{s:s}]}}", "spec", "containers", "name", "node");
    json_t *before = json_deep_copy(tpl);
    ty_error err;
    (void)state;

    ctl_put_yaml(c, JOB_YAML);
    job = job_of(c);
    kc_fake_clear_actions(c);
    ty_error_init(&err);
    assert_int_equal(trainer_progress_prepare(c, NULL, job, tpl, &err), 0);
    assert_int_equal(trainer_progress_prepare(c, &off, job, tpl, &err), 0);
    assert_true(json_equal(tpl, before));
    assert_int_equal(kc_fake_count(c, NULL, NULL), 0);
    json_decref(before);
    json_decref(tpl);
    json_decref(job);
    kc_free(c);
}

static void test_pod_url(void **state)
{
    char buf[128];
    (void)state;

    assert_int_equal(trainer_progress_pod_url("https://127.0.0.1:6443", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "https://127.0.0.1:6443");
    assert_int_equal(trainer_progress_pod_url("https://0.0.0.0:6443", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "https://127.0.0.1:6443");
    assert_int_equal(trainer_progress_pod_url("http://:::8080", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "http://[::1]:8080");
    assert_int_equal(trainer_progress_pod_url("https://[::]:8080", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "https://[::1]:8080");
    assert_int_equal(trainer_progress_pod_url("https://fd00::5:443", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "https://[fd00::5]:443");
    assert_int_equal(trainer_progress_pod_url("https://10.1.2.3:443", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "https://10.1.2.3:443");
    assert_int_equal(trainer_progress_pod_url("ftp://x:1", buf, sizeof(buf)), -1);
    assert_int_equal(trainer_progress_pod_url("https://x", buf, sizeof(buf)), -1);
    assert_int_equal(trainer_progress_pod_url("https://x:", buf, sizeof(buf)), -1);
    assert_int_equal(trainer_progress_pod_url("https://127.0.0.1:6443", buf, 10), -1);
    assert_int_equal(trainer_progress_pod_url(NULL, buf, sizeof(buf)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_secret_made_once),
        cmocka_unit_test(test_user_secret_not_taken),
        cmocka_unit_test(test_derived_token),
        cmocka_unit_test(test_earlier_jobs_secret_replaced),
        cmocka_unit_test(test_inject),
        cmocka_unit_test(test_off),
        cmocka_unit_test(test_pod_url),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
