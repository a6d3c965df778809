/* podres.c - a pod's effective requests (see podres.h). */
#include "model/podres.h"

#include <stdio.h>
#include <string.h>

#include "model/quantity.h"

static int64_t milli_of(const json_t *v)
{
    char buf[64];
    int64_t m = 0;

    if (json_is_integer(v))
        return json_integer_value(v) * 1000;
    if (json_is_real(v))
        return (int64_t)(json_real_value(v) * 1000);
    if (!json_is_string(v) || json_string_length(v) >= sizeof(buf))
        return 0;
    snprintf(buf, sizeof(buf), "%s", json_string_value(v));
    return quantity_parse(buf, &m, NULL) == 0 ? m : 0;
}

/* The slot of name in r, made when missing (NULL when r is full). */
static int64_t *slot(podres *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->r[i].name, name) == 0)
            return &r->r[i].milli;
    if (r->n == PODRES_MAX) {
        r->truncated = true;
        return NULL;
    }
    r->r[r->n].name = name;
    r->r[r->n].milli = 0;
    return &r->r[r->n++].milli;
}

static void add(podres *to, const podres *from)
{
    for (size_t i = 0; i < from->n; i++) {
        int64_t *v = slot(to, from->r[i].name);
        if (v)
            *v += from->r[i].milli;
    }
    to->truncated |= from->truncated;
}

static void max_with(podres *to, const podres *from)
{
    for (size_t i = 0; i < from->n; i++) {
        int64_t *v = slot(to, from->r[i].name);
        if (v && from->r[i].milli > *v)
            *v = from->r[i].milli;
    }
    to->truncated |= from->truncated;
}

/* One container's requests: each request, or its limit where the request is
 * missing (the API defaults requests to limits). */
static void container(const json_t *ctr, podres *out)
{
    const json_t *res = json_object_get(ctr, "resources");
    const json_t *req = json_object_get(res, "requests");
    const char *k;
    json_t *v;

    memset(out, 0, sizeof(*out));
    json_object_foreach((json_t *)json_object_get(res, "limits"), k, v) {
        int64_t *s;
        if (json_object_get(req, k) || !(s = slot(out, k)))
            continue;
        *s = milli_of(v);
    }
    json_object_foreach((json_t *)req, k, v) {
        int64_t *s = slot(out, k);
        if (s)
            *s = milli_of(v);
    }
}

static bool is_sidecar(const json_t *ctr)
{
    const char *rp = json_string_value(json_object_get(ctr, "restartPolicy"));

    return rp && strcmp(rp, "Always") == 0;
}

void podres_of_spec(const json_t *spec, podres *out)
{
    podres one, sidecars = {0}, init = {0}, step;
    size_t i, k;
    json_t *ctr;
    const char *name;
    json_t *v;

    memset(out, 0, sizeof(*out));
    json_array_foreach(json_object_get(spec, "containers"), i, ctr) {
        container(ctr, &one);
        add(out, &one);
    }
    /* Init containers run in order; sidecars started before one run with it,
     * and stay for the main containers. */
    json_array_foreach(json_object_get(spec, "initContainers"), i, ctr) {
        container(ctr, &one);
        if (is_sidecar(ctr)) {
            add(&sidecars, &one);
            max_with(&init, &sidecars);
        } else {
            step = one;
            add(&step, &sidecars);
            max_with(&init, &step);
        }
    }
    add(out, &sidecars);
    max_with(out, &init);
    json_object_foreach((json_t *)json_object_get(spec, "overhead"), name, v) {
        int64_t *s = slot(out, name);
        if (s)
            *s += milli_of(v);
    }
    /* zero entries out, order kept */
    for (i = k = 0; i < out->n; i++)
        if (out->r[i].milli != 0)
            out->r[k++] = out->r[i];
    out->n = k;
}

int64_t podres_get(const podres *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->r[i].name, name) == 0)
            return r->r[i].milli;
    return 0;
}
