/* supervisor.c - `trainyard supervise --pod-dir DIR`: one pod's keeper.
 *
 * Started by the agent in its own session, reparented away from the server,
 * so that the pod's processes, their logs and their exit codes outlive a
 * server restart. It reads DIR/spec.json, runs the init containers one by one
 * and then the containers, each as its own process group, restarts them by
 * the pod's restartPolicy with exponential back-off, and records everything in
 * DIR/state.json (tmp + rename) for the agent to report. SIGTERM stops the
 * pod: SIGTERM to every process group, SIGKILL after the grace period. It
 * exits when the pod has finished (state.json stays). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/jsonget.h"
#include "base/timeutil.h"
#include "runtime/local/rt_internal.h"
#include "runtime/local/runtime.h"
#include "runtime/local/sv_internal.h"

#define RESET_AFTER_MS (10 * 60 * 1000) /* back-off forgotten after 10 min of running */
#define IDLE_POLL_MS 1000

static bool is_final(const char *phase)
{
    return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

/* ---- state.json ---- */

static json_t *term_record(const sv_ct *c)
{
    return json_pack("{s:i, s:i, s:s, s:s, s:s, s:s}", "exitCode", c->exit_code, "signal",
                     c->signal, "reason", c->reason, "message", c->message, "startedAt",
                     c->started_at, "finishedAt", c->finished_at);
}

static json_t *ct_json(const sv_ct *c)
{
    json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:s, s:i, s:i, s:b}", "name",
                          c->name, "state", c->state, "reason", c->reason, "message",
                          c->message, "exitCode", c->exit_code, "signal", c->signal,
                          "startedAt", c->started_at, "finishedAt", c->finished_at,
                          "restartCount", c->restarts, "pid", (int)c->pid, "started",
                          c->run_started);

    if (j && c->last_state)
        json_object_set(j, "lastState", c->last_state);
    return j;
}

/* On a full disk a state is kept in memory (dirty) and tried again every
 * SV_SAVE_RETRY_MS: the supervisor does not exit before its last state is
 * on disk, so an exit code is never lost and never made up by the agent. The
 * reserve file gives back room for that once. States that record an exit
 * are written durably (fsync of file and directory) before anyone can read
 * them. */
static int save_state(sv *s)
{
    json_t *init = json_array(), *main = json_array(), *st;
    char path[PATH_MAX + 16];
    bool durable = s->need_sync || is_final(s->phase);
    int rc = -1;

    for (size_t i = 0; i < s->ncts; i++)
        json_array_append_new(s->cts[i].init ? init : main, ct_json(&s->cts[i]));
    st = json_pack("{s:s, s:s, s:i, s:o, s:o}", "phase", s->phase, "startTime", s->start_time,
                   "supervisorPid", (int)getpid(), "initContainers", init, "containers", main);
    snprintf(path, sizeof(path), "%s/state.json", s->dir);
    if (st) {
        rc = durable ? rt_save_json_durable(path, st) : rt_save_json(path, st);
        if (rc < 0 && (errno == ENOSPC || errno == EDQUOT) && !s->reserve_freed) {
            char reserve[PATH_MAX + 16];
            snprintf(reserve, sizeof(reserve), "%s/state.reserve", s->dir);
            s->reserve_freed = true;
            if (unlink(reserve) == 0)
                rc = durable ? rt_save_json_durable(path, st) : rt_save_json(path, st);
        }
    }
    if (rc < 0) {
        if (!s->save_retry_ms)
            fprintf(stderr, "supervise: cannot write %s: %s (kept, retried)\n", path,
                    strerror(errno));
        s->save_retry_ms = ty_now_ms() + SV_SAVE_RETRY_MS;
    } else {
        if (s->save_retry_ms)
            fprintf(stderr, "supervise: %s written\n", path);
        s->dirty = s->need_sync = false;
        s->save_retry_ms = 0;
    }
    json_decref(st);
    return rc;
}

static void maybe_save(sv *s)
{
    if (s->dirty && !s->orphaned && ty_now_ms() >= s->save_retry_ms)
        save_state(s);
}

/* ---- phase ---- */

static void compute_phase(sv *s)
{
    bool all_started = true, all_done = true, all_zero = true;
    const char *phase;

    for (size_t i = 0; i < s->ninit; i++) {
        const sv_ct *c = &s->cts[i];
        if (c->done && c->exit_code != 0) {
            phase = "Failed"; /* an init container that will not be retried */
            goto set;
        }
    }
    if (s->next_init < s->ninit) {
        phase = s->terminating ? "Failed" : "Pending";
        goto set;
    }
    for (size_t i = s->ninit; i < s->ncts; i++) {
        const sv_ct *c = &s->cts[i];
        /* As the kubelet: a container waiting to run again after a run (or a
         * start) that ended is a restarting one, not one the pod waits for;
         * only a container that has never run nor failed to keeps it Pending.
         * (A crash loop of a command that cannot start stayed Pending.) */
        all_started &= c->ever_started || c->last_state != NULL;
        all_done &= c->done;
        all_zero &= c->exit_code == 0 && (c->ever_started || !s->terminating);
    }
    if (all_done)
        phase = all_zero ? "Succeeded" : "Failed";
    else
        phase = all_started ? "Running" : "Pending";
set:
    if (strcmp(s->phase, phase)) {
        snprintf(s->phase, sizeof(s->phase), "%s", phase);
        s->dirty = true;
    }
}

/* ---- container lifecycle ---- */

static bool wants_restart(const sv *s, const sv_ct *c)
{
    const char *policy = ty_jstr(s->spec, "restartPolicy");

    if (s->terminating || !strcmp(c->reason, "NoCommand"))
        return false;
    if (c->init || !strcmp(policy, "OnFailure"))
        return c->exit_code != 0 && strcmp(policy, "Never");
    return !strcmp(policy, "Always");
}

/* A duration as Go prints one, which is how the kubelet's back-off message
 * reads: "200ms", "10s", "1.5s", "1m20s", "5m0s". */
static void go_duration(int64_t ms, char *buf, size_t len)
{
    int64_t h = ms / 3600000, m = ms / 60000 % 60, sec = ms / 1000 % 60, frac = ms % 1000;
    int n = 0;

    if (ms < 1000) {
        snprintf(buf, len, "%lldms", (long long)ms);
        return;
    }
    if (h)
        n = snprintf(buf, len, "%lldh", (long long)h);
    if (h || m)
        n += snprintf(buf + n, len - (size_t)n, "%lldm", (long long)m);
    n += snprintf(buf + n, len - (size_t)n, "%lld", (long long)sec);
    if (frac) {
        char f[8];
        snprintf(f, sizeof(f), ".%03lld", (long long)frac);
        for (size_t e = strlen(f); f[e - 1] == '0'; e--)
            f[e - 1] = '\0';
        n += snprintf(buf + n, len - (size_t)n, "%s", f);
    }
    snprintf(buf + n, len - (size_t)n, "s");
}

/* After a run ends (or fails to start): restart later, or done. */
static void after_run(sv *s, sv_ct *c)
{
    int64_t base = json_integer_value(json_object_get(s->spec, "backoffMs"));
    int64_t delay, now = ty_now_ms();
    char wait[32];

    s->dirty = s->need_sync = true;
    if (!wants_restart(s, c)) {
        c->done = true;
        return;
    }
    if (base <= 0)
        base = RT_DEFAULT_BACKOFF_MS;
    if (c->ever_started && now - c->started_ms >= RESET_AFTER_MS)
        c->backoff_n = 0;
    delay = base << (c->backoff_n < 16 ? c->backoff_n : 16);
    if (delay > RT_MAX_BACKOFF_MS || delay <= 0)
        delay = RT_MAX_BACKOFF_MS;
    c->backoff_n++;
    json_decref(c->last_state);
    c->last_state = term_record(c);
    c->state = "waiting";
    snprintf(c->reason, sizeof(c->reason), "CrashLoopBackOff");
    go_duration(delay, wait, sizeof(wait));
    snprintf(c->message, sizeof(c->message),
             "back-off %s restarting failed container=%s pod=%s_%s(%s)", wait, c->name,
             ty_jstr(s->spec, "name"),
             ty_jstr(s->spec, "namespace"), ty_jstr(s->spec, "uid"));
    c->restart_due = true;
    c->restart_at_ms = now + delay;
}

static void start(sv *s, sv_ct *c, bool restart)
{
    if (restart) {
        c->restarts++;
        c->restart_due = false;
    }
    sv_log_open(s, c, restart);
    c->run_started = false;
    s->dirty = true;
    if (sv_spawn(s, c) < 0)
        after_run(s, c);
}

static void on_exit_status(sv *s, sv_ct *c, int status)
{
    /* A container ends with its first process: the rest of its group goes. */
    kill(-c->pid, SIGKILL);
    sv_drain(s, c, true);
    c->pid = 0;
    c->state = "terminated";
    ty_time_now(c->finished_at, sizeof(c->finished_at));
    c->message[0] = '\0';
    if (WIFSIGNALED(status)) {
        c->signal = WTERMSIG(status);
        c->exit_code = 128 + c->signal;
    } else {
        c->signal = 0;
        c->exit_code = WEXITSTATUS(status);
    }
    if (c->exit_code == 0)
        snprintf(c->reason, sizeof(c->reason), "Completed");
    else if (c->signal == SIGKILL && sv_oom_count(s) > c->oom_before)
        snprintf(c->reason, sizeof(c->reason), "OOMKilled");
    else
        snprintf(c->reason, sizeof(c->reason), "Error");
    after_run(s, c);
}

static void reap(sv *s)
{
    int status;
    pid_t pid;

    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (size_t i = 0; i < s->ncts; i++) {
            if (s->cts[i].pid == pid) {
                on_exit_status(s, &s->cts[i], status);
                break;
            }
        }
    }
}

static void signal_all(sv *s, int sig)
{
    for (size_t i = 0; i < s->ncts; i++)
        if (s->cts[i].pid > 0)
            kill(-s->cts[i].pid, sig);
}

static void begin_termination(sv *s)
{
    long grace = (long)json_integer_value(json_object_get(s->spec, "gracePeriodSeconds"));
    int64_t now = ty_now_ms();
    char path[PATH_MAX + 16];
    json_t *stop;

    /* A deletion may ask for a shorter grace period than the pod's own. */
    snprintf(path, sizeof(path), "%s/stop.json", s->dir);
    if ((stop = rt_load_json(path))) {
        json_t *g = json_object_get(stop, "gracePeriodSeconds");
        if (json_is_integer(g) && json_integer_value(g) >= 0)
            grace = (long)json_integer_value(g);
        json_decref(stop);
    }

    if (s->terminating)
        return;
    s->terminating = true;
    s->dirty = true;
    for (size_t i = 0; i < s->ncts; i++) {
        sv_ct *c = &s->cts[i];
        if (c->restart_due) {
            c->restart_due = false;
            c->done = true;
        }
        if (!c->ever_started && c->pid == 0)
            c->done = true;
    }
    signal_all(s, grace > 0 ? SIGTERM : SIGKILL);
    s->kill_at_ms = now + (grace > 0 ? grace * 1000 : 0);
}

/* Starts what is due: the next init container, or the containers. */
static void schedule(sv *s)
{
    int64_t now = ty_now_ms();

    if (s->terminating)
        return;
    while (s->next_init < s->ninit) {
        sv_ct *c = &s->cts[s->next_init];
        if (c->done && c->exit_code == 0) {
            s->next_init++;
            continue;
        }
        if (c->done || c->pid > 0)
            return;
        if (!c->ever_started && !c->restart_due && !*c->finished_at)
            start(s, c, false);
        else if (c->restart_due && now >= c->restart_at_ms)
            start(s, c, true);
        return;
    }
    for (size_t i = s->ninit; i < s->ncts; i++) {
        sv_ct *c = &s->cts[i];
        if (c->pid > 0 || c->done)
            continue;
        if (!c->ever_started && !c->restart_due && !*c->finished_at)
            start(s, c, false);
        else if (c->restart_due && now >= c->restart_at_ms)
            start(s, c, true);
    }
}

/* ---- the loop ---- */

static int poll_timeout(const sv *s)
{
    int64_t now = ty_now_ms(), next = now + IDLE_POLL_MS;

    for (size_t i = 0; i < s->ncts; i++)
        if (s->cts[i].restart_due && s->cts[i].restart_at_ms < next)
            next = s->cts[i].restart_at_ms;
    if (s->terminating && s->kill_at_ms < next)
        next = s->kill_at_ms;
    if (s->dirty && s->save_retry_ms && s->save_retry_ms < next)
        next = s->save_retry_ms;
    return next <= now ? 0 : (int)(next - now);
}

static void handle_signals(sv *s)
{
    struct signalfd_siginfo si;

    while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo == SIGCHLD)
            reap(s);
        else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
            begin_termination(s);
    }
}

static bool any_running(const sv *s)
{
    for (size_t i = 0; i < s->ncts; i++)
        if (s->cts[i].pid > 0)
            return true;
    return false;
}

/* The agent removes a pod directory only after its supervisor has exited;
 * one that vanishes under a live supervisor was deleted with its whole data
 * directory (a test's temp dir, a wiped install). Nobody can adopt the pod
 * any more, so it stops rather than run on unseen. */
static void check_orphaned(sv *s)
{
    char path[PATH_MAX + 16];

    snprintf(path, sizeof(path), "%s/spec.json", s->dir);
    if (access(path, F_OK) < 0 && errno == ENOENT) {
        fprintf(stderr, "supervise: %s is gone: stopping the pod\n", s->dir);
        s->orphaned = true;
        begin_termination(s);
        return;
    }
    /* stop.json is also a request to stop by itself: a runtime whose
     * supervisors run on other machines (Slurm) cannot signal them. */
    snprintf(path, sizeof(path), "%s/stop.json", s->dir);
    if (!s->terminating && access(path, F_OK) == 0) {
        fprintf(stderr, "supervise: %s asks the pod to stop\n", path);
        begin_termination(s);
    }
}

static void loop(sv *s)
{
    struct pollfd *fds = calloc(1 + 2 * s->ncts, sizeof(*fds));
    int64_t next_check = 0;

    for (;;) {
        size_t n = 0;
        if (ty_now_ms() >= next_check) {
            check_orphaned(s);
            next_check = ty_now_ms() + IDLE_POLL_MS;
        }
        schedule(s);
        compute_phase(s);
        maybe_save(s);
        /* Not before the last state is on disk (or cannot ever be). */
        if (!any_running(s) && (is_final(s->phase) || s->terminating) &&
            (!s->dirty || s->orphaned))
            break;
        if (s->terminating && ty_now_ms() >= s->kill_at_ms)
            signal_all(s, SIGKILL);
        fds[n++] = (struct pollfd){.fd = s->sigfd, .events = POLLIN};
        for (size_t i = 0; i < s->ncts; i++) {
            fds[n++] = (struct pollfd){.fd = s->cts[i].out.fd, .events = POLLIN};
            fds[n++] = (struct pollfd){.fd = s->cts[i].err.fd, .events = POLLIN};
        }
        if (poll(fds, n, poll_timeout(s)) < 0 && errno != EINTR)
            break;
        for (size_t i = 0; i < s->ncts; i++)
            if (fds[1 + 2 * i].revents || fds[2 + 2 * i].revents)
                sv_drain(s, &s->cts[i], false);
        if (fds[0].revents)
            handle_signals(s);
    }
    compute_phase(s);
    if (s->dirty && !s->orphaned)
        save_state(s);
    free(fds);
}

/* ---- setup ---- */

static void find_oom_events(sv *s)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[PATH_MAX];

    s->oom_events[0] = '\0';
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "0::", 3))
            continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(s->oom_events, sizeof(s->oom_events), "/sys/fs/cgroup%.3800s/memory.events",
                 line + 3);
        if (access(s->oom_events, R_OK) < 0)
            s->oom_events[0] = '\0';
    }
    fclose(f);
}

static int load(sv *s, const char *dir)
{
    char path[PATH_MAX + 16];
    const json_t *init, *main;
    const json_t *lm;

    snprintf(s->dir, sizeof(s->dir), "%s", dir);
    snprintf(path, sizeof(path), "%s/spec.json", dir);
    if (!(s->spec = rt_load_json(path))) {
        fprintf(stderr, "supervise: cannot read %s\n", path);
        return -1;
    }
    init = json_object_get(s->spec, "initContainers");
    main = json_object_get(s->spec, "containers");
    s->ninit = json_array_size(init);
    s->ncts = s->ninit + json_array_size(main);
    s->cts = calloc(s->ncts ? s->ncts : 1, sizeof(*s->cts));
    if (!s->cts)
        return -1;
    for (size_t i = 0; i < s->ncts; i++) {
        sv_ct *c = &s->cts[i];
        c->init = i < s->ninit;
        c->spec = c->init ? json_array_get(init, i) : json_array_get(main, i - s->ninit);
        c->name = ty_jstr(c->spec, "name");
        c->state = "waiting";
        snprintf(c->reason, sizeof(c->reason), c->init ? "PodInitializing" : "ContainerCreating");
        c->out.fd = c->err.fd = c->log_fd = -1;
    }
    lm = json_object_get(s->spec, "logMaxBytes");
    s->log_max = json_is_integer(lm) && json_integer_value(lm) > 0 ? json_integer_value(lm)
                                                                   : SV_LOG_MAX_DEFAULT;
    snprintf(s->phase, sizeof(s->phase), "Pending");
    ty_time_now(s->start_time, sizeof(s->start_time));
    find_oom_events(s);
    return 0;
}

/* One supervisor per pod directory, and one run: a second one (the agent
 * crashed between spawning us and recording it, and a new agent started
 * another) finds the lock held, or the state of a run that already ended,
 * and leaves without touching the pod's logs or processes. */
static int claim(sv *s)
{
    char path[PATH_MAX + 32], pid[32];
    pid_t holder;
    int fd;

    if ((s->lock_fd = rt_lock_take(s->dir, &holder)) < 0) {
        if (errno == EAGAIN)
            fprintf(stderr, "supervise: %s is supervised by pid %d already: leaving it\n",
                    s->dir, (int)holder);
        else
            fprintf(stderr, "supervise: cannot lock %s: %s\n", s->dir, strerror(errno));
        return -1;
    }
    /* A pid file or a state says a supervisor had this pod before. */
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s", s->dir, i ? "supervisor.pid" : "state.json");
        if (access(path, F_OK) == 0) {
            fprintf(stderr, "supervise: the pod in %s ran before: not running it twice\n",
                    s->dir);
            return -1;
        }
    }
    /* Ours from now on: only the lock holder names itself here, before any
     * container runs; the pid file is what tells a later supervisor (and a
     * restarted server) that this pod has started. The first state is
     * written once the containers are started: a Pending state before them
     * woke the agent for a status write of its own on every pod's way to
     * Running. */
    snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
    if (rt_write_atomic(path, pid, strlen(pid), 0644) < 0)
        fprintf(stderr, "supervise: cannot write %s: %s\n", path, strerror(errno));
    snprintf(path, sizeof(path), "%s/state.reserve", s->dir);
    if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) >= 0) {
        if (posix_fallocate(fd, 0, SV_RESERVE_BYTES) != 0)
            unlink(path); /* no room even for that: go on without */
        close(fd);
    }
    return 0;
}

static int signals_fd(void)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

static void cleanup(sv *s)
{
    if (s->exec_pid > 0)
        kill(s->exec_pid, SIGKILL);
    for (size_t i = 0; s->cts && i < s->ncts; i++) {
        if (s->cts[i].log_fd >= 0)
            close(s->cts[i].log_fd);
        json_decref(s->cts[i].last_state);
    }
    free(s->cts);
    json_decref(s->spec);
    if (s->sigfd >= 0)
        close(s->sigfd);
    if (s->pod_ns >= 0)
        close(s->pod_ns);
    if (s->lock_fd >= 0) {
        char path[PATH_MAX + 16];
        snprintf(path, sizeof(path), "%s/state.reserve", s->dir);
        unlink(path); /* the last state is written: no more need for room */
        close(s->lock_fd); /* the lock goes last */
    }
}

/* The server raised its open-file soft limit for its connections; the
 * containers get the limit the server was started with (programs that close
 * every descriptor up to the limit, or use select(), suffer from a big one). */
static void restore_nofile(void)
{
    const char *v = getenv(RT_NOFILE_ENV);
    struct rlimit rl;
    char *end;
    unsigned long long want;

    if (!v)
        return;
    want = strtoull(v, &end, 10);
    if (!*end && getrlimit(RLIMIT_NOFILE, &rl) == 0 && want < rl.rlim_cur) {
        rl.rlim_cur = (rlim_t)want;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    unsetenv(RT_NOFILE_ENV);
}

/* A supervisor started where the runtime did not choose (Slurm placed its
 * step) says where it is, in DIR/where.json: the node's name as Slurm knows
 * it (SLURMD_NODENAME) or else the host name, and its pid. */
static int say_where(const char *dir)
{
    char path[PATH_MAX + 16], host[256] = "";
    const char *node = getenv("SLURMD_NODENAME");
    json_t *w;
    int rc;

    gethostname(host, sizeof(host) - 1);
    w = json_pack("{s:s, s:s, s:i}", "node", node && *node ? node : host, "hostname", host, "pid",
                  (int)getpid());
    snprintf(path, sizeof(path), "%s/where.json", dir);
    rc = w ? rt_save_json(path, w) : -1;
    json_decref(w);
    if (rc < 0)
        fprintf(stderr, "supervise: cannot write %s: %s\n", path, strerror(errno));
    return rc;
}

/* A runtime that starts the supervisor before the pod's spec is known (a
 * Slurm step starts when its allocation does; the server writes spec.json
 * once Slurm says where each pod landed) has it wait for the file. */
static int wait_for_spec(const char *dir, int wait_s)
{
    char path[PATH_MAX + 16];
    int64_t until = ty_now_ms() + (int64_t)wait_s * 1000;

    snprintf(path, sizeof(path), "%s/spec.json", dir);
    while (access(path, F_OK) < 0) {
        if (ty_now_ms() >= until) {
            fprintf(stderr, "supervise: no %s after %d s\n", path, wait_s);
            return -1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

int rt_supervise_main(const char *pod_dir)
{
    return rt_supervise_main_wait(pod_dir, 0);
}

/* Several --pod-dir: one Slurm step runs a task per pod (sl_submit.c), and
 * task SLURM_PROCID keeps the pod of that rank. Its output then goes to
 * that pod's supervisor.log (the step's own output is the job's). NULL
 * after saying why. */
static const char *pick_pod_dir(char **dirs, size_t n)
{
    const char *rank = getenv("SLURM_PROCID");
    char *end, path[PATH_MAX + 32];
    long r;
    int fd;

    if (n == 1)
        return dirs[0];
    r = rank && *rank ? strtol(rank, &end, 10) : -1;
    if (!rank || !*rank || *end || r < 0 || (size_t)r >= n) {
        fprintf(stderr, "supervise: %zu pod directories and SLURM_PROCID %s: cannot choose\n",
                n, rank ? rank : "unset");
        return NULL;
    }
    snprintf(path, sizeof(path), "%s/supervisor.log", dirs[r]);
    if ((fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
    return dirs[r];
}

int rt_supervise_cli(int argc, char **argv, const char *prog)
{
    char **dirs = calloc((size_t)argc + 1, sizeof(*dirs));
    const char *dir;
    size_t ndirs = 0;
    long wait_s = 0;
    int rc;

    if (!dirs)
        return 1;
    /* the two ends of an exec (sv_exec.c): --exec HOST -- ARGV,
     * --exec-in DIR -- ARGV */
    if (argc >= 4 && !strcmp(argv[1], "--exec") && !strcmp(argv[3], "--")) {
        free(dirs);
        return sv_exec_client(argv[2], argc - 4, argv + 4);
    }
    if (argc >= 4 && !strcmp(argv[1], "--exec-in")) {
        char *mounts[8], *vars[256];
        size_t nm = 0, nv = 0;
        int i = 3;
        for (; i + 1 < argc; i += 2) {
            if (!strcmp(argv[i], "--mount") && nm < 8)
                mounts[nm++] = argv[i + 1];
            else if (!strcmp(argv[i], "--env") && nv < 256)
                vars[nv++] = argv[i + 1];
            else
                break;
        }
        if (i < argc && !strcmp(argv[i], "--")) {
            free(dirs);
            return sv_exec_in(argv[2], mounts, nm, vars, nv, argc - i - 1, argv + i + 1);
        }
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--pod-dir") && i + 1 < argc)
            dirs[ndirs++] = argv[++i];
        else if (!strncmp(argv[i], "--pod-dir=", 10))
            dirs[ndirs++] = argv[i] + 10;
        else if (!strcmp(argv[i], "--wait-spec") && i + 1 < argc)
            wait_s = strtol(argv[++i], NULL, 10);
    }
    for (size_t i = 0; i < ndirs; i++)
        if (!*dirs[i])
            ndirs = 0;
    if (!ndirs || wait_s < 0 || wait_s > 86400) {
        fprintf(stderr, "usage: %s --pod-dir DIR... [--wait-spec SECONDS]\n"
                        "(started by the server's runtime, one per pod; given several\n"
                        "directories, a Slurm step's task keeps the one of its SLURM_PROCID)\n",
                prog);
        free(dirs);
        return 2;
    }
    rc = (dir = pick_pod_dir(dirs, ndirs)) ? rt_supervise_main_wait(dir, (int)wait_s) : 2;
    free(dirs);
    return rc;
}

int rt_supervise_main_wait(const char *pod_dir, int wait_spec_s)
{
    sv s;

    if (wait_spec_s > 0 && (say_where(pod_dir) < 0 || wait_for_spec(pod_dir, wait_spec_s) < 0))
        return 1;
    restore_nofile();
    memset(&s, 0, sizeof(s));
    s.sigfd = s.lock_fd = s.pod_ns = s.exec_pid = -1;
    if (load(&s, pod_dir) < 0) {
        cleanup(&s);
        return 1;
    }
    if (claim(&s) < 0) {
        cleanup(&s);
        return SV_EXIT_NOT_OURS;
    }
    /* Orphaned descendants of the containers come to us, not to init, so
     * that the loop reaps them and a container's group can be cleaned up. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    if ((s.sigfd = signals_fd()) < 0) {
        fprintf(stderr, "supervise: signalfd: %s\n", strerror(errno));
        cleanup(&s);
        return 1;
    }
    sv_setup_mounts(&s);
    s.exec_pid = sv_exec_server_start(&s);
    s.dirty = true;
    loop(&s);
    cleanup(&s);
    return 0;
}
