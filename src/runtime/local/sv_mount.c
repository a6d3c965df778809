/* sv_mount.c - the pod's mount (and UTS) namespace (root only).
 *
 * The supervisor makes the namespace, mounts into it what the pod sees (its
 * hosts file over /etc/hosts, a /tmp of its own, an /etc/passwd and
 * /etc/group that name its users, its volumes), keeps a
 * descriptor of it and goes back to the host's: it goes on reading and
 * writing its pod directory, the logs and its state by their host paths,
 * which the pod's /tmp would hide when the data directory is under /tmp.
 * Each container enters the namespace between fork and exec (sv_proc.c). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/jsonget.h"
#include "runtime/local/rt_internal.h"
#include "runtime/local/sv_internal.h"

/* One bind mount to make: its source opened (O_PATH) before anything is
 * mounted, so that a source under /tmp is still the host's when the pod's
 * /tmp covers it. */
typedef struct bind {
    int fd;
    int err; /* errno of the open when fd < 0 */
    const char *source, *target;
    bool ro;
} bind;

static int by_target_len(const void *a, const void *b)
{
    size_t la = strlen(((const bind *)a)->target), lb = strlen(((const bind *)b)->target);
    return la < lb ? -1 : la > lb;
}

/* Where a missing mount point may be made on the host, as root, for a pod:
 * a new top-level directory (/workspace, /data), or below the places meant
 * for such things and the frameworks' own (/etc/volcano, /etc/mpi), or in
 * the pod's own /tmp and /root. Anywhere else (/etc/nologin, /usr/lib/x) a
 * tenant would have root make files the host acts on: the mount fails. */
static bool may_create(const char *path)
{
    static const char *const under[] = {"/mnt/", "/opt/", "/srv/", "/home/", "/media/",
                                        "/tmp/", "/root/", "/var/tmp/", "/etc/volcano",
                                        "/etc/mpi", NULL};
    static const char *const flags[] = {"/forcefsck", "/fastboot", "/forcequotacheck",
                                        "/.autorelabel", NULL};
    const char *slash = strrchr(path, '/');

    for (int i = 0; flags[i]; i++)
        if (!strcmp(path, flags[i]))
            return false;
    if (slash == path) /* top level */
        return true;
    for (int i = 0; under[i]; i++) {
        size_t n = strlen(under[i]);
        if (!strncmp(path, under[i], n) &&
            (under[i][n - 1] == '/' || path[n] == '\0' || path[n] == '/'))
            return true;
    }
    return false;
}

/* The mount point target opened O_PATH (what to mount on, through
 * /proc/self/fd: no path is resolved again), made when missing where
 * may_create allows, of the source's type. The walk follows no symlink that
 * root does not own: one a tenant left in /var/tmp or /dev/shm would lead
 * root's mkdir anywhere. -1 with errno. */
static int open_target(int source_fd, const char *target)
{
    char path[PATH_MAX], done[PATH_MAX] = "";
    struct stat st;
    bool dir_source, made = false;
    int cur, next;

    if (fstat(source_fd, &st) < 0 || target[0] != '/' || strlen(target) >= sizeof(path))
        return -1;
    dir_source = S_ISDIR(st.st_mode);
    snprintf(path, sizeof(path), "%s", target);
    if ((cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -1;
    for (char *save = NULL, *c = strtok_r(path, "/", &save); c;) {
        char *rest = strtok_r(NULL, "/", &save);
        bool last = rest == NULL;
        size_t dl = strlen(done);
        snprintf(done + dl, sizeof(done) - dl, "/%s", c);
        if (!strcmp(c, "..") || !strcmp(c, ".")) {
            errno = EINVAL;
            goto fail;
        }
        if (fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            if (S_ISLNK(st.st_mode) && st.st_uid != 0) {
                errno = ELOOP; /* a user's link: not followed */
                goto fail;
            }
            next = openat(cur, c, O_PATH | O_CLOEXEC | (last ? 0 : O_DIRECTORY));
        } else if (errno != ENOENT || (!made && !may_create(done))) {
            if (errno == ENOENT)
                errno = EPERM;
            goto fail;
        } else if (!last || dir_source) {
            made = true;
            if (mkdirat(cur, c, 0755) < 0 && errno != EEXIST)
                goto fail;
            next = openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        } else {
            int fd = openat(cur, c, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (fd < 0)
                goto fail;
            close(fd);
            next = openat(cur, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0)
            goto fail;
        close(cur);
        cur = next;
        c = rest;
    }
    return cur;
fail:
    next = errno;
    close(cur);
    errno = next;
    return -1;
}

/* The mount flags of the file system fd is on, as a bind remount must
 * repeat them. */
static unsigned long source_flags(int fd)
{
    static const struct {
        unsigned long st, ms;
    } map[] = {{ST_NOSUID, MS_NOSUID},     {ST_NODEV, MS_NODEV},
               {ST_NOEXEC, MS_NOEXEC},     {ST_NOATIME, MS_NOATIME},
               {ST_NODIRATIME, MS_NODIRATIME}, {ST_RELATIME, MS_RELATIME},
               {ST_RDONLY, MS_RDONLY}};
    struct statvfs sv;
    unsigned long flags = 0;

    if (fstatvfs(fd, &sv) < 0)
        return 0;
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (sv.f_flag & map[i].st)
            flags |= map[i].ms;
    return flags;
}

/* Mounts b at its target; -1 when it is not there as asked (why: the
 * reason, also on the supervisor's stderr). A read-only mount that cannot
 * be made read-only is taken down again: the pod must not write where it
 * asked not to. */
static int bind_fd(const bind *b, unsigned long extra, char *why, size_t len)
{
    char src[64], dst[64];
    int tfd, e;

    if (b->fd < 0) {
        snprintf(why, len, "cannot open %s to mount it at %s: %s", b->source, b->target,
                 strerror(b->err));
        goto fail;
    }
    snprintf(src, sizeof(src), "/proc/self/fd/%d", b->fd);
    if ((tfd = open_target(b->fd, b->target)) < 0) {
        e = errno;
        snprintf(why, len, "no mount point %s for %s: %s%s", b->target, b->source, strerror(e),
                 e == EPERM ? " (a missing one is made only at the top level, under /mnt, "
                              "/opt, /srv, /home, /media, /var/tmp, /etc/volcano, /etc/mpi "
                              "and the pod's /tmp and /root)"
                            : "");
        goto fail;
    }
    snprintf(dst, sizeof(dst), "/proc/self/fd/%d", tfd);
    if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0) {
        snprintf(why, len, "cannot mount %s at %s: %s", b->source, b->target, strerror(errno));
        close(tfd);
        goto fail;
    }
    close(tfd);
    /* the remount names the target by its path: what was just mounted
     * there; it keeps the source's own flags, which a user namespace locks
     * (leaving one out is EPERM) */
    if ((b->ro || extra) &&
        mount(NULL, b->target, NULL,
              MS_BIND | MS_REMOUNT | MS_REC | (b->ro ? MS_RDONLY : 0) | extra |
                  source_flags(b->fd),
              NULL) < 0) {
        snprintf(why, len, "cannot make %s %s: %s", b->target,
                 b->ro ? "read-only" : "nosuid", strerror(errno));
        if (!b->ro) { /* nosuid, nodev: best effort, the mount stays */
            fprintf(stderr, "supervise: %s\n", why);
            return 0;
        }
        /* writable where the pod asked for read-only: taken down */
        umount2(b->target, MNT_DETACH);
        goto fail;
    }
    return 0;
fail:
    fprintf(stderr, "supervise: %s\n", why);
    return -1;
}

static bind open_bind(const char *source, const char *target, bool ro)
{
    int fd = open(source, O_PATH | O_CLOEXEC);

    return (bind){.fd = fd, .err = fd < 0 ? errno : 0, .source = source, .target = target,
                  .ro = ro};
}

/* sub (a relative path) opened O_PATH beneath the directory root: symlinks
 * inside the volume are followed, one leading out of it (absolute, or up
 * past root) fails with EXDEV, as the kubelet refuses a subPath that
 * escapes its volume (CVE-2017-1002101). A tenant's claim keeps what its
 * pods leave there, a symlink to another tenant's claim included, and the
 * supervisor opening it is root. Kernels before openat2 (5.6): no symlink
 * at all. -1 with errno. */
static int open_beneath(const char *root, const char *sub)
{
    struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
    int dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), fd, e;
    char part[PATH_MAX];

    if (dir < 0)
        return -1;
    fd = (int)syscall(SYS_openat2, dir, sub, &how, sizeof(how));
    if (fd >= 0 || errno != ENOSYS) {
        e = errno;
        close(dir);
        errno = e;
        return fd;
    }
    /* no openat2: one component at a time, none a symlink */
    snprintf(part, sizeof(part), "%s", sub);
    for (char *save = NULL, *c = strtok_r(part, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        struct stat st;
        fd = openat(dir, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        e = errno;
        close(dir);
        if (fd < 0) {
            errno = e;
            return -1;
        }
        if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode) || !strcmp(c, "..")) {
            close(fd);
            errno = EXDEV;
            return -1;
        }
        dir = fd;
    }
    return dir;
}

static bind open_sub_bind(const char *source, const char *sub, const char *target, bool ro)
{
    if (!sub || !*sub)
        return open_bind(source, target, ro);
    int fd = open_beneath(source, sub);

    return (bind){.fd = fd, .err = fd < 0 ? errno : 0, .source = source, .target = target,
                  .ro = ro};
}

/* The pod's own /tmp: a directory of the pod directory (mode 1777, as /tmp:
 * the pod's containers may run as different uids), so that tenants do not
 * see each other's temporary files, and MPI and PyTorch session files of
 * two jobs stay apart. nosuid, nodev: nothing planted there elevates. */
static int tmp_source(sv *s, char *dir, size_t len)
{
    snprintf(dir, len, "%s/tmp", s->dir);
    if ((mkdir(dir, 01777) < 0 && errno != EEXIST) || chmod(dir, 01777) < 0) {
        fprintf(stderr, "supervise: no private /tmp for this pod: %s: %s\n", dir,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* Whether a passwd or group file (text) has an entry with id in its third
 * field. */
static bool has_id(const char *text, unsigned long id)
{
    for (const char *p = text; *p;) {
        const char *f = p;
        for (int colons = 0; *f && *f != '\n' && colons < 2; f++)
            colons += *f == ':';
        char *end;
        if (*f && *f != '\n' && strtoul(f, &end, 10) == id && end != f && *end == ':')
            return true;
        p = strchr(p, '\n');
        if (!p)
            break;
        p++;
    }
    return false;
}

/* host's FILE plus a line for each id of the pod's containers it lacks, into
 * the pod directory (0644, the supervisor's), so that the pod's users have
 * names: ssh, Python's getpass and Open MPI look the uid up and give up
 * without an entry (an image's /etc/passwd is what a container would have
 * had). passwd is true for /etc/passwd, false for /etc/group. */
static int id_file(sv *s, bool passwd, char *out, size_t len)
{
    const char *host = passwd ? "/etc/passwd" : "/etc/group";
    const json_t *groups[] = {json_object_get(s->spec, "initContainers"),
                              json_object_get(s->spec, "containers")};
    FILE *in = fopen(host, "re"), *f;
    ty_buf b = {0};
    char chunk[4096];
    size_t n;
    int rc = -1;

    snprintf(out, len, "%s/%s", s->dir, passwd ? "passwd" : "group");
    while (in && (n = fread(chunk, 1, sizeof(chunk), in)) > 0 && b.len < (1u << 22))
        if (ty_buf_append(&b, chunk, n) < 0)
            break;
    if (in)
        fclose(in);
    if (b.len && b.data[b.len - 1] != '\n')
        ty_buf_append(&b, "\n", 1);
    for (size_t g = 0; g < 2; g++) {
        size_t i;
        const json_t *c;
        json_array_foreach(groups[g], i, c) {
            const json_t *u = json_object_get(c, "user");
            json_int_t uid = json_integer_value(json_object_get(u, "uid"));
            json_int_t gid = json_integer_value(json_object_get(u, "gid"));
            json_int_t id = passwd ? uid : gid;
            if (!json_is_integer(json_object_get(u, passwd ? "uid" : "gid")) ||
                has_id(b.data ? b.data : "", (unsigned long)id))
                continue;
            /* home /root: the pod's own (mount_all), where ssh keys mount */
            if (passwd ? ty_buf_printf(&b, "u%lld:x:%lld:%lld:pod user:/root:/bin/sh\n",
                                       (long long)uid, (long long)uid, (long long)gid)
                       : ty_buf_printf(&b, "g%lld:x:%lld:\n", (long long)gid, (long long)gid))
                goto out;
        }
    }
    if (!(f = fopen(out, "we")))
        goto out;
    if (fchmod(fileno(f), 0644) == 0 && (!b.len || fwrite(b.data, 1, b.len, f) == b.len))
        rc = 0;
    if (fclose(f) != 0)
        rc = -1;
out:
    if (rc < 0)
        fprintf(stderr, "supervise: no %s for this pod's users: %s\n", host, strerror(errno));
    ty_buf_free(&b);
    return rc;
}

/* The first reason the pod's mounts are not as asked: its containers
 * then fail to start with it. */
static void mount_failed(sv *s, const char *why)
{
    if (!s->mount_error[0])
        snprintf(s->mount_error, sizeof(s->mount_error), "%s", why);
}

static void mount_all(sv *s)
{
    const json_t *mounts = json_object_get(s->spec, "mounts");
    size_t n = json_array_size(mounts);
    bind hosts, tmp = {.fd = -1}, home, *vols = n ? calloc(n, sizeof(*vols)) : NULL;
    bind pw = {.fd = -1}, gr = {.fd = -1};
    char tmp_dir[PATH_MAX + 8], root_dir[PATH_MAX + 8];
    char pw_file[PATH_MAX + 8], gr_file[PATH_MAX + 8], why[sizeof(s->mount_error)];

    /* Every source first, while every path is still the host's. */
    hosts = open_bind(ty_jstr(s->spec, "hostsFile"), "/etc/hosts", false);
    if (id_file(s, true, pw_file, sizeof(pw_file)) == 0)
        pw = open_bind(pw_file, "/etc/passwd", true);
    if (id_file(s, false, gr_file, sizeof(gr_file)) == 0)
        gr = open_bind(gr_file, "/etc/group", true);
    if (tmp_source(s, tmp_dir, sizeof(tmp_dir)) == 0)
        tmp = open_bind(tmp_dir, "/tmp", false);
    /* The pod's own /root (the agent made it, the pod owner's): the host
     * root's home stays hidden, and what mounts under it (mpi-operator's
     * and Volcano's ssh keys at /root/.ssh) reaches a pod that is not root,
     * as an image's /root would. */
    snprintf(root_dir, sizeof(root_dir), "%s/root", s->dir);
    home = access(root_dir, F_OK) == 0 ? open_bind(root_dir, "/root", false) : (bind){.fd = -1};
    for (size_t i = 0; vols && i < n; i++) {
        const json_t *m = json_array_get(mounts, i);
        vols[i] = open_sub_bind(ty_jstr(m, "source"), ty_jstr(m, "subPath"),
                                ty_jstr(m, "target"), json_is_true(json_object_get(m, "readOnly")));
    }
    /* The names of the pod's peers and its volumes are the pod's: without
     * them its containers do not start (sv_spawn), as the kubelet starts
     * none before every volume is mounted. The rest is best effort. */
    if (bind_fd(&hosts, 0, why, sizeof(why)) < 0)
        mount_failed(s, why);
    if (pw.fd >= 0)
        bind_fd(&pw, 0, why, sizeof(why));
    if (gr.fd >= 0)
        bind_fd(&gr, 0, why, sizeof(why));
    /* /tmp and /root before the volumes: one mounted under them (or at
     * them) stays visible. */
    if (tmp.fd >= 0 && bind_fd(&tmp, MS_NOSUID | MS_NODEV, why, sizeof(why)) == 0)
        s->private_tmp = true;
    if (home.fd >= 0)
        bind_fd(&home, MS_NOSUID | MS_NODEV, why, sizeof(why));
    /* Parents before children, so a volume inside another stays visible. */
    if (vols)
        qsort(vols, n, sizeof(*vols), by_target_len);
    for (size_t i = 0; vols && i < n; i++)
        if (bind_fd(&vols[i], 0, why, sizeof(why)) < 0)
            mount_failed(s, why);
    if (n && !vols)
        mount_failed(s, "out of memory for the pod's volumes");
    for (size_t i = 0; vols && i < n; i++)
        if (vols[i].fd >= 0)
            close(vols[i].fd);
    if (hosts.fd >= 0)
        close(hosts.fd);
    if (pw.fd >= 0)
        close(pw.fd);
    if (gr.fd >= 0)
        close(gr.fd);
    if (tmp.fd >= 0)
        close(tmp.fd);
    if (home.fd >= 0)
        close(home.fd);
    free(vols);
}

/* No mount namespace for the pod (root without CAP_SYS_ADMIN, a seccomp
 * filter): its containers see the host's files, as when the supervisor is
 * not root; a pod with volumes does not start without them. */
static void no_namespace(sv *s, const char *what, int e)
{
    if (json_array_size(json_object_get(s->spec, "mounts")) > 0)
        snprintf(s->mount_error, sizeof(s->mount_error), "%s: %s: the pod's volumes cannot "
                 "be mounted", what, strerror(e));
    fprintf(stderr, "supervise: %s: %s: no mounts for this pod\n", what, strerror(e));
}

void sv_setup_mounts(sv *s)
{
    const char *host = ty_jstr(s->spec, "hostname");
    int host_ns;

    s->pod_ns = -1;
    if (geteuid() != 0) {
        char tmp[PATH_MAX + 8];
        snprintf(tmp, sizeof(tmp), "%s/tmp", s->dir);
        mkdir(tmp, 0700); /* the pod's HOME */
        fprintf(stderr,
                "supervise: not root: no /etc/hosts or volume mounts for this pod, and its "
                "containers run as uid %u whatever their securityContext says\n",
                (unsigned)geteuid());
        return;
    }
    if ((host_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC)) < 0) {
        no_namespace(s, "cannot open the host's mount namespace", errno);
        return;
    }
    if (unshare(CLONE_NEWNS | CLONE_NEWUTS) < 0) {
        no_namespace(s, "cannot make the pod's mount namespace", errno);
        close(host_ns);
        return;
    }
    if (*host && sethostname(host, strlen(host) > 63 ? 63 : strlen(host)) < 0)
        fprintf(stderr, "supervise: sethostname: %s\n", strerror(errno));
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        no_namespace(s, "cannot make / private", errno);
    else
        mount_all(s);
    s->pod_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
    /* Back to the host's view; should that fail we stay in the pod's (its
     * containers then need no setns), which hides a data directory under /tmp. */
    if (s->pod_ns >= 0 && setns(host_ns, CLONE_NEWNS) < 0) {
        fprintf(stderr, "supervise: cannot return to the host's mount namespace: %s\n",
                strerror(errno));
        close(s->pod_ns);
        s->pod_ns = -1;
    }
    close(host_ns);
}
