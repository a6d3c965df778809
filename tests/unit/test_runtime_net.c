/* test_runtime_net.c - what a pod sees of the machine under the local
 * runtime: its own address, names of other pods and services (hosts file),
 * ConfigMap / Secret volumes at their mountPath, and the bind shim that keeps
 * two pods' wildcard listeners on one port apart. Mount checks need root. */
#include "test_runtime_fixture.h"

#define PY "/usr/bin/python3"

static bool is_root(void)
{
    if (geteuid() == 0)
        return true;
    fprintf(stderr, "skipped: needs root (mount namespace for /etc/hosts and volumes)\n");
    return false;
}

static const char *ip_of(const json_t *pod)
{
    return json_string_value(json_object_get(json_object_get(pod, "status"), "podIP"));
}

static void test_pod_ips_distinct_and_loopback(void **state)
{
    fixture *f = *state;
    json_t *a, *b;

    make_pod(f, "ip-a", "{`containers`:[{`name`:`c`,`image`:`x`,`command`:[`sleep`,`100`]}]}");
    make_pod(f, "ip-b", "{`containers`:[{`name`:`c`,`image`:`x`,`command`:[`sleep`,`100`]}]}");
    a = wait_phase(f, "ip-a", "Running", 10000);
    b = wait_phase(f, "ip-b", "Running", 10000);
    assert_true(!strncmp(ip_of(a), "127.", 4));
    assert_true(strncmp(ip_of(a), "127.0.0.", 8) != 0);
    assert_string_not_equal(ip_of(a), ip_of(b));
    json_decref(a);
    json_decref(b);
}

static void test_hosts_resolve_pods_and_services(void **state)
{
    fixture *f = *state;
    json_t *a, *b;
    char want[256], *log;

    if (!is_root())
        skip();
    make_obj(f, "services", &api_service, "default",
             "{`apiVersion`:`v1`,`kind`:`Service`,`metadata`:{`name`:`master-svc`},"
             "`spec`:{`clusterIP`:`None`,`selector`:{`app`:`peer-a`},`ports`:[{`port`:23456}]}}");
    make_pod(f, "peer-a", "{`hostname`:`peer-a`,`subdomain`:`grp`,`containers`:[{`name`:`c`,"
                          "`image`:`x`,`command`:[`sleep`,`100`]}]}");
    a = wait_phase(f, "peer-a", "Running", 10000);
    make_pod(f, "peer-b",
             "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,`command`:[`sh`,"
             "`-c`,`getent hosts peer-a; getent hosts peer-a.grp; getent hosts master-svc; "
             "getent hosts peer-b; hostname`]}]}");
    b = wait_phase(f, "peer-b", "Succeeded", 10000);
    log = read_log(f, "peer-b", "c", "");
    snprintf(want, sizeof(want), "Z %s", ip_of(a));
    /* three lines (pod, Volcano-style FQDN, service) resolve to peer-a */
    {
        int n = 0;
        for (char *p = log; (p = strstr(p, want)); p++)
            n++;
        if (n != 3)
            fail_msg("want 3 lines with %s:\n%s", ip_of(a), log);
    }
    assert_non_null(strstr(log, "peer-a.grp"));
    snprintf(want, sizeof(want), "Z %s", ip_of(b));
    assert_non_null(strstr(log, want)); /* its own name */
    assert_non_null(strstr(log, "Z peer-b\n")); /* hostname */
    free(log);
    json_decref(a);
    json_decref(b);
}

static void test_configmap_and_secret_volumes(void **state)
{
    fixture *f = *state;
    json_t *pod;
    char *log, mnt[64], spec[2048];
    struct stat st;

    if (!is_root())
        skip();
    snprintf(mnt, sizeof(mnt), "/mnt/ty-test-%d", (int)getpid());
    make_obj(f, "configmaps", &api_configmap, "default",
             "{`apiVersion`:`v1`,`kind`:`ConfigMap`,`metadata`:{`name`:`hostfile`},"
             "`data`:{`hostfile`:`w-0 slots=1`}}");
    make_obj(f, "secrets", &api_secret, "default",
             "{`apiVersion`:`v1`,`kind`:`Secret`,`metadata`:{`name`:`keys`},"
             "`data`:{`id`:`c2VjcmV0LWtleQ==`}}"); /* "secret-key" */
    snprintf(spec, sizeof(spec),
             "{`restartPolicy`:`Never`,`volumes`:[{`name`:`cfg`,`configMap`:{`name`:`hostfile`,"
             "`items`:[{`key`:`hostfile`,`path`:`hostfile`,`mode`:292}]}},{`name`:`sec`,"
             "`secret`:{`secretName`:`keys`}},{`name`:`scratch`,`emptyDir`:{}}],"
             "`containers`:[{`name`:`c`,`image`:`x`,`command`:[`sh`,`-c`,"
             "`cat %s/mpi/hostfile; echo; cat %s/keys/id; echo; touch %s/keys/x && echo "
             "WRITABLE; echo data > /scratch/f && cat /scratch/f`],"
             "`volumeMounts`:[{`name`:`cfg`,`mountPath`:`%s/mpi`},{`name`:`sec`,"
             "`mountPath`:`%s/keys`,`readOnly`:true},{`name`:`scratch`,"
             "`mountPath`:`/scratch`}]}]}",
             mnt, mnt, mnt, mnt, mnt);
    make_pod(f, "vols", spec);
    pod = wait_phase(f, "vols", "Succeeded", 10000);
    log = read_log(f, "vols", "c", "");
    if (!strstr(log, "Z w-0 slots=1\n") || !strstr(log, "Z secret-key\n") ||
        strstr(log, "WRITABLE") || !strstr(log, "Z data\n"))
        fail_msg("volumes not as expected:\n%s", log);
    free(log);
    json_decref(pod);
    /* Only the pod sees the files: the host has an empty mount point. */
    snprintf(spec, sizeof(spec), "%s/mpi/hostfile", mnt);
    assert_int_not_equal(stat(spec, &st), 0);
    snprintf(spec, sizeof(spec), "rm -rf %s /scratch", mnt);
    assert_int_equal(system(spec), 0);
}

static bool have_python(void)
{
    if (access(PY, X_OK) == 0)
        return true;
    fprintf(stderr, "skipped: no %s\n", PY);
    return false;
}

/* Two pods listen on 0.0.0.0:<port> (and [::]:<port>) at once, each ends up
 * on its own address, and a client reaches each by pod IP. */
static void test_bind_shim_same_port(void **state)
{
    fixture *f = *state;
    char spec[2048], want[128], *log;
    const char *names[] = {"srv-a", "srv-b"};
    int port = 20000 + getpid() % 20000;
    json_t *pods[2];

    if (!have_python())
        skip();
    for (int i = 0; i < 2; i++) {
        snprintf(spec, sizeof(spec),
                 "{`containers`:[{`name`:`c`,`image`:`x`,`command`:[`" PY "`,`-c`,"
                 "`import socket,time\\n"
                 "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\\n"
                 "s.bind(('0.0.0.0', %d)); s.listen(5)\\n"
                 "t=socket.socket(socket.AF_INET6); t.bind(('::', %d)); t.listen(5)\\n"
                 "print('bound', s.getsockname()[0], t.getsockname()[0], flush=True)\\n"
                 "c,_=s.accept(); c.sendall(b'%s'); c.close(); time.sleep(100)`]}]}",
                 port, port + 1, names[i]);
        make_pod(f, names[i], spec);
    }
    for (int i = 0; i < 2; i++) {
        pods[i] = wait_phase(f, names[i], "Running", 10000);
        snprintf(want, sizeof(want), "Z bound %s ::ffff:%s\n", ip_of(pods[i]), ip_of(pods[i]));
        free(wait_log(f, names[i], "c", want, 5000));
    }
    /* Each listener answers on its own pod address. */
    for (int i = 0; i < 2; i++) {
        char cmd[512], buf[64] = "";
        FILE *p;
        snprintf(cmd, sizeof(cmd),
                 PY " -c \"import socket; s=socket.create_connection(('%s', %d)); "
                    "print(s.recv(64).decode())\"",
                 ip_of(pods[i]), port);
        p = popen(cmd, "r");
        assert_non_null(p);
        assert_non_null(fgets(buf, sizeof(buf), p));
        pclose(p);
        assert_true(!strncmp(buf, names[i], strlen(names[i])));
    }
    log = read_log(f, "srv-b", "c", "");
    assert_null(strstr(log, "Address already in use"));
    free(log);
    json_decref(pods[0]);
    json_decref(pods[1]);
}

/* PyTorch's TCPStore binds the wildcard: two masters on one port, side by
 * side, each reachable through its MASTER_ADDR (the pod's name). */
static void test_torch_tcpstore_side_by_side(void **state)
{
    fixture *f = *state;
    char spec[2048];
    const char *names[] = {"job1-master-0", "job2-master-0"};
    int port = 23456;

    if (!have_python() || system(PY " -c 'import torch.distributed' 2>/dev/null") != 0) {
        fprintf(stderr, "skipped: no torch for %s\n", PY);
        skip();
    }
    if (!is_root()) /* MASTER_ADDR by name needs the pod's hosts file */
        skip();
    for (int i = 0; i < 2; i++) {
        snprintf(spec, sizeof(spec),
                 "{`restartPolicy`:`Never`,`containers`:[{`name`:`c`,`image`:`x`,"
                 "`command`:[`" PY "`,`-c`,`import datetime, torch.distributed as d\\n"
                 "m=d.TCPStore('%s', %d, 2, True, timeout=datetime.timedelta(seconds=240), wait_for_workers=False)\\n"
                 "w=d.TCPStore('%s', %d, 2, False, timeout=datetime.timedelta(seconds=240))\\n"
                 "w.set('k', '%s'); print('got', m.get('k').decode(), flush=True)`]}]}",
                 names[i], port, names[i], port, names[i]);
        make_pod(f, names[i], spec);
    }
    for (int i = 0; i < 2; i++) {
        char want[128];
        /* (two imports of torch at once take a minute or more on a loaded
         * 2-core machine under ASan) */
        json_decref(wait_phase(f, names[i], "Succeeded", 300000));
        snprintf(want, sizeof(want), "Z got %s\n", names[i]);
        free(wait_log(f, names[i], "c", want, 1000));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pod_ips_distinct_and_loopback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hosts_resolve_pods_and_services, setup, teardown),
        cmocka_unit_test_setup_teardown(test_configmap_and_secret_volumes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bind_shim_same_port, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torch_tcpstore_side_by_side, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
