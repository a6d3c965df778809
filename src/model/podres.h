/* podres.h - what a pod asks of a node: the one rule for a pod's effective
 * requests, read by the scheduler (placement and accounting), the job
 * controllers (a PodGroup's minResources) and the local runtime (GPUs).
 * Three readers with three rules let a gang be admitted for less than the
 * scheduler then had to place.
 *
 * Kubernetes' rule (resource.PodRequests): per resource name,
 *   max(sum of containers + sum of sidecars, largest init container)
 *   + spec.overhead,
 * where a container's request for a resource defaults to its limit when the
 * request is missing (the API's defaulting), a sidecar is an init container
 * with restartPolicy Always (it keeps running beside the main containers),
 * and an ordinary init container runs alongside the sidecars started before
 * it (so its part is its own request plus theirs). Values are milli-units
 * (model/quantity.h); an unparseable value counts as 0. */
#ifndef TY_MODEL_PODRES_H
#define TY_MODEL_PODRES_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* The most distinct resource names one pod's requests hold; more is
 * truncated (and says so): a pod naming more than this many resources asks
 * for nothing a node of ours offers beyond them. */
#define PODRES_MAX 24

typedef struct podres {
    size_t n;
    bool truncated;
    struct {
        const char *name; /* borrowed from the pod spec it was read from */
        int64_t milli;
    } r[PODRES_MAX];
} podres;

/* The effective requests of pod spec (a Pod's spec or a template's spec;
 * borrowed, and must outlive out's names). Zero entries are kept out. */
void podres_of_spec(const json_t *spec, podres *out);

/* The request for name in r (0 when absent). */
int64_t podres_get(const podres *r, const char *name);

#endif
