/* cmd_server.c - `trainyard server`: the embedded control plane. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/dirlock.h"
#include "base/log.h"
#include "base/thread.h"
#include "base/timeutil.h"
#include "cli/cli.h"
#include "server/event_ttl.h"
#include "server/trainer_seed.h"
#include "client/kc_embedded.h"
#include "controller/trainer_progress.h"
#include "server/tls.h"
#include "controller/gc.h"
#include "controller/volumes.h"
#include "controller/quota.h"
#include "controller/jobs/engine.h"
#include "controller/trainer/trainjob_ctl.h"
#include "controller/volcano/vcjob.h"
#include "controller/volcano/vcflow.h"
#include "model/quantity.h"
#include "cli/backend_logs.h"
#include "runtime/backend.h"
#include "runtime/local/runtime.h"
#include "runtime/sim/sim.h"
#include "cli/server_slurm.h"
#include "cli/server_security.h"
#include "scheduler/sched.h"
#include "server/progress.h"
#include "server/server.h"
#include "store/store.h"

/* SIGINT/SIGTERM may be delivered to any of the server's threads, not
 * necessarily the main one, which pause() then never noticed (the server
 * ignored SIGTERM about once in six runs once the job engine had eight
 * workers). The handler writes a byte to a pipe the main thread reads. */
static int stop_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
    int saved = errno;
    (void)sig;
    if (write(stop_pipe[1], "x", 1) < 0) {
        /* full pipe: a stop is pending already */
    }
    errno = saved;
}

/* Blocks until SIGINT or SIGTERM. */
static void wait_for_stop(void)
{
    char c;

    while (read(stop_pipe[0], &c, 1) < 0 && errno == EINTR)
        ;
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
               "  --fake-gpus  register N fake nvidia.com/gpu devices instead of detecting GPUs\n"
               "  --gpu-idle-warning DURATION  a pod that holds GPUs at 0%% utilization\n"
               "               this long gets a Warning Event, GPUIdle (default 30m; 0 = never)\n"
               "  --disk-free-min SIZE|PCT  below this much free space in the data directory\n"
               "               the node reports DiskPressure and takes no new pods\n"
               "               (default: the smaller of 5%% and 1Gi; 0 = never)\n"
               "  --sim-nodes SPEC  also register simulated nodes that \"run\" pods bound to them:\n"
               "               N, NxG (N nodes of G GPUs) or NxG:cpu=64,memory=512Gi,pods=110\n"
               "  --no-local-node  do not register or run this machine's node\n"
               "  --scheduler-conf FILE  the gang scheduler's configuration in the\n"
               "               volcano-scheduler.conf shape (default: Volcano's default)\n"
               "  --scheduler-name NAME  a spec.schedulerName the gang scheduler serves;\n"
               "               repeat for more (default: volcano and default-scheduler, as\n"
               "               there is no other scheduler); pods naming another are left\n"
               "               alone, though their resources count once they are bound\n"
               "  --api-only   a stand-in cluster for `trainyard operator`: the API, the store,\n"
               "               the cluster's own controllers (garbage collector, Event TTL,\n"
               "               quota, volumes) and the node agent, but no job controllers\n"
               "               and no gang scheduler\n"
               "  --event-ttl DURATION  how long an Event is kept after its last write\n"
               "               (default 1h, as kube-apiserver; 0 keeps Events for ever)\n"
               "  --job-record-retention DURATION  how long the JobRecord of a deleted\n"
               "               TrainJob is kept (default 168h; 0: none are written)\n"
               "  --allowed-hosts NAMES  Host names the API answers to beyond loopback names\n"
               "               and IP addresses (comma-separated; *.example.org for a domain)\n"
               "  --cors-allowed-origins REGEXPS  other web origins that may call the API\n"
               "               (comma-separated regular expressions; default none)\n"
               "  --max-requests-inflight N  read requests at once (default 400; 0: no limit)\n"
               "  --max-mutating-requests-inflight N  writes at once (default 200; 0: no limit)\n"
               "  --request-timeout DURATION  a connection idle this long is closed\n"
               "               (default 1m; watches and followed logs are exempt)\n"
               "  --max-connections N  open connections at most (default 8192, and below\n"
               "               the open-file limit)\n"
               "  --max-connections-per-client N  from one address (default 2048)\n"
               "  --pod-log-max-size QUANTITY  a container's log file is rotated past this\n"
               "               size, one older file kept (default 10Mi, as kubelet's\n"
               "               containerLogMaxSize)\n"
               "  --pod-log-retention DURATION  how long the logs of a deleted pod are kept\n"
               "               (default 24h; 0 keeps them for ever)\n"
               RUNTIME_USAGE
               SECURITY_USAGE,
               TY_DEFAULT_PORT);
}

static void default_data_dir(char *buf, size_t len)
{
    cli_default_data_dir(buf, len);
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

/* What the server runs pods on: this machine and/or simulated nodes. */
typedef struct node_flags {
    bool local;
    const char *sim_spec; /* NULL = no simulated nodes */
    rt_sim_opts sim;
    char sim_cpu[64], sim_mem[64];
    const char *sched_conf; /* NULL = Volcano's default configuration */
    const char *sched_names[SCHED_MAX_NAMES + 1]; /* --scheduler-name; none: the default */
    size_t nsched_names;
    int64_t event_ttl_ms;   /* 0 = Events never expire */
    bool api_only;          /* --api-only: no job controllers, no scheduler */
    runtime_flags rt;       /* --runtime, --slurm-* */
} node_flags;

static int sim_flag(node_flags *nf, const char *spec)
{
    ty_error err;

    ty_error_init(&err);
    if (rt_sim_parse_spec(spec, &nf->sim, nf->sim_cpu, nf->sim_mem, sizeof(nf->sim_cpu),
                          &err) < 0) {
        fprintf(stderr, "error: invalid --sim-nodes %s: %s\n", spec, err.text);
        ty_error_clear(&err);
        return -1;
    }
    nf->sim_spec = spec;
    return 0;
}

/* --pod-log-max-size: a quantity of bytes, 1Ki to 1Ti. */
static int log_size_flag(const char *v, long long *out)
{
    int64_t milli, bytes;
    ty_error err;

    ty_error_init(&err);
    if (quantity_parse(v, &milli, &err) < 0) {
        fprintf(stderr, "error: invalid --pod-log-max-size %s: %s\n", v, err.text);
        ty_error_clear(&err);
        return -1;
    }
    bytes = quantity_value(milli);
    if (bytes < 1024 || bytes > (1ll << 40)) {
        fprintf(stderr, "error: invalid --pod-log-max-size %s: want 1Ki to 1Ti\n", v);
        return -1;
    }
    *out = bytes;
    return 0;
}

/* The local node's disk flags (free-space floor, pod logs): -1 after a
 * usage error. */
static int node_disk_flag(int c, const char *arg, rt_local_opts *ro)
{
    if (c == 'D') {
        rt_disk_min m;
        ty_error err;
        ty_error_init(&err);
        if (rt_disk_min_parse(arg, &m, &err) < 0) {
            fprintf(stderr, "error: --disk-free-min: %s\n", err.text);
            ty_error_clear(&err);
            return -1;
        }
        ro->disk_free_min = arg;
        return 0;
    }
    if (c == 'm')
        return log_size_flag(arg, &ro->log_max_bytes);
    if (ty_duration_parse(arg, &ro->log_retention_ms) < 0) {
        fprintf(stderr, "error: invalid --pod-log-retention %s: want a duration such as 24h, "
                        "30m, 90s or 0\n", arg);
        return -1;
    }
    return 0;
}

/* The front door's flags (server/guard.h): -1 after a usage error. */
static int front_door_flag(int c, const char *arg, server_opts *so)
{
    int64_t ms;
    long v;

    switch (c) {
    case 'H': so->allowed_hosts = arg; return 0;
    case 'O': so->cors_allowed_origins = arg; return 0;
    case 'R':
    case 'M':
        if ((v = int_flag(c == 'R' ? "max-requests-inflight" : "max-mutating-requests-inflight",
                          arg, 0, 1000000)) < 0)
            return -1;
        /* 0 is kube-apiserver's "no limit"; server_opts says it with -1 */
        *(c == 'R' ? &so->max_requests_inflight : &so->max_mutating_requests_inflight) =
            v == 0 ? -1 : (int)v;
        return 0;
    case 'X':
    case 'P':
        if ((v = int_flag(c == 'X' ? "max-connections" : "max-connections-per-client", arg, 1,
                          1000000)) < 0)
            return -1;
        *(c == 'X' ? &so->max_connections : &so->max_connections_per_client) = (int)v;
        return 0;
    default: /* 'T' */
        if (ty_duration_parse(arg, &ms) < 0 || ms < 0 || ms > 86400000LL) {
            fprintf(stderr, "error: invalid --request-timeout %s: want a duration such as 1m "
                            "or 30s, at most 24h (0: no timeout)\n", arg);
            return -1;
        }
        so->request_timeout_s = ms == 0 ? -1 : ms < 1000 ? 1 : (int)(ms / 1000);
        return 0;
    }
}

/* The flags that take a number or a duration (--port, --fake-gpus,
 * --gpu-idle-warning, --event-ttl): -1 after a usage error. */
static int number_flag(int c, const char *arg, server_opts *so, rt_local_opts *ro,
                       node_flags *nf)
{
    long v;

    switch (c) {
    case 'p':
        if ((v = int_flag("port", arg, 0, 65535)) < 0)
            return -1;
        so->port = (uint16_t)v;
        return 0;
    case 'G':
        if ((v = int_flag("fake-gpus", arg, 0, 1024)) < 0)
            return -1;
        ro->fake_gpus = (int)v;
        return 0;
    case 'W':
        if (ty_duration_parse(arg, &ro->gpu_idle_warn_ms) < 0 || ro->gpu_idle_warn_ms < 0) {
            fprintf(stderr, "error: invalid --gpu-idle-warning %s: want a duration such as "
                            "30m, 90s or 0\n", arg);
            return -1;
        }
        return 0;
    default: /* 'E' */
        if (ty_duration_parse(arg, &nf->event_ttl_ms) < 0) {
            fprintf(stderr, "error: invalid --event-ttl %s: want a duration such as 1h, "
                            "30m, 90s or 0\n", arg);
            return -1;
        }
        return 0;
    }
}

/* What the flags say together: 0, or 2 after saying what does not go. */
static int flags_consistent(node_flags *nf, const char *data_dir)
{
    if (runtime_flags_finish(&nf->rt, data_dir) < 0)
        return 2;
    if (nf->api_only && (nf->sched_conf || nf->nsched_names || nf->rt.slurm)) {
        fprintf(stderr, "error: --api-only runs no scheduler: --scheduler-conf, "
                        "--scheduler-name and --runtime slurm belong to `trainyard operator` "
                        "or a full server\n");
        return 2;
    }
    if (nf->rt.slurm)
        nf->local = false; /* Slurm's nodes run the pods */
    if (!nf->local && !nf->sim_spec && !nf->rt.slurm) {
        fprintf(stderr, "error: --no-local-node without --sim-nodes leaves no node to run pods\n");
        return 2;
    }
    return 0;
}

/* Parses the flags. Returns 0 to run, or the exit status to return now. */
static int parse_flags(int argc, char **argv, server_opts *so, rt_local_opts *ro,
                       node_flags *nf, security_flags *sf, char *data_dir, size_t len)
{
    static const struct option longopts[] = {
        {"address", required_argument, NULL, 'a'}, {"port", required_argument, NULL, 'p'},
        {"data-dir", required_argument, NULL, 'd'}, {"log-level", required_argument, NULL, 'l'},
        {"node-name", required_argument, NULL, 'N'}, {"fake-gpus", required_argument, NULL, 'G'},
        {"sim-nodes", required_argument, NULL, 'S'}, {"no-local-node", no_argument, NULL, 'L'},
        {"scheduler-conf", required_argument, NULL, 'C'},
        {"scheduler-name", required_argument, NULL, 'n'},
        {"event-ttl", required_argument, NULL, 'E'},
        {"api-only", no_argument, NULL, 'A'},
        {"allowed-hosts", required_argument, NULL, 'H'},
        {"cors-allowed-origins", required_argument, NULL, 'O'},
        {"max-requests-inflight", required_argument, NULL, 'R'},
        {"max-mutating-requests-inflight", required_argument, NULL, 'M'},
        {"request-timeout", required_argument, NULL, 'T'},
        {"max-connections", required_argument, NULL, 'X'},
        {"max-connections-per-client", required_argument, NULL, 'P'},
        {"pod-log-max-size", required_argument, NULL, 'm'},
        {"pod-log-retention", required_argument, NULL, 'r'},
        {"disk-free-min", required_argument, NULL, 'D'},
        {"gpu-idle-warning", required_argument, NULL, 'W'},
        {"job-record-retention", required_argument, NULL, CLI_OPT_RECORD_RETENTION},
        SECURITY_LONGOPTS,
        RUNTIME_LONGOPTS,
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    int c;

    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'a': so->address = optarg; break;
        case 'd': snprintf(data_dir, len, "%s", optarg); break;
        case 'N': ro->node_name = optarg; break;
        case 'L': nf->local = false; break;
        case 'C': nf->sched_conf = optarg; break;
        case 'A': nf->api_only = true; break;
        case 'n':
            if (cli_sched_name_flag(optarg, nf->sched_names, &nf->nsched_names, SCHED_MAX_NAMES) < 0)
                return 2;
            break;
        case 'D':
        case 'm':
        case 'r':
            if (node_disk_flag(c, optarg, ro) < 0)
                return 2;
            break;
        case 'W':
        case 'E':
        case 'p':
        case 'G':
            if (number_flag(c, optarg, so, ro, nf) < 0)
                return 2;
            break;
        case CLI_OPT_RECORD_RETENTION:
            if (cli_record_retention_flag(optarg) < 0)
                return 2;
            break;
        case 'H':
        case 'O':
        case 'R':
        case 'M':
        case 'X':
        case 'P':
        case 'T':
            if (front_door_flag(c, optarg, so) < 0)
                return 2;
            break;
        case 'S':
            if (sim_flag(nf, optarg) < 0)
                return 2;
            break;
        case 'l':
            if (cli_log_level_flag(optarg) < 0)
                return 2;
            break;
        case 'h': server_usage(stdout); return -1;
        default:
            if (security_is_flag(c)) {
                if (security_flag(c, optarg, sf) < 0)
                    return 2;
                break;
            }
            if (runtime_is_flag(c)) {
                if (runtime_flag(c, optarg, &nf->rt) < 0)
                    return 2;
                break;
            }
            server_usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "error: unexpected argument %s\n", argv[optind]);
        server_usage(stderr);
        return 2;
    }
    return flags_consistent(nf, data_dir);
}

/* Each connection and watch holds a descriptor; the soft limit (often 1024)
 * would let a few hundred idle clients starve the store and the runtime. */
static void raise_nofile(void)
{
    struct rlimit rl;

    char was[32];

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
        return;
    snprintf(was, sizeof(was), "%llu", (unsigned long long)rl.rlim_cur);
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        ty_warn("server: cannot raise the open-file limit: %s", strerror(errno));
    else
        setenv(RT_NOFILE_ENV, was, 1); /* for the containers (runtime.h) */
}

/* What runs behind the API, each part on the client interface; started in
 * this order, stopped in the reverse. */
typedef struct plane {
    ty_kc *kc;
    ty_gc *gc;
    ty_event_ttl *ttl;
    ty_jobs *jobs;
    ty_vcjobs *vcjobs;
    ty_trainjobs *trainjobs;
    ty_vccron *crons;
    ty_jobflows *flows;
    ty_volumes *vols;
    ty_quotactl *quotas;
    ty_sched *sched;
    rt_backend rt, sim;
} plane;

/* Stops what plane_start started (any prefix of it). The runtime's
 * supervisors keep the replicas running for the next server to adopt. */
static void plane_stop(plane *p)
{
    rt_backend_stop(&p->sim);
    rt_backend_stop(&p->rt);
    sched_stop(p->sched);
    quotactl_stop(p->quotas);
    volumes_stop(p->vols);
    jobflows_stop(p->flows);
    vccron_stop(p->crons);
    trainjobs_stop(p->trainjobs);
    vcjobs_stop(p->vcjobs);
    jobs_stop(p->jobs);
    event_ttl_stop(p->ttl);
    gc_stop(p->gc);
    kc_free(p->kc);
    memset(p, 0, sizeof(*p));
}

/* Controllers, the scheduler and the runtimes, which see the store only
 * through the client interface (client/kc.h). -1 with err, everything
 * started stopped again. */
static int plane_start(plane *p, ty_store *store, const node_flags *nf, rt_local_opts *ro,
                       const char *data_dir, ty_error *err)
{
    sched_opts sopts = {.conf_path = nf->sched_conf, .names = nf->sched_names,
                        .admit_only = nf->rt.slurm};
    rt_slurm_opts slo = nf->rt.so;

    slo.sched_names = nf->sched_names;

    memset(p, 0, sizeof(*p));
    if (!(p->kc = kc_embedded_new(store))) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        return -1;
    }
    /* --api-only: what a cluster runs beside kube-apiserver (its controller
     * manager's garbage collector, quota and volume controllers; kubelets),
     * not what an operator brings (job controllers, the gang scheduler). */
    bool jobs = !nf->api_only;
    /* The server serves TrainJobs' progress endpoint: the TrainJob
     * controller makes pods only once it has the URL (progress_ready). */
    if (jobs)
        trainer_progress_expect();
    if (!(p->gc = gc_start(p->kc, err)) ||
        (nf->event_ttl_ms > 0 && !(p->ttl = event_ttl_start(store, nf->event_ttl_ms, err))) ||
        (jobs && !(p->jobs = jobs_start(p->kc, err))) ||
        (jobs && !(p->vcjobs = vcjobs_start(p->kc, err))) ||
        (jobs && !(p->trainjobs = trainjobs_start(p->kc, err))) ||
        (jobs && !(p->crons = vccron_start(p->kc, err))) ||
        (jobs && !(p->flows = jobflows_start(p->kc, err))) ||
        !(p->vols = volumes_start(p->kc, data_dir, err)) ||
        !(p->quotas = quotactl_start(p->kc, err)) ||
        (jobs && !(p->sched = sched_start_opts(p->kc, &sopts, err))) ||
        (nf->local && rt_backend_start(&p->rt, &rt_local_backend, p->kc, ro, err) < 0) ||
        (nf->rt.slurm && rt_backend_start(&p->rt, &rt_slurm_backend, p->kc, &slo, err) < 0) ||
        (nf->sim_spec && rt_backend_start(&p->sim, &rt_sim_backend, p->kc, &nf->sim, err) < 0)) {
        plane_stop(p);
        return -1;
    }
    return 0;
}

/* The TrainJob progress endpoint's URL and CA for the jobs' pods
 * (controller/trainer_progress.h), now that the server listens. The CA is
 * the data directory's own when the server made its certificate; with
 * --tls-cert-file the server does not know which CA signed it, so pods
 * get none and verify with their system's trust (docs/trainer.md). */
static void progress_ready(const char *url, const char *data_dir, const security_flags *sf,
                           const security_state *sec)
{
    char pod_url[256], path[4200];
    char *ca = NULL;
    size_t len;
    ty_error err;

    if (trainer_progress_pod_url(url, pod_url, sizeof(pod_url)) < 0) {
        ty_warn("server: no progress endpoint for TrainJobs: cannot make a URL of %s", url);
        trainer_progress_configure(NULL, NULL);
        return;
    }
    if (sec->serving.cert && !sf->tls_cert_file) {
        snprintf(path, sizeof(path), "%s/pki/ca.crt", data_dir);
        ty_error_init(&err);
        if (tls_read_file(path, "the CA", 64 * 1024, &ca, &len, &err) < 0)
            ty_warn("server: TrainJob pods get no CA for the progress endpoint: %s", err.text);
        ty_error_clear(&err);
    }
    /* tokens under the data directory's key (server/progress.h) */
    trainer_progress_configure_derived(pod_url, ca, progress_local_token);
    free(ca);
}

/* Opens the data directory's store with security in place: the lock (two
 * servers on one store corrupt it), the credentials and certificates
 * (nothing is served half-secured: a bad file stops here), the store, the
 * authorizer. NULL after printing why, nothing left open. */
static ty_store *open_secured(const char *data_dir, const security_flags *sf,
                              security_state *sec, server_opts *so)
{
    ty_store *store = NULL;
    ty_error err;

    ty_error_init(&err);
    if (ty_dirlock_take(data_dir, &err) < 0 || security_setup(sf, data_dir, sec, so, &err) < 0) {
        fprintf(stderr, "error: %s\n", err.text);
    } else if (!(store = store_open(data_dir, &err))) {
        fprintf(stderr, "error: cannot open the store in %s: %s\n", data_dir, err.text);
        security_teardown(sec);
    } else if (server_seed_trainer_runtimes(store, &err) < 0) {
        fprintf(stderr, "error: cannot make the built-in training runtimes: %s\n", err.text);
        security_teardown(sec);
        store_close(store);
        store = NULL;
    } else if (security_start(sf, sec, store, so, &err) < 0) {
        fprintf(stderr, "error: %s\n", err.text);
        security_teardown(sec);
        store_close(store);
        store = NULL;
    }
    ty_error_clear(&err);
    return store;
}

int cmd_server(int argc, char **argv)
{
    server_opts so = {.address = "127.0.0.1", .port = TY_DEFAULT_PORT};
    rt_local_opts ro = {.fake_gpus = -1, .log_max_bytes = RT_LOG_MAX_DEFAULT,
                        .log_retention_ms = RT_LOG_RETENTION_DEFAULT_MS,
                        .gpu_idle_warn_ms = RT_GPU_IDLE_WARN_DEFAULT_MS};
    node_flags nf = {.local = true, .event_ttl_ms = 3600 * 1000};
    security_flags sf = {0};
    security_state sec = {0};
    char data_dir[4096], url[128];
    ty_error err;
    ty_store *store;
    plane pl;
    rt_backend log_store = {.ops = &rt_local_log_store, .impl = data_dir};
    cli_backend_logs logs;
    ty_server *srv = NULL;
    int rc;

    default_data_dir(data_dir, sizeof(data_dir));
    if ((rc = parse_flags(argc, argv, &so, &ro, &nf, &sf, data_dir, sizeof(data_dir))) != 0)
        return rc < 0 ? 0 : rc;
    so.data_dir = ro.data_dir = data_dir;
    /* Every thread started from here on inherits it (base/thread.h). */
    if (ty_thread_setup(pthread_self(), NULL, TY_THREAD_BACKGROUND) < 0)
        ty_debug("server: SCHED_BATCH refused; threads keep the default policy");
    raise_nofile();
    if (!(store = open_secured(data_dir, &sf, &sec, &so)))
        return 1;
    ty_error_init(&err);
    if (plane_start(&pl, store, &nf, &ro, data_dir, &err) == 0) {
        /* The log endpoint asks the backends; the local runtime's logs are
         * read even when it does not run (they outlive it). */
        cli_backend_logs_init(&logs);
        if (nf.rt.slurm)
            logs.b[logs.n++] = &pl.rt;
        logs.b[logs.n++] = nf.local ? &pl.rt : &log_store;
        if (nf.sim_spec)
            logs.b[logs.n++] = &pl.sim;
        so.logs = &logs.src;
        if (!(srv = server_start(store, &so, &err)))
            plane_stop(&pl);
    }
    if (!srv) {
        fprintf(stderr, "error: %s\n", err.text);
        security_teardown(&sec);
        store_close(store);
        ty_error_clear(&err);
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    if (pipe2(stop_pipe, O_CLOEXEC) < 0) {
        fprintf(stderr, "error: pipe: %s\n", strerror(errno));
        rc = 1;
        goto stop;
    }
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    ty_info("allocator: %s", cli_allocator());
    server_url(srv, url, sizeof(url));
    if (!nf.api_only)
        progress_ready(url, data_dir, &sf, &sec);
    ty_info("trainyard server listening on %s (data dir %s)", url, data_dir);
    security_started(data_dir, url);
    /* Scripts that start the server with --port 0 read the port from here. */
    printf("listening on %s\n", url);
    fflush(stdout);
    wait_for_stop();
    ty_info("shutting down");
stop:
    /* The API goes first so nothing new arrives. */
    server_stop(srv);
    plane_stop(&pl);
    security_teardown(&sec); /* the authorizer watches the store */
    store_close(store);
    return rc;
}
