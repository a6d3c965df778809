/* test_runtime_identity.c - pods run as their users: the uid, groups,
 * capabilities, no_new_privs and environment a container really gets, the
 * files it can and cannot reach, and the refusal of runAsNonRoot with uid 0,
 * against a real store, the real agent and the real supervisor (as root, as
 * the server runs). */
#include "test_runtime_fixture.h"

#include <sys/stat.h>

#include "runtime/local/rt_ident.h"

#define MARKER "TY_IDENTITY_TEST_MARKER"

static bool root(void)
{
    if (geteuid() == 0)
        return true;
    fprintf(stderr, "(not root: pods keep the test's uid; identity not checked)\n");
    return false;
}

/* The pod's log once it has ended with want (caller frees). */
static char *run_to_end(fixture *f, const char *name, const char *ct, const char *want)
{
    json_decref(wait_phase(f, name, want, 20000));
    return read_log(f, name, ct, "");
}

/* The value of "key=value" on a line of log (without the timestamp), into
 * buf; "" when absent. */
static const char *field(const char *log, const char *key, char *buf, size_t len)
{
    char pat[128];
    const char *p;

    snprintf(pat, sizeof(pat), " %s=", key);
    buf[0] = '\0';
    if ((p = strstr(log, pat))) {
        p += strlen(pat);
        snprintf(buf, len, "%.*s", (int)strcspn(p, "\n"), p);
    }
    return buf;
}

static void test_runs_as_run_as_user(void **state)
{
    fixture *f = *state;
    char *log, v[256];

    if (!root())
        skip();
    make_pod(f, "u12345",
             "{`restartPolicy`:`Never`,`securityContext`:{`runAsUser`:12345,`runAsGroup`:2000,"
             "`fsGroup`:3000,`supplementalGroups`:[4000]},`containers`:[{`name`:`c`,`image`:`x`,"
             "`command`:[`sh`,`-c`,`echo uid=$(id -u) gid=$(id -g); echo groups=$(id -G); "
             "grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status | "
             "tr -d '\\t' | sed 's/:/=/'; echo cwd=$(pwd) home=$HOME; "
             "echo named=$(id -un):$(id -gn); echo pwhome=$(getent passwd 12345 | cut -d: -f6); "
             "echo rootline=$(grep -c '^root:' /etc/passwd)`]}]}");
    log = run_to_end(f, "u12345", "c", "Succeeded");
    /* the pod's users have names (ssh, getpass and Open MPI look them up),
     * home /root (the pod's own), the host's entries still there */
    assert_string_equal(field(log, "named", v, sizeof(v)), "u12345:g2000");
    assert_string_equal(field(log, "pwhome", v, sizeof(v)), "/root");
    assert_string_equal(field(log, "rootline", v, sizeof(v)), "1");
    assert_string_equal(field(log, "uid", v, sizeof(v)), "12345 gid=2000");
    assert_string_equal(field(log, "groups", v, sizeof(v)), "2000 3000 4000");
    assert_string_equal(field(log, "CapEff", v, sizeof(v)), "0000000000000000");
    assert_string_equal(field(log, "CapPrm", v, sizeof(v)), "0000000000000000");
    assert_string_equal(field(log, "CapBnd", v, sizeof(v)), "0000000000000000");
    assert_string_equal(field(log, "CapAmb", v, sizeof(v)), "0000000000000000");
    assert_string_equal(field(log, "NoNewPrivs", v, sizeof(v)), "1");
    assert_string_equal(field(log, "cwd", v, sizeof(v)), "/ home=/tmp");
    free(log);
}

static void test_container_overrides_pod(void **state)
{
    fixture *f = *state;
    char *log, v[64];

    if (!root())
        skip();
    make_pod(f, "override",
             "{`restartPolicy`:`Never`,`securityContext`:{`runAsUser`:1000},`containers`:["
             "{`name`:`c`,`image`:`x`,`securityContext`:{`runAsUser`:1001},"
             "`command`:[`sh`,`-c`,`echo ids=$(id -u):$(id -g)`]}]}");
    log = run_to_end(f, "override", "c", "Succeeded");
    /* Without runAsGroup the gid is the uid's value. */
    assert_string_equal(field(log, "ids", v, sizeof(v)), "1001:1001");
    free(log);
}

static void test_no_run_as_user_is_nobody(void **state)
{
    fixture *f = *state;
    char *log, v[64];

    if (!root())
        skip();
    make_pod(f, "anon", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                        "`command`:[`sh`,`-c`,`echo ids=$(id -u):$(id -g):$(id -G)`]}]}");
    log = run_to_end(f, "anon", "c", "Succeeded");
    assert_string_equal(field(log, "ids", v, sizeof(v)), "65534:65534:65534");
    free(log);
}

/* The environment is the pod's: nothing of the process that started the
 * server (here: this test) reaches it. /usr/bin/env runs directly, so no
 * shell adds its own. */
static void test_environment_is_the_pods(void **state)
{
    fixture *f = *state;
    const char *allowed[] = {"PATH", "HOME", "HOSTNAME", "CUDA_VISIBLE_DEVICES",
                             "NVIDIA_VISIBLE_DEVICES", "TY_POD_IP", "LD_PRELOAD", "MINE"};
    char *log, *line, *save = NULL, v[256];

    /* The agent (and so each supervisor) is this process's child: a
     * variable set here is one the server would have. */
    setenv(MARKER, "leaked", 1);
    rt_local_stop(f->rt);
    f->rt = start_agent(f);
    make_pod(f, "env", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                       "`command`:[`/usr/bin/env`],`env`:[{`name`:`MINE`,`value`:`yes`}]}]}");
    log = run_to_end(f, "env", "c", "Succeeded");
    unsetenv(MARKER);
    assert_null(strstr(log, MARKER));
    assert_string_equal(field(log, "MINE", v, sizeof(v)), "yes");
    assert_string_equal(field(log, "PATH", v, sizeof(v)),
                        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    assert_string_equal(field(log, "HOSTNAME", v, sizeof(v)), "env");
    for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *kv = strchr(line, ' ');
        bool ok = false;
        assert_non_null(kv);
        kv++;
        for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
            ok |= !strncmp(kv, allowed[i], strlen(allowed[i])) && kv[strlen(allowed[i])] == '=';
        if (!ok)
            fail_msg("unexpected variable in the pod's environment: %s", kv);
    }
    free(log);
}

/* A Secret's files are the pod's uid's, group fsGroup, 0640 (0644 less its
 * "other" bits) or 0400 as asked, read-only; the directory 0750; /tmp and
 * /root are the pod's own. */
static void test_secret_files_and_private_tmp(void **state)
{
    fixture *f = *state;
    char *log, v[128], path[512], mark[64], spec[2048];
    json_t *pod;
    struct stat st;

    if (!root())
        skip();
    make_obj(f, "secrets", &api_secret, "default",
             "{`apiVersion`:`v1`,`kind`:`Secret`,`metadata`:{`name`:`tok`},"
             "`data`:{`token`:`czNjcmV0`}}");
    /* A name of this run's own: the host's /tmp is everyone's. */
    snprintf(mark, sizeof(mark), "ty-identity-mark-%d", (int)getpid());
    snprintf(spec, sizeof(spec),
             "{`restartPolicy`:`Never`,`securityContext`:{`runAsUser`:12345,`fsGroup`:3000},"
             "`containers`:[{`name`:`c`,`image`:`x`,`command`:[`sh`,`-c`,"
             "`echo a=$(stat -c '%%a:%%u:%%g' /s/token) b=$(stat -c '%%a' /p/token) "
             "d=$(stat -c '%%a:%%u:%%g' /s) t=$(cat /s/token); "
             "echo home=$(stat -c '%%a:%%u:%%g' /root); echo mine > /tmp/%s; "
             "touch /s/x 2>/dev/null && echo ro=no || echo ro=yes`],"
             "`volumeMounts`:[{`name`:`s`,`mountPath`:`/s`},{`name`:`p`,`mountPath`:`/p`}]}],"
             "`volumes`:[{`name`:`s`,`secret`:{`secretName`:`tok`}},"
             "{`name`:`p`,`secret`:{`secretName`:`tok`,`defaultMode`:256}}]}",
             mark);
    make_pod(f, "sec", spec);
    log = run_to_end(f, "sec", "c", "Succeeded");
    assert_string_equal(field(log, "a", v, sizeof(v)),
                        "640:12345:3000 b=400 d=750:12345:3000 t=s3cret");
    assert_string_equal(field(log, "home", v, sizeof(v)), "750:12345:3000");
    assert_string_equal(field(log, "ro", v, sizeof(v)), "yes");
    free(log);
    /* What it wrote to /tmp is in its own directory, not the host's /tmp. */
    pod = get_pod(f, "sec");
    snprintf(path, sizeof(path), "%s/pods/%s/tmp/%s", f->dir,
             json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid")), mark);
    json_decref(pod);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 12345);
    snprintf(path, sizeof(path), "/tmp/%s", mark);
    assert_int_not_equal(access(path, F_OK), 0);
}

/* Another tenant's pod reaches neither this pod's files (its directory, its
 * /tmp through /proc, its environment) nor the store: the data directory
 * is closed, even one an earlier version left open. */
static void test_closed_to_other_tenants(void **state)
{
    fixture *f = *state;
    char spec[4096], *log, v[256], store[128];
    const char *uid;
    json_t *pod;
    pid_t pid;
    struct stat st;

    if (!root())
        skip();
    assert_int_equal(chmod(f->dir, 0755), 0);
    rt_local_stop(f->rt);
    f->rt = start_agent(f);
    assert_int_equal(stat(f->dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    snprintf(store, sizeof(store), "%s/trainyard.db", f->dir);
    assert_int_equal(access(store, F_OK), 0);

    make_pod(f, "victim",
             "{`restartPolicy`:`Never`,`securityContext`:{`runAsUser`:1111},"
             "`containers`:[{`name`:`c`,`image`:`x`,`env`:[{`name`:`SECRET`,`value`:`x`}],"
             "`command`:[`sh`,`-c`,`echo private > /tmp/file; echo private > /e/file; "
             "echo ready; exec sleep 1000`],`volumeMounts`:[{`name`:`e`,`mountPath`:`/e`}]}],"
             "`volumes`:[{`name`:`e`,`emptyDir`:{}}]}");
    free(wait_log(f, "victim", "c", " ready\n", 20000));
    pod = wait_phase(f, "victim", "Running", 20000);
    uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
    pid = (pid_t)atoi(json_string_value(json_object_get(container_status(pod, 0), "containerID")) +
                      strlen("trainyard://"));
    /* Each attempt prints its name and "open" or "closed". */
    snprintf(spec, sizeof(spec),
             "{`restartPolicy`:`Never`,`securityContext`:{`runAsUser`:2222},"
             "`containers`:[{`name`:`c`,`image`:`x`,`command`:[`sh`,`-c`,"
             "`t() { if sh -c \\`$2\\` >/dev/null 2>&1; then echo $1=open; "
             "else echo $1=closed; fi; }; "
             "t store 'cat %s'; t datadir 'ls %s'; t poddir 'ls %s/pods/%s'; "
             "t volume 'cat %s/pods/%s/volumes/e/file'; t tmp 'cat /proc/%d/root/tmp/file'; "
             "t environ 'cat /proc/%d/environ'; t shadow 'cat /etc/shadow'; "
             "t own 'echo x > /tmp/y && cat /tmp/y'`]}]}",
             store, f->dir, f->dir, uid, f->dir, uid, (int)pid, (int)pid);
    json_decref(pod);
    make_pod(f, "intruder", spec);
    log = run_to_end(f, "intruder", "c", "Succeeded");
    assert_string_equal(field(log, "store", v, sizeof(v)), "closed");
    assert_string_equal(field(log, "datadir", v, sizeof(v)), "closed");
    assert_string_equal(field(log, "poddir", v, sizeof(v)), "closed");
    assert_string_equal(field(log, "volume", v, sizeof(v)), "closed");
    assert_string_equal(field(log, "tmp", v, sizeof(v)), "closed");
    assert_string_equal(field(log, "environ", v, sizeof(v)), "closed");
    assert_string_equal(field(log, "shadow", v, sizeof(v)), "closed");
    assert_string_equal(field(log, "own", v, sizeof(v)), "open"); /* the check itself works */
    free(log);
    delete_pod(f, "victim");
    assert_true(wait_gone(f, "victim", 20000));
}

/* runAsNonRoot with runAsUser 0 does not start: the container waits with
 * the kubelet's reason and message. */
static void test_run_as_non_root_refuses_root(void **state)
{
    fixture *f = *state;
    json_t *pod = NULL;
    const json_t *w = NULL;

    make_pod(f, "nonroot",
             "{`restartPolicy`:`Never`,`securityContext`:{`runAsNonRoot`:true},"
             "`containers`:[{`name`:`c`,`image`:`x`,`securityContext`:{`runAsUser`:0},"
             "`command`:[`true`]}]}");
    for (int64_t deadline = rt_deadline(0); ty_now_ms() < deadline && !w;) {
        usleep(50 * 1000);
        json_decref(pod);
        pod = get_pod(f, "nonroot");
        w = json_object_get(json_object_get(container_status(pod, 0), "state"), "waiting");
        if (w && strcmp(json_string_value(json_object_get(w, "reason")) ?: "",
                        "CreateContainerConfigError"))
            w = NULL;
    }
    assert_non_null(w);
    assert_non_null(strstr(
        json_string_value(json_object_get(w, "message")),
        "container's runAsUser breaks non-root policy (pod: \"nonroot_default("));
    assert_non_null(strstr(json_string_value(json_object_get(w, "message")), "container: c)"));
    assert_string_equal(phase_of(pod), "Pending");
    json_decref(pod);
}

/* uid 0 only when asked, and then without capabilities unless privileged. */
static void test_root_only_privileged_keeps_capabilities(void **state)
{
    fixture *f = *state;
    char *log, v[128];

    if (!root())
        skip();
#define SHOW_CAPS "`echo r=$(id -u) $(grep -E '^(CapEff|NoNewPrivs):' /proc/self/status | " \
                  "tr -d '\\t ' | tr '\\n' ' ')`"
    make_pod(f, "roots",
             "{`restartPolicy`:`Never`,`securityContext`:{`runAsUser`:0},`containers`:["
             "{`name`:`plain`,`image`:`x`,`command`:[`sh`,`-c`," SHOW_CAPS "]},"
             "{`name`:`priv`,`image`:`x`,`securityContext`:{`privileged`:true},"
             "`command`:[`sh`,`-c`," SHOW_CAPS "]},"
             "{`name`:`net`,`image`:`x`,"
             "`securityContext`:{`capabilities`:{`add`:[`NET_ADMIN`,`CAP_CHOWN`]}},"
             "`command`:[`sh`,`-c`,"
             "`echo r=$(grep -E '^CapEff:' /proc/self/status | tr -d '\\t ')`]}]}");
    json_decref(wait_phase(f, "roots", "Succeeded", 20000));
    log = read_log(f, "roots", "plain", "");
    assert_string_equal(field(log, "r", v, sizeof(v)), "0 CapEff:0000000000000000 NoNewPrivs:1");
    free(log);
    log = read_log(f, "roots", "priv", "");
    field(log, "r", v, sizeof(v));
    assert_null(strstr(v, "CapEff:0000000000000000"));
    assert_non_null(strstr(v, "NoNewPrivs:0"));
    free(log);
    log = read_log(f, "roots", "net", "");
    /* CAP_CHOWN (bit 0) and CAP_NET_ADMIN (bit 12). */
    assert_string_equal(field(log, "r", v, sizeof(v)), "CapEff:0000000000001001");
    free(log);
}

/* The identity rules on their own (no processes). */
static json_t *ident_of(const char *pod_text, ty_error *err)
{
    char buf[2048];
    json_t *pod, *user;

    snprintf(buf, sizeof(buf), "%s", pod_text);
    for (char *p = buf; *p; p++)
        if (*p == '`')
            *p = '"';
    pod = json_loads(buf, 0, NULL);
    assert_non_null(pod);
    user = rt_ident_json(pod, json_array_get(json_object_get(json_object_get(pod, "spec"),
                                                             "containers"),
                                             0),
                         err);
    json_decref(pod);
    return user;
}

static void expect_user(const char *pod_text, const char *want)
{
    ty_error err;
    json_t *user;
    char *got, w[256];

    snprintf(w, sizeof(w), "%s", want);
    for (char *p = w; *p; p++)
        if (*p == '`')
            *p = '"';
    ty_error_init(&err);
    user = ident_of(pod_text, &err);
    if (!user)
        fail_msg("%s: %s", pod_text, err.text);
    got = json_dumps(user, JSON_COMPACT | JSON_SORT_KEYS);
    if (strcmp(got, w))
        fail_msg("%s:\nwant %s\ngot  %s", pod_text, w, got);
    free(got);
    json_decref(user);
}

static void test_identity_rules(void **state)
{
    ty_error err;
    rt_ident id;
    uid_t uid;
    gid_t gid;
    bool fsg;
    json_t *pod;

    (void)state;
    expect_user("{`spec`:{`containers`:[{`name`:`c`}]}}",
                "{`caps`:[],`gid`:65534,`groups`:[],`noNewPrivs`:true,`uid`:65534}");
    expect_user("{`spec`:{`securityContext`:{`runAsUser`:5},`containers`:[{`name`:`c`}]}}",
                "{`caps`:[],`gid`:5,`groups`:[],`noNewPrivs`:true,`uid`:5}");
    expect_user("{`spec`:{`securityContext`:{`runAsUser`:5,`runAsGroup`:6,`fsGroup`:8,"
                "`supplementalGroups`:[7]},`containers`:[{`name`:`c`,`securityContext`:"
                "{`runAsGroup`:9,`allowPrivilegeEscalation`:true}}]}}",
                "{`caps`:[],`gid`:9,`groups`:[7,8],`noNewPrivs`:true,`uid`:5}");
    expect_user("{`spec`:{`containers`:[{`name`:`c`,`securityContext`:{`runAsUser`:0,"
                "`capabilities`:{`add`:[`NET_ADMIN`,`cap_kill`,`NOPE`]}}}]}}",
                "{`caps`:[5,12],`gid`:0,`groups`:[],`noNewPrivs`:true,`uid`:0}");
    expect_user("{`spec`:{`containers`:[{`name`:`c`,`securityContext`:{`runAsUser`:0,"
                "`allowPrivilegeEscalation`:true}}]}}",
                "{`caps`:[],`gid`:0,`groups`:[],`noNewPrivs`:false,`uid`:0}");
    /* A privileged non-root container still gains nothing. */
    expect_user("{`spec`:{`containers`:[{`name`:`c`,`securityContext`:{`runAsUser`:3,"
                "`privileged`:true}}]}}",
                "{`caps`:[],`gid`:3,`groups`:[],`noNewPrivs`:true,`uid`:3}");
    ty_error_init(&err);
    assert_null(ident_of("{`spec`:{`securityContext`:{`runAsUser`:-1},"
                         "`containers`:[{`name`:`c`}]}}", &err));
    assert_non_null(strstr(err.text, "securityContext.runAsUser: Invalid value"));
    ty_error_clear(&err);
    assert_null(ident_of("{`spec`:{`securityContext`:{`runAsUser`:4294967296},"
                         "`containers`:[{`name`:`c`}]}}", &err));
    ty_error_clear(&err);
    assert_null(ident_of("{`metadata`:{`name`:`p`,`namespace`:`ns`,`uid`:`u`},`spec`:"
                         "{`securityContext`:{`runAsNonRoot`:true,`runAsUser`:0},"
                         "`containers`:[{`name`:`c`}]}}", &err));
    assert_string_equal(err.text, "container's runAsUser breaks non-root policy "
                                  "(pod: \"p_ns(u)\", container: c)");
    ty_error_clear(&err);
    /* runAsNonRoot without a uid: nobody is not root. */
    expect_user("{`spec`:{`securityContext`:{`runAsNonRoot`:true},`containers`:[{`name`:`c`}]}}",
                "{`caps`:[],`gid`:65534,`groups`:[],`noNewPrivs`:true,`uid`:65534}");

    /* The owner of the pod's files: the first container's uid without a
     * pod-level one, fsGroup as the group. */
    pod = json_loads("{\"spec\":{\"securityContext\":{\"fsGroup\":9},\"containers\":"
                     "[{\"securityContext\":{\"runAsUser\":7}}]}}", 0, NULL);
    rt_ident_pod_owner(pod, &uid, &gid, &fsg);
    assert_int_equal(uid, 7);
    assert_int_equal(gid, 9);
    assert_true(fsg);
    json_decref(pod);

    /* A spec.json without a user (an earlier version's) runs as nobody. */
    rt_ident_from_json(NULL, &id);
    assert_int_equal(id.uid, 65534);
    assert_int_equal(id.gid, 65534);
    assert_true(id.no_new_privs);
    assert_int_equal(id.caps, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_rules),
        cmocka_unit_test_setup_teardown(test_runs_as_run_as_user, setup, teardown),
        cmocka_unit_test_setup_teardown(test_container_overrides_pod, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_run_as_user_is_nobody, setup, teardown),
        cmocka_unit_test_setup_teardown(test_environment_is_the_pods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_files_and_private_tmp, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_to_other_tenants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_as_non_root_refuses_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_root_only_privileged_keeps_capabilities, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
