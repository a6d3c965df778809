/* test_runtime_fixture.h - shared by the test_runtime_*.c unit tests: a real
 * store in a temp dir, the real agent (rt_local_start) and the real
 * supervisor (the trainyard binary: $TRAINYARD_EXE, else ./trainyard, which
 * is where ctest runs the tests from). */
#ifndef TEST_RUNTIME_FIXTURE_H
#define TEST_RUNTIME_FIXTURE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/kinds.h"
#include "api/registry.h"
#include "base/timeutil.h"
#include "runtime/local/runtime.h"
#include "store/store.h"
#include "kc_fixture.h"

#define NODE "testnode"

typedef struct fixture {
    char dir[64];
    ty_store *s;
    rt_local *rt;
} fixture;

static inline const char *exe_path(void)
{
    const char *e = getenv("TRAINYARD_EXE");
    return e && *e ? e : "./trainyard";
}

/* The agent on the fixture's store; sweep_ms as rt_local_opts' (0 = its
 * default). */
static inline rt_local *start_agent_sweep(fixture *f, int64_t sweep_ms)
{
    rt_local_opts o = {.data_dir = f->dir, .node_name = NODE, .fake_gpus = 2,
                       .self_exe = exe_path(), .restart_backoff_ms = 200,
                       .sweep_ms = sweep_ms};
    ty_error err;
    rt_local *rt;

    ty_error_init(&err);
    rt = rt_local_start(KC(f->s), &o, &err);
    if (!rt)
        fail_msg("rt_local_start: %s", err.text);
    return rt;
}

static inline rt_local *start_agent(fixture *f)
{
    return start_agent_sweep(f, 0);
}

static inline int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static inline int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    ty_error err;

    if (access(exe_path(), X_OK) < 0) {
        fprintf(stderr, "no trainyard binary at %s (set TRAINYARD_EXE)\n", exe_path());
        return -1;
    }
    ty_error_init(&err);
    /* Not under /tmp: a pod's /tmp is its own, and some tests' pods leave
     * marks in this directory. */
    strcpy(f->dir, "/var/tmp/ty-rt-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    f->s = store_open(f->dir, &err);
    assert_non_null(f->s);
    f->rt = start_agent(f);
    *state = f;
    return 0;
}

/* Leaves nothing running: every supervisor and container group of the
 * fixture's data dir is killed (tests that pass clean up by themselves). */
static inline void kill_leftovers(const char *dir)
{
    char path[512];
    struct dirent *d;
    DIR *dp;

    snprintf(path, sizeof(path), "%s/pods", dir);
    if (!(dp = opendir(path)))
        return;
    while ((d = readdir(dp))) {
        char file[1024];
        FILE *fp;
        json_t *st;
        int pid;
        size_t i;
        json_t *c;
        if (d->d_name[0] == '.')
            continue;
        snprintf(file, sizeof(file), "%s/%s/supervisor.pid", path, d->d_name);
        if ((fp = fopen(file, "r"))) {
            if (fscanf(fp, "%d", &pid) == 1 && pid > 1)
                kill(pid, SIGKILL);
            fclose(fp);
        }
        snprintf(file, sizeof(file), "%s/%s/state.json", path, d->d_name);
        st = json_load_file(file, 0, NULL);
        json_array_foreach(json_object_get(st, "containers"), i, c) {
            json_int_t p = json_integer_value(json_object_get(c, "pid"));
            if (p > 1)
                kill(-(pid_t)p, SIGKILL);
        }
        json_decref(st);
    }
    closedir(dp);
}

static inline int teardown(void **state)
{
    fixture *f = *state;
    rt_local_stop(f->rt);
    kill_leftovers(f->dir);
    store_close(f->s);
    usleep(100 * 1000);
    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
    free(f);
    return 0;
}

/* Creates a pod bound to NODE from a spec written with ` for " (so shell
 * commands may keep their single quotes). Defaults are applied as the API
 * server would. */
static inline void make_obj(fixture *f, const char *resource, const api_resource *res,
                     const char *ns, const char *text)
{
    char *buf = strdup(text);
    json_error_t jerr;
    json_t *obj;
    ty_error err;
    store_obj *o;

    for (char *p = buf; *p; p++)
        if (*p == '`')
            *p = '"';
    obj = json_loads(buf, 0, &jerr);
    if (!obj)
        fail_msg("bad test JSON: %s: %s", jerr.text, buf);
    ty_error_init(&err);
    if (res == &api_pod) /* bound, as the scheduler would */
        json_object_set_new(json_object_get(obj, "spec"), "nodeName", json_string(NODE));
    if (api_prepare(res, obj, NULL, &err) < 0)
        fail_msg("invalid %s: %s", resource, err.text);
    o = store_create(f->s, resource, ns, obj, &err);
    if (!o)
        fail_msg("create %s: %s", resource, err.text);
    store_obj_unref(o);
    json_decref(obj);
    free(buf);
}

static inline void make_pod(fixture *f, const char *name, const char *spec)
{
    char text[8192];
    snprintf(text, sizeof(text),
             "{`apiVersion`:`v1`,`kind`:`Pod`,`metadata`:{`name`:`%s`,`namespace`:`default`,"
             "`labels`:{`app`:`%s`}},`spec`:%s}",
             name, name, spec);
    make_obj(f, "pods", &api_pod, "default", text);
}

/* The pod's JSON now (caller decrefs) or NULL when it does not exist. */
static inline json_t *get_pod(fixture *f, const char *name)
{
    store_obj *o = store_get(f->s, "pods", "default", name, NULL);
    json_t *j = o ? json_deep_copy(store_obj_json(o)) : NULL;
    store_obj_unref(o);
    return j;
}

static inline const char *phase_of(const json_t *pod)
{
    const char *p = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    return p ? p : "";
}

/* The least a wait below gives the runtime, whatever timeout a test names:
 * processes start slowly on a loaded machine (and under ASan), and only a
 * runtime that never gets there should fail. */
#define RT_WAIT_MIN_MS 60000
/* wait_gone's least: less than a pod's 30 s grace period, which it tells
 * apart from a prompt end. */
#define RT_GONE_MIN_MS 20000

static inline int64_t rt_deadline_min(int timeout_ms, int min_ms)
{
    return ty_now_ms() + (timeout_ms > min_ms ? timeout_ms : min_ms);
}

static inline int64_t rt_deadline(int timeout_ms)
{
    return rt_deadline_min(timeout_ms, RT_WAIT_MIN_MS);
}

/* Polls up to timeout_ms (RT_WAIT_MIN_MS at least) for the pod's phase to
 * be want; returns the pod. */
static inline json_t *wait_phase(fixture *f, const char *name, const char *want, int timeout_ms)
{
    for (int64_t deadline = rt_deadline(timeout_ms); ty_now_ms() < deadline;) {
        json_t *p = get_pod(f, name);
        if (p && !strcmp(phase_of(p), want))
            return p;
        json_decref(p);
        usleep(50 * 1000);
    }
    json_t *p = get_pod(f, name);
    char *dump = p ? json_dumps(json_object_get(p, "status"), JSON_INDENT(1)) : NULL;
    fail_msg("pod %s did not reach %s in %d ms; status: %s", name, want, timeout_ms,
             dump ? dump : "(no pod)");
    return NULL;
}

static inline const json_t *container_status(const json_t *pod, size_t i)
{
    return json_array_get(json_object_get(json_object_get(pod, "status"), "containerStatuses"),
                          i);
}

/* The container's log file (caller frees; "" when absent). */
static inline char *read_log(fixture *f, const char *pod, const char *ct, const char *suffix)
{
    char path[512];
    FILE *fp;
    char *buf = calloc(1, 1 << 20);
    size_t n = 0;

    snprintf(path, sizeof(path), "%s/logs/default/%s/%s.log%s", f->dir, pod, ct, suffix);
    if ((fp = fopen(path, "r"))) {
        n = fread(buf, 1, (1 << 20) - 1, fp);
        fclose(fp);
    }
    buf[n] = '\0';
    return buf;
}

/* Polls up to timeout_ms (RT_WAIT_MIN_MS at least) for the log to contain
 * text. */
static inline char *wait_log(fixture *f, const char *pod, const char *ct, const char *text,
                      int timeout_ms)
{
    for (int64_t deadline = rt_deadline(timeout_ms);;) {
        char *log = read_log(f, pod, ct, "");
        if (strstr(log, text))
            return log;
        if (ty_now_ms() >= deadline)
            fail_msg("log of %s/%s lacks \"%s\" after %d ms:\n%s", pod, ct, text, timeout_ms,
                     log);
        free(log);
        usleep(50 * 1000);
    }
}

static inline void delete_pod(fixture *f, const char *name)
{
    store_delete_opts o = {0};
    ty_error err;
    store_obj *obj;

    ty_error_init(&err);
    obj = store_delete(f->s, "pods", "default", name, &o, NULL, &err);
    assert_non_null(obj);
    store_obj_unref(obj);
}

static inline bool wait_gone(fixture *f, const char *name, int timeout_ms)
{
    for (int64_t deadline = rt_deadline_min(timeout_ms, RT_GONE_MIN_MS);
         ty_now_ms() < deadline;) {
        json_t *p = get_pod(f, name);
        if (!p)
            return true;
        json_decref(p);
        usleep(50 * 1000);
    }
    return false;
}

#endif
