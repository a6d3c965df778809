/* cmd_operator.c - `trainyard operator`: the job controllers (Kubeflow's
 * kinds, MSJob, Volcano's Job, CronJob and JobFlow) and the gang scheduler,
 * run against a Kubernetes API server over HTTP (client/kc_http.h): a real
 * cluster's kube-apiserver, or `trainyard server --api-only` as a stand-in.
 *
 * One replica leads (a coordination.k8s.io Lease, client/leader.h) and runs
 * the controllers; the others wait on the Lease. Losing the Lease ends the
 * process at once (as controller-runtime does): two leaders must never
 * write side by side, and the next start waits for the Lease again. Every
 * replica serves /healthz, /readyz and /metrics (operator_probe.c) and,
 * given a certificate, the admission webhook (server/webhook.h), which
 * needs no leadership: it writes nothing. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/metrics.h"
#include "cli/cli.h"
#include "cli/operator.h"
#include "client/kc_http.h"
#include "client/kc_lookup.h"
#include "client/leader.h"
#include "controller/jobs/engine.h"
#include "controller/trainer/trainjob_ctl.h"
#include "controller/volcano/vcflow.h"
#include "controller/volcano/vcjob.h"
#include "scheduler/sched.h"
#include "server/webhook.h"

#define OP_DEFAULT_PORT 8080
#define OP_DEFAULT_WEBHOOK_PORT 9443
#define OP_LEASE_NAME "trainyard-operator"
/* How often a leader looks at the age of its last renewal. */
#define OP_LEADER_CHECK_MS 250
#define OP_SA_NAMESPACE "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

/* --enable-scheme: operator_schemes.c. */

/* ---- flags ---- */

typedef struct op_flags {
    const char *kubeconfig, *context;
    const char *address;
    long port, webhook_port;
    const char *tls_cert, *tls_key;
    const char *progress_url, *progress_ca, *progress_key;
    bool leader_elect;
    const char *lease_ns, *lease_name, *identity;
    const char *sched_conf;
    const char *sched_names[SCHED_MAX_NAMES + 1];
    size_t nsched_names;
    bool no_scheduler;
    bool schemes_given;
    uint64_t kinds;
    bool volcano;
    bool trainer;
    double kube_api_qps; /* 0 = KC_HTTP_DEFAULT_QPS; negative = no limit */
    int kube_api_burst;  /* 0 = KC_HTTP_DEFAULT_BURST */
} op_flags;

static void operator_usage(FILE *f)
{
    fprintf(f,
            "usage: trainyard operator [--kubeconfig FILE] [--enable-scheme LIST]...\n"
            "Runs the job controllers and the gang scheduler against a Kubernetes API\n"
            "server (a cluster, or `trainyard server --api-only`); docs/kubernetes.md.\n"
            "  --kubeconfig FILE   the cluster to drive (default: $KUBECONFIG, else\n"
            "                      ~/.kube/config, else the pod's service account)\n"
            "  --context NAME      a context of the kubeconfig (default: its current one)\n"
            "  --enable-scheme LIST  the kinds to run, comma-separated or repeated: tfjob,\n"
            "                      pytorchjob, mpijob, xgboostjob, paddlejob, jaxjob, mxjob,\n"
            "                      msjob, volcano (Volcano's Job, CronJob, JobFlow),\n"
            "                      trainjob (Kubeflow Trainer v2's TrainJob)\n"
            "                      (default: all)\n"
            "  --scheduler-conf FILE  the gang scheduler's volcano-scheduler.conf\n"
            "  --scheduler-name NAME  a spec.schedulerName it serves; repeat for more\n"
            "                      (default volcano; pods of other schedulers are left\n"
            "                      alone but their resources count)\n"
            "  --no-scheduler      run the controllers only (another gang scheduler binds)\n"
            "  --leader-elect[=BOOL]  elect one leader among replicas (default true)\n"
            "  --leader-elect-namespace NS  the Lease's namespace (default: the pod's, or\n"
            "                      the kubeconfig context's)\n"
            "  --leader-elect-name NAME  the Lease (default " OP_LEASE_NAME ")\n"
            "  --leader-elect-identity ID  this replica's name in it (default:\n"
            "                      host_pid-random)\n"
            "  --address ADDR      IPv4 address of the probe, metrics and webhook listeners\n"
            "                      (default 127.0.0.1; 0.0.0.0 in a pod)\n"
            "  --port PORT         /healthz, /readyz, /metrics (default %d; 0: a free one)\n"
            "  --webhook-port PORT the admission webhook, HTTPS (default %d)\n"
            "  --tls-cert-file FILE, --tls-private-key-file FILE  the webhook's serving\n"
            "                      certificate and key; without them no webhook is served\n"
            "  --progress-url URL  serve TrainJobs' progress endpoint on the webhook\n"
            "                      listener, which the jobs' pods reach at URL\n"
            "                      (https://HOST[:PORT], e.g. the webhook Service's name)\n"
            "  --progress-ca-file FILE  the CA the pods verify it with (default: none,\n"
            "                      their own trust)\n"
            "  --progress-key-file FILE  the secret the jobs' tokens derive from\n"
            "                      (default: --tls-private-key-file)\n"
            "  --job-record-retention DURATION  how long the JobRecord of a deleted\n"
            "                      TrainJob is kept (default 168h; 0: none are written)\n"
            "  --log-level LEVEL   debug, info, warn or error (default info)\n"
            "  --kube-api-qps QPS  requests a second to the API server, all controllers\n"
            "                      and the scheduler together (default %g; negative: no\n"
            "                      limit)\n"
            "  --kube-api-burst N  requests above that rate in a burst (default %d)\n",
            OP_DEFAULT_PORT, OP_DEFAULT_WEBHOOK_PORT, KC_HTTP_DEFAULT_QPS,
            KC_HTTP_DEFAULT_BURST);
}

static long port_flag(const char *flag, const char *v)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < 0 || n > 65535) {
        fprintf(stderr, "error: invalid --%s %s: want a port, 0 to 65535\n", flag, v);
        return -1;
    }
    return n;
}

static int bool_flag(const char *flag, const char *v, bool *out)
{
    if (!v || !strcmp(v, "true") || !strcmp(v, "1"))
        *out = true;
    else if (!strcmp(v, "false") || !strcmp(v, "0"))
        *out = false;
    else {
        fprintf(stderr, "error: invalid --%s=%s: want true or false\n", flag, v);
        return -1;
    }
    return 0;
}

/* --kube-api-qps (c 'Q': a number, negative = no limit) or --kube-api-burst
 * ('B': 1 or more), as controller-runtime's operators spell them. */
static int rate_flag(int c, const char *v, op_flags *f)
{
    char *end;
    double d = strtod(v, &end);

    if (!*v || *end || d != d || (c == 'Q' && (d > 1e6 || d < -1e6)) ||
        (c == 'B' && (d < 1 || d > 1e6 || d != (double)(int)d))) {
        fprintf(stderr, "error: invalid --%s %s: want %s\n",
                c == 'Q' ? "kube-api-qps" : "kube-api-burst", v,
                c == 'Q' ? "a number of requests a second (negative: no limit)"
                         : "a whole number, 1 to 1000000");
        return -1;
    }
    if (c == 'Q')
        f->kube_api_qps = d;
    else
        f->kube_api_burst = (int)d;
    return 0;
}

/* What the flags say together: 0, or 2 after saying what does not go
 * (every scheme when none was named). */
static int flags_consistent(op_flags *f)
{
    if (!f->tls_cert != !f->tls_key) {
        fprintf(stderr, "error: the webhook needs both --tls-cert-file and "
                        "--tls-private-key-file\n");
        return 2;
    }
    if ((f->progress_ca || f->progress_key) && !f->progress_url) {
        fprintf(stderr, "error: --progress-ca-file and --progress-key-file go with "
                        "--progress-url\n");
        return 2;
    }
    if (f->progress_url && !f->tls_cert) {
        fprintf(stderr, "error: --progress-url: the progress endpoint is served on the "
                        "webhook's HTTPS listener, which needs --tls-cert-file\n");
        return 2;
    }
    if (f->no_scheduler && (f->sched_conf || f->nsched_names)) {
        fprintf(stderr, "error: --no-scheduler with --scheduler-conf or --scheduler-name\n");
        return 2;
    }
    if (!f->schemes_given)
        op_schemes_all(&f->kinds, &f->volcano, &f->trainer);
    return 0;
}

/* 0 to run, else the exit status to return now (-1: 0 after --help). */
static int parse_flags(int argc, char **argv, op_flags *f)
{
    static const struct option longopts[] = {
        {"kubeconfig", required_argument, NULL, 'k'},
        {"context", required_argument, NULL, 'c'},
        {"enable-scheme", required_argument, NULL, 'e'},
        {"scheduler-conf", required_argument, NULL, 'C'},
        {"scheduler-name", required_argument, NULL, 'n'},
        {"no-scheduler", no_argument, NULL, 'S'},
        {"leader-elect", optional_argument, NULL, 'L'},
        {"leader-elect-namespace", required_argument, NULL, 'N'},
        {"leader-elect-name", required_argument, NULL, 'm'},
        {"leader-elect-identity", required_argument, NULL, 'i'},
        {"address", required_argument, NULL, 'a'},
        {"port", required_argument, NULL, 'p'},
        {"webhook-port", required_argument, NULL, 'w'},
        {"tls-cert-file", required_argument, NULL, 't'},
        {"tls-private-key-file", required_argument, NULL, 'K'},
        {"log-level", required_argument, NULL, 'l'},
        {"progress-url", required_argument, NULL, 'u'},
        {"job-record-retention", required_argument, NULL, CLI_OPT_RECORD_RETENTION},
        {"progress-ca-file", required_argument, NULL, 'A'},
        {"progress-key-file", required_argument, NULL, 'Y'},
        {"kube-api-qps", required_argument, NULL, 'Q'},
        {"kube-api-burst", required_argument, NULL, 'B'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    ty_error err;
    int c;

    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'k': f->kubeconfig = optarg; break;
        case 'c': f->context = optarg; break;
        case 'e':
            ty_error_init(&err);
            if (op_schemes_add(optarg, &f->kinds, &f->volcano, &f->trainer, &err) < 0) {
                fprintf(stderr, "error: --enable-scheme: %s\n", err.text);
                ty_error_clear(&err);
                return 2;
            }
            f->schemes_given = true;
            break;
        case 'C': f->sched_conf = optarg; break;
        case 'n':
            if (cli_sched_name_flag(optarg, f->sched_names, &f->nsched_names, SCHED_MAX_NAMES) < 0)
                return 2;
            break;
        case 'S': f->no_scheduler = true; break;
        case 'L':
            if (bool_flag("leader-elect", optarg, &f->leader_elect) < 0)
                return 2;
            break;
        case 'N': f->lease_ns = optarg; break;
        case 'm': f->lease_name = optarg; break;
        case 'i': f->identity = optarg; break;
        case 'a': f->address = optarg; break;
        case 'p':
        case 'w':
            if ((*(c == 'p' ? &f->port : &f->webhook_port) =
                     port_flag(c == 'p' ? "port" : "webhook-port", optarg)) < 0)
                return 2;
            break;
        case 't': f->tls_cert = optarg; break;
        case 'K': f->tls_key = optarg; break;
        case 'u': f->progress_url = optarg; break;
        case CLI_OPT_RECORD_RETENTION:
            if (cli_record_retention_flag(optarg) < 0)
                return 2;
            break;
        case 'A': f->progress_ca = optarg; break;
        case 'Y': f->progress_key = optarg; break;
        case 'l':
            if (cli_log_level_flag(optarg) < 0)
                return 2;
            break;
        case 'Q':
        case 'B':
            if (rate_flag(c, optarg, f) < 0)
                return 2;
            break;
        case 'h': operator_usage(stdout); return -1;
        default: operator_usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "error: unexpected argument %s\n", argv[optind]);
        operator_usage(stderr);
        return 2;
    }
    return flags_consistent(f);
}

/* ---- the client ---- */

/* The kubeconfig named, else kubectl's, else the pod's service account. */
static ty_kc *connect_api(const op_flags *f, char **ns, ty_error *err)
{
    char path[4096];
    const char *cfg = f->kubeconfig;
    ty_kc *kc;

    *ns = NULL;
    if (!cfg && kc_http_kubeconfig_path(path, sizeof(path)) == 0 && access(path, R_OK) == 0)
        cfg = path;
    if (!cfg) {
        FILE *fp;
        if (!(kc = kc_http_in_cluster(NULL, err)))
            return NULL;
        if ((fp = fopen(OP_SA_NAMESPACE, "re"))) {
            char buf[256] = "";
            if (fgets(buf, sizeof(buf), fp))
                buf[strcspn(buf, "\n")] = '\0';
            fclose(fp);
            if (*buf)
                *ns = strdup(buf);
        }
        return kc;
    }
    if (!(kc = kc_http_from_kubeconfig(cfg, f->context, err)))
        return NULL;
    *ns = kc_http_kubeconfig_namespace(cfg, f->context, err);
    ty_error_clear(err);
    return kc;
}

/* ---- what the leader runs ---- */

typedef struct op_plane {
    ty_jobs *jobs;
    ty_vcjobs *vcjobs;
    ty_trainjobs *trainjobs;
    ty_vccron *crons;
    ty_jobflows *flows;
    ty_sched *sched;
} op_plane;

static void plane_stop(op_plane *p)
{
    sched_stop(p->sched);
    jobflows_stop(p->flows);
    vccron_stop(p->crons);
    trainjobs_stop(p->trainjobs);
    vcjobs_stop(p->vcjobs);
    jobs_stop(p->jobs);
    memset(p, 0, sizeof(*p));
}

static int plane_start(op_plane *p, ty_kc *kc, const op_flags *f, ty_error *err)
{
    static const char *const default_names[] = {"volcano", NULL};
    sched_opts so = {.conf_path = f->sched_conf,
                     .names = f->nsched_names ? f->sched_names : default_names};

    memset(p, 0, sizeof(*p));
    if ((f->kinds && !(p->jobs = jobs_start_kinds(kc, f->kinds, err))) ||
        (f->volcano && !(p->vcjobs = vcjobs_start(kc, err))) ||
        (f->volcano && !(p->crons = vccron_start(kc, err))) ||
        (f->volcano && !(p->flows = jobflows_start(kc, err))) ||
        (f->trainer && !(p->trainjobs = trainjobs_start(kc, err))) ||
        (!f->no_scheduler && !(p->sched = sched_start_opts(kc, &so, err)))) {
        plane_stop(p);
        return -1;
    }
    return 0;
}

/* ---- the main loop: signals and leadership arrive through a pipe ---- */

static int wake_pipe[2] = {-1, -1};

static void wake(char why)
{
    int saved = errno;
    ssize_t r = write(wake_pipe[1], &why, 1);
    (void)r;
    errno = saved;
}

static void on_signal(int sig)
{
    (void)sig;
    wake('T');
}

static void on_started(void *arg)
{
    (void)arg;
    wake('L');
}

static void on_stopped(void *arg)
{
    (void)arg;
    wake('S');
}

static void on_new_leader(const char *identity, void *arg)
{
    (void)arg;
    ty_info("operator: the leader is %s", identity);
}

/* Another replica may lead already: not one more write. */
static _Noreturn void leadership_lost(op_probe *probe, const char *why)
{
    op_probe_set(probe, false, false);
    ty_errlog("operator: leadership lost (%s); exiting so that only one leader writes", why);
    fflush(stderr);
    _exit(1);
}

/* Whether the API server answers (a namespaces list of one item). */
static bool api_reachable(ty_kc *kc, ty_error *err)
{
    kc_list_opts lo = {.limit = 1};
    kc_list l;
    int rc = kc_list_objects(kc, "namespaces", &lo, &l, err);

    kc_list_free(&l);
    return rc == 0;
}

/* Until SIGTERM/SIGINT (0) or a failed start of the controllers (1): leads
 * when told to, exits the process when leadership is lost. */
static int serve(op_plane *plane, ty_kc *kc, const op_flags *f, kc_leader *le, op_probe *probe)
{
    bool running = false;
    ty_error err;

    for (;;) {
        struct pollfd pfd = {.fd = wake_pipe[0], .events = POLLIN};
        char why;
        int n = poll(&pfd, 1, running && le ? OP_LEADER_CHECK_MS : -1);
        if (n < 0 && errno != EINTR)
            return 0;
        /* The elector says it lost the Lease only when a renewal came back;
         * one stuck on an API server that accepts and never answers ends
         * at the client's stall timeout (a minute), long after the Lease
         * (15 s) may have gone to another replica that reaches the server.
         * A leader whose last renewal is older than the renew deadline
         * stops now, as client-go's renew with the deadline as timeout. */
        if (n == 0 && running && le && !kc_leader_is_leader(le))
            leadership_lost(probe, "renew deadline passed");
        if (n <= 0 || read(wake_pipe[0], &why, 1) != 1)
            continue;
        if (why == 'T')
            return 0;
        if (why == 'S')
            leadership_lost(probe, "the Lease was lost");
        if (why == 'L' && !running) {
            ty_error_init(&err);
            if (plane_start(plane, kc, f, &err) < 0) {
                fprintf(stderr, "error: %s\n", err.text);
                ty_error_clear(&err);
                return 1;
            }
            running = true;
            ty_metric_set("trainyard_operator_leader", NULL, 1);
            ty_info("operator: leading: controllers and scheduler started");
        }
    }
}

/* SIGTERM and SIGINT wake the main loop; a closed peer is not a signal. */
static void catch_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal};

    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* The admission webhook (and the TrainJob progress endpoint with
 * --progress-url) on its HTTPS listener; lk must outlive it. NULL with err. */
static webhook_server *start_webhook(ty_kc *kc, const op_flags *f, api_lookup *lk,
                                     ty_error *err)
{
    const webhook_extra *extra = NULL;
    webhook_server *wh;

    kc_admit_lookup(kc, lk);
    /* before the controllers start: the TrainJob controller's first pods
     * get the endpoint's variables */
    if (f->progress_url &&
        op_progress_setup(kc, f->progress_url, f->progress_ca,
                          f->progress_key ? f->progress_key : f->tls_key, &extra, err) < 0)
        return NULL;
    webhook_serve_opts wo = {.address = f->address, .port = (uint16_t)f->webhook_port,
                             .tls_cert_file = f->tls_cert, .tls_key_file = f->tls_key,
                             .lookup = lk, .extra = extra};
    if (!(wh = webhook_serve_start(&wo, err)))
        return NULL;
    ty_info("operator: admission webhook on https://%s:%u (/mutate, /validate%s)", f->address,
            (unsigned)webhook_serve_port(wh), extra ? ", TrainJob progress" : "");
    return wh;
}

/* Leader election on the Lease the flags name (in the kubeconfig's
 * namespace by default). NULL with err. */
static kc_leader *start_election(ty_kc *kc, const op_flags *f, const char *ctx_ns,
                                 ty_error *err)
{
    kc_leader_opts lo = {.ns = f->lease_ns ? f->lease_ns : ctx_ns ? ctx_ns : "default",
                         .name = f->lease_name, .identity = f->identity,
                         .on_started_leading = on_started, .on_stopped_leading = on_stopped,
                         .on_new_leader = on_new_leader};
    kc_leader *le = kc_leader_start(kc, &lo, err);

    if (!le) {
        char text[sizeof(err->text)];
        snprintf(text, sizeof(text), "%s", err->text);
        ty_seterr(err, err->code, "leader election: %s", text);
        return NULL;
    }
    ty_info("operator: %s waits for the Lease %s/%s", kc_leader_identity(le), lo.ns, lo.name);
    return le;
}

int cmd_operator(int argc, char **argv)
{
    op_flags f = {.address = "127.0.0.1", .port = OP_DEFAULT_PORT,
                  .webhook_port = OP_DEFAULT_WEBHOOK_PORT, .leader_elect = true,
                  .lease_name = OP_LEASE_NAME};
    op_probe *probe = NULL;
    webhook_server *wh = NULL;
    kc_leader *le = NULL;
    op_plane plane = {0};
    api_lookup lk;
    char *ctx_ns = NULL;
    ty_error err;
    ty_kc *kc;
    int rc;

    if ((rc = parse_flags(argc, argv, &f)) != 0)
        return rc < 0 ? 0 : rc;
    ty_error_init(&err);
    if (!(kc = connect_api(&f, &ctx_ns, &err))) {
        fprintf(stderr, "error: no API server to drive: %s\n", err.text);
        ty_error_clear(&err);
        return 1;
    }
    kc_http_set_rate_limit(kc, f.kube_api_qps, f.kube_api_burst);
    if (!api_reachable(kc, &err)) {
        fprintf(stderr, "error: cannot reach the API server at %s: %s\n", kc_http_server(kc),
                err.text);
        rc = 1;
        goto out;
    }
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        fprintf(stderr, "error: pipe: %s\n", strerror(errno));
        rc = 1;
        goto out;
    }
    catch_signals();
    ty_metric_declare("trainyard_operator_leader", TY_GAUGE,
                      "1 while this replica leads and runs the controllers");
    ty_metric_set("trainyard_operator_leader", NULL, 0);
    if (!(probe = op_probe_start(f.address, (uint16_t)f.port, &err))) {
        fprintf(stderr, "error: %s\n", err.text);
        rc = 1;
        goto out;
    }
    op_probe_set(probe, true, true);
    if ((f.tls_cert && !(wh = start_webhook(kc, &f, &lk, &err))) ||
        (f.leader_elect && !(le = start_election(kc, &f, ctx_ns, &err)))) {
        fprintf(stderr, "error: %s\n", err.text);
        rc = 1;
        goto out;
    }
    if (!f.leader_elect)
        wake('L');
    ty_info("operator: driving %s; probes and metrics on http://%s:%u", kc_http_server(kc),
            f.address, (unsigned)op_probe_port(probe));
    /* Scripts that start it with --port 0 read the port from here. */
    printf("listening on http://%s:%u\n", f.address, (unsigned)op_probe_port(probe));
    fflush(stdout);
    rc = serve(&plane, kc, &f, le, probe);
    ty_info("operator: shutting down");
out:
    /* The controllers stop before the Lease goes, so that the next leader
     * starts only when this one has stopped writing. */
    plane_stop(&plane);
    kc_leader_free(le);
    webhook_serve_stop(wh);
    op_probe_stop(probe);
    kc_free(kc);
    free(ctx_ns);
    ty_error_clear(&err);
    return rc;
}
