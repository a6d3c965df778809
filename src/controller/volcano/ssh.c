/* ssh.c - the Volcano ssh plugin's Secret `<job>-ssh`: a key pair, the
 * authorized_keys that admits it and an ssh config naming every pod of the
 * job, mounted at the plugin's path (/root/.ssh) in every pod (plugins.c).
 *
 * The key pair comes from OpenSSH's ssh-keygen (openssh-client, installed by
 * scripts/deps.sh), never from code of our own: the controller runs it once
 * per job, into a private temporary directory, and keeps only the files'
 * text. Keys the user passes (--ssh-private-key / --ssh-public-key) are used
 * as they are. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "controller/volcano/vc_int.h"

extern char **environ;

#define KEY_MAX (64 * 1024) /* an RSA key file is a few KiB */

/* Reads a small file whole; NULL when it cannot, or is larger than KEY_MAX. */
static char *read_small(const char *path)
{
    FILE *f = fopen(path, "re");
    char *out;
    size_t n;

    if (!f)
        return NULL;
    if (!(out = calloc(1, KEY_MAX + 1))) {
        fclose(f);
        return NULL;
    }
    n = fread(out, 1, KEY_MAX + 1, f);
    fclose(f);
    if (n == 0 || n > KEY_MAX) {
        free(out);
        return NULL;
    }
    out[n] = '\0';
    return out;
}

/* Runs ssh-keygen with its output discarded; 0 when it exited 0. */
static int run_keygen(const char *key_path, const char *comment, ty_error *err)
{
    char *const argv[] = {"ssh-keygen", "-q", "-t", "rsa", "-b", "3072", "-N", "",
                          "-C", (char *)comment, "-f", (char *)key_path, NULL};
    posix_spawn_file_actions_t fa;
    int status, rc;
    pid_t pid;

    if (posix_spawn_file_actions_init(&fa) != 0)
        return ty_seterr(err, TY_EINTERNAL, "ssh-keygen: out of memory");
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    rc = posix_spawnp(&pid, "ssh-keygen", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return ty_seterr(err, TY_EINTERNAL,
                         "cannot run ssh-keygen (install openssh-client): %s", strerror(rc));
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return ty_seterr(err, TY_EINTERNAL, "ssh-keygen: waitpid: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return ty_seterr(err, TY_EINTERNAL, "ssh-keygen failed (status %d)", status);
    return 0;
}

int vc_ssh_keygen(const char *comment, char **private_key, char **public_key, ty_error *err)
{
    char dir[] = "/tmp/trainyard-sshkey.XXXXXX", key[64], pub[64];
    int rc = -1;

    *private_key = *public_key = NULL;
    if (!mkdtemp(dir)) /* mode 0700: the private key is never readable by others */
        return ty_seterr(err, TY_EINTERNAL, "ssh key: mkdtemp: %s", strerror(errno));
    snprintf(key, sizeof(key), "%s/id_rsa", dir);
    snprintf(pub, sizeof(pub), "%s/id_rsa.pub", dir);
    if (run_keygen(key, comment, err) == 0) {
        *private_key = read_small(key);
        *public_key = read_small(pub);
        if (*private_key && *public_key)
            rc = 0;
        else
            ty_seterr(err, TY_EINTERNAL, "ssh-keygen wrote no readable key pair");
    }
    unlink(key);
    unlink(pub);
    rmdir(dir);
    if (rc < 0) {
        free(*private_key);
        free(*public_key);
        *private_key = *public_key = NULL;
    }
    return rc;
}

char *vc_ssh_config(const json_t *job)
{
    ty_buf b = {0};
    json_t *t;
    size_t i;

    /* Pods come and go with new host keys under the same names. */
    ty_buf_puts(&b, "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\nLogLevel ERROR\n");
    json_array_foreach(json_object_get(json_object_get(job, "spec"), "tasks"), i, t) {
        const char *task = json_string_value(json_object_get(t, "name"));
        long long n = json_integer_value(json_object_get(t, "replicas"));
        const char *tmpl_host = json_string_value(json_object_get(
            json_object_get(json_object_get(t, "template"), "spec"), "hostname"));
        /* a template hostname is every pod's of the task: one entry, as upstream */
        if (tmpl_host && *tmpl_host && n > 1)
            n = 1;
        for (long long k = 0; task && k < n; k++) {
            char full[600];
            vc_pod_host(job, task, k, full, sizeof(full));
            ty_buf_printf(&b, "Host %.*s\n  HostName %s\n", (int)strcspn(full, "."), full, full);
        }
    }
    return ty_buf_steal(&b, NULL);
}

json_t *vc_ssh_secret_data(const json_t *job, const char *private_key, const char *public_key)
{
    char *config = vc_ssh_config(job);
    json_t *data = json_pack("{s:s, s:s, s:s, s:s}", "id_rsa", private_key, "id_rsa.pub",
                             public_key, "authorized_keys", public_key, "config",
                             config ? config : "");

    free(config);
    return data;
}
