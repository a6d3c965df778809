/* test_runtime_hosts.c - the hosts table (runtime/local/hosts.c): what a
 * pod's hosts file shows of its namespace, kept from store events instead of
 * a listing of the namespace per pod start. First the table alone, then the
 * agent: a namespace full of finished pods and their Services, and a new pod
 * whose hosts file shows only the live ones; and names before commands: a
 * pod's first hosts file names the peers that are not bound yet. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>

#include "test_runtime_fixture.h"
#include "tmpdir.h"

#include "runtime/local/rt_internal.h"

/* A pod object; ` for ". extra goes into metadata after name/uid. */
static json_t *pod_json(const char *name, const char *uid, const char *labels, const char *ip,
                        const char *phase, const char *spec_extra, bool deleting)
{
    char text[2048];
    json_error_t jerr;
    json_t *j;

    snprintf(text, sizeof(text),
             "{`metadata`:{`name`:`%s`,`namespace`:`ns`,`uid`:`%s`%s%s%s},"
             "`spec`:{%s},`status`:{`phase`:`%s`%s%s%s}}",
             name, uid, labels ? ",`labels`:" : "", labels ? labels : "",
             deleting ? ",`deletionTimestamp`:`2026-01-01T00:00:00Z`" : "",
             spec_extra ? spec_extra : "", phase, ip ? ",`podIP`:`" : "", ip ? ip : "",
             ip ? "`" : "");
    for (char *p = text; *p; p++)
        if (*p == '`')
            *p = '"';
    j = json_loads(text, 0, &jerr);
    if (!j)
        fail_msg("bad test JSON: %s: %s", jerr.text, text);
    return j;
}

static json_t *svc_json(const char *name, const char *selector)
{
    char text[1024];
    json_t *j;

    snprintf(text, sizeof(text), "{`metadata`:{`name`:`%s`,`namespace`:`ns`},`spec`:{%s%s}}",
             name, selector ? "`selector`:" : "", selector ? selector : "");
    for (char *p = text; *p; p++)
        if (*p == '`')
            *p = '"';
    j = json_loads(text, 0, NULL);
    assert_non_null(j);
    return j;
}

static bool put_pod(rt_hosts *h, json_t *pod, bool deleted)
{
    bool changed = rt_hosts_put_pod(h, pod, deleted);
    json_decref(pod);
    return changed;
}

static bool put_svc(rt_hosts *h, json_t *svc, bool deleted)
{
    bool changed = rt_hosts_put_service(h, svc, deleted);
    json_decref(svc);
    return changed;
}

static const char *body(rt_hosts *h, uint64_t *gen)
{
    uint64_t g = 0;
    const char *b = rt_hosts_body(h, "ns", &g);
    assert_non_null(b);
    assert_true(g != 0);
    if (gen)
        *gen = g;
    return b;
}

#define NAMES(n) n " " n ".ns " n ".ns.svc " n ".ns.svc.cluster.local"

static void test_table_lines(void **state)
{
    rt_hosts *h = rt_hosts_new();
    uint64_t g1, g2;

    (void)state;
    assert_non_null(h);
    /* Pods with an address, by name; hostname.subdomain as well. */
    put_pod(h, pod_json("b", "u-b", "{`app`:`b`}", "127.1.0.2", "Running", NULL, false), false);
    put_pod(h, pod_json("a", "u-a", "{`app`:`a`}", "127.1.0.1", "Running",
                        "`hostname`:`a`,`subdomain`:`grp`", false), false);
    /* No line: finished, going, or no address. */
    put_pod(h, pod_json("done", "u-done", "{`app`:`done`}", "127.1.0.3", "Succeeded", NULL, false),
            false);
    put_pod(h, pod_json("failed", "u-failed", NULL, "127.1.0.4", "Failed", NULL, false), false);
    put_pod(h, pod_json("going", "u-going", NULL, "127.1.0.5", "Running", NULL, true), false);
    put_pod(h, pod_json("new", "u-new", "{`app`:`new`}", NULL, "Pending", NULL, false), false);
    assert_string_equal(body(h, &g1), "127.1.0.1 " NAMES("a") " " NAMES("a.grp") "\n"
                                      "127.1.0.2 " NAMES("b") "\n");

    /* Services: named as the pod they select (no line of their own, even
     * when that pod has none), else the first selected pod with an address. */
    assert_false(put_svc(h, svc_json("a", "{`app`:`a`}"), false));
    assert_false(put_svc(h, svc_json("done", "{`app`:`done`}"), false));
    assert_false(put_svc(h, svc_json("headless", NULL), false));
    put_svc(h, svc_json("nothing", "{`app`:`zzz`}"), false);
    assert_null(strstr(body(h, NULL), "nothing"));
    assert_true(put_svc(h, svc_json("master", "{`app`:`b`}"), false));
    assert_true(put_svc(h, svc_json("to-done", "{`app`:`done`}"), false));
    assert_string_equal(body(h, &g2), "127.1.0.1 " NAMES("a") " " NAMES("a.grp") "\n"
                                      "127.1.0.2 " NAMES("b") "\n"
                                      "127.1.0.2 " NAMES("master") "\n");
    assert_true(g2 != g1);

    /* A status-only update changes nothing. */
    assert_false(put_pod(h, pod_json("b", "u-b", "{`app`:`b`}", "127.1.0.2", "Running", NULL,
                                     false), false));
    body(h, &g1);
    assert_true(g1 == g2);

    /* This node's address stands for the status until the pod runs no more. */
    assert_true(rt_hosts_set_local(h, "ns", "u-new", "127.1.0.9"));
    assert_non_null(strstr(body(h, NULL), "127.1.0.9 " NAMES("new") "\n"));
    assert_true(rt_hosts_set_local(h, "ns", "u-new", NULL));
    assert_null(strstr(body(h, NULL), " new "));
    /* Set before the store shows the pod: it counts once it does. */
    assert_false(rt_hosts_set_local(h, "ns", "u-later", "127.1.0.10"));
    assert_true(put_pod(h, pod_json("later", "u-later", NULL, NULL, "Pending", NULL, false),
                        false));
    assert_non_null(strstr(body(h, NULL), "127.1.0.10 " NAMES("later") "\n"));
    rt_hosts_set_local(h, "ns", "u-later", NULL);

    /* A pod that finishes leaves, and the Service that resolved to it moves
     * on to the next pod it selects, by name. */
    assert_true(put_pod(h, pod_json("c", "u-c", "{`app`:`b`}", "127.1.0.7", "Running", NULL,
                                    false), false));
    assert_true(put_pod(h, pod_json("b", "u-b", "{`app`:`b`}", "127.1.0.2", "Succeeded", NULL,
                                    false), false));
    assert_string_equal(body(h, NULL), "127.1.0.1 " NAMES("a") " " NAMES("a.grp") "\n"
                                       "127.1.0.7 " NAMES("c") "\n"
                                       "127.1.0.7 " NAMES("master") "\n");

    /* Relabelling the pod a Service is named as: it is no longer shadowed. */
    assert_true(put_pod(h, pod_json("a", "u-a", "{`app`:`x`}", "127.1.0.1", "Running",
                                    "`hostname`:`a`,`subdomain`:`grp`", false), false));
    assert_true(put_pod(h, pod_json("c", "u-c", "{`app`:`a`}", "127.1.0.7", "Running", NULL,
                                    false), false));
    assert_non_null(strstr(body(h, NULL), "127.1.0.7 " NAMES("a") "\n"));

    /* A replaced pod: the old one's deletion does not remove the new one. */
    assert_true(put_pod(h, pod_json("c", "u-c2", "{`app`:`a`}", "127.1.0.8", "Running", NULL,
                                    false), false));
    assert_false(put_pod(h, pod_json("c", "u-c", "{`app`:`a`}", "127.1.0.7", "Running", NULL,
                                     false), true));
    assert_non_null(strstr(body(h, NULL), "127.1.0.8 " NAMES("c") "\n"));
    assert_true(put_pod(h, pod_json("c", "u-c2", NULL, NULL, "Running", NULL, false), true));
    assert_null(strstr(body(h, NULL), " c "));

    /* A reload starts from nothing. */
    rt_hosts_clear(h);
    assert_string_equal(body(h, NULL), "");
    rt_hosts_free(h);
}

/* Thousands of finished pods, each with its Service: the lines show only
 * the live pods, and rendering them does not walk the finished ones (this
 * would take seconds if each rendering cost O(namespace)). */
static void test_table_many_finished(void **state)
{
    rt_hosts *h = rt_hosts_new();
    char name[64], uid[64], labels[128], ip[32];
    struct timespec t0, t1;
    double ms;

    (void)state;
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof(name), "job-%d-worker-0", i);
        snprintf(uid, sizeof(uid), "u-%d", i);
        snprintf(labels, sizeof(labels), "{`job`:`job-%d`,`idx`:`0`}", i);
        snprintf(ip, sizeof(ip), "127.2.%d.%d", i / 250, 1 + i % 250);
        put_pod(h, pod_json(name, uid, labels, ip, i < 4990 ? "Succeeded" : "Running", NULL,
                            false), false);
        snprintf(labels, sizeof(labels), "{`job`:`job-%d`,`idx`:`0`}", i);
        put_svc(h, svc_json(name, labels), false);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 2000; i++) {
        /* One pod more and one less, as in a stream of short jobs. */
        snprintf(uid, sizeof(uid), "u-%d", 4990 + (i / 2) % 10);
        assert_true(rt_hosts_set_local(h, "ns", uid, i % 2 ? NULL : "127.3.0.1"));
        body(h, NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    print_message("2000 renderings with 10 live of 5000 pods and 5000 Services: %.1f ms\n", ms);
    {
        const char *b = body(h, NULL);
        int lines = 0;
        for (const char *p = b; *p; p++)
            lines += *p == '\n';
        assert_int_equal(lines, 10);
        assert_null(strstr(b, "job-4989-"));
        assert_non_null(strstr(b, "job-4990-worker-0 "));
    }
    assert_true(ms < 2000);
    rt_hosts_free(h);
}

/* ---- the agent ---- */

/* A pod bound to another node (the agent does not run it), with a status. */
static void remote_pod(fixture *f, const char *name, const char *ip, const char *phase)
{
    char text[1024];
    ty_error err;
    json_t *obj;
    store_obj *o;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\",\"labels\":{\"app\":\"%s\"}},\"spec\":{"
             "\"nodeName\":\"elsewhere\",\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
             name, name);
    obj = json_loads(text, 0, NULL);
    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_pod, obj, NULL, &err), 0);
    json_object_set_new(obj, "status", json_pack("{s:s, s:s}", "phase", phase, "podIP", ip));
    o = store_create(f->s, "pods", "default", obj, &err);
    if (!o)
        fail_msg("create pod %s: %s", name, err.text);
    store_obj_unref(o);
    json_decref(obj);
}

static char *hosts_file_of(fixture *f, const char *pod)
{
    json_t *p = get_pod(f, pod);
    char path[512];
    FILE *fp;
    char *buf = calloc(1, 1 << 20);
    size_t n = 0;

    assert_non_null(p);
    snprintf(path, sizeof(path), "%s/pods/%s/hosts", f->dir,
             json_string_value(json_object_get(json_object_get(p, "metadata"), "uid")));
    json_decref(p);
    if ((fp = fopen(path, "r"))) {
        n = fread(buf, 1, (1 << 20) - 1, fp);
        fclose(fp);
    }
    buf[n] = '\0';
    return buf;
}

static void test_agent_hosts_show_live_pods_only(void **state)
{
    fixture *f = *state;
    char name[64], svc[512], *hosts = NULL;
    int lines = 0;

    for (int i = 0; i < 300; i++) {
        char ip[32];
        snprintf(name, sizeof(name), "old-%d", i);
        snprintf(ip, sizeof(ip), "127.9.%d.%d", i / 200, 1 + i % 200);
        remote_pod(f, name, ip, i % 2 ? "Succeeded" : "Failed");
        snprintf(svc, sizeof(svc),
                 "{`apiVersion`:`v1`,`kind`:`Service`,`metadata`:{`name`:`%s`},"
                 "`spec`:{`clusterIP`:`None`,`selector`:{`app`:`%s`}}}",
                 name, name);
        make_obj(f, "services", &api_service, "default", svc);
    }
    remote_pod(f, "remote-live", "127.9.9.9", "Running");
    make_obj(f, "services", &api_service, "default",
             "{`apiVersion`:`v1`,`kind`:`Service`,`metadata`:{`name`:`to-remote`},"
             "`spec`:{`clusterIP`:`None`,`selector`:{`app`:`remote-live`}}}");
    make_pod(f, "short", "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                         "`command`:[`true`]}]}");
    json_decref(wait_phase(f, "short", "Succeeded", 10000));
    make_pod(f, "fresh", "{`containers`:[{`name`:`c`,`image`:`x`,`command`:[`sleep`,`100`]}]}");
    json_decref(wait_phase(f, "fresh", "Running", 10000));

    /* fresh's file: itself, the live remote pod and the Service resolving to
     * it; none of the finished pods (remote or run here), none of their
     * Services. */
    for (int64_t deadline = rt_deadline(0); ty_now_ms() < deadline;) {
        free(hosts);
        hosts = hosts_file_of(f, "fresh");
        if (strstr(hosts, "127.9.9.9 to-remote ") && strstr(hosts, " fresh "))
            break;
        usleep(50 * 1000);
    }
    if (!strstr(hosts, "127.9.9.9 remote-live remote-live.default ") ||
        !strstr(hosts, "127.9.9.9 to-remote to-remote.default ") || !strstr(hosts, " fresh ") ||
        strstr(hosts, "old-") || strstr(hosts, " short "))
        fail_msg("unexpected hosts file:\n%s", hosts);
    for (const char *p = hosts; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 1 + 3 + 3); /* comment, 3 names, 3 localhost lines */
    free(hosts);
}

/* A pod of default of gang group ("" = none), not bound to any node yet
 * (the scheduler has not placed it). */
static void pending_pod(fixture *f, const char *name, const char *group, const char *spec_extra)
{
    char text[1024];
    ty_error err;
    json_t *obj;
    store_obj *o;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\",\"labels\":{\"app\":\"%s\"},\"annotations\":{"
             "\"scheduling.k8s.io/group-name\":\"%s\"}},\"spec\":{%s"
             "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"x\","
             "\"command\":[\"sleep\",\"100\"]}]}}",
             name, name, group, spec_extra);
    obj = json_loads(text, 0, NULL);
    ty_error_init(&err);
    assert_int_equal(api_prepare(&api_pod, obj, NULL, &err), 0);
    o = store_create(f->s, "pods", "default", obj, &err);
    if (!o)
        fail_msg("create pod %s: %s", name, err.text);
    store_obj_unref(o);
    json_decref(obj);
}

static int edit_bind(json_t *obj, void *arg, ty_error *err)
{
    (void)err;
    json_object_set_new(json_object_get(obj, "spec"), "nodeName", json_string(arg));
    return 0;
}

static void bind_pod(fixture *f, const char *name, const char *node)
{
    ty_error err;
    store_obj *o;

    ty_error_init(&err);
    o = store_mutate(f->s, "pods", "default", name, edit_bind, (void *)node, &err);
    if (!o)
        fail_msg("bind %s: %s", name, err.text);
    store_obj_unref(o);
}

/* The address the line of name shows in a hosts file ("" when none). */
static void addr_in(const char *hosts, const char *name, char *out, size_t len)
{
    char key[128];
    const char *at, *line;

    snprintf(key, sizeof(key), " %s ", name);
    out[0] = '\0';
    if (!(at = strstr(hosts, key)))
        return;
    for (line = at; line > hosts && line[-1] != '\n'; line--)
        ;
    snprintf(out, len, "%.*s", (int)(strcspn(line, " \t")), line);
}

/* Names before commands: the members of a gang exist before the scheduler
 * binds any of them, and the first one started must resolve the others with
 * its first instruction, whatever order the agent sees the bindings in. Here
 * the peers are never bound while it runs: their names resolve all the same,
 * to the address each gets when it starts here. A pod of another gang still
 * waiting in the queue has no address yet. */
static void test_agent_names_before_commands(void **state)
{
    fixture *f = *state;
    char *hosts = NULL, *log, want_b[32], want_c[32];
    json_t *a, *c;

    pending_pod(f, "gang-b", "g1", "\"hostname\":\"gang-b\",\"subdomain\":\"gang\",");
    pending_pod(f, "gang-c", "g1", "");
    pending_pod(f, "queued", "g2", "");
    pending_pod(f, "loner", "", "");
    make_obj(f, "pods", &api_pod, "default",
             "{`apiVersion`:`v1`,`kind`:`Pod`,`metadata`:{`name`:`gang-a`,`annotations`:{"
             "`scheduling.k8s.io/group-name`:`g1`}},`spec`:{`restartPolicy`:`Never`,"
             "`containers`:[{`name`:`c`,`image`:`x`,`command`:[`sh`,`-c`,`cat /etc/hosts`]}]}}");
    a = wait_phase(f, "gang-a", "Succeeded", 20000);
    json_decref(a);
    /* What its processes saw (with root, /etc/hosts is the pod's file), and
     * the file itself: the peers' lines were there before its command ran. */
    log = read_log(f, "gang-a", "c", "");
    hosts = hosts_file_of(f, "gang-a");
    addr_in(hosts, "gang-b.gang", want_b, sizeof(want_b));
    addr_in(hosts, "gang-c", want_c, sizeof(want_c));
    if (strncmp(want_b, "127.", 4) || strncmp(want_c, "127.", 4) || !strcmp(want_b, want_c))
        fail_msg("gang-a's hosts file lacks its pending peers:\n%s", hosts);
    if (strstr(hosts, " queued ") || strstr(hosts, " loner "))
        fail_msg("pods of no gang bound here have lines:\n%s", hosts);
    if (geteuid() == 0 && (!strstr(log, " gang-b.gang ") || !strstr(log, " gang-c ")))
        fail_msg("gang-a's first /etc/hosts lacks its peers:\n%s", log);
    free(log);
    free(hosts);

    /* gang-c starts here with the address its name showed; gang-b goes to
     * another node (which shows no address for it): its line goes. */
    bind_pod(f, "gang-c", NODE);
    bind_pod(f, "gang-b", "elsewhere");
    c = wait_phase(f, "gang-c", "Running", 20000);
    assert_string_equal(json_string_value(json_object_get(json_object_get(c, "status"),
                                                          "podIP")),
                        want_c);
    json_decref(c);
    for (int t = 0;; t += 50) {
        char got[32];
        hosts = hosts_file_of(f, "gang-c");
        addr_in(hosts, "gang-b", got, sizeof(got));
        if (!*got && strstr(hosts, " gang-c "))
            break;
        if (t >= 20000)
            fail_msg("gang-b still has a line after its binding elsewhere:\n%s", hosts);
        free(hosts);
        usleep(50 * 1000);
    }
    free(hosts);
    delete_pod(f, "gang-c");
    assert_true(wait_gone(f, "gang-c", 30000));
}

/* The same for a gang made while no agent ran: the agent learns of it when
 * it starts (its listing is sorted by name: the member bound here comes
 * before the peer it must name). */
static void test_agent_names_from_listing(void **state)
{
    fixture *f = *state;
    char *log;

    if (geteuid() != 0)
        skip(); /* what the command saw is the pod's own /etc/hosts only as root */
    rt_local_stop(f->rt);
    pending_pod(f, "zz-peer", "g3", "");
    make_obj(f, "pods", &api_pod, "default",
             "{`apiVersion`:`v1`,`kind`:`Pod`,`metadata`:{`name`:`aa-first`,`annotations`:{"
             "`scheduling.k8s.io/group-name`:`g3`}},`spec`:{`restartPolicy`:`Never`,"
             "`containers`:[{`name`:`c`,`image`:`x`,`command`:[`cat`,`/etc/hosts`]}]}}");
    f->rt = start_agent(f);
    json_decref(wait_phase(f, "aa-first", "Succeeded", 20000));
    log = read_log(f, "aa-first", "c", "");
    if (!strstr(log, " zz-peer "))
        fail_msg("aa-first's first /etc/hosts lacks its pending peer:\n%s", log);
    free(log);
}

/* A hosts file changed in place while a pod's resolver reads it (another pod
 * of the namespace starts or ends): each line the reader sees is a whole line
 * of the old or the new text, and the lines both have are always there. The
 * file used to be truncated and rewritten: a resolver that read in between
 * found no peers at all (t0520 failed so on a loaded CI machine), and one
 * that read during the write could see the head of one line glued to the
 * tail of another. The reader here reads in small pieces, as stdio does in
 * 4 KiB ones, to see as many moments as it can. */
typedef struct {
    const char *path, *a, *b;
    atomic_int stop, bad;
    atomic_ulong reads;
    char seen[8192];
} hosts_race;

/* text's line of len bytes (no '\n', no trailing blanks) is in text. */
static bool has_line(const char *text, const char *line, size_t len)
{
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n == len && !memcmp(p, line, len))
            return true;
        p += n + (nl ? 1 : 0);
    }
    return false;
}

/* What a resolver reads in got is a whole line of a or of b, each line. */
static bool lines_whole(const char *got, const char *a, const char *b)
{
    for (const char *p = got; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p), t = n;
        const char *s = p;
        while (t && (s[t - 1] == ' ' || s[t - 1] == '\t'))
            t--;
        if (!nl && t && *s != '#') /* a live line cut short */
            return false;
        if (t && *s != '#' && !has_line(a, s, t) && !has_line(b, s, t))
            return false;
        p += n + (nl ? 1 : 0);
    }
    return true;
}

/* Every live line of both a and b is live in got. */
static bool shared_lines_there(const char *got, const char *a, const char *b)
{
    for (const char *p = a; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n && *p != '#' && has_line(b, p, n) && !has_line(got, p, n)) {
            /* got may pad a line with spaces: look for that too */
            bool found = false;
            for (const char *q = got; *q && !found;) {
                const char *ql = strchr(q, '\n');
                size_t qn = ql ? (size_t)(ql - q) : strlen(q);
                found = qn >= n && !memcmp(q, p, n) && strspn(q + n, " ") == qn - n;
                q += qn + (ql ? 1 : 0);
            }
            if (!found)
                return false;
        }
        p += n + (nl ? 1 : 0);
    }
    return true;
}

/* Reads the whole file, however large it has grown, in small pieces. */
static void *hosts_reader(void *arg)
{
    hosts_race *r = arg;
    size_t cap = 1 << 16;
    char *got = malloc(cap);

    while (!atomic_load(&r->stop) && got) {
        int fd = open(r->path, O_RDONLY);
        size_t len = 0;
        ssize_t k;
        if (fd < 0)
            continue;
        for (;;) {
            if (cap - len < 98) {
                char *more = realloc(got, cap * 2);
                if (!more)
                    break;
                got = more;
                cap *= 2;
            }
            if ((k = read(fd, got + len, 97)) <= 0)
                break;
            len += (size_t)k;
        }
        close(fd);
        got[len] = '\0';
        atomic_fetch_add(&r->reads, 1);
        if ((!lines_whole(got, r->a, r->b) || !shared_lines_there(got, r->a, r->b)) &&
            atomic_fetch_add(&r->bad, 1) == 0)
            snprintf(r->seen, sizeof(r->seen), "%s", got);
    }
    free(got);
    return NULL;
}

/* Whether the file system under dir grants write leases (not NFS, 9p, or
 * fs.leases-enable=0): without them a file is never compacted while it is
 * read, nor at the end of the test. */
static bool leases_here(const char *dir)
{
    char p[128];
    int fd;
    bool ok;

    snprintf(p, sizeof(p), "%s/lease-probe", dir);
    if ((fd = open(p, O_RDWR | O_CREAT, 0644)) < 0)
        return false;
    ok = fcntl(fd, F_SETLEASE, F_WRLCK) == 0;
    if (ok)
        fcntl(fd, F_SETLEASE, F_UNLCK);
    close(fd);
    unlink(p);
    return ok;
}

static void test_hosts_file_changes_whole_lines(void **state)
{
    char dir[] = "/tmp/ty-hosts-XXXXXX", path[64], body_a[4096], body_b[1024], *a, *b;
    hosts_race r = {.path = path};
    pthread_t t;
    size_t n = 0;
    struct stat st;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/hosts", dir);
    /* a: twelve workers. b: worker-0 the same, worker-1 at another address,
     * a Service line longer than any, a short one: lines come, go, change. */
    for (int i = 0; i < 12; i++)
        n += (size_t)snprintf(body_a + n, sizeof(body_a) - n,
                              "127.1.0.%d job-worker-%d job-worker-%d.default "
                              "job-worker-%d.job job-worker-%d.job.default.svc\n",
                              i + 1, i, i, i, i);
    snprintf(body_b, sizeof(body_b),
             "127.1.0.1 job-worker-0 job-worker-0.default job-worker-0.job "
             "job-worker-0.job.default.svc\n"
             "127.1.0.99 job-worker-1 job-worker-1.default\n"
             "127.1.0.1 job job.default job.default.svc job.default.svc.cluster.local "
             "job-headless job-headless.default job-headless.default.svc\n"
             "127.1.0.7 x\n");
    a = rt_hosts_text(body_a, "127.1.0.1");
    b = rt_hosts_text(body_b, "127.1.0.1");
    r.a = a;
    r.b = b;
    assert_int_equal(rt_hosts_file_update(path, a), 0);
    assert_int_equal(pthread_create(&t, NULL, hosts_reader, &r), 0);
    /* 2000 changes: with the reader in the file nearly all the time most
     * go line by line, and the file grows by their new lines, well short of
     * the size at which it would be written whole regardless. */
    for (int i = 0; i < 2000 && !atomic_load(&r.bad); i++)
        assert_int_equal(rt_hosts_file_update(path, i % 2 ? a : b), 0);
    atomic_store(&r.stop, 1);
    pthread_join(t, NULL);
    /* With no reader left, the next update (the same text) compacts it. */
    assert_int_equal(rt_hosts_file_update(path, a), 0);
    if (atomic_load(&r.bad))
        fail_msg("%d of %lu reads of the hosts file showed a cut line or lacked a line both "
                 "texts have; the first:\n[%s]",
                 atomic_load(&r.bad), atomic_load(&r.reads), r.seen);
    /* It ends showing a's lines, no other live line, and it is the text again. */
    {
        char *got = rt_read_file(path, 1 << 20, NULL);
        assert_non_null(got);
        assert_true(lines_whole(got, a, a));
        assert_true(shared_lines_there(got, a, a));
        free(got);
    }
    assert_int_equal(stat(path, &st), 0);
    if (leases_here(dir) && (size_t)st.st_size != strlen(a))
        fail_msg("the hosts file grew to %lld bytes for a %zu-byte text", (long long)st.st_size,
                 strlen(a));
    free(a);
    free(b);
    tmpdir_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_lines),
        cmocka_unit_test(test_table_many_finished),
        cmocka_unit_test(test_hosts_file_changes_whole_lines),
        cmocka_unit_test_setup_teardown(test_agent_hosts_show_live_pods_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_agent_names_before_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_agent_names_from_listing, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
