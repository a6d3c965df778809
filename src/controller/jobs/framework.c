/* framework.c - the plugin table and the small helpers plugins share. */
#include "controller/jobs/framework.h"
#include "controller/kit.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const jobs_framework *const frameworks[] = {
    &jf_tensorflow, &jf_pytorch, &jf_mpi,   &jf_xgboost,
    &jf_paddle,     &jf_jax,     &jf_mxnet, &jf_mindspore,
    &jf_mindspore_v1,
    &jf_mpi_v2,
};

const jobs_framework *jobs_framework_for(const kf_kind *k)
{
    for (size_t i = 0; k && i < sizeof(frameworks) / sizeof(frameworks[0]); i++)
        if (frameworks[i]->kind == k)
            return frameworks[i];
    return NULL;
}

void jf_env(json_t *env, const char *name, const char *value)
{
    kit_env(env, name, value);
}

void jf_envf(json_t *env, const char *name, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    kit_env(env, name, buf);
}

void jf_env_field(json_t *env, const char *name, const char *field_path)
{
    json_array_append_new(env, json_pack("{s:s, s:{s:{s:s, s:s}}}", "name", name, "valueFrom",
                                         "fieldRef", "apiVersion", "v1", "fieldPath",
                                         field_path));
}

long long jf_replicas(const job_ctx *c, const char *rtype)
{
    return kf_replicas(c->kind, c->job, rtype);
}

long long jf_total(const job_ctx *c)
{
    long long n = 0;

    for (size_t i = 0; i < KF_MAX_REPLICA_TYPES && c->kind->types[i].name; i++)
        n += kf_replicas(c->kind, c->job, c->kind->types[i].name);
    return n;
}

bool jf_has(const job_ctx *c, const char *rtype)
{
    return kf_replica_spec(c->kind, c->job, rtype) != NULL;
}

/* The default container of a replica's template, else its first one. */
static const json_t *default_container(const job_ctx *c, const char *rtype)
{
    const json_t *spec = kf_replica_spec(c->kind, c->job, rtype);
    const json_t *list =
        json_object_get(json_object_get(json_object_get(spec, "template"), "spec"), "containers");
    size_t i;
    json_t *ct;

    json_array_foreach(list, i, ct) {
        const char *name = json_string_value(json_object_get(ct, "name"));
        if (name && strcmp(name, c->kind->default_container) == 0)
            return ct;
    }
    return json_array_get(list, 0);
}

int jf_port(const job_ctx *c, const char *rtype)
{
    const json_t *ports = json_object_get(default_container(c, rtype), "ports");
    size_t i;
    json_t *p;

    json_array_foreach(ports, i, p) {
        const char *name = json_string_value(json_object_get(p, "name"));
        json_t *num = json_object_get(p, "containerPort");
        if (name && strcmp(name, c->kind->port_name) == 0 && json_is_integer(num))
            return (int)json_integer_value(num);
    }
    return c->kind->port;
}

void jf_lower(const char *s, char *buf, size_t len)
{
    size_t i = 0;

    for (; s && s[i] && i + 1 < len; i++)
        buf[i] = (char)tolower((unsigned char)s[i]);
    if (len)
        buf[i] = '\0';
}

void jf_host(const job_ctx *c, const char *rtype, int index, char *buf, size_t len)
{
    char lower[32];

    jf_lower(rtype, lower, sizeof(lower));
    snprintf(buf, len, "%s-%s-%d", c->name, lower, index);
}

const jf_counts *jf_find(const jf_counts *counts, size_t n, const char *rtype)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(counts[i].type, rtype) == 0)
            return &counts[i];
    return NULL;
}

bool jf_all_succeeded(const jf_counts *c)
{
    return c && c->replicas > 0 && c->succeeded >= c->replicas;
}

bool jf_master_is(const char *rtype, int index, const char *want)
{
    (void)index;
    return strcmp(rtype, want) == 0;
}
