/* slurm_batch.c - sbatch's options and the Volcano Job a batch script
 * becomes (see slurm_batch.h). */
#include <ctype.h>
#include <stdarg.h>
#include <strings.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cli/slurm_batch.h"

const struct option sb_options[] = {
    {"job-name", required_argument, NULL, 'J'},
    {"nodes", required_argument, NULL, 'N'},
    {"ntasks", required_argument, NULL, 'n'},
    {"ntasks-per-node", required_argument, NULL, SB_OPT_NTASKS_PER_NODE},
    {"gpus", required_argument, NULL, 'G'},
    {"gpus-per-node", required_argument, NULL, SB_OPT_GPUS_PER_NODE},
    {"gres", required_argument, NULL, SB_OPT_GRES},
    {"cpus-per-task", required_argument, NULL, 'c'},
    {"mem", required_argument, NULL, SB_OPT_MEM},
    {"time", required_argument, NULL, 't'},
    {"output", required_argument, NULL, 'o'},
    {"error", required_argument, NULL, 'e'},
    {"partition", required_argument, NULL, 'p'},
    {"account", required_argument, NULL, 'A'},
    {"chdir", required_argument, NULL, 'D'},
    {"array", required_argument, NULL, 'a'},
    {"export", required_argument, NULL, SB_OPT_EXPORT},
    {"wait", no_argument, NULL, 'W'},
    {"parsable", no_argument, NULL, SB_OPT_PARSABLE},
    {NULL, 0, NULL, 0},
};
const char sb_shortopts[] = "J:N:n:G:c:t:o:e:p:A:D:a:W";

void sb_opts_init(sb_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->nodes = o->ntasks = o->ntasks_per_node = o->cpus_per_task = -1;
    o->gpus = o->gpus_per_node = -1;
}

/* A positive count no larger than max; -1 otherwise. */
static long count(const char *s, long max)
{
    char *end;
    long v;

    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < 1 || v > max)
        return -1;
    return v;
}

long sb_parse_time(const char *s)
{
    long f[4] = {0}, days = 0;
    int n = 0;
    const char *p = s, *dash;

    if (!s || !*s)
        return -1;
    if (!strcasecmp(s, "UNLIMITED") || !strcasecmp(s, "INFINITE"))
        return 0;
    dash = strchr(s, '-');
    if (dash) {
        char *end;
        if (!isdigit((unsigned char)*s))
            return -1;
        days = strtol(s, &end, 10);
        if (end != dash || days > 100000)
            return -1;
        p = dash + 1;
    }
    for (;;) {
        char *end;
        if (!isdigit((unsigned char)*p) || n == 3)
            return -1;
        f[n++] = strtol(p, &end, 10);
        if (f[n - 1] > 10000000)
            return -1;
        if (*end == '\0')
            break;
        if (*end != ':')
            return -1;
        p = end + 1;
    }
    if (dash) {
        /* days-hours[:minutes[:seconds]] */
        return days * 86400 + f[0] * 3600 + f[1] * 60 + f[2];
    }
    switch (n) {
    case 1: return f[0] * 60;                       /* minutes */
    case 2: return f[0] * 60 + f[1];                /* minutes:seconds */
    default: return f[0] * 3600 + f[1] * 60 + f[2]; /* hours:minutes:seconds */
    }
}

int sb_parse_mem(const char *s, char *out, size_t len)
{
    char *end;
    const char *unit = "Mi";
    long long v;

    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || v < 0 || v > (1LL << 40))
        return -1;
    switch (toupper((unsigned char)*end)) {
    case '\0': break;
    case 'K': unit = "Ki"; break;
    case 'M': unit = "Mi"; break;
    case 'G': unit = "Gi"; break;
    case 'T': unit = "Ti"; break;
    default: return -1;
    }
    if (*end && end[1] && strcasecmp(end + 1, "B") != 0)
        return -1;
    if (v == 0)
        out[0] = '\0';
    else
        snprintf(out, len, "%lld%s", v, unit);
    return 0;
}

/* "N", "TYPE:N" (the type is not matched: one kind of GPU per node here). */
static long gpu_count(const char *s)
{
    const char *colon = strrchr(s, ':');
    return count(colon ? colon + 1 : s, 1 << 20);
}

static int invalid(ty_error *err, const char *what, const char *arg)
{
    return ty_seterr(err, TY_EINVALID, "sbatch: error: invalid %s: \"%s\"", what, arg);
}

static int copy(char *dst, size_t len, const char *arg, const char *what, ty_error *err)
{
    if (strlen(arg) >= len)
        return ty_seterr(err, TY_EINVALID, "sbatch: error: %s is too long (at most %zu bytes)",
                         what, len - 1);
    memcpy(dst, arg, strlen(arg) + 1);
    return 0;
}

int sb_apply(sb_opts *o, int opt, const char *arg, ty_error *err)
{
    long v;

    switch (opt) {
    case 'J': return copy(o->job_name, sizeof(o->job_name), arg, "--job-name", err);
    case 'p': return copy(o->partition, sizeof(o->partition), arg, "--partition", err);
    case 'A': return copy(o->account, sizeof(o->account), arg, "--account", err);
    case 'o': return copy(o->output, sizeof(o->output), arg, "--output", err);
    case 'e': return copy(o->error, sizeof(o->error), arg, "--error", err);
    case 'D': return copy(o->chdir, sizeof(o->chdir), arg, "--chdir", err);
    case 'N':
        /* "2-4" (a range) is Slurm's too; a job here has one size */
        if ((o->nodes = count(arg, SB_MAX_NODES)) < 0)
            return invalid(err, "node count (--nodes, 1 to 1024; no ranges)", arg);
        return 0;
    case 'n':
        if ((o->ntasks = count(arg, SB_MAX_TASKS)) < 0)
            return invalid(err, "number of tasks (--ntasks)", arg);
        return 0;
    case SB_OPT_NTASKS_PER_NODE:
        if ((o->ntasks_per_node = count(arg, SB_MAX_TASKS)) < 0)
            return invalid(err, "--ntasks-per-node", arg);
        return 0;
    case 'c':
        if ((o->cpus_per_task = count(arg, 4096)) < 0)
            return invalid(err, "--cpus-per-task", arg);
        return 0;
    case 'G':
        if ((o->gpus = gpu_count(arg)) < 0)
            return invalid(err, "--gpus", arg);
        return 0;
    case SB_OPT_GPUS_PER_NODE:
        if ((o->gpus_per_node = gpu_count(arg)) < 0)
            return invalid(err, "--gpus-per-node", arg);
        return 0;
    case SB_OPT_GRES:
        /* gpu[:type][:count], count 1 when left out; per node */
        if (strncmp(arg, "gpu", 3) != 0 || (arg[3] && arg[3] != ':') || strchr(arg, ','))
            return ty_seterr(err, TY_EINVALID,
                             "sbatch: error: --gres=%s: only gpu[:type][:count] is supported",
                             arg);
        if (!arg[3] || (!strchr(arg + 4, ':') && !isdigit((unsigned char)arg[4])))
            v = 1;
        else if ((v = gpu_count(arg + 4)) < 0)
            return invalid(err, "--gres", arg);
        o->gpus_per_node = v;
        return 0;
    case SB_OPT_MEM:
        if (sb_parse_mem(arg, o->mem, sizeof(o->mem)) < 0)
            return invalid(err, "--mem specification", arg);
        return 0;
    case 't':
        if ((o->time_s = sb_parse_time(arg)) < 0)
            return invalid(err, "time specification", arg);
        return 0;
    case 'a':
        return ty_seterr(err, TY_EINVALID,
                         "sbatch: error: --array is not supported yet: submit one job per "
                         "index (docs/cli/sbatch.md)");
    case SB_OPT_EXPORT:
        /* Every variable of the pod's own environment is there; sbatch's
         * own environment does not travel (docs/cli/sbatch.md). */
        if (strcmp(arg, "ALL") != 0 && strcmp(arg, "NONE") != 0)
            return ty_seterr(err, TY_EINVALID,
                             "sbatch: error: --export=%s: only ALL and NONE are supported", arg);
        return 0;
    case 'W': o->wait = true; return 0;
    case SB_OPT_PARSABLE: o->parsable = true; return 0;
    default: return ty_seterr(err, TY_EINVALID, "sbatch: error: unrecognized option");
    }
}

/* The option a directive's word names: "--nodes=2", "--nodes", "-N2", "-N". */
static const struct option *lookup(const char *w, const char **inline_arg)
{
    *inline_arg = NULL;
    if (w[0] == '-' && w[1] == '-') {
        size_t n = strcspn(w + 2, "=");
        for (const struct option *o = sb_options; o->name; o++)
            if (strlen(o->name) == n && !strncmp(o->name, w + 2, n)) {
                if (w[2 + n] == '=')
                    *inline_arg = w + 3 + n;
                return o;
            }
        return NULL;
    }
    if (w[0] == '-' && w[1]) {
        const char *s = strchr(sb_shortopts, w[1]);
        if (!s || w[1] == ':')
            return NULL;
        for (const struct option *o = sb_options; o->name; o++)
            if (o->val == w[1]) {
                if (w[2])
                    *inline_arg = w + 2;
                return o;
            }
    }
    return NULL;
}

/* Splits line into words (blanks; "..." and '...' quote) in place. */
static int split_words(char *line, char **words, int max)
{
    int n = 0;
    char *r = line, *w;

    while (*r) {
        char q = 0;
        while (*r == ' ' || *r == '\t')
            r++;
        if (!*r || *r == '#')
            break; /* a comment after the options ends them, as Slurm reads */
        if (n == max)
            return -1;
        words[n++] = w = r;
        for (; *r && (q || (*r != ' ' && *r != '\t')); r++) {
            if (!q && (*r == '"' || *r == '\''))
                q = *r;
            else if (q && *r == q)
                q = 0;
            else
                *w++ = *r;
        }
        if (*r)
            r++;
        *w = '\0';
    }
    return n;
}

static int directive_line(char *line, long lineno, sb_opts *o, ty_error *err)
{
    char *words[64];
    int n = split_words(line, words, 64);

    if (n < 0)
        return ty_seterr(err, TY_EINVALID, "sbatch: error: line %ld: too many options", lineno);
    for (int i = 0; i < n; i++) {
        const char *arg;
        const struct option *opt = lookup(words[i], &arg);
        if (!opt)
            return ty_seterr(err, TY_EINVALID,
                             "sbatch: error: line %ld: #SBATCH %s: unrecognized or unsupported "
                             "option (docs/cli/sbatch.md lists those supported)",
                             lineno, words[i]);
        if (opt->has_arg == required_argument && !arg) {
            if (i + 1 == n)
                return ty_seterr(err, TY_EINVALID,
                                 "sbatch: error: line %ld: #SBATCH %s needs a value", lineno,
                                 words[i]);
            arg = words[++i];
        } else if (opt->has_arg == no_argument && arg) {
            return ty_seterr(err, TY_EINVALID, "sbatch: error: line %ld: %s takes no value",
                             lineno, words[i]);
        }
        if (sb_apply(o, opt->val, arg, err) < 0)
            return -1;
    }
    return 0;
}

int sb_parse_directives(const char *script, sb_opts *o, ty_error *err)
{
    const char *p = script;
    long lineno = 0;

    while (*p) {
        size_t len = strcspn(p, "\n");
        const char *s = p;
        char line[4096];

        lineno++;
        p += len + (p[len] == '\n');
        while (len && (*s == ' ' || *s == '\t'))
            s++, len--;
        if (len == 0 || (lineno == 1 && len >= 2 && s[0] == '#' && s[1] == '!'))
            continue;
        if (*s != '#')
            break; /* the first command: no directives after it (as Slurm) */
        if (len < 7 || strncmp(s, "#SBATCH", 7) != 0 || (len > 7 && s[7] != ' ' && s[7] != '\t'))
            continue;
        if (len - 7 >= sizeof(line))
            return ty_seterr(err, TY_EINVALID, "sbatch: error: line %ld is too long", lineno);
        memcpy(line, s + 7, len - 7);
        line[len - 7] = '\0';
        if (len - 7 && line[len - 8] == '\r')
            line[len - 8] = '\0';
        if (directive_line(line, lineno, o, err) < 0)
            return -1;
    }
    return 0;
}

int sb_resolve(sb_opts *o, ty_error *err)
{
    if (o->nodes < 0) {
        if (o->ntasks > 0 && o->ntasks_per_node > 0)
            o->nodes = (o->ntasks + o->ntasks_per_node - 1) / o->ntasks_per_node;
        else
            o->nodes = 1;
    }
    if (o->nodes > SB_MAX_NODES)
        return ty_seterr(err, TY_EINVALID, "sbatch: error: at most %d nodes", SB_MAX_NODES);
    if (o->ntasks < 0)
        o->ntasks = o->nodes * (o->ntasks_per_node > 0 ? o->ntasks_per_node : 1);
    if (o->ntasks > SB_MAX_TASKS)
        return ty_seterr(err, TY_EINVALID, "sbatch: error: at most %d tasks", SB_MAX_TASKS);
    if (o->ntasks < o->nodes)
        return ty_seterr(err, TY_EINVALID,
                         "sbatch: error: Batch job submission failed: Requested node "
                         "configuration is not available (%ld tasks on %ld nodes)",
                         o->ntasks, o->nodes);
    if (o->ntasks_per_node > 0 &&
        (o->ntasks > o->nodes * o->ntasks_per_node ||
         o->ntasks <= (o->nodes - 1) * o->ntasks_per_node))
        return ty_seterr(err, TY_EINVALID,
                         "sbatch: error: Batch job submission failed: Requested node "
                         "configuration is not available (%ld tasks, %ld per node, %ld nodes)",
                         o->ntasks, o->ntasks_per_node, o->nodes);
    if (o->gpus > 0) {
        if (o->gpus_per_node > 0)
            return ty_seterr(err, TY_EINVALID,
                             "sbatch: error: --gpus and --gpus-per-node/--gres together");
        if (o->gpus % o->nodes)
            return ty_seterr(err, TY_EINVALID,
                             "sbatch: error: --gpus=%ld is not a multiple of --nodes=%ld "
                             "(every node of a job here has as many GPUs)",
                             o->gpus, o->nodes);
        o->gpus_per_node = o->gpus / o->nodes;
    }
    return 0;
}

long sb_tasks_on(const sb_opts *o, long i)
{
    long per = o->ntasks_per_node;

    if (i < 0 || i >= o->nodes)
        return 0;
    if (per > 0) {
        long left = o->ntasks - i * per;
        return left < 0 ? 0 : left < per ? left : per;
    }
    return o->ntasks / o->nodes + (i < o->ntasks % o->nodes);
}

void sb_nodelist(long id, long nodes, char *buf, size_t len)
{
    if (nodes <= 1)
        snprintf(buf, len, SB_JOB_PREFIX "%ld-" SB_TASK "-0", id);
    else
        snprintf(buf, len, SB_JOB_PREFIX "%ld-" SB_TASK "-[0-%ld]", id, nodes - 1);
}

void sb_expand_pattern(const char *pat, long id, const char *name, const char *user,
                       char *buf, size_t len)
{
    ty_buf b;

    b = (ty_buf){0};
    for (const char *p = pat; *p; p++) {
        if (*p != '%' || !p[1]) {
            ty_buf_append(&b, p, 1);
            continue;
        }
        switch (*++p) {
        case 'j':
        case 'A': ty_buf_printf(&b, "%ld", id); break;
        case 'x': ty_buf_printf(&b, "%s", name); break;
        case 'u': ty_buf_printf(&b, "%s", user); break;
        case 'N': ty_buf_printf(&b, SB_JOB_PREFIX "%ld-" SB_TASK "-0", id); break;
        case '%': ty_buf_append(&b, "%", 1); break;
        default: ty_buf_append(&b, p - 1, 2); break;
        }
    }
    snprintf(buf, len, "%.*s", (int)b.len, b.len ? b.data : "");
    ty_buf_free(&b);
}

/* ---- the manifest ---- */

static void env_add(json_t *env, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void env_add(json_t *env, const char *name, const char *fmt, ...)
{
    char v[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(v, sizeof(v), fmt, ap);
    va_end(ap);
    json_array_append_new(env, json_pack("{s:s,s:s}", "name", name, "value", v));
}

/* Slurm's SLURM_TASKS_PER_NODE: "2(x3),1". */
static void tasks_per_node(const sb_opts *o, ty_buf *b)
{
    for (long i = 0; i < o->nodes;) {
        long c = sb_tasks_on(o, i), j = i;
        while (j < o->nodes && sb_tasks_on(o, j) == c)
            j++;
        ty_buf_printf(b, "%s%ld", i ? "," : "", c);
        if (j - i > 1)
            ty_buf_printf(b, "(x%ld)", j - i);
        i = j;
    }
}

static json_t *job_env(const sb_opts *o, const sb_submit *s, const char *nodelist)
{
    json_t *env = json_array();
    char path[1200];
    ty_buf b;

    env_add(env, "SLURM_JOB_ID", "%ld", s->id);
    env_add(env, "SLURM_JOBID", "%ld", s->id);
    env_add(env, "SLURM_JOB_NAME", "%s", o->job_name);
    env_add(env, "SLURM_JOB_NUM_NODES", "%ld", o->nodes);
    env_add(env, "SLURM_NNODES", "%ld", o->nodes);
    env_add(env, "SLURM_JOB_NODELIST", "%s", nodelist);
    env_add(env, "SLURM_NODELIST", "%s", nodelist);
    env_add(env, "SLURM_NTASKS", "%ld", o->ntasks);
    env_add(env, "SLURM_NPROCS", "%ld", o->ntasks);
    b = (ty_buf){0};
    tasks_per_node(o, &b);
    env_add(env, "SLURM_TASKS_PER_NODE", "%.*s", (int)b.len, b.data);
    if (o->ntasks_per_node > 0)
        env_add(env, "SLURM_NTASKS_PER_NODE", "%ld", o->ntasks_per_node);
    if (o->cpus_per_task > 0)
        env_add(env, "SLURM_CPUS_PER_TASK", "%ld", o->cpus_per_task);
    if (o->gpus_per_node > 0) {
        env_add(env, "SLURM_GPUS_ON_NODE", "%ld", o->gpus_per_node);
        env_add(env, "SLURM_GPUS_PER_NODE", "%ld", o->gpus_per_node);
    }
    env_add(env, "SLURM_JOB_PARTITION", "%s", o->partition[0] ? o->partition : "default");
    env_add(env, "SLURM_SUBMIT_DIR", "%s", s->submit_dir);
    env_add(env, "SLURM_SUBMIT_HOST", "%s", s->submit_host);
    env_add(env, "SLURM_JOB_USER", "%s", s->user);
    env_add(env, "SLURM_CLUSTER_NAME", "trainyard");
    /* srun's layout: the nodes' host names and their task counts */
    b.len = 0;
    for (long i = 0; i < o->nodes; i++)
        ty_buf_printf(&b, "%s" SB_JOB_PREFIX "%ld-" SB_TASK "-%ld", i ? " " : "", s->id, i);
    env_add(env, "TY_SLURM_HOSTS", "%.*s", (int)b.len, b.data);
    b.len = 0;
    for (long i = 0; i < o->nodes; i++)
        ty_buf_printf(&b, "%s%ld", i ? " " : "", sb_tasks_on(o, i));
    env_add(env, "TY_SLURM_TASK_COUNTS", "%.*s", (int)b.len, b.data);
    ty_buf_free(&b);
    sb_expand_pattern(o->output[0] ? o->output : "slurm-%j.out", s->id, o->job_name, s->user,
                      path, sizeof(path));
    env_add(env, "TY_SBATCH_OUTPUT", "%s", path);
    sb_expand_pattern(o->error, s->id, o->job_name, s->user, path, sizeof(path));
    env_add(env, "TY_SBATCH_ERROR", "%s", path);
    env_add(env, "TY_SBATCH_CHDIR", "%s", o->chdir[0] ? o->chdir : s->submit_dir);
    env_add(env, "TY_SBATCH_TIME", "%ld", o->time_s);
    env_add(env, "TY_SBATCH_SCRIPT", "%s", ""); /* filled by the caller: it is long */
    return env;
}

static json_t *resources(const sb_opts *o)
{
    json_t *req = json_object(), *lim = json_object(), *r;
    char v[64];

    if (o->cpus_per_task > 0) {
        long per = sb_tasks_on(o, 0);
        snprintf(v, sizeof(v), "%ld", o->cpus_per_task * per);
        json_object_set_new(req, "cpu", json_string(v));
    }
    if (o->mem[0]) {
        json_object_set_new(req, "memory", json_string(o->mem));
        json_object_set_new(lim, "memory", json_string(o->mem));
    }
    if (o->gpus_per_node > 0) {
        snprintf(v, sizeof(v), "%ld", o->gpus_per_node);
        json_object_set_new(req, "nvidia.com/gpu", json_string(v));
        json_object_set_new(lim, "nvidia.com/gpu", json_string(v));
    }
    r = json_object();
    if (json_object_size(req))
        json_object_set(r, "requests", req);
    if (json_object_size(lim))
        json_object_set(r, "limits", lim);
    json_decref(req);
    json_decref(lim);
    return r;
}

/* The wrapper with srun and scontrol in here-documents: one text, so the
 * pod needs nothing but a shell (and awk for scontrol). sb_wrapper_sh has
 * "@SRUN@" and "@SCONTROL@" where they go. Caller frees. */
static char *wrapper_text(void)
{
    const char *w = sb_wrapper_sh, *a = strstr(w, "@SRUN@"), *c = strstr(w, "@SCONTROL@");
    ty_buf b = {0};

    if (!a || !c || c < a)
        return NULL;
    if (ty_buf_append(&b, w, (size_t)(a - w)) < 0 || ty_buf_puts(&b, sb_srun_sh) < 0 ||
        ty_buf_append(&b, a + 6, (size_t)(c - a - 6)) < 0 || ty_buf_puts(&b, sb_scontrol_sh) < 0 ||
        ty_buf_puts(&b, c + 10) < 0) {
        ty_buf_free(&b);
        return NULL;
    }
    return ty_buf_steal(&b, NULL);
}

json_t *sb_manifest(const sb_opts *o, const sb_submit *s, ty_error *err)
{
    char name[64], nodelist[128], v[64];
    json_t *job, *env, *cmd, *ctr, *podspec, *tmpl, *res;
    char *wrapper;

    if (strlen(s->script) > SB_MAX_SCRIPT)
        return ty_seterr(err, TY_EINVALID,
                         "sbatch: error: the script is %zu bytes; at most %u here",
                         strlen(s->script), SB_MAX_SCRIPT),
               NULL;
    if (!(wrapper = wrapper_text()))
        return ty_seterr(err, TY_EINTERNAL, "sbatch: out of memory"), NULL;
    snprintf(name, sizeof(name), SB_JOB_PREFIX "%ld", s->id);
    sb_nodelist(s->id, o->nodes, nodelist, sizeof(nodelist));
    env = job_env(o, s, nodelist);
    json_object_set_new(json_array_get(env, json_array_size(env) - 1), "value",
                        json_string(s->script));
    cmd = json_pack("[s,s,s,s]", "/bin/sh", "-c", wrapper, "sbatch");
    free(wrapper);
    for (int i = 0; i < s->nargs; i++)
        json_array_append_new(cmd, json_string(s->args[i]));
    ctr = json_pack("{s:s,s:s,s:o,s:o}", "name", "batch", "image", "trainyard/sbatch-host",
                    "command", cmd, "env", env);
    res = resources(o);
    if (json_object_size(res))
        json_object_set(ctr, "resources", res);
    json_decref(res);
    podspec = json_pack("{s:s,s:[o]}", "restartPolicy", "Never", "containers", ctr);
    if (o->time_s > 0)
        json_object_set_new(podspec, "activeDeadlineSeconds", json_integer(o->time_s));
    snprintf(v, sizeof(v), "%ld", s->id);
    tmpl = json_pack("{s:{s:{s:s}},s:o}", "metadata", "labels", SB_LABEL_ID, v, "spec", podspec);
    job = json_pack("{s:s,s:s,s:{s:s,s:{s:s},s:{}},s:{s:I,s:I,s:{s:[],s:[],s:[]},s:[{s:s,s:I,"
                    "s:I,s:o}]}}",
                    "apiVersion", "batch.volcano.sh/v1alpha1", "kind", "Job", "metadata",
                    "name", name, "labels", SB_LABEL_ID, v, "annotations", "spec",
                    "minAvailable", (json_int_t)o->nodes, "minSuccess", (json_int_t)1,
                    "plugins", "env", "svc", "mpi", "tasks", "name", SB_TASK, "replicas",
                    (json_int_t)o->nodes, "minAvailable", (json_int_t)o->nodes, "template",
                    tmpl);
    if (!job)
        return ty_seterr(err, TY_EINTERNAL, "sbatch: cannot build the job"), NULL;
    {
        json_t *spec = json_object_get(job, "spec");
        json_t *ann = json_object_get(json_object_get(job, "metadata"), "annotations");
        if (o->partition[0])
            json_object_set_new(spec, "queue", json_string(o->partition));
        json_object_set_new(ann, SB_ANN_NAME, json_string(o->job_name));
        snprintf(v, sizeof(v), "%ld", o->ntasks);
        json_object_set_new(ann, SB_ANN_NTASKS, json_string(v));
        snprintf(v, sizeof(v), "%ld", o->ntasks * (o->cpus_per_task > 0 ? o->cpus_per_task : 1));
        json_object_set_new(ann, SB_ANN_CPUS, json_string(v));
        if (o->account[0])
            json_object_set_new(ann, SB_ANN_ACCOUNT, json_string(o->account));
        if (o->time_s > 0) {
            snprintf(v, sizeof(v), "%ld", o->time_s);
            json_object_set_new(ann, SB_ANN_LIMIT, json_string(v));
        }
        json_object_set_new(ann, SB_ANN_NODELIST, json_string(nodelist));
    }
    return job;
}

/* ---- squeue and sacct ---- */

long sb_job_id(const json_t *job)
{
    const char *v = json_string_value(json_object_get(
        json_object_get(json_object_get(job, "metadata"), "labels"), SB_LABEL_ID));
    return v ? count(v, LONG_MAX) : -1;
}

const char *sb_state(const char *phase)
{
    static const struct {
        const char *phase, *state;
    } map[] = {
        {"Pending", "PENDING"},       {"Restarting", "PENDING"},
        {"Running", "RUNNING"},       {"Completing", "COMPLETING"},
        {"Terminating", "COMPLETING"}, {"Aborting", "COMPLETING"},
        {"Completed", "COMPLETED"},   {"Failed", "FAILED"},
        {"Terminated", "CANCELLED"},  {"Aborted", "CANCELLED"},
    };
    for (size_t i = 0; phase && i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcmp(phase, map[i].phase))
            return map[i].state;
    return "PENDING"; /* no status yet */
}

const char *sb_state_short(const char *state)
{
    if (!strcmp(state, "PENDING"))
        return "PD";
    if (!strcmp(state, "RUNNING"))
        return "R";
    if (!strcmp(state, "COMPLETING"))
        return "CG";
    if (!strcmp(state, "COMPLETED"))
        return "CD";
    if (!strcmp(state, "FAILED"))
        return "F";
    if (!strcmp(state, "CANCELLED"))
        return "CA";
    return "?";
}

void sb_format_elapsed(long secs, char *buf, size_t len)
{
    long d, h, m, s;

    if (secs < 0)
        secs = 0;
    d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
    if (d)
        snprintf(buf, len, "%ld-%02ld:%02ld:%02ld", d, h, m, s);
    else if (h)
        snprintf(buf, len, "%ld:%02ld:%02ld", h, m, s);
    else
        snprintf(buf, len, "%ld:%02ld", m, s);
}
