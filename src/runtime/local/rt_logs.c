/* rt_logs.c - how long the logs of a pod outlive it.
 *
 * A container's log stays under <data>/logs/<ns>/<pod>/ after the pod is
 * deleted, so that `kubectl logs` (or `trainyard logs`) still reads what a
 * cleaned-up job printed. Kept for ever, they grew without bound; now the
 * directory of a pod the store no longer has is removed once the retention
 * (--pod-log-retention) has passed since the pod went.
 *
 * When it went is a file in the directory (".gone": the wall-clock time in
 * milliseconds), written by the agent when it lets the pod go and, for pods
 * that went while no agent ran, by the first sweep that finds the pod gone.
 * A file survives a server restart, where a time kept in memory would start
 * the retention again. A pod of the same name created meanwhile takes the
 * directory back: its mark is removed (its first start clears the old logs). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/jsonget.h"
#include "base/log.h"
#include "base/timeutil.h"
#include "runtime/local/rt_internal.h"

#define GONE_MARK ".gone"

int64_t rt_logs_wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The mark: "<ms>\n<namespace uid>\n" (the uid line may be missing: not
 * known, or a mark of an earlier version). */
static void write_mark(const char *dir, int64_t now_ms, const char *ns_uid)
{
    char path[PATH_MAX + 600], text[320];

    snprintf(path, sizeof(path), "%s/%s", dir, GONE_MARK);
    snprintf(text, sizeof(text), "%lld\n%s%s", (long long)now_ms, ns_uid ? ns_uid : "",
             ns_uid ? "\n" : "");
    if (rt_write_atomic(path, text, strlen(text), 0644) < 0 && errno != ENOENT)
        ty_warn("runtime: cannot write %s: %s", path, strerror(errno));
}

/* The uid of namespace ns now, in out (empty when it cannot be read). */
static const char *ns_uid(ty_kc *s, const char *ns, char *out, size_t len)
{
    ty_obj *o = s ? kc_get(s, "namespaces", NULL, ns, NULL) : NULL;
    const char *uid = o ? ty_jstr(json_object_get(ty_obj_json(o), "metadata"), "uid") : NULL;

    snprintf(out, len, "%s", uid && strlen(uid) < len ? uid : "");
    ty_obj_unref(o);
    return *out ? out : NULL;
}

#define LABELS_FILE ".labels"
#define LABELS_MAX (64 * 1024)

void rt_logs_mark_gone(ty_kc *s, const char *data_dir, const char *ns, const char *name,
                       const json_t *labels)
{
    char dir[PATH_MAX], path[PATH_MAX + 600], uid[256];
    struct stat st;

    snprintf(dir, sizeof(dir), "%s/logs/%s/%s", data_dir, ns, name);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    snprintf(path, sizeof(path), "%s/%s", dir, LABELS_FILE);
    if (json_is_object(labels)) {
        char *text = json_dumps(labels, JSON_COMPACT | JSON_SORT_KEYS);
        if (text && strlen(text) < LABELS_MAX &&
            rt_write_atomic(path, text, strlen(text), 0644) < 0)
            ty_warn("runtime: cannot write %s: %s", path, strerror(errno));
        free(text);
    } else {
        unlink(path); /* an earlier pod's of that name would name the wrong job */
    }
    write_mark(dir, rt_logs_wall_ms(), ns_uid(s, ns, uid, sizeof(uid)));
}

/* When the pod of dir went (ms), or -1 when it has no mark; the namespace
 * uid the mark names in uid (empty when none). */
static int64_t read_mark(const char *dir, char *uid, size_t len)
{
    char path[PATH_MAX + 600], *text, *end;
    long long v;

    if (uid)
        *uid = '\0';
    snprintf(path, sizeof(path), "%s/%s", dir, GONE_MARK);
    if (!(text = rt_read_file(path, 320, NULL)))
        return -1;
    v = strtoll(text, &end, 10);
    if (end == text || v < 0)
        v = -1;
    else if (uid && *end == '\n') {
        size_t n = strcspn(end + 1, "\n");
        if (n < len) {
            memcpy(uid, end + 1, n);
            uid[n] = '\0';
        }
    }
    free(text);
    return v;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* One pod's log directory; true when it was removed. */
static bool sweep_pod(ty_kc *s, const char *dir, const char *ns, const char *name,
                      int64_t retention_ms, int64_t now_ms)
{
    ty_obj *o = kc_get(s, "pods", ns, name, NULL);
    char mark[PATH_MAX + 600];
    int64_t gone;

    if (o) {
        ty_obj_unref(o);
        snprintf(mark, sizeof(mark), "%s/%s", dir, GONE_MARK);
        unlink(mark); /* a pod of that name again: its logs, not a leftover */
        return false;
    }
    if ((gone = read_mark(dir, NULL, 0)) < 0) {
        char uid[256];
        /* went while no agent looked: from now */
        write_mark(dir, now_ms, ns_uid(s, ns, uid, sizeof(uid)));
        return false;
    }
    if (now_ms - gone < retention_ms)
        return false;
    if (rt_remove_tree(dir) < 0) {
        ty_warn("runtime: cannot remove the logs in %s: %s", dir, strerror(errno));
        return false;
    }
    return true;
}

int rt_logs_sweep(ty_kc *s, const char *data_dir, int64_t retention_ms, int64_t now_ms)
{
    char root[PATH_MAX], nsdir[PATH_MAX + 256], poddir[PATH_MAX + 512];
    struct dirent *n, *p;
    DIR *top, *in;
    int removed = 0;

    if (retention_ms <= 0)
        return 0;
    snprintf(root, sizeof(root), "%s/logs", data_dir);
    if (!(top = opendir(root)))
        return 0;
    while ((n = readdir(top))) {
        if (n->d_name[0] == '.' || strlen(n->d_name) > 253)
            continue;
        snprintf(nsdir, sizeof(nsdir), "%s/%s", root, n->d_name);
        if (!is_dir(nsdir) || !(in = opendir(nsdir)))
            continue;
        while ((p = readdir(in))) {
            if (p->d_name[0] == '.' || strlen(p->d_name) > 253)
                continue;
            snprintf(poddir, sizeof(poddir), "%s/%s", nsdir, p->d_name);
            if (is_dir(poddir) &&
                sweep_pod(s, poddir, n->d_name, p->d_name, retention_ms, now_ms))
                removed++;
        }
        closedir(in);
        rmdir(nsdir); /* the namespace's last pod directory went: fails otherwise */
    }
    closedir(top);
    return removed;
}

/* One retained pod's entry, or NULL when dir holds no marked log. */
static json_t *retained_entry(const char *dir, const char *pod)
{
    char path[PATH_MAX + 600], when[40], uid[256];
    int64_t gone = read_mark(dir, uid, sizeof(uid));
    json_t *containers, *labels = NULL, *e;
    struct dirent *f;
    char *text;
    DIR *d;

    if (gone < 0 || !(d = opendir(dir)))
        return NULL;
    containers = json_array();
    while (containers && (f = readdir(d))) {
        size_t l = strlen(f->d_name);
        if (f->d_name[0] != '.' && l > 4 && !strcmp(f->d_name + l - 4, ".log") &&
            json_array_size(containers) < 64)
            json_array_append_new(containers, json_stringn(f->d_name, l - 4));
    }
    closedir(d);
    if (json_array_size(containers) == 0) {
        json_decref(containers);
        return NULL;
    }
    snprintf(path, sizeof(path), "%s/%s", dir, LABELS_FILE);
    if ((text = rt_read_file(path, LABELS_MAX, NULL))) {
        labels = json_loads(text, 0, NULL);
        free(text);
    }
    if (!json_is_object(labels)) {
        json_decref(labels);
        labels = json_object();
    }
    ty_time_format((time_t)(gone / 1000), when, sizeof(when));
    e = json_pack("{s:s, s:o, s:o, s:s}", "pod", pod, "containers", containers, "labels",
                  labels, "goneTime", when);
    if (e && *uid)
        json_object_set_new(e, "namespaceUID", json_string(uid));
    return e;
}

json_t *rt_logs_retained(const char *data_dir, const char *ns)
{
    char nsdir[PATH_MAX], poddir[PATH_MAX + 512];
    json_t *out = json_array();
    struct dirent *p;
    DIR *in;

    /* ns becomes a path component: nothing that leaves the logs directory
     * (every backend calls this with what a request named). */
    if (!out || !ns || !*ns || strlen(ns) > 253 || strchr(ns, '/') || !strcmp(ns, ".") ||
        !strcmp(ns, ".."))
        return out;
    snprintf(nsdir, sizeof(nsdir), "%s/logs/%s", data_dir, ns);
    if (!(in = opendir(nsdir)))
        return out;
    while ((p = readdir(in)) && json_array_size(out) < RT_LOGS_RETAINED_MAX) {
        json_t *e;
        if (p->d_name[0] == '.' || strlen(p->d_name) > 253)
            continue;
        snprintf(poddir, sizeof(poddir), "%s/%s", nsdir, p->d_name);
        if (is_dir(poddir) && (e = retained_entry(poddir, p->d_name)))
            json_array_append_new(out, e);
    }
    closedir(in);
    return out;
}
