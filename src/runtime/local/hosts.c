/* hosts.c - the /etc/hosts a pod sees: its namespace's pods and services.
 *
 * There is no cluster DNS in embedded mode. Every pod has its own loopback
 * address, and names the injected environment uses (pod names, Volcano's
 * <hostname>.<subdomain>, headless Service names) are written into a hosts
 * file that the supervisor bind-mounts over /etc/hosts for the pod only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "runtime/local/rt_internal.h"

#define MAX_HOSTS_BYTES (8u << 20)

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* "<name> <name>.<ns> <name>.<ns>.svc <name>.<ns>.svc.cluster.local" */
static void names(ty_buf *b, const char *name, const char *ns)
{
    ty_buf_printf(b, " %s %s.%s %s.%s.svc %s.%s.svc.cluster.local", name, name, ns, name, ns,
                  name, ns);
}

static const char *pod_ip(const json_t *pod, const json_t *ips)
{
    const char *uid = str(json_object_get(pod, "metadata"), "uid");
    const char *ip = uid ? json_string_value(json_object_get(ips, uid)) : NULL;

    const char *phase = str(json_object_get(pod, "status"), "phase");

    if (ip)
        return ip;
    if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"))
        return NULL;
    /* A finished pod listens on nothing: its name need not resolve, and a
     * namespace full of finished jobs must not make every new pod's hosts
     * file (and its start) slower. */
    if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
        return NULL;
    return str(json_object_get(pod, "status"), "podIP");
}

static bool selector_matches(const json_t *sel, const json_t *labels)
{
    const char *k;
    json_t *v;

    if (!json_object_size(sel))
        return false;
    json_object_foreach((json_t *)sel, k, v) {
        const char *have = str(labels, k);
        if (!have || !json_is_string(v) || strcmp(have, json_string_value(v)))
            return false;
    }
    return true;
}

static void pod_lines(ty_buf *b, const store_list *pods, const char *ns, const json_t *ips)
{
    for (size_t i = 0; i < pods->n && b->len < MAX_HOSTS_BYTES; i++) {
        const json_t *pod = store_obj_json(pods->items[i]);
        const json_t *spec = json_object_get(pod, "spec");
        const char *ip = pod_ip(pod, ips), *host = str(spec, "hostname");
        const char *sub = str(spec, "subdomain");
        if (!ip || !*ip)
            continue;
        ty_buf_printf(b, "%s", ip);
        names(b, str(json_object_get(pod, "metadata"), "name"), ns);
        if (host && *host && sub && *sub) {
            char fq[512];
            snprintf(fq, sizeof(fq), "%s.%s", host, sub);
            names(b, fq, ns);
        }
        ty_buf_puts(b, "\n");
    }
}

/* The pod of that name in a list sorted by (namespace, name), or NULL. */
static const json_t *pod_named(const store_list *pods, const char *name)
{
    size_t lo = 0, hi = pods->n;
    while (name && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const json_t *pod = store_obj_json(pods->items[mid]);
        int c = strcmp(str(json_object_get(pod, "metadata"), "name"), name);
        if (c == 0)
            return pod;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* A Service name resolves to the first pod (by name) its selector matches.
 * The training operators' Services are one per pod, named as the pod and
 * selecting it: the pod's own line already resolves that name, so such a
 * Service costs a binary search instead of a scan of every pod (without this,
 * starting the n-th pod of a big namespace cost O(services x pods)). */
static void service_lines(ty_buf *b, const store_list *svcs, const store_list *pods,
                          const char *ns, const json_t *ips)
{
    for (size_t i = 0; i < svcs->n && b->len < MAX_HOSTS_BYTES; i++) {
        const json_t *svc = store_obj_json(svcs->items[i]);
        const json_t *sel = json_object_get(json_object_get(svc, "spec"), "selector");
        const json_t *same = pod_named(pods, str(json_object_get(svc, "metadata"), "name"));
        if (same && selector_matches(sel, json_object_get(json_object_get(same, "metadata"),
                                                          "labels")))
            continue;
        for (size_t k = 0; k < pods->n; k++) {
            const json_t *pod = store_obj_json(pods->items[k]);
            const char *ip = pod_ip(pod, ips);
            if (!ip || !*ip ||
                !selector_matches(sel, json_object_get(json_object_get(pod, "metadata"),
                                                       "labels")))
                continue;
            ty_buf_printf(b, "%s", ip);
            names(b, str(json_object_get(svc, "metadata"), "name"), ns);
            ty_buf_puts(b, "\n");
            break;
        }
    }
}

char *rt_hosts_body(ty_store *s, const char *ns, const json_t *ips)
{
    store_list_opts lo = {.ns = ns};
    store_list pods = {0}, svcs = {0};
    ty_buf b = {0};

    ty_buf_puts(&b, "");
    if (store_list_objects(s, "pods", &lo, &pods, NULL) == 0) {
        pod_lines(&b, &pods, ns, ips);
        if (store_list_objects(s, "services", &lo, &svcs, NULL) == 0) {
            service_lines(&b, &svcs, &pods, ns, ips);
            store_list_free(&svcs);
        }
        store_list_free(&pods);
    }
    return ty_buf_steal(&b, NULL);
}

char *rt_hosts_text(const char *body, const char *own_ip)
{
    ty_buf b = {0};

    /* "localhost" is the pod's own address, as a pod's loopback is its own:
     * a process that binds the wildcard (moved to the pod address by the bind
     * shim) and then dials localhost must reach itself. The pods' lines come
     * first: a reverse lookup of the pod address takes the first line that
     * holds it, and socket.getfqdn() (torchrun's MASTER_ADDR) must give the
     * pod's name, not "localhost". */
    ty_buf_printf(&b, "# written by trainyard's local runtime; rewritten as pods come and go\n"
                      "%s%s\tlocalhost\n127.0.0.1\tlocalhost.localdomain\n"
                      "::1\tip6-localhost ip6-loopback\n",
                  body, own_ip && *own_ip ? own_ip : "127.0.0.1");
    return ty_buf_steal(&b, NULL);
}
