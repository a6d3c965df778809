/* scli_parse.c - reading what sinfo, squeue and scontrol print in the
 * fixed formats the Slurm backend asks for (scli.h). Every parser takes the
 * whole output, bounds its lines and fields, and names the line it could
 * not read. */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/strmap.h"
#include "runtime/slurm/scli.h"

/* Keys in one `scontrol show job -o` line; Slurm 22.05 prints about 60. */
#define SHOW_JOB_MAX_KEYS 1000

/* Lines of text: [s, e) without its '\n' and a trailing '\r'. */
typedef struct line_iter {
    const char *p;
    size_t no;
} line_iter;

static bool next_line(line_iter *it, const char **s, const char **e)
{
    if (!it->p || !*it->p)
        return false;
    *s = it->p;
    const char *nl = strchr(it->p, '\n');
    *e = nl ? nl : it->p + strlen(it->p);
    it->p = nl ? nl + 1 : *e;
    it->no++;
    if (*e > *s && (*e)[-1] == '\r')
        (*e)--;
    return true;
}

static bool blank(const char *s, const char *e)
{
    for (; s < e; s++)
        if (*s != ' ' && *s != '\t')
            return false;
    return true;
}

/* Lines that are not blank; stops counting past SCLI_MAX_LINES. */
static size_t count_lines(const char *text)
{
    line_iter it = {.p = text};
    const char *s, *e;
    size_t n = 0;

    while (n <= SCLI_MAX_LINES && next_line(&it, &s, &e))
        if (!blank(s, e))
            n++;
    return n;
}

/* The length of the valid UTF-8 sequence at s (at most n bytes long), or
 * 0 when it is not one (overlong forms and surrogates included). */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

/* Copies [s, s+len) into dst (cap bytes with the NUL) with bytes that are
 * not UTF-8 and control bytes shown as '?', cut before a sequence that
 * does not fit. Returns whether it was cut. */
static bool copy_text(char *dst, size_t cap, const char *s, size_t len)
{
    size_t i = 0, o = 0;

    while (i < len) {
        size_t n = utf8_seq((const unsigned char *)s + i, len - i);
        if (n == 0 || (n == 1 && ((unsigned char)s[i] < 0x20 || s[i] == 0x7f))) {
            if (o + 1 >= cap)
                break;
            dst[o++] = '?';
            i++;
            continue;
        }
        if (o + n >= cap)
            break;
        memcpy(dst + o, s + i, n);
        o += n;
        i += n;
    }
    dst[o] = '\0';
    return i < len;
}

/* [s, e) as printed by Slurm for "nothing". */
static bool is_null(const char *s, const char *e)
{
    return e - s == 6 && memcmp(s, "(null)", 6) == 0;
}

static int parse_num(const char *s, const char *e, long long max, long long *v)
{
    long long x = 0;

    if (s == e || e - s > 19)
        return -1;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (x > (max - (*s - '0')) / 10)
            return -1;
        x = x * 10 + (*s - '0');
    }
    *v = x;
    return 0;
}

/* A name, address or partition: printable, no blanks, fits. */
static int put_word(char *dst, size_t cap, const char *s, const char *e)
{
    if (s == e || (size_t)(e - s) >= cap)
        return -1;
    for (const char *p = s; p < e; p++)
        if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
            return -1;
    memcpy(dst, s, (size_t)(e - s));
    dst[e - s] = '\0';
    return 0;
}

static bool is_host_word(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
            return false;
    return true;
}

/* The node state as %T prints it: lower case, suffixes stripped, flags
 * set (scli.h says which states mean what). */
static int node_state(scli_node *nd, const char *s, const char *e)
{
    static const char suffixes[] = "*~#!%$@^-+";
    static const char *const drains[] = {"drain", "drained", "draining"};
    static const char *const downs[] = {"down", "fail", "failing", "unknown", "inval", "future"};

    nd->responding = true;
    while (e > s && strchr(suffixes, e[-1])) {
        if (e[-1] == '*')
            nd->responding = false;
        e--;
    }
    if (s == e || (size_t)(e - s) >= sizeof(nd->state))
        return -1;
    for (size_t i = 0; s + i < e; i++) {
        char c = (char)tolower((unsigned char)s[i]);
        if (!(c >= 'a' && c <= 'z') && c != '_' && c != '+')
            return -1;
        nd->state[i] = c;
    }
    nd->state[e - s] = '\0';
    char parts[sizeof(nd->state)], *save = NULL;
    memcpy(parts, nd->state, sizeof(parts));
    for (char *t = strtok_r(parts, "+", &save); t; t = strtok_r(NULL, "+", &save)) {
        for (size_t i = 0; i < sizeof(drains) / sizeof(drains[0]); i++)
            if (strcmp(t, drains[i]) == 0)
                nd->drain = true;
        for (size_t i = 0; i < sizeof(downs) / sizeof(downs[0]); i++)
            if (strcmp(t, downs[i]) == 0)
                nd->down = true;
    }
    return 0;
}

/* One sinfo line, '%N|%o|%c|%m|%G|%T|%P'; what is wrong in *what. */
static int sinfo_line(scli_node *nd, const char *s, const char *e, const char **what)
{
    const char *f[8];
    size_t nf = 0;
    long long v;

    f[nf++] = s;
    for (const char *p = s; p < e; p++)
        if (*p == '|') {
            if (nf == 7) {
                *what = "more than 7 fields (want N|o|c|m|G|T|P)";
                return -1;
            }
            f[nf++] = p + 1;
        }
    if (nf != 7) {
        *what = "fewer than 7 fields (want N|o|c|m|G|T|P)";
        return -1;
    }
    f[7] = e + 1;
#define FEND(i) (f[(i) + 1] - 1)
    *nd = (scli_node){0};
    if (put_word(nd->name, sizeof(nd->name), f[0], FEND(0)) < 0 || !is_host_word(nd->name)) {
        *what = "bad node name (empty, too long or not a host name)";
        return -1;
    }
    if (put_word(nd->addr, sizeof(nd->addr), f[1], FEND(1)) < 0) {
        *what = "bad node address";
        return -1;
    }
    if (parse_num(f[2], FEND(2), INT_MAX, &v) < 0) {
        *what = "bad CPU count";
        return -1;
    }
    nd->cpus = (int)v;
    const char *mend = FEND(3);
    if (mend > f[3] && mend[-1] == '+')
        mend--;
    if (parse_num(f[3], mend, (long long)1 << 50, &v) < 0) {
        *what = "bad memory size";
        return -1;
    }
    nd->mem_mb = v;
    char gres[1024];
    size_t glen = (size_t)(FEND(4) - f[4]);
    if (glen >= sizeof(gres)) {
        *what = "GRES longer than 1023 bytes";
        return -1;
    }
    memcpy(gres, f[4], glen);
    gres[glen] = '\0';
    if ((nd->gpus = scli_gres_gpus(gres)) < 0) {
        *what = "malformed GRES";
        return -1;
    }
    if (node_state(nd, f[5], FEND(5)) < 0) {
        *what = "bad node state";
        return -1;
    }
    const char *pend = FEND(6);
    if (pend > f[6] && pend[-1] == '*')
        pend--;
    if (put_word(nd->partition, sizeof(nd->partition), f[6], pend) < 0 ||
        !is_host_word(nd->partition)) {
        *what = "bad partition";
        return -1;
    }
#undef FEND
    return 0;
}

scli_node *scli_parse_sinfo(const char *text, size_t *n, ty_error *err)
{
    size_t cap = count_lines(text ? text : ""), got = 0;
    line_iter it = {.p = text};
    const char *s, *e, *what = NULL;
    scli_node *nodes;
    strmap seen;

    *n = 0;
    if (cap > SCLI_MAX_LINES) {
        ty_seterr(err, TY_EINVALID, "sinfo: more than %d lines", SCLI_MAX_LINES);
        return NULL;
    }
    /* Never grown: the map holds pointers to the names in it. */
    if (!(nodes = calloc(cap ? cap : 1, sizeof(*nodes)))) {
        ty_seterr(err, TY_EINTERNAL, "sinfo: out of memory");
        return NULL;
    }
    strmap_init(&seen);
    while (next_line(&it, &s, &e)) {
        if (blank(s, e))
            continue;
        scli_node *nd = &nodes[got];
        if (sinfo_line(nd, s, e, &what) < 0) {
            ty_seterr(err, TY_EINVALID, "sinfo: line %zu: %s: \"%.*s%s\"", it.no, what,
                      (int)(e - s > 80 ? 80 : e - s), s, e - s > 80 ? "..." : "");
            goto fail;
        }
        if (strmap_get(&seen, nd->name))
            continue; /* the same node in a later partition */
        if (strmap_put(&seen, nd->name, nd) < 0) {
            ty_seterr(err, TY_EINTERNAL, "sinfo: out of memory");
            goto fail;
        }
        got++;
    }
    strmap_free(&seen);
    *n = got;
    return nodes;

fail:
    strmap_free(&seen);
    free(nodes);
    return NULL;
}

/* "123", "123+0", "123_4", "123_[1-5%2]". */
static int job_id(scli_job *j, const char *s, const char *e)
{
    const char *p = s;
    long long v;

    if (s == e || (size_t)(e - s) >= sizeof(j->id))
        return -1;
    while (p < e && *p >= '0' && *p <= '9')
        p++;
    if (parse_num(s, p, LONG_MAX, &v) < 0)
        return -1;
    j->leader = (long)v;
    j->component = -1;
    if (p < e && *p == '+') {
        if (parse_num(p + 1, e, INT_MAX, &v) < 0)
            return -1;
        j->component = (int)v;
    } else if (p < e && *p == '_') {
        p++;
        if (p < e && *p == '[') {
            if (e[-1] != ']' || e - p < 3)
                return -1;
            for (const char *q = p + 1; q < e - 1; q++)
                if (!strchr("0123456789,-%", *q))
                    return -1;
        } else if (parse_num(p, e, LONG_MAX, &v) < 0) {
            return -1;
        }
    } else if (p != e) {
        return -1;
    }
    memcpy(j->id, s, (size_t)(e - s));
    j->id[e - s] = '\0';
    return 0;
}

/* One squeue line, '%i|%T|%r|%N|%k|%j': four fields from the left, the
 * name from the right, the comment between (it may hold '|'). */
static int squeue_line(scli_job *j, const char *s, const char *e, const char **what)
{
    const char *f[4], *p = s, *last;
    size_t nf = 0;

    while (nf < 4) {
        const char *bar = memchr(p, '|', (size_t)(e - p));
        if (!bar) {
            *what = "fewer than 6 fields (want i|T|r|N|k|j)";
            return -1;
        }
        f[nf++] = bar;
        p = bar + 1;
    }
    for (last = e; last > f[3] && last[-1] != '|'; last--)
        ;
    if (last - 1 == f[3]) {
        *what = "fewer than 6 fields (want i|T|r|N|k|j)";
        return -1;
    }
    last--; /* the '|' before the name */
    *j = (scli_job){0};
    if (job_id(j, s, f[0]) < 0) {
        *what = "bad job id";
        return -1;
    }
    const char *st = f[0] + 1, *ste = f[1];
    if (st == ste || (size_t)(ste - st) >= sizeof(j->state)) {
        *what = "bad job state";
        return -1;
    }
    for (const char *q = st; q < ste; q++)
        if (!((*q >= 'A' && *q <= 'Z') || *q == '_')) {
            *what = "bad job state";
            return -1;
        }
    memcpy(j->state, st, (size_t)(ste - st));
    j->state[ste - st] = '\0';
    bool cut = copy_text(j->reason, sizeof(j->reason), f[1] + 1, (size_t)(f[2] - f[1] - 1));
    if (!is_null(f[2] + 1, f[3]))
        cut |= copy_text(j->nodes, sizeof(j->nodes), f[2] + 1, (size_t)(f[3] - f[2] - 1));
    if (!is_null(f[3] + 1, last))
        cut |= copy_text(j->comment, sizeof(j->comment), f[3] + 1, (size_t)(last - f[3] - 1));
    cut |= copy_text(j->name, sizeof(j->name), last + 1, (size_t)(e - last - 1));
    j->cut = cut;
    return 0;
}

scli_job *scli_parse_squeue(const char *text, size_t *n, ty_error *err)
{
    size_t cap = count_lines(text ? text : ""), got = 0;
    line_iter it = {.p = text};
    const char *s, *e, *what = NULL;
    scli_job *jobs;

    *n = 0;
    if (cap > SCLI_MAX_LINES) {
        ty_seterr(err, TY_EINVALID, "squeue: more than %d lines", SCLI_MAX_LINES);
        return NULL;
    }
    if (!(jobs = calloc(cap ? cap : 1, sizeof(*jobs)))) {
        ty_seterr(err, TY_EINTERNAL, "squeue: out of memory");
        return NULL;
    }
    while (next_line(&it, &s, &e)) {
        if (blank(s, e))
            continue;
        if (squeue_line(&jobs[got], s, e, &what) < 0) {
            ty_seterr(err, TY_EINVALID, "squeue: line %zu: %s: \"%.*s%s\"", it.no, what,
                      (int)(e - s > 80 ? 80 : e - s), s, e - s > 80 ? "..." : "");
            free(jobs);
            return NULL;
        }
        got++;
    }
    *n = got;
    return jobs;
}

long scli_parse_sbatch(const char *out, ty_error *err)
{
    const char *s = out ? out : "", *e;
    long long id;

    s += strspn(s, " \t\r\n");
    e = s + strspn(s, "0123456789");
    if (parse_num(s, e, LONG_MAX, &id) < 0 || id == 0 ||
        !(*e == '\0' || *e == ';' || *e == '\n' || *e == '\r' || *e == ' ' || *e == '\t')) {
        size_t n = strcspn(s, "\r\n");
        char shown[81];
        copy_text(shown, sizeof(shown), s, n);
        ty_seterr(err, TY_EINVALID, "sbatch: no job id in its output: \"%s\"", shown);
        return -1;
    }
    if (*e == ';') { /* the cluster: a name */
        const char *c = e + 1, *ce = c + strcspn(c, " \t\r\n");
        for (const char *q = c; q < ce; q++)
            if (!isalnum((unsigned char)*q) && *q != '-' && *q != '_' && *q != '.')
                return ty_seterr(err, TY_EINVALID, "sbatch: bad cluster name after the job id");
        if (ce == c)
            return ty_seterr(err, TY_EINVALID, "sbatch: empty cluster name after the job id");
    }
    return (long)id;
}

static const struct {
    const char *name, *code;
    scli_state state;
} job_states[] = {
    {"PENDING", "PD", SCLI_PENDING},        {"REQUEUED", "RQ", SCLI_PENDING},
    {"REQUEUE_HOLD", "RH", SCLI_PENDING},   {"REQUEUE_FED", "RF", SCLI_PENDING},
    {"RESV_DEL_HOLD", "RD", SCLI_PENDING},  {"CONFIGURING", "CF", SCLI_PENDING},
    {"RUNNING", "R", SCLI_RUNNING},         {"RESIZING", "RS", SCLI_RUNNING},
    {"SIGNALING", "SI", SCLI_RUNNING},      {"SUSPENDED", "S", SCLI_SUSPENDED},
    {"STOPPED", "ST", SCLI_SUSPENDED},      {"COMPLETING", "CG", SCLI_COMPLETING},
    {"STAGE_OUT", "SO", SCLI_COMPLETING},   {"COMPLETED", "CD", SCLI_DONE_OK},
    {"FAILED", "F", SCLI_DONE_FAILED},      {"CANCELLED", "CA", SCLI_DONE_FAILED},
    {"TIMEOUT", "TO", SCLI_DONE_FAILED},    {"NODE_FAIL", "NF", SCLI_DONE_FAILED},
    {"PREEMPTED", "PR", SCLI_DONE_FAILED},  {"BOOT_FAIL", "BF", SCLI_DONE_FAILED},
    {"DEADLINE", "DL", SCLI_DONE_FAILED},   {"OUT_OF_MEMORY", "OOM", SCLI_DONE_FAILED},
    {"SPECIAL_EXIT", "SE", SCLI_DONE_FAILED}, {"REVOKED", "RV", SCLI_DONE_FAILED},
};

scli_state scli_state_of(const char *state)
{
    size_t len;

    if (!state)
        return SCLI_UNKNOWN;
    len = strcspn(state, " \t\n");
    for (size_t i = 0; i < sizeof(job_states) / sizeof(job_states[0]); i++)
        if ((strlen(job_states[i].name) == len &&
             strncasecmp(state, job_states[i].name, len) == 0) ||
            (strlen(job_states[i].code) == len &&
             strncasecmp(state, job_states[i].code, len) == 0))
            return job_states[i].state;
    return SCLI_UNKNOWN;
}

const char *scli_state_name(scli_state s)
{
    static const char *const names[] = {"pending", "running", "suspended", "completing",
                                        "succeeded", "failed", "unknown"};

    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

/* Whether a key starts at p: [A-Za-z][A-Za-z0-9_:/]*= ; its length in
 * *klen. Keys are short; a run past 128 is a value. */
static bool key_at(const char *p, const char *e, size_t *klen)
{
    const char *q = p;

    if (q >= e || !isalpha((unsigned char)*q))
        return false;
    while (q < e && q - p <= 128 &&
           (isalnum((unsigned char)*q) || *q == '_' || *q == ':' || *q == '/'))
        q++;
    if (q >= e || *q != '=' || q - p > 128)
        return false;
    *klen = (size_t)(q - p);
    return true;
}

static json_t *show_job_line(const char *s, const char *e, size_t lineno, ty_error *err)
{
    json_t *obj = json_object();
    size_t klen, nkeys = 0;
    char *val = NULL;

    if (!obj) {
        ty_seterr(err, TY_EINTERNAL, "scontrol: out of memory");
        return NULL;
    }
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    if (!key_at(s, e, &klen)) {
        ty_seterr(err, TY_EINVALID, "scontrol show job: line %zu does not start with Key=: "
                  "\"%.*s%s\"", lineno, (int)(e - s > 60 ? 60 : e - s), s, e - s > 60 ? "..." : "");
        goto fail;
    }
    while (s < e) {
        const char *vs = s + klen + 1, *ve = vs, *next = e;
        size_t nklen = 0;
        for (; ve < e; ve++)
            if ((*ve == ' ' || *ve == '\t') && key_at(ve + 1, e, &nklen)) {
                next = ve + 1;
                break;
            }
        while (ve > vs && (ve[-1] == ' ' || ve[-1] == '\t'))
            ve--;
        if (++nkeys > SHOW_JOB_MAX_KEYS) {
            ty_seterr(err, TY_EINVALID, "scontrol show job: line %zu has more than %d keys",
                      lineno, SHOW_JOB_MAX_KEYS);
            goto fail;
        }
        char key[130];
        memcpy(key, s, klen);
        key[klen] = '\0';
        size_t vlen = (size_t)(ve - vs);
        if (!(val = malloc(vlen + 1)))
            break;
        copy_text(val, vlen + 1, vs, vlen);
        if (json_object_set_new(obj, key, json_string(val)) < 0)
            break;
        free(val);
        val = NULL;
        s = next;
        klen = nklen;
    }
    if (s < e) {
        ty_seterr(err, TY_EINTERNAL, "scontrol: out of memory");
        goto fail;
    }
    return obj;

fail:
    free(val);
    json_decref(obj);
    return NULL;
}

json_t *scli_parse_show_job(const char *text, ty_error *err)
{
    line_iter it = {.p = text};
    const char *s, *e;
    json_t *arr;

    if (count_lines(text ? text : "") > SCLI_MAX_LINES) {
        ty_seterr(err, TY_EINVALID, "scontrol show job: more than %d lines", SCLI_MAX_LINES);
        return NULL;
    }
    if (!(arr = json_array())) {
        ty_seterr(err, TY_EINTERNAL, "scontrol: out of memory");
        return NULL;
    }
    while (next_line(&it, &s, &e)) {
        if (blank(s, e))
            continue;
        json_t *obj = show_job_line(s, e, it.no, err);
        if (!obj || json_array_append_new(arr, obj) < 0) {
            if (obj)
                ty_seterr(err, TY_EINTERNAL, "scontrol: out of memory");
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}
