/* conf.c - the scheduler configuration in volcano-scheduler.conf's shape:
 *
 *   actions: "enqueue, allocate, backfill"
 *   tiers:
 *   - plugins:
 *     - name: priority
 *     - name: gang
 *       enablePreemptable: false
 *   - plugins:
 *     - name: binpack
 *       arguments:
 *         binpack.weight: 10
 *
 * Unknown actions and plugins are errors: a scheduler that silently ignores
 * half its configuration is worse than one that refuses to start. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "model/yaml.h"
#include "scheduler/core_int.h"

#define MAX_CONF_BYTES (1 << 20)

static const sc_plugin *const plugins[] = {
    &sc_plugin_priority, &sc_plugin_gang,       &sc_plugin_conformance, &sc_plugin_overcommit,
    &sc_plugin_drf,      &sc_plugin_predicates, &sc_plugin_proportion,  &sc_plugin_nodeorder,
    &sc_plugin_binpack,  &sc_plugin_gpulocality, &sc_plugin_resourcequota,
};

static const struct {
    const char *name;
    sc_action action;
} actions[] = {
    {"enqueue", SC_ACT_ENQUEUE}, {"allocate", SC_ACT_ALLOCATE}, {"backfill", SC_ACT_BACKFILL},
    {"preempt", SC_ACT_PREEMPT}, {"reclaim", SC_ACT_RECLAIM},
};

static const char default_conf[] =
    "actions: \"enqueue, allocate, backfill\"\n"
    "tiers:\n"
    "- plugins:\n"
    "  - name: priority\n"
    "  - name: gang\n"
    "  - name: conformance\n"
    "- plugins:\n"
    "  - name: overcommit\n"
    "  - name: drf\n"
    "  - name: predicates\n"
    "  - name: proportion\n"
    "  - name: nodeorder\n"
    "  - name: binpack\n";

void sc_conf_free(sc_conf *conf)
{
    if (!conf)
        return;
    for (size_t t = 0; t < conf->ntiers; t++) {
        for (size_t p = 0; p < conf->tiers[t].n; p++) {
            sc_plugin_conf *pc = &conf->tiers[t].plugins[p];
            for (size_t a = 0; a < pc->nargs; a++) {
                free(pc->args[a].key);
                free(pc->args[a].value);
            }
            free(pc->args);
        }
        free(conf->tiers[t].plugins);
    }
    free(conf);
}

void sc_conf_admit_only(sc_conf *conf)
{
    size_t n = 1;
    size_t len;

    /* enqueue first, then the configured preempt and reclaim in their order:
     * allocate and backfill are the runtime's */
    conf->actions[0] = SC_ACT_ENQUEUE;
    len = (size_t)snprintf(conf->actions_str, sizeof(conf->actions_str), "enqueue");
    for (size_t i = 0; i < conf->nactions; i++) {
        sc_action a = conf->actions[i];
        if (a != SC_ACT_PREEMPT && a != SC_ACT_RECLAIM)
            continue;
        conf->actions[n++] = a;
        if (len < sizeof(conf->actions_str))
            len += (size_t)snprintf(conf->actions_str + len, sizeof(conf->actions_str) - len,
                                    ", %s", a == SC_ACT_PREEMPT ? "preempt" : "reclaim");
    }
    conf->nactions = n;
    conf->whole_gangs = true;
}

const char *sc_conf_actions(const sc_conf *conf)
{
    return conf->actions_str;
}

static int parse_actions(sc_conf *conf, const char *s, ty_error *err)
{
    char buf[256];
    char *save = NULL, *tok;

    snprintf(buf, sizeof(buf), "%s", s);
    for (tok = strtok_r(buf, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
        size_t i;
        for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
            if (strcmp(actions[i].name, tok) == 0)
                break;
        if (i == sizeof(actions) / sizeof(actions[0]))
            return ty_seterr(err, TY_EINVALID,
                             "actions: unknown action \"%s\" (known: enqueue, allocate, backfill, "
                             "preempt, reclaim)", tok);
        if (conf->nactions == sizeof(conf->actions) / sizeof(conf->actions[0]))
            return ty_seterr(err, TY_EINVALID, "actions: too many actions");
        conf->actions[conf->nactions++] = actions[i].action;
        size_t used = strlen(conf->actions_str);
        snprintf(conf->actions_str + used, sizeof(conf->actions_str) - used, "%s%s",
                 used ? ", " : "", tok);
    }
    if (!conf->nactions)
        return ty_seterr(err, TY_EINVALID, "actions: no action given");
    return 0;
}

static bool flag(const json_t *p, const char *key)
{
    const json_t *v = json_object_get(p, key);
    return !json_is_false(v);
}

static char *scalar_text(const json_t *v)
{
    char buf[64];
    if (json_is_string(v))
        return strdup(json_string_value(v));
    if (json_is_integer(v))
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, sizeof(buf), "%g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, sizeof(buf), "%s", json_is_true(v) ? "true" : "false");
    else
        return NULL;
    return strdup(buf);
}

/* The plugin's numeric arguments that pc sets are numbers, and not below
 * their least value: a weight of "high" or a factor of 0.5 would otherwise
 * be read as the default without a word. */
static int check_numbers(const sc_plugin_conf *pc, size_t t, size_t i, ty_error *err)
{
    for (const sc_number_arg *a = pc->plugin->number_args; a && a->key; a++) {
        const char *v = sc_arg_get(pc, a->key);
        char *end;
        double d;

        if (!v)
            continue;
        d = strtod(v, &end);
        while (end != v && (*end == ' ' || *end == '\t'))
            end++;
        if (end == v || *end || !isfinite(d))
            return ty_seterr(err, TY_EINVALID,
                             "tiers[%zu].plugins[%zu].arguments.%s: must be a number, not \"%s\"",
                             t, i, a->key, v);
        if (d < a->min)
            return ty_seterr(err, TY_EINVALID,
                             "tiers[%zu].plugins[%zu].arguments.%s: must be at least %g, not %s", t,
                             i, a->key, a->min, v);
    }
    return 0;
}

static int parse_plugin(sc_plugin_conf *pc, const json_t *p, size_t t, size_t i, ty_error *err)
{
    const char *name = json_string_value(json_object_get(p, "name"));
    const json_t *args = json_object_get(p, "arguments");
    const char *k;
    json_t *v;

    if (!name)
        return ty_seterr(err, TY_EINVALID, "tiers[%zu].plugins[%zu].name: required", t, i);
    for (size_t n = 0; n < sizeof(plugins) / sizeof(plugins[0]); n++)
        if (strcmp(plugins[n]->name, name) == 0)
            pc->plugin = plugins[n];
    if (!pc->plugin)
        return ty_seterr(err, TY_EINVALID,
                         "tiers[%zu].plugins[%zu].name: unknown plugin \"%s\" (known: priority, "
                         "gang, conformance, overcommit, drf, predicates, proportion, nodeorder, "
                         "binpack, gpulocality, resourcequota)", t, i, name);
    pc->job_order = flag(p, "enableJobOrder");
    pc->queue_order = flag(p, "enableQueueOrder");
    pc->task_order = flag(p, "enableTaskOrder");
    pc->predicate = flag(p, "enablePredicate");
    pc->node_order = flag(p, "enableNodeOrder");
    pc->preemptable = flag(p, "enablePreemptable");
    pc->reclaimable = flag(p, "enableReclaimable");
    pc->enqueueable = flag(p, "enableJobEnqueued");
    pc->overused = flag(p, "enableOverused");
    pc->job_ready = flag(p, "enableJobReady");
    if (args && !json_is_object(args))
        return ty_seterr(err, TY_EINVALID, "tiers[%zu].plugins[%zu].arguments: must be a map", t, i);
    pc->args = calloc(json_object_size(args) + 1, sizeof(*pc->args));
    if (!pc->args)
        return ty_seterr(err, TY_EINTERNAL, "out of memory");
    json_object_foreach((json_t *)args, k, v) {
        char *val = scalar_text(v);
        if (!val)
            return ty_seterr(err, TY_EINVALID, "tiers[%zu].plugins[%zu].arguments.%s: must be a "
                             "scalar", t, i, k);
        pc->args[pc->nargs].key = strdup(k);
        pc->args[pc->nargs++].value = val;
    }
    return check_numbers(pc, t, i, err);
}

sc_conf *sc_conf_parse(const char *yaml, size_t len, ty_error *err)
{
    json_t *doc = yaml_load_one(yaml, len, err);
    sc_conf *conf = calloc(1, sizeof(*conf));
    const json_t *tiers;
    size_t t;
    json_t *tier;

    if (!doc || !conf)
        goto error;
    if (!json_is_object(doc)) {
        ty_seterr(err, TY_EINVALID, "the scheduler configuration must be a map");
        goto error;
    }
    if (!json_is_string(json_object_get(doc, "actions"))) {
        ty_seterr(err, TY_EINVALID, "actions: required, a comma-separated string");
        goto error;
    }
    if (parse_actions(conf, json_string_value(json_object_get(doc, "actions")), err) < 0)
        goto error;
    tiers = json_object_get(doc, "tiers");
    if (tiers && !json_is_array(tiers)) {
        ty_seterr(err, TY_EINVALID, "tiers: must be a list");
        goto error;
    }
    if (json_array_size(tiers) > sizeof(conf->tiers) / sizeof(conf->tiers[0])) {
        ty_seterr(err, TY_EINVALID, "tiers: at most 8");
        goto error;
    }
    json_array_foreach(tiers, t, tier) {
        const json_t *ps = json_object_get(tier, "plugins");
        size_t i;
        json_t *p;
        if (!json_is_array(ps)) {
            ty_seterr(err, TY_EINVALID, "tiers[%zu].plugins: required, a list", t);
            goto error;
        }
        conf->tiers[t].plugins = calloc(json_array_size(ps) + 1, sizeof(sc_plugin_conf));
        if (!conf->tiers[t].plugins)
            goto error;
        conf->ntiers = t + 1;
        json_array_foreach(ps, i, p) {
            if (parse_plugin(&conf->tiers[t].plugins[i], p, t, i, err) < 0) {
                conf->tiers[t].n = i + 1;
                goto error;
            }
            conf->tiers[t].n = i + 1;
        }
    }
    json_decref(doc);
    return conf;
error:
    json_decref(doc);
    sc_conf_free(conf);
    return NULL;
}

sc_conf *sc_conf_default(void)
{
    ty_error err;
    sc_conf *c;

    ty_error_init(&err);
    c = sc_conf_parse(default_conf, sizeof(default_conf) - 1, &err);
    ty_error_clear(&err);
    return c;
}

sc_conf *sc_conf_load(const char *path, ty_error *err)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n;
    sc_conf *c;

    if (!f) {
        ty_seterr(err, TY_EINVALID, "cannot read the scheduler configuration %s: %m", path);
        return NULL;
    }
    buf = malloc(MAX_CONF_BYTES + 1);
    n = buf ? fread(buf, 1, MAX_CONF_BYTES + 1, f) : 0;
    fclose(f);
    if (!buf || n > MAX_CONF_BYTES) {
        free(buf);
        ty_seterr(err, TY_EINVALID, "%s: larger than 1 MiB", path);
        return NULL;
    }
    c = sc_conf_parse(buf, n, err);
    free(buf);
    if (!c && err->text[0]) {
        char msg[sizeof(err->text)];
        snprintf(msg, sizeof(msg), "%s", err->text);
        ty_seterr(err, TY_EINVALID, "%s: %s", path, msg);
    }
    return c;
}
