/* cmd_server.c - `trainyard server`: the embedded control plane. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "cli/cli.h"
#include "controller/gc.h"
#include "controller/jobs/engine.h"
#include "controller/volcano/vcjob.h"
#include "runtime/local/runtime.h"
#include "scheduler/sched.h"
#include "server/server.h"
#include "store/store.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void server_usage(FILE *f)
{
    fprintf(f, "usage: trainyard server [--address ADDR] [--port PORT] [--data-dir DIR]\n"
               "                        [--log-level debug|info|warn|error]\n"
               "  --address    IPv4 address to listen on (default 127.0.0.1)\n"
               "  --port       TCP port (default %d; 0 picks a free one and prints it)\n"
               "  --data-dir   where the database and logs live\n"
               "               (default $TRAINYARD_DATA_DIR or ~/.local/share/trainyard)\n"
               "  --log-level  default info\n"
               "  --node-name  the name this machine registers as (default: the host name)\n"
               "  --fake-gpus  register N fake nvidia.com/gpu devices instead of detecting GPUs\n",
               TY_DEFAULT_PORT);
}

static void default_data_dir(char *buf, size_t len)
{
    const char *env = getenv("TRAINYARD_DATA_DIR");
    const char *xdg = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    if (env && *env)
        snprintf(buf, len, "%s", env);
    else if (xdg && *xdg)
        snprintf(buf, len, "%s/trainyard", xdg);
    else
        snprintf(buf, len, "%s/.local/share/trainyard", home && *home ? home : ".");
}

/* A number in [lo, hi] or -1 after printing which flag was wrong. */
static long int_flag(const char *flag, const char *v, long lo, long hi)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < lo || n > hi) {
        fprintf(stderr, "error: invalid --%s %s: want %ld-%ld\n", flag, v, lo, hi);
        return -1;
    }
    return n;
}

/* Parses the flags. Returns 0 to run, or the exit status to return now. */
static int parse_flags(int argc, char **argv, server_opts *so, rt_local_opts *ro,
                       char *data_dir, size_t len)
{
    static const struct option longopts[] = {
        {"address", required_argument, NULL, 'a'}, {"port", required_argument, NULL, 'p'},
        {"data-dir", required_argument, NULL, 'd'}, {"log-level", required_argument, NULL, 'l'},
        {"node-name", required_argument, NULL, 'N'}, {"fake-gpus", required_argument, NULL, 'G'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    ty_log_level lvl;
    long v;
    int c;

    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'a': so->address = optarg; break;
        case 'd': snprintf(data_dir, len, "%s", optarg); break;
        case 'N': ro->node_name = optarg; break;
        case 'p':
            if ((v = int_flag("port", optarg, 0, 65535)) < 0)
                return 2;
            so->port = (uint16_t)v;
            break;
        case 'G':
            if ((v = int_flag("fake-gpus", optarg, 0, 1024)) < 0)
                return 2;
            ro->fake_gpus = (int)v;
            break;
        case 'l':
            if (ty_log_parse_level(optarg, &lvl) < 0) {
                fprintf(stderr, "error: invalid --log-level %s: want debug, info, warn or error\n",
                        optarg);
                return 2;
            }
            ty_log_set_level(lvl);
            break;
        case 'h': server_usage(stdout); return -1;
        default: server_usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "error: unexpected argument %s\n", argv[optind]);
        server_usage(stderr);
        return 2;
    }
    return 0;
}

int cmd_server(int argc, char **argv)
{
    server_opts so = {.address = "127.0.0.1", .port = TY_DEFAULT_PORT};
    rt_local_opts ro = {.fake_gpus = -1};
    char data_dir[4096];
    ty_error err;
    ty_store *store;
    ty_gc *gc;
    ty_jobs *jobs;
    ty_vcjobs *vcjobs;
    ty_sched *sched;
    rt_local *rt;
    ty_server *srv;
    int rc;

    default_data_dir(data_dir, sizeof(data_dir));
    if ((rc = parse_flags(argc, argv, &so, &ro, data_dir, sizeof(data_dir))) != 0)
        return rc < 0 ? 0 : rc;
    so.data_dir = data_dir;
    ty_error_init(&err);
    store = store_open(data_dir, &err);
    if (!store) {
        fprintf(stderr, "error: cannot open the store in %s: %s\n", data_dir, err.text);
        ty_error_clear(&err);
        return 1;
    }
    ro.data_dir = data_dir;
    gc = gc_start(store, &err);
    jobs = gc ? jobs_start(store, &err) : NULL;
    vcjobs = jobs ? vcjobs_start(store, &err) : NULL;
    sched = vcjobs ? sched_start(store, &err) : NULL;
    rt = sched ? rt_local_start(store, &ro, &err) : NULL;
    srv = rt ? server_start(store, &so, &err) : NULL;
    if (!srv) {
        fprintf(stderr, "error: %s\n", err.text);
        rt_local_stop(rt);
        sched_stop(sched);
        vcjobs_stop(vcjobs);
        jobs_stop(jobs);
        gc_stop(gc);
        store_close(store);
        ty_error_clear(&err);
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    ty_info("trainyard server listening on http://%s:%u (data dir %s)", so.address,
            (unsigned)server_port(srv), data_dir);
    /* Scripts that start the server with --port 0 read the port from here. */
    printf("listening on http://%s:%u\n", so.address, (unsigned)server_port(srv));
    fflush(stdout);
    while (!stop_requested)
        pause();
    ty_info("shutting down");
    /* The API goes first so nothing new arrives; the runtime's supervisors
     * keep the replicas running for the next server to adopt. */
    server_stop(srv);
    rt_local_stop(rt);
    sched_stop(sched);
    vcjobs_stop(vcjobs);
    jobs_stop(jobs);
    gc_stop(gc);
    store_close(store);
    return 0;
}
