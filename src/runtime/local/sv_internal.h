/* sv_internal.h - the pod supervisor's pieces (supervisor.c: lifecycle and
 * state; sv_mount.c: the pod's namespaces; sv_proc.c: environment,
 * identity, spawning, log pipes). The supervisor
 * is single-threaded: one poll loop over a signalfd and the containers'
 * output pipes. */
#ifndef TY_RUNTIME_LOCAL_SV_INTERNAL_H
#define TY_RUNTIME_LOCAL_SV_INTERNAL_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Kept in the pod directory while the pod runs and removed when a state
 * cannot be written for lack of space: room for the last states. */
#define SV_RESERVE_BYTES (64 << 10)
#define SV_SAVE_RETRY_MS 1000
/* Exit status of a supervisor that did not run its pod: another holds the
 * lock, or the pod ran before in this directory. */
#define SV_EXIT_NOT_OURS 75

/* A stored log line must fit podlog.c's 16 KiB read buffer with its
 * timestamp prefix, so longer output lines are split. */
#define SV_LINE_MAX 16000
#define SV_LOG_MAX_DEFAULT (50ll << 20)

typedef struct sv_stream {
    int fd;                 /* read end of the pipe, -1 when closed */
    size_t len;
    char buf[SV_LINE_MAX];  /* the partial line */
} sv_stream;

typedef struct sv_ct {
    const json_t *spec;     /* borrowed from the pod spec document */
    const char *name;
    bool init;
    pid_t pid;              /* process (and process group) id; 0 = not running */
    sv_stream out, err;
    int log_fd;
    long long log_size;
    char log_path[PATH_MAX];
    /* status */
    const char *state;      /* "waiting", "running", "terminated" */
    char reason[32];
    char message[512];
    int exit_code, signal;
    char started_at[40], finished_at[40];
    int restarts;
    json_t *last_state;     /* the previous run's terminated record, or NULL */
    bool ever_started, done, restart_due;
    bool run_started;       /* the current run got as far as exec */
    int64_t started_ms, restart_at_ms;
    int backoff_n;
    unsigned long long oom_before;
} sv_ct;

typedef struct sv {
    char dir[PATH_MAX];
    json_t *spec;
    sv_ct *cts;             /* init containers first, then containers */
    size_t ninit, ncts;
    size_t next_init;       /* init containers before this one completed */
    int sigfd;
    int lock_fd;            /* holds dir/supervisor.lock while we live */
    bool terminating, dirty;
    bool need_sync;         /* an exit is recorded: the next state goes to disk durably */
    bool orphaned;          /* the pod directory is gone: nothing can be saved */
    bool reserve_freed;     /* state.reserve given up to save a state on a full disk */
    int64_t save_retry_ms;  /* state.json could not be written: next try */
    int64_t kill_at_ms;
    long long log_max;
    char start_time[40];
    char phase[16];
    char oom_events[PATH_MAX]; /* memory.events of our cgroup, or "" */
    bool private_tmp;       /* /tmp is the pod's own (pod dir/tmp mounted there) */
    char mount_error[512];  /* why a volume or /etc/hosts is not mounted: no container starts */
    int pod_ns;             /* the pod's mount namespace (containers enter it), or -1 */
    pid_t exec_pid;         /* the exec server (sv_exec.c), or -1 */
} sv;

/* sv_mount.c: makes the pod's mount and UTS namespaces (root only); the
 * supervisor stays in the host's mount namespace, s->pod_ns names the pod's. */
void sv_setup_mounts(sv *s);

/* sv_exec.c: the exec server for a spec with "exec" (root only): its pid,
 * or -1 when there is none. */
pid_t sv_exec_server_start(sv *s);

/* An exec request as a pod's client sends it (untrusted): NUL-separated
 * host, "env=K=V" entries, "--", argv. */
#define SV_EXEC_MAX_ENV 256
#define SV_EXEC_MAX_ARGV 4096
typedef struct sv_exec_req {
    const char *host;
    const char *env[SV_EXEC_MAX_ENV]; /* K=V of MPI's variables only */
    size_t nenv;
    const char *argv[SV_EXEC_MAX_ARGV];
    size_t nargv;
} sv_exec_req;
/* Parses buf[0..len) (buf[len] must be '\0'); the fields point into buf.
 * 0, or -1 when malformed (no host, no "--", no argv, too many words). */
int sv_exec_parse(const char *buf, size_t len, sv_exec_req *r);

/* sv_proc.c */
int sv_spawn(sv *s, sv_ct *c);            /* 0 running; -1 start error (recorded) */
void sv_drain(sv *s, sv_ct *c, bool final); /* reads what the pipes hold */
void sv_log_open(sv *s, sv_ct *c, bool restart);
unsigned long long sv_oom_count(const sv *s);

#endif
