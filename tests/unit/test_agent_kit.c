/* test_agent_kit.c - the node-agent kit against a real store: its watch
 * thread (queue, relist on open and on overflow), Node register-or-fix and
 * heartbeat and condition + taint, the status writer, and the agent loop
 * driving a fake backend through the backend interface (a gang started at
 * once, a deletion stopped with its grace period and released), which is
 * what a backend without an agent of its own (Slurm) gets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/finalizers.h"
#include "store_fixture.h"

#include "api/mpi_agent.h"
#include "base/timeutil.h"
#include "runtime/agent_kit.h"
#include "runtime/backend.h"
#include "store/store.h"
#include "kc_fixture.h"

#define DEADLINE_MS 30000

typedef struct fixture {
    char dir[64];
    ty_store *s;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));

    f->s = store_fixture_open(f->dir, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    store_fixture_close(f->dir, f->s);
    free(f);
    return 0;
}

static void put_pod(fixture *f, const char *name, const char *node, const char *gang)
{
    ty_error err;
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:[{s:s, s:s}], s:i}}", "apiVersion",
                            "v1", "kind", "Pod", "metadata", "name", name, "namespace",
                            "default", "spec", "containers", "name", "main", "image", "x",
                            "terminationGracePeriodSeconds", 7);
    ty_obj *o;

    if (node)
        json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string(node));
    if (gang)
        json_object_set_new(json_object_get(pod, "metadata"), "annotations",
                            json_pack("{s:s}", "scheduling.k8s.io/group-name", gang));
    ty_error_init(&err);
    o = kc_create(KC(f->s), "pods", "default", pod, &err);
    if (!o)
        fail_msg("create %s: %s", name, err.text);
    ty_obj_unref(o);
}

static json_t *get_pod(fixture *f, const char *name)
{
    ty_obj *o = kc_get(KC(f->s), "pods", "default", name, NULL);
    json_t *j;

    if (!o)
        return NULL;
    j = json_deep_copy(ty_obj_json(o));
    ty_obj_unref(o);
    return j;
}

static const char *str(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

/* ---- the watch ---- */

static void test_watch_relists_then_queues(void **state)
{
    fixture *f = *state;
    int fd = eventfd(0, EFD_CLOEXEC);
    const char *const only[] = {"pods", NULL};
    ty_error err;
    ak_watch *w;
    int64_t end = ty_now_ms() + DEADLINE_MS;
    bool relist = false, saw = false;

    ty_error_init(&err);
    w = ak_watch_start(KC(f->s), only, fd, 0, "test-watch", &err);
    assert_non_null(w);
    /* The first open asks for a listing. */
    while (!relist && ty_now_ms() < end) {
        size_t n;
        uint64_t c;
        assert_int_equal(read(fd, &c, sizeof(c)), sizeof(c)); /* blocks until woken */
        kc_event *q = ak_watch_take(w, &n, &relist);
        for (size_t i = 0; i < n; i++)
            kc_event_release(&q[i]);
        free(q);
    }
    assert_true(relist);
    put_pod(f, "p", NULL, NULL);
    while (!saw && ty_now_ms() < end) {
        size_t n;
        uint64_t c;
        assert_int_equal(read(fd, &c, sizeof(c)), sizeof(c));
        kc_event *q = ak_watch_take(w, &n, &relist);
        for (size_t i = 0; i < n; i++) {
            saw |= !strcmp(q[i].resource, "pods");
            kc_event_release(&q[i]);
        }
        free(q);
    }
    assert_true(saw);
    ak_watch_free(w);
    close(fd);
}

/* The watch is open when start returns: a change made at once is seen as an
 * event (a listing would not show a deletion), whichever thread gets to run
 * first. */
static void test_watch_open_when_start_returns(void **state)
{
    fixture *f = *state;
    int fd = eventfd(0, EFD_CLOEXEC);
    const char *const only[] = {"pods", NULL};
    ty_error err;
    ak_watch *w;
    int64_t end = ty_now_ms() + DEADLINE_MS;
    bool relist = false, saw = false;

    ty_error_init(&err);
    w = ak_watch_start(KC(f->s), only, fd, 0, "test-watch", &err);
    assert_non_null(w);
    put_pod(f, "at-once", NULL, NULL);
    while (!saw && ty_now_ms() < end) {
        size_t n;
        uint64_t c;
        bool again;
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        /* Bounded: a missed event would otherwise leave it waiting. */
        if (poll(&pfd, 1, (int)(end - ty_now_ms())) <= 0)
            break;
        assert_int_equal(read(fd, &c, sizeof(c)), sizeof(c));
        kc_event *q = ak_watch_take(w, &n, &again);
        relist |= again;
        for (size_t i = 0; i < n; i++) {
            const char *ns, *name;
            ty_obj_key(q[i].obj, &ns, &name);
            saw |= q[i].type == KC_ADDED && !strcmp(name, "at-once");
            kc_event_release(&q[i]);
        }
        free(q);
    }
    assert_true(saw);
    assert_true(relist);
    ak_watch_free(w);
    close(fd);
}

/* A queue that overflows drops events and asks for a listing instead: with
 * room for 2, five events wake the taker twice (the first queued, then the
 * drop's relist) and leave two queued. */
static void test_watch_overflow_asks_relist(void **state)
{
    fixture *f = *state;
    int fd = eventfd(0, EFD_CLOEXEC);
    const char *const only[] = {"pods", NULL};
    ty_error err;
    ak_watch *w;
    size_t n = 0;
    bool relist = false;
    uint64_t c, wakes = 0;
    kc_event *q;

    ty_error_init(&err);
    w = ak_watch_start(KC(f->s), only, fd, 2, "test-watch", &err);
    assert_non_null(w);
    /* The open's relist first. */
    while (!relist) {
        assert_int_equal(read(fd, &c, sizeof(c)), sizeof(c));
        free(ak_watch_take(w, &n, &relist));
        assert_int_equal(n, 0);
    }
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        put_pod(f, name, NULL, NULL);
    }
    while (wakes < 2) {
        assert_int_equal(read(fd, &c, sizeof(c)), sizeof(c));
        wakes += c;
    }
    q = ak_watch_take(w, &n, &relist);
    assert_int_equal(n, 2);
    assert_true(relist);
    for (size_t i = 0; i < n; i++)
        kc_event_release(&q[i]);
    free(q);
    ak_watch_free(w);
    close(fd);
}

/* ---- Nodes ---- */

static json_t *make_node(void *arg)
{
    const char *name = arg;
    char now[32];

    ty_time_now(now, sizeof(now));
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:[o], s:o}}", "apiVersion", "v1", "kind", "Node",
                     "metadata", "name", name, "status", "conditions",
                     ak_node_ready_condition("testing", now), "nodeInfo",
                     ak_node_info("test", "k", "os", "amd64"));
}

static int fix_node(json_t *obj, void *arg, ty_error *err)
{
    (void)arg, (void)err;
    json_object_set_new(json_object_get(obj, "metadata"), "labels",
                        json_pack("{s:s}", "fixed", "yes"));
    return 0;
}

static void test_node_ensure_heartbeat_condition(void **state)
{
    fixture *f = *state;
    ty_error err;
    bool created;
    static const ak_node_cond disk = {
        .type = "DiskPressure", .taint_key = "node.kubernetes.io/disk-pressure",
        .reason_on = "On", .message_on = "on", .reason_off = "Off", .message_off = "off"};
    ty_obj *o;
    const json_t *node, *taints;
    json_t *inv;

    ty_error_init(&err);
    assert_int_equal(ak_node_ensure(KC(f->s), "n1", fix_node, NULL, make_node, "n1", &created, &err), 0);
    assert_true(created);
    assert_int_equal(ak_node_ensure(KC(f->s), "n1", fix_node, NULL, make_node, "n1", &created, &err), 0);
    assert_false(created);
    assert_int_equal(ak_node_set_condition(KC(f->s), "n1", &disk, true, &err), 0);
    assert_int_equal(ak_node_heartbeat(KC(f->s), "n1", NULL, &err), 0);
    o = kc_get(KC(f->s), "nodes", "", "n1", &err);
    assert_non_null(o);
    node = ty_obj_json(o);
    assert_string_equal(str(json_object_get(json_object_get(node, "metadata"), "labels"), "fixed"),
                        "yes");
    assert_string_equal(
        str(json_object_get(json_object_get(node, "status"), "nodeInfo"), "containerRuntimeVersion"),
        "trainyard-test://0.1");
    taints = json_object_get(json_object_get(node, "spec"), "taints");
    assert_int_equal(json_array_size(taints), 1);
    assert_string_equal(str(json_array_get(taints, 0), "effect"), "NoSchedule");
    ty_obj_unref(o);
    inv = ak_node_inventory(KC(f->s), "n1");
    assert_non_null(inv);
    assert_int_equal(json_array_size(json_object_get(inv, "conditions")), 2);
    json_decref(inv);
    /* off: the taint goes, the condition stays False */
    assert_int_equal(ak_node_set_condition(KC(f->s), "n1", &disk, false, &err), 0);
    o = kc_get(KC(f->s), "nodes", "", "n1", &err);
    assert_null(json_object_get(json_object_get(ty_obj_json(o), "spec"), "taints"));
    ty_obj_unref(o);
    assert_null(ak_node_inventory(KC(f->s), "nope"));
}

/* ---- the status writer ---- */

static void test_report(void **state)
{
    fixture *f = *state;
    ty_error err;
    json_t *pod;
    const json_t *st, *cs;
    ak_container run = {.name = "main", .state = AK_RUNNING, .started_at = "2026-01-01T00:00:00Z"};
    ak_container end = {.name = "main", .state = AK_TERMINATED, .exit_code = 3,
                        .started_at = "2026-01-01T00:00:00Z",
                        .finished_at = "2026-01-01T00:01:00Z", .container_id = "test://1"};
    ak_pod_state s = {.phase = "Running", .host_ip = "10.0.0.1", .pod_ip = "10.1.0.1",
                      .containers = &run, .n = 1};

    ty_error_init(&err);
    put_pod(f, "r", "n1", NULL);
    pod = get_pod(f, "r");
    char uid[64];
    snprintf(uid, sizeof(uid), "%s", str(json_object_get(pod, "metadata"), "uid"));
    json_decref(pod);
    assert_int_equal(ak_pod_report(KC(f->s), "default", "r", "other-uid", &s, &err), -1);
    assert_int_equal(err.code, TY_ENOTFOUND);
    ty_error_clear(&err);
    assert_int_equal(ak_pod_report(KC(f->s), "default", "r", uid, &s, &err), 0);
    pod = get_pod(f, "r");
    st = json_object_get(pod, "status");
    assert_string_equal(str(st, "phase"), "Running");
    assert_string_equal(str(st, "podIP"), "10.1.0.1");
    cs = json_array_get(json_object_get(st, "containerStatuses"), 0);
    assert_true(json_is_true(json_object_get(cs, "ready")));
    json_decref(pod);

    s.phase = "Failed";
    s.containers = &end;
    assert_int_equal(ak_pod_report(KC(f->s), "default", "r", uid, &s, &err), 0);
    /* an end once reported stays */
    s.phase = "Running";
    s.containers = &run;
    assert_int_equal(ak_pod_report(KC(f->s), "default", "r", uid, &s, &err), 0);
    pod = get_pod(f, "r");
    st = json_object_get(pod, "status");
    assert_string_equal(str(st, "phase"), "Failed");
    cs = json_array_get(json_object_get(st, "containerStatuses"), 0);
    cs = json_object_get(json_object_get(cs, "state"), "terminated");
    assert_int_equal(json_integer_value(json_object_get(cs, "exitCode")), 3);
    assert_string_equal(str(cs, "reason"), "Error");
    json_decref(pod);
}

/* ---- the agent, over a fake backend ---- */

typedef struct fake {
    pthread_mutex_t mu;
    int starts;        /* pods_start calls */
    size_t last_n;     /* pods in the last call */
    int stops, last_grace;
    char started[8][64];
    size_t nstarted;
} fake;

static bool fake_owns(void *impl, const char *node)
{
    (void)impl;
    return !strncmp(node, "fake-", 5);
}

static int fake_start(void *impl, ty_kc *kc, const json_t *const *pods, size_t n, ty_error *err)
{
    fake *fk = impl;
    ak_container run = {.name = "main", .state = AK_RUNNING, .started_at = "2026-01-01T00:00:00Z"};
    ak_pod_state s = {.phase = "Running", .host_ip = "10.0.0.9", .pod_ip = "10.1.0.9",
                      .containers = &run, .n = 1};

    pthread_mutex_lock(&fk->mu);
    fk->starts++;
    fk->last_n = n;
    pthread_mutex_unlock(&fk->mu);
    for (size_t i = 0; i < n; i++) {
        const json_t *m = json_object_get(pods[i], "metadata");
        if (ak_pod_report(kc, str(m, "namespace"), str(m, "name"), str(m, "uid"), &s, err) < 0)
            return -1;
    }
    return 0;
}

static int fake_stop(void *impl, ty_kc *kc, const json_t *pod, int grace_s, ty_error *err)
{
    fake *fk = impl;
    const json_t *m = json_object_get(pod, "metadata");
    ak_container end = {.name = "main", .state = AK_TERMINATED, .exit_code = 143};
    ak_pod_state s = {.phase = "Failed", .containers = &end, .n = 1};

    pthread_mutex_lock(&fk->mu);
    fk->stops++;
    fk->last_grace = grace_s;
    pthread_mutex_unlock(&fk->mu);
    return ak_pod_report(kc, str(m, "namespace"), str(m, "name"), str(m, "uid"), &s, err);
}

static const rt_backend_ops fake_ops = {
    .name = "fake",
    .owns_node = fake_owns,
    .pods_start = fake_start,
    .pod_stop = fake_stop,
    .finalizer = "trainyard.io/fake-runtime",
};

static bool wait_phase(fixture *f, const char *name, const char *phase)
{
    for (int64_t end = ty_now_ms() + DEADLINE_MS; ty_now_ms() < end; usleep(10000)) {
        json_t *pod = get_pod(f, name);
        bool ok = pod && !strcmp(str(json_object_get(pod, "status"), "phase"), phase);
        json_decref(pod);
        if (ok)
            return true;
    }
    return false;
}

static void test_agent_drives_backend(void **state)
{
    fixture *f = *state;
    fake fk = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ty_error err;
    ak_agent *a;
    json_t *pod;
    bool gone = false;

    ty_error_init(&err);
    put_pod(f, "before", "fake-0", NULL); /* bound before the agent starts */
    put_pod(f, "elsewhere", "other-0", NULL);
    a = ak_agent_start(KC(f->s), &fake_ops, &fk, 50, &err);
    assert_non_null(a);
    assert_true(wait_phase(f, "before", "Running"));
    pod = get_pod(f, "before");
    assert_true(finalizer_has(pod, "trainyard.io/fake-runtime"));
    json_decref(pod);

    /* a gang bound in one write: one pods_start with both */
    ty_kc *kc = KC(f->s);
    put_pod(f, "g-0", NULL, "g");
    put_pod(f, "g-1", NULL, "g");
    kc_op ops[2] = {kc_op_bind("default", "g-0", NULL, "fake-1"),
                    kc_op_bind("default", "g-1", NULL, "fake-2")};
    kc_write_all(kc, ops, 2);
    kc_op_clear(&ops[0]);
    kc_op_clear(&ops[1]);
    assert_true(wait_phase(f, "g-0", "Running"));
    assert_true(wait_phase(f, "g-1", "Running"));
    pthread_mutex_lock(&fk.mu);
    assert_int_equal(fk.starts, 2);
    assert_int_equal(fk.last_n, 2);
    pthread_mutex_unlock(&fk.mu);

    /* deletion: stopped with the pod's grace period, released, gone */
    ty_obj_unref(kc_delete(kc, "pods", "default", "g-0", NULL, NULL, &err));
    ty_error_clear(&err);
    for (int64_t end = ty_now_ms() + DEADLINE_MS; !gone && ty_now_ms() < end; usleep(10000)) {
        json_t *p = get_pod(f, "g-0");
        gone = !p;
        json_decref(p);
    }
    assert_true(gone);
    pthread_mutex_lock(&fk.mu);
    assert_int_equal(fk.stops, 1);
    assert_int_equal(fk.last_grace, 7);
    assert_int_equal(fk.starts, 2); /* echoes started nothing */
    pthread_mutex_unlock(&fk.mu);
    pod = get_pod(f, "elsewhere");
    assert_string_equal(str(json_object_get(pod, "status"), "phase"), "");
    json_decref(pod);
    ak_agent_stop(a);
}

/* A backend that reports the end later (from pods_sync, as squeue would):
 * the deletion waits for it, held by the backend's finalizer. */
typedef struct slow {
    pthread_mutex_t mu;
    int stops;
    bool allow_end;
    char ns[64], name[64], uid[64];
} slow;

static int slow_start(void *impl, ty_kc *kc, const json_t *const *pods, size_t n, ty_error *err)
{
    fake fk = {.mu = PTHREAD_MUTEX_INITIALIZER}; /* only its Running reports */

    (void)impl;
    return fake_start(&fk, kc, pods, n, err);
}

static int slow_stop(void *impl, ty_kc *kc, const json_t *pod, int grace_s, ty_error *err)
{
    slow *sl = impl;
    const json_t *m = json_object_get(pod, "metadata");

    (void)kc, (void)grace_s, (void)err;
    pthread_mutex_lock(&sl->mu);
    sl->stops++;
    snprintf(sl->ns, sizeof(sl->ns), "%s", str(m, "namespace"));
    snprintf(sl->name, sizeof(sl->name), "%s", str(m, "name"));
    snprintf(sl->uid, sizeof(sl->uid), "%s", str(m, "uid"));
    pthread_mutex_unlock(&sl->mu);
    return 0;
}

static void slow_sync(void *impl, ty_kc *kc)
{
    slow *sl = impl;
    ak_container end = {.name = "main", .state = AK_TERMINATED, .exit_code = 143};
    ak_pod_state s = {.phase = "Failed", .containers = &end, .n = 1};

    pthread_mutex_lock(&sl->mu);
    if (sl->allow_end && sl->stops)
        ak_pod_report(kc, sl->ns, sl->name, sl->uid, &s, NULL);
    pthread_mutex_unlock(&sl->mu);
}

static const rt_backend_ops slow_ops = {
    .name = "slow",
    .owns_node = fake_owns,
    .pods_start = slow_start,
    .pod_stop = slow_stop,
    .pods_sync = slow_sync,
    .finalizer = "trainyard.io/slow-runtime",
};

static void test_agent_release_waits_for_end(void **state)
{
    fixture *f = *state;
    slow sl = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ty_error err;
    ak_agent *a;
    json_t *pod;
    bool gone = false;
    int stops = 0;

    ty_error_init(&err);
    put_pod(f, "s", "fake-0", NULL);
    a = ak_agent_start(KC(f->s), &slow_ops, &sl, 20, &err);
    assert_non_null(a);
    assert_true(wait_phase(f, "s", "Running"));
    ty_obj_unref(kc_delete(KC(f->s), "pods", "default", "s", NULL, NULL, &err));
    ty_error_clear(&err);
    for (int64_t end = ty_now_ms() + DEADLINE_MS; !stops && ty_now_ms() < end; usleep(10000)) {
        pthread_mutex_lock(&sl.mu);
        stops = sl.stops;
        pthread_mutex_unlock(&sl.mu);
    }
    assert_int_equal(stops, 1);
    /* several syncs later, still held: no end was reported */
    usleep(200 * 1000);
    pod = get_pod(f, "s");
    assert_non_null(pod);
    assert_true(finalizer_has(pod, "trainyard.io/slow-runtime"));
    json_decref(pod);
    pthread_mutex_lock(&sl.mu);
    sl.allow_end = true;
    pthread_mutex_unlock(&sl.mu);
    for (int64_t end = ty_now_ms() + DEADLINE_MS; !gone && ty_now_ms() < end; usleep(10000)) {
        json_t *p = get_pod(f, "s");
        gone = !p;
        json_decref(p);
    }
    assert_true(gone);
    pthread_mutex_lock(&sl.mu);
    assert_int_equal(sl.stops, 1);
    pthread_mutex_unlock(&sl.mu);
    ak_agent_stop(a);
}

/* The backend's MPI agent is the one the controllers write; the default is
 * the one-machine agent. */
static void test_mpi_agent_registration(void **state)
{
    static const rt_backend_ops with_agent = {.name = "x", .mpi_agent = "#!/bin/sh\necho x\n"};
    rt_backend b;
    ty_error err;

    (void)state;
    ty_error_init(&err);
    assert_ptr_equal(mpi_agent_script(), mpi_agent_one_machine);
    assert_non_null(strstr(mpi_agent_script(), "POD_NAME=${1%%.*}"));
    /* incomplete: refused, but the agent is registered before start */
    assert_int_equal(rt_backend_start(&b, &with_agent, NULL, NULL, &err), -1);
    ty_error_clear(&err);
    mpi_agent_register(with_agent.mpi_agent);
    assert_string_equal(mpi_agent_script(), "#!/bin/sh\necho x\n");
    mpi_agent_register(NULL);
    assert_ptr_equal(mpi_agent_script(), mpi_agent_one_machine);
    assert_ptr_equal(rt_backend_find("local"), &rt_local_backend);
    assert_ptr_equal(rt_backend_find("sim"), &rt_sim_backend);
    assert_null(rt_backend_find("slurm"));
}

/* The local backend's exec: argv as the pod (its name as HOSTNAME and
 * TRAINYARD_TARGET_POD, no TY_POD_IP), output to the descriptor, the exit
 * code back; a bad name or no command refused. */
static void test_local_exec(void **state)
{
    const char *const argv[] = {"sh", "-c",
                                "echo \"$HOSTNAME $TRAINYARD_TARGET_POD ${TY_POD_IP-none} "
                                "${TY_EXEC_MARKER-none} $(id -u)\"; exit 3",
                                NULL};
    const char *const none[] = {NULL};
    int fds[2], code = -1;
    char buf[128] = "", want[128];
    ty_error err;
    ssize_t n;

    (void)state;
    ty_error_init(&err);
    /* The server's environment does not reach the command, nor its root:
     * a pod unknown here runs as nobody. */
    setenv("TY_POD_IP", "127.9.9.9", 1);
    setenv("TY_EXEC_MARKER", "server", 1);
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(rt_local_backend.exec(NULL, "default", "worker-1", argv, -1, fds[1], &code,
                                           &err),
                     0);
    close(fds[1]);
    n = read(fds[0], buf, sizeof(buf) - 1);
    close(fds[0]);
    assert_true(n > 0);
    snprintf(want, sizeof(want), "worker-1 worker-1 none none %u\n",
             geteuid() == 0 ? 65534u : (unsigned)geteuid());
    assert_string_equal(buf, want);
    assert_int_equal(code, 3);
    assert_int_equal(rt_local_backend.exec(NULL, "default", "../x", argv, -1, -1, &code, &err),
                     -1);
    ty_error_clear(&err);
    assert_int_equal(rt_local_backend.exec(NULL, "default", "p", none, -1, -1, &code, &err), -1);
    ty_error_clear(&err);
    unsetenv("TY_POD_IP");
    unsetenv("TY_EXEC_MARKER");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_watch_relists_then_queues, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_open_when_start_returns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_overflow_asks_relist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_ensure_heartbeat_condition, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_agent_drives_backend, setup, teardown),
        cmocka_unit_test_setup_teardown(test_agent_release_waits_for_end, setup, teardown),
        cmocka_unit_test(test_mpi_agent_registration),
        cmocka_unit_test(test_local_exec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
