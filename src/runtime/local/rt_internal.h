/* rt_internal.h - shared by the files of the local runtime (not public).
 *
 * Layout on disk (see docs/internals/runtime.md):
 *   <data>/pods/<uid>/spec.json       what the supervisor runs (agent writes once)
 *   <data>/pods/<uid>/state.json      what is happening (supervisor rewrites, tmp+rename)
 *   <data>/pods/<uid>/supervisor.pid  the supervisor's pid (it writes it, holding the lock)
 *   <data>/pods/<uid>/supervisor.log  the supervisor's own stderr
 *   <data>/pods/<uid>/supervisor.lock a record lock the supervisor holds while it lives
 *   <data>/pods/<uid>/ip              the pod's loopback address, kept across restarts
 *   <data>/pods/<uid>/hosts           the pod's /etc/hosts (rewritten in place)
 *   <data>/pods/<uid>/volumes/<name>/ ConfigMap / Secret / emptyDir contents
 *   <data>/logs/<ns>/<pod>/<container>.log[.prev|.1]
 */
#ifndef TY_RUNTIME_LOCAL_RT_INTERNAL_H
#define TY_RUNTIME_LOCAL_RT_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "runtime/local/runtime.h"
#include "client/kc.h"

#define RT_FINALIZER "trainyard.io/local-runtime"
#define RT_COMPONENT "kubelet"
#define RT_MAX_FILE (4u << 20)      /* spec/state/volume files read back: 4 MiB cap */
#define RT_MAX_GPUS 64
#define RT_DEFAULT_BACKOFF_MS 10000
#define RT_MAX_BACKOFF_MS 300000

/* ---- rt_fs.c: files and processes ---- */

/* mkdir -p with mode 0755. 0 or -1 (errno). */
int rt_mkdirs(const char *path);
/* The same with mode (umask applies) for the directories it creates. */
int rt_mkdirs_mode(const char *path, mode_t mode);
/* Gives dir and everything under it (symlinks not followed) to uid:gid;
 * directories get dir_mode, regular files keep their mode & file_mask. 0, or
 * -1 (errno) when any entry could not be changed. */
int rt_own_tree(const char *dir, uid_t uid, gid_t gid, mode_t dir_mode, mode_t file_mask);
/* Writes data to path via path.tmp + rename (readers never see half a file). */
int rt_write_atomic(const char *path, const char *data, size_t len, mode_t mode);
/* Reads a whole file of at most max bytes; caller frees. NULL (errno) on error
 * or when larger (EFBIG). */
char *rt_read_file(const char *path, size_t max, size_t *len);
/* Loads a JSON file of at most RT_MAX_FILE bytes. Caller decrefs. */
json_t *rt_load_json(const char *path);
/* As rt_write_atomic, and on disk when it returns: the file is fsynced
 * before the rename and its directory after. */
int rt_write_durable(const char *path, const char *data, size_t len, mode_t mode);
/* Writes j compactly and atomically (errno on failure, ENOSPC included). */
int rt_save_json(const char *path, const json_t *j);
/* The same, durably (rt_write_durable). */
int rt_save_json_durable(const char *path, const json_t *j);

/* A pod directory's supervisor holds a write lock (fcntl record lock) on
 * dir/supervisor.lock for its whole life: at most one supervisor runs a pod,
 * and whoever finds the lock held knows which process runs it, with no window
 * between its start and a pid file. Record locks are not inherited by fork,
 * so the containers never hold it. */
#define RT_LOCK_FILE "supervisor.lock"
/* Takes the lock: the descriptor that holds it (keep it open), or -1 with
 * errno, EAGAIN when another process holds it (its pid in *holder, 0 when
 * it let go in the meantime). */
int rt_lock_take(const char *dir, pid_t *holder);
/* The pid of the process holding dir's lock, 0 when none does. */
pid_t rt_lock_holder(const char *dir);
/* rm -rf that never leaves the file system it starts on. */
int rt_remove_tree(const char *path);
/* Whether pid is a live (not zombie) process; when cmd_match is non-NULL, its
 * command line must also contain that argument (guards against pid reuse). */
bool rt_pid_alive(pid_t pid, const char *cmd_match);

/* ---- podspec.c: from a Pod object to spec.json ---- */

typedef struct rt_prep {
    const char *data_dir, *pod_dir, *node_name, *shim;
    char pod_ip[16], host_ip[16];
    uint64_t gpus;            /* bit i = GPU index i */
    int backoff_ms;
    long long log_max_bytes;  /* spec.json's logMaxBytes; 0 = left out */
} rt_prep;

/* Resolves env (values, fieldRef, ConfigMap / Secret refs, envFrom, $(VAR)),
 * writes volume contents under pod_dir/volumes and returns the spec.json
 * document (caller decrefs). NULL with err (reason in err->text, e.g. a missing
 * ConfigMap) when the pod cannot start yet. */
json_t *rt_build_spec(ty_kc *s, const json_t *pod, const rt_prep *p, ty_error *err);
/* A container with args and no command: its args run as the whole command
 * line (no image ENTRYPOINT before them; podspec.c says why). */
bool rt_args_only(const json_t *ct);
/* One Warning event (reason ArgsWithoutCommand) per such container of pod,
 * when its supervisor starts. */
void rt_args_only_events(ty_kc *s, const json_t *pod);
/* GPUs a pod asks for: its effective nvidia.com/gpu request by the
 * scheduler's rule (model/podres.h), at most RT_MAX_GPUS. */
int rt_pod_gpu_request(const json_t *pod);

/* ---- hosts.c: the names a pod's hosts file shows ---- */

/* Every namespace's pods and Services as far as hosts files show them,
 * fed from the store's watch events; one per agent, used by its thread only. */
typedef struct rt_hosts rt_hosts;

rt_hosts *rt_hosts_new(void);   /* NULL when out of memory; rt_hosts_free */
void rt_hosts_free(rt_hosts *h);
/* Forgets every pod and Service (not the addresses of rt_hosts_set_local),
 * before a reload from a listing. */
void rt_hosts_clear(rt_hosts *h);
/* The pod or Service (borrowed) as the store now has it, or gone (deleted).
 * True when its namespace's lines may read differently now. */
bool rt_hosts_put_pod(rt_hosts *h, const json_t *pod, bool deleted);
bool rt_hosts_put_service(rt_hosts *h, const json_t *svc, bool deleted);
/* The address this node gave pod uid of ns while the pod runs here (NULL:
 * none any more): its line shows it whatever the pod's status says. True
 * when the namespace's lines may read differently now. */
bool rt_hosts_set_local(rt_hosts *h, const char *ns, const char *uid, const char *ip);
/* The lines of ns's hosts files (its pods with an address, by name, then its
 * Services as the address of the first pod they select), shared by all its
 * pods: borrowed, valid until the next call on h. *gen changes whenever the
 * text does (never 0). NULL when out of memory. O(pods with an address +
 * Services not named as a pod they select), cached until something changes. */
const char *rt_hosts_body(rt_hosts *h, const char *ns, uint64_t *gen);
/* A pod's whole hosts file: localhost lines for own_ip, then body (caller frees). */
char *rt_hosts_text(const char *body, const char *own_ip);
/* ---- hosts_file.c ---- */

/* Makes the hosts file at path show text's lines, in place (the same inode: a
 * bind mount of it sees the change), so that a reader at any moment sees each
 * line of the old or the new text whole or not at all, and every line that
 * both have. Written whole (atomically) when there is none yet. 0 or -1
 * (errno). */
int rt_hosts_file_update(const char *path, const char *text);

/* ---- rt_logs.c: logs of pods that are gone ---- */

/* The wall clock in milliseconds (what the marks below hold). */
int64_t rt_logs_wall_ms(void);
/* Pod ns/name left this node: the retention of its logs counts from now.
 * labels (may be NULL) are the pod's, kept beside its logs (".labels") so
 * that the logs of a deleted job's pods can still be found by its name.
 * The mark also names the uid of namespace ns now (read through s), so
 * that a later namespace of that name is not given these logs. */
void rt_logs_mark_gone(ty_kc *s, const char *data_dir, const char *ns, const char *name,
                       const json_t *labels);
/* The pods of namespace ns whose logs outlive them (marked gone): an array
 * as rt_backend_ops.log_retained's (with "namespaceUID" where the mark has
 * it), new reference; NULL = none. A ns that is no safe path component
 * gives an empty array. At most RT_LOGS_RETAINED_MAX entries. */
#define RT_LOGS_RETAINED_MAX 1000
json_t *rt_logs_retained(const char *data_dir, const char *ns);
/* One pass over <data_dir>/logs: the directory of a pod the store no longer
 * has is removed once retention_ms have passed since it went (now_ms: the
 * wall clock, a parameter so that a test can move it); one found gone for
 * the first time is marked gone from now_ms. Returns how many went. Nothing
 * when retention_ms <= 0 (kept for ever). */
int rt_logs_sweep(ty_kc *s, const char *data_dir, int64_t retention_ms, int64_t now_ms);

/* ---- podstatus.c ---- */

/* Builds the pod status from the supervisor's state (NULL = not started yet:
 * containers wait with wait_reason/wait_msg, default ContainerCreating) onto a
 * copy of the pod's current status. ip/host_ip as allocated. Caller decrefs. */
json_t *rt_pod_status(const json_t *pod, const json_t *state, const char *ip,
                      const char *host_ip, const char *wait_reason, const char *wait_msg);
/* Records kubelet-style Events for what changed between two states. */
void rt_state_events(ty_kc *s, const json_t *pod, const json_t *before,
                     const json_t *after);

/* ---- node.c ---- */

struct rt_gpus;
/* Creates or updates the Node, with g's GPUs (gpu.h; borrowed): capacity
 * and GPU feature discovery's labels nvidia.com/gpu.product, .count and
 * .memory (MiB). */
int rt_node_register(ty_kc *s, const char *name, struct rt_gpus *g, ty_error *err);
/* The Node condition that says whether its GPUs are sound (True: some
 * are not), docs/internals/runtime.md. */
#define RT_GPU_CONDITION "GPUUnhealthy"
/* Writes the GPUs' health: allocatable nvidia.com/gpu = healthy, and the
 * condition, True with problem as its message (NULL = all are sound). */
int rt_node_set_gpu_health(ty_kc *s, const char *name, int healthy, const char *problem,
                           ty_error *err);
/* Updates the Ready condition's lastHeartbeatTime. */
int rt_node_heartbeat(ty_kc *s, const char *name, ty_error *err);
/* 1 when the file system of dir has less free space than m allows (the
 * smaller of m's size and percentage, whichever are set), 0 when not, -1
 * when it cannot be read. *free_bytes (may be NULL): what is free. */
int rt_disk_pressure(const char *dir, const rt_disk_min *m, long long *free_bytes);
/* The DiskPressure condition and the node.kubernetes.io/disk-pressure
 * NoSchedule taint, set or cleared. */
int rt_node_set_disk_pressure(ty_kc *s, const char *name, bool pressure, ty_error *err);

#endif
