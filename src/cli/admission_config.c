/* admission_config.c - --admission-control-config-file (see
 * admission_config.h). */
#include "cli/admission_config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/quota_limited.h"
#include "model/yaml.h"
#include "server/tls.h"

#define CONFIG_MAX_BYTES (1 << 20)

/* obj[key] when a string, else NULL. */
static const char *jstr(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static int bad(ty_error *err, const char *field, const char *what)
{
    return ty_seterr(err, TY_EBADREQUEST, "%s: %s", field, what);
}

static json_t *load_file(const char *path, ty_error *err)
{
    char *buf;
    size_t n;
    json_t *doc;

    if (tls_read_file(path, "the admission configuration", CONFIG_MAX_BYTES, &buf, &n, err) < 0)
        return NULL;
    doc = yaml_load_one(buf, n, err);
    free(buf);
    if (doc && !json_is_object(doc)) {
        json_decref(doc);
        ty_seterr(err, TY_EBADREQUEST, "want an object");
        return NULL;
    }
    return doc;
}

/* Whether doc is apiVersion/kind of one of the versions kube-apiserver reads. */
static bool is_kind(const json_t *doc, const char *kind, const char *const *versions)
{
    const char *av = jstr(doc, "apiVersion");

    if (!av || strcmp(jstr(doc, "kind") ?: "", kind) != 0)
        return false;
    for (size_t i = 0; versions[i]; i++)
        if (!strcmp(av, versions[i]))
            return true;
    return false;
}

static const char *const admission_versions[] = {
    "apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1",
    "apiserver.k8s.io/v1alpha1", NULL};
static const char *const quota_versions[] = {"apiserver.config.k8s.io/v1", NULL};
/* the older group's kind is Configuration */
static const char *const quota_versions_old[] = {"resourcequota.admission.k8s.io/v1beta1",
                                                 "resourcequota.admission.k8s.io/v1alpha1",
                                                 NULL};

/* A ResourceQuotaConfiguration's list; one without it limits nothing. */
static int set_from(const json_t *cfg, ty_error *err)
{
    const json_t *lr = json_object_get(cfg, "limitedResources");
    json_t *none = lr ? NULL : json_array();
    int rc = lr || none ? quota_limited_set(lr ? lr : none, err)
                        : ty_seterr(err, TY_EINTERNAL, "out of memory");

    json_decref(none);
    return rc;
}

/* The ResourceQuota plugin's entry: its configuration (inline, or the file
 * its path names, relative to dir). */
static int quota_plugin(const json_t *p, const char *dir, ty_error *err)
{
    const json_t *inline_cfg = json_object_get(p, "configuration");
    const char *rel = jstr(p, "path");
    json_t *cfg = NULL;
    char full[PATH_MAX];
    int rc;

    if (inline_cfg && rel)
        return bad(err, "plugins[ResourceQuota]", "give configuration or path, not both");
    if (rel) {
        int len = rel[0] == '/' ? snprintf(full, sizeof(full), "%s", rel)
                                : snprintf(full, sizeof(full), "%s/%s", dir, rel);
        if (len < 0 || (size_t)len >= sizeof(full))
            return bad(err, "plugins[ResourceQuota].path", "too long");
        if (!(cfg = load_file(full, err)))
            return -1;
    } else if (json_is_object(inline_cfg)) {
        cfg = json_incref((json_t *)inline_cfg);
    } else {
        return bad(err, "plugins[ResourceQuota].configuration", "Required value");
    }
    if (!is_kind(cfg, "ResourceQuotaConfiguration", quota_versions) &&
        !is_kind(cfg, "Configuration", quota_versions_old))
        rc = bad(err, "plugins[ResourceQuota].configuration",
                 "want apiVersion apiserver.config.k8s.io/v1, kind ResourceQuotaConfiguration");
    else
        rc = set_from(cfg, err);
    json_decref(cfg);
    return rc;
}

static int admission_doc(const json_t *doc, const char *dir, ty_error *err)
{
    const json_t *plugins = json_object_get(doc, "plugins");
    size_t i;
    json_t *p;

    if (!is_kind(doc, "AdmissionConfiguration", admission_versions))
        return bad(err, "kind", "want apiVersion apiserver.config.k8s.io/v1, kind "
                                "AdmissionConfiguration");
    if (plugins && !json_is_array(plugins))
        return bad(err, "plugins", "want a list of {name, configuration or path}");
    json_array_foreach(plugins, i, p) {
        const char *name = jstr(p, "name");
        char f[64];
        snprintf(f, sizeof(f), "plugins[%zu].name", i);
        if (!name)
            return bad(err, f, "Required value");
        if (strcmp(name, "ResourceQuota") != 0)
            return ty_seterr(err, TY_EBADREQUEST,
                             "%s: Unsupported value: \"%.100s\": only ResourceQuota's configuration "
                             "is read from this file (docs/compatibility.md)",
                             f, name);
        if (quota_plugin(p, dir, err) < 0)
            return -1;
    }
    return 0;
}

/* err's text after "--admission-control-config-file PATH: ", its code kept. */
static int prefixed(ty_error *err, const char *path)
{
    char text[sizeof(err->text)];

    snprintf(text, sizeof(text), "%s", err->text);
    return ty_seterr(err, err->code, "--admission-control-config-file %s: %s", path, text);
}

int admission_config_load(const char *path, ty_error *err)
{
    json_t *doc = load_file(path, err);
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    int rc;

    if (!doc)
        return prefixed(err, path);
    if (slash)
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash == path ? 1 : slash - path), path);
    else
        snprintf(dir, sizeof(dir), ".");
    rc = admission_doc(doc, dir, err);
    json_decref(doc);
    return rc < 0 ? prefixed(err, path) : 0;
}
