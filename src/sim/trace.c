/* trace.c - readers for the simulator's job traces and cluster shapes. */
#include "sim/trace.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"

#define MAX_COLS 32
#define MAX_LINE 4096

/* One CSV line split in place: fields point into a private copy. */
typedef struct csv_row {
    char buf[MAX_LINE];
    const char *f[MAX_COLS];
    int n;
} csv_row;

/* Splits [p, end) at commas (the traces have no quoting). -1 when the line is
 * too long or has too many fields. */
static int csv_split(const char *p, size_t len, csv_row *row)
{
    if (len >= sizeof(row->buf))
        return -1;
    memcpy(row->buf, p, len);
    row->buf[len] = '\0';
    if (len && row->buf[len - 1] == '\r')
        row->buf[--len] = '\0';
    row->n = 0;
    char *s = row->buf;
    for (;;) {
        if (row->n == MAX_COLS)
            return -1;
        while (*s == ' ' || *s == '\t')
            s++;
        row->f[row->n++] = s;
        char *comma = strchr(s, ',');
        char *e = comma ? comma : s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (comma) {
            *e = '\0';
            s = comma + 1;
        } else {
            *e = '\0';
            return 0;
        }
    }
}

static int col_index(const csv_row *hdr, const char *name)
{
    for (int i = 0; i < hdr->n; i++)
        if (strcmp(hdr->f[i], name) == 0)
            return i;
    return -1;
}

/* Walks the lines of a buffer: returns the next line's start and length, or
 * NULL at the end. */
static const char *next_line(const char **cur, const char *end, size_t *len)
{
    if (*cur >= end)
        return NULL;
    const char *p = *cur;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    *len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    *cur = nl ? nl + 1 : end;
    return p;
}

static bool blank(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)p[i]))
            return false;
    return true;
}

static int parse_num(const char *s, double *out)
{
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || *e || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (e == s || errno || v < lo || v > hi)
        return -1;
    /* "8.0" is a whole number too. */
    if (*e == '.') {
        e++;
        while (*e == '0')
            e++;
    }
    if (*e)
        return -1;
    *out = v;
    return 0;
}

/* "2017-10-09 07:01:55" (or with a 'T', or RFC 3339 with a zone) to
 * seconds since the epoch; no zone means UTC (no locale, no TZ: the same
 * answer on every machine). */
static int parse_timestamp(const char *s, double *out)
{
    struct timespec ts;

    if (ty_time_parse_flags(s, TY_TIME_SPACE | TY_TIME_NOZONE, &ts) < 0)
        return -1;
    *out = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    return 0;
}

typedef enum { FMT_TIRESIAS, FMT_PHILLY } trace_fmt;

typedef struct cols {
    int gpus, submit, duration, queue;
} cols;

static int queue_index(sim_trace *t, const char *raw, ty_error *err)
{
    /* Queue names become Volcano queue names: DNS-label shaped, compared so. */
    char name[64];
    size_t len = strlen(raw);
    if (len == 0)
        return 0;
    if (len >= sizeof(name))
        return ty_seterr(err, TY_EINVALID, "queue name '%.20s...' is too long", raw);
    for (size_t i = 0; i <= len; i++)
        name[i] = raw[i] && !isalnum((unsigned char)raw[i]) ? '-'
                                                            : (char)tolower((unsigned char)raw[i]);
    for (size_t i = 0; i < t->nqueues; i++)
        if (strcmp(t->queues[i], name) == 0)
            return (int)i;
    if (t->nqueues >= SIM_TRACE_MAX_QUEUES)
        return ty_seterr(err, TY_EINVALID, "more than %d queues", SIM_TRACE_MAX_QUEUES);
    char **q = realloc(t->queues, (t->nqueues + 1) * sizeof(*q));
    if (!q)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    t->queues = q;
    if (!(q[t->nqueues] = strdup(name)))
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    return (int)t->nqueues++;
}

static int detect(const csv_row *hdr, trace_fmt *fmt, cols *c, ty_error *err)
{
    c->duration = col_index(hdr, "duration");
    c->queue = -1;
    if ((c->gpus = col_index(hdr, "num_gpu")) >= 0 &&
        (c->submit = col_index(hdr, "submit_time")) >= 0 && c->duration >= 0) {
        *fmt = FMT_TIRESIAS;
        return 0;
    }
    if ((c->gpus = col_index(hdr, "num_gpus")) >= 0 &&
        (c->submit = col_index(hdr, "timestamp")) >= 0 && c->duration >= 0) {
        *fmt = FMT_PHILLY;
        c->queue = col_index(hdr, "cluster");
        return 0;
    }
    if (col_index(hdr, "num_replicas") >= 0 && col_index(hdr, "time") >= 0)
        return ty_seterr(err, TY_EINVALID,
                         "a Pollux workload has no job durations; the simulator needs the "
                         "Tiresias (job_id,num_gpu,submit_time,...,duration) or Philly "
                         "(timestamp,duration,num_gpus,...) format");
    return ty_seterr(err, TY_EINVALID,
                     "unknown trace format: want a header with num_gpu,submit_time,duration "
                     "(Tiresias) or timestamp,duration,num_gpus (Philly)");
}

static int parse_row(sim_trace *t, trace_fmt fmt, const cols *c, const csv_row *row, long line,
                     sim_job *job, ty_error *err)
{
    int need = c->gpus > c->submit ? c->gpus : c->submit;
    if (c->duration > need)
        need = c->duration;
    if (c->queue > need)
        need = c->queue;
    if (row->n <= need)
        return ty_seterr(err, TY_EINVALID, "line %ld: %d fields, want at least %d", line, row->n,
                         need + 1);
    long gpus;
    if (parse_int(row->f[c->gpus], 1, 1000000, &gpus) < 0)
        return ty_seterr(err, TY_EINVALID, "line %ld: bad GPU count '%s'", line, row->f[c->gpus]);
    double submit, duration;
    int rc = fmt == FMT_PHILLY ? parse_timestamp(row->f[c->submit], &submit)
                               : parse_num(row->f[c->submit], &submit);
    if (rc < 0 || submit < 0)
        return ty_seterr(err, TY_EINVALID, "line %ld: bad submission time '%s'", line,
                         row->f[c->submit]);
    if (parse_num(row->f[c->duration], &duration) < 0 || duration < 0 || duration > 1e10)
        return ty_seterr(err, TY_EINVALID, "line %ld: bad duration '%s'", line,
                         row->f[c->duration]);
    int q = 0;
    if (c->queue >= 0 && (q = queue_index(t, row->f[c->queue], err)) < 0)
        return -1;
    *job = (sim_job){.submit = submit, .duration = duration, .gpus = (int)gpus, .queue = q,
                     .line = line};
    return 0;
}

static int job_cmp(const void *a, const void *b)
{
    const sim_job *x = a, *y = b;
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

sim_trace *sim_trace_parse(const char *text, size_t len, ty_error *err)
{
    sim_trace *t = calloc(1, sizeof(*t));
    csv_row *row = malloc(sizeof(*row));
    size_t cap = 0;
    if (!t || !row) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        goto error;
    }
    if (queue_index(t, "default", err) < 0)
        goto error;
    const char *cur = text, *end = text + len, *p;
    size_t n;
    long line = 0;
    trace_fmt fmt = FMT_TIRESIAS;
    cols c = {-1, -1, -1, -1};
    while ((p = next_line(&cur, end, &n)) && (line++, blank(p, n)))
        ;
    if (!p) {
        ty_seterr(err, TY_EINVALID, "empty trace");
        goto error;
    }
    if (csv_split(p, n, row) < 0) {
        ty_seterr(err, TY_EINVALID, "line %ld: header too long", line);
        goto error;
    }
    if (detect(row, &fmt, &c, err) < 0)
        goto error;
    t->format = fmt == FMT_PHILLY ? "philly" : "tiresias";
    while ((p = next_line(&cur, end, &n))) {
        line++;
        if (blank(p, n))
            continue;
        if (csv_split(p, n, row) < 0) {
            ty_seterr(err, TY_EINVALID, "line %ld: line too long or too many fields", line);
            goto error;
        }
        if (t->njobs == cap) {
            if (cap >= SIM_TRACE_MAX_JOBS) {
                ty_seterr(err, TY_EINVALID, "more than %d jobs", SIM_TRACE_MAX_JOBS);
                goto error;
            }
            size_t ncap = cap ? cap * 2 : 1024;
            sim_job *nj = realloc(t->jobs, ncap * sizeof(*nj));
            if (!nj) {
                ty_seterr(err, TY_EINTERNAL, "out of memory");
                goto error;
            }
            t->jobs = nj;
            cap = ncap;
        }
        if (parse_row(t, fmt, &c, row, line, &t->jobs[t->njobs], err) < 0)
            goto error;
        t->njobs++;
    }
    if (t->njobs == 0) {
        ty_seterr(err, TY_EINVALID, "the trace has no jobs");
        goto error;
    }
    qsort(t->jobs, t->njobs, sizeof(*t->jobs), job_cmp);
    double t0 = t->jobs[0].submit;
    for (size_t i = 0; i < t->njobs; i++)
        t->jobs[i].submit -= t0;
    free(row);
    return t;
error:
    free(row);
    sim_trace_free(t);
    return NULL;
}

/* Reads a whole file, capped. Caller frees. */
static char *slurp(const char *path, size_t cap, size_t *len, ty_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        ty_seterr(err, TY_ENOTFOUND, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t size = 0, alloc = 65536;
    char *data = malloc(alloc);
    while (data) {
        size_t got = fread(data + size, 1, alloc - size, f);
        size += got;
        if (got == 0)
            break;
        if (size == alloc) {
            if (alloc >= cap) {
                ty_seterr(err, TY_ETOOLARGE, "%s is larger than %zu bytes", path, cap);
                goto fail;
            }
            char *nd = realloc(data, alloc * 2);
            if (!nd)
                break;
            data = nd;
            alloc *= 2;
        }
    }
    if (!data) {
        ty_seterr(err, TY_EINTERNAL, "out of memory");
        fclose(f);
        return NULL;
    }
    if (ferror(f)) {
        ty_seterr(err, TY_ENOTFOUND, "cannot read %s: %s", path, strerror(errno));
        goto fail;
    }
    fclose(f);
    *len = size;
    return data;
fail:
    free(data);
    fclose(f);
    return NULL;
}

sim_trace *sim_trace_load(const char *path, ty_error *err)
{
    size_t len;
    char *data = slurp(path, SIM_TRACE_MAX_BYTES, &len, err);
    if (!data)
        return NULL;
    sim_trace *t = sim_trace_parse(data, len, err);
    free(data);
    if (!t && err && err->code == TY_EINVALID) {
        char msg[sizeof(err->text)];
        snprintf(msg, sizeof(msg), "%s", err->text);
        ty_seterr(err, TY_EINVALID, "%s: %s", path, msg);
    }
    return t;
}

void sim_trace_free(sim_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nqueues; i++)
        free(t->queues[i]);
    free(t->queues);
    free(t->jobs);
    free(t);
}

int sim_cluster_spec_parse_csv(const char *text, size_t len, sim_cluster_spec *out, ty_error *err)
{
    static const char *const names[] = {"num_switch", "num_node_p_switch", "num_gpu_p_node",
                                        "num_cpu_p_node", "mem_p_node"};
    csv_row hdr, row;
    const char *cur = text, *end = text + len, *p;
    size_t n;
    int idx[5];
    long v[5];

    while ((p = next_line(&cur, end, &n)) && blank(p, n))
        ;
    if (!p || csv_split(p, n, &hdr) < 0)
        return ty_seterr(err, TY_EINVALID, "not a cluster CSV: no header");
    for (int i = 0; i < 5; i++)
        if ((idx[i] = col_index(&hdr, names[i])) < 0)
            return ty_seterr(err, TY_EINVALID, "not a cluster CSV: no column %s", names[i]);
    while ((p = next_line(&cur, end, &n)) && blank(p, n))
        ;
    if (!p || csv_split(p, n, &row) < 0)
        return ty_seterr(err, TY_EINVALID, "cluster CSV has no data line");
    for (int i = 0; i < 5; i++)
        if (idx[i] >= row.n || parse_int(row.f[idx[i]], 1, 1000000, &v[i]) < 0)
            return ty_seterr(err, TY_EINVALID, "cluster CSV: bad %s", names[i]);
    if (v[0] * v[1] > SIM_MAX_NODES || v[2] > SIM_MAX_GPUS_PER_NODE)
        return ty_seterr(err, TY_EINVALID, "cluster too large (at most %d nodes of %d GPUs)",
                         SIM_MAX_NODES, SIM_MAX_GPUS_PER_NODE);
    *out = (sim_cluster_spec){.nodes = (int)(v[0] * v[1]), .gpus_per_node = (int)v[2],
                              .cpus_per_node = (int)v[3], .mem_gib_per_node = (int)v[4]};
    return 0;
}

int sim_cluster_spec_parse(const char *spec, sim_cluster_spec *out, ty_error *err)
{
    long nodes, gpus;
    char *e;
    if (!spec || !*spec)
        return ty_seterr(err, TY_EINVALID, "empty cluster spec");
    errno = 0;
    nodes = strtol(spec, &e, 10);
    if (e != spec && isdigit((unsigned char)*spec) && (*e == 'x' || *e == 'X')) {
        const char *g = e + 1;
        gpus = strtol(g, &e, 10);
        if (e == g || *e || errno || !isdigit((unsigned char)*g))
            return ty_seterr(err, TY_EINVALID, "bad cluster spec '%s': want NODESxGPUS, e.g. 32x4",
                             spec);
        if (nodes < 1 || nodes > SIM_MAX_NODES || gpus < 1 || gpus > SIM_MAX_GPUS_PER_NODE)
            return ty_seterr(err, TY_EINVALID,
                             "bad cluster spec '%s': 1..%d nodes of 1..%d GPUs", spec,
                             SIM_MAX_NODES, SIM_MAX_GPUS_PER_NODE);
        /* Tiresias' defaults for what the shape does not say. */
        *out = (sim_cluster_spec){.nodes = (int)nodes, .gpus_per_node = (int)gpus,
                                  .cpus_per_node = 64, .mem_gib_per_node = 256};
        return 0;
    }
    size_t len;
    char *data = slurp(spec, 1 << 20, &len, err);
    if (!data) {
        ty_seterr(err, TY_EINVALID,
                  "bad cluster spec '%s': neither NODESxGPUS (e.g. 32x4) nor a readable "
                  "cluster CSV",
                  spec);
        return -1;
    }
    int rc = sim_cluster_spec_parse_csv(data, len, out, err);
    free(data);
    if (rc < 0) {
        char msg[sizeof(err->text)];
        snprintf(msg, sizeof(msg), "%s", err ? err->text : "");
        ty_seterr(err, TY_EINVALID, "%s: %s", spec, msg);
    }
    return rc;
}
