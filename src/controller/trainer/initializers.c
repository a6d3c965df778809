/* initializers.c - Trainyard's dataset and model initializers (tj_int.h):
 * a TrainJob whose initializer names a storageUri the runtime has no
 * initializer step for gets one, a replicated job `dataset-initializer` or
 * `model-initializer` that fetches the source into a claim mounted at
 * /workspace (the data under /workspace/dataset, /workspace/model, as
 * upstream's initializers put them), and the trainer waits for it to
 * complete. Sources: file:// (a path on this machine, copied) and
 * http(s):// (downloaded with curl); others need a network service
 * (hf://, s3://) and fail with a message that says so. Pure. */
#include <stdio.h>
#include <string.h>

#include "api/trainer.h"
#include "controller/trainer/tj_int.h"

#define WORKSPACE "/workspace"
#define CLAIM_VOLUME "initializer"

/* The step's command: $STORAGE_URI into $DEST. A failure ends the pod with
 * a line on stderr (the pod's log) saying what could not be reached. */
static const char fetch_script[] =
    "mkdir -p \"$DEST\" || exit 1\n"
    "case \"$STORAGE_URI\" in\n"
    "file://*)\n"
    "    src=${STORAGE_URI#file://}\n"
    "    if [ ! -e \"$src\" ]; then echo \"initializer: $src: no such file or directory\" >&2; exit 1; fi\n"
    "    cp -a \"$src\" \"$DEST/\" || exit 1 ;;\n"
    "http://*|https://*)\n"
    "    name=${STORAGE_URI%%\\?*}; name=${name##*/}; [ -n \"$name\" ] || name=download\n"
    "    if ! curl -fsSL --retry 2 --connect-timeout 10 -o \"$DEST/$name\" \"$STORAGE_URI\"; then\n"
    "        echo \"initializer: cannot download $STORAGE_URI: the network or the server is not reachable from this machine\" >&2\n"
    "        exit 1\n"
    "    fi ;;\n"
    "*)\n"
    "    echo \"initializer: $STORAGE_URI needs a network service (${STORAGE_URI%%://*}) that Trainyard's initializer does not reach; use file:// or http(s)://\" >&2\n"
    "    exit 1 ;;\n"
    "esac\n"
    "echo \"initializer: $STORAGE_URI -> $DEST\"\n";

static bool has_ancestor(const json_t *plan, const char *step)
{
    json_t *rj;
    size_t i;

    json_array_foreach(json_object_get(plan, "rjobs"), i, rj)
        if (!strcmp(json_string_value(json_object_get(rj, "ancestor")) ?: "", step))
            return true;
    return false;
}

static json_t *claim_volume(const char *claim)
{
    return json_pack("{s:s, s:{s:s}}", "name", CLAIM_VOLUME, "persistentVolumeClaim",
                     "claimName", claim);
}

static json_t *step_rjob(const char *step, const char *dir, const json_t *init,
                         const char *claim)
{
    const char *secret = json_string_value(
        json_object_get(json_object_get(init, "secretRef"), "name"));
    json_t *env = json_pack("[{s:s, s:O}, {s:s, s:s}]", "name", "STORAGE_URI", "value",
                            json_object_get(init, "storageUri"), "name", "DEST", "value", dir);
    json_t *c;

    json_array_extend(env, json_object_get(init, "env"));
    c = json_pack("{s:s, s:s, s:[s, s, s], s:o, s:[{s:s, s:s}]}", "name", step, "image",
                  "docker.io/library/busybox:latest", "command", "/bin/sh", "-c", fetch_script,
                  "env", env, "volumeMounts", "name", CLAIM_VOLUME, "mountPath", WORKSPACE);
    if (secret)
        json_object_set_new(c, "envFrom", json_pack("[{s:{s:s}}]", "secretRef", "name", secret));
    return json_pack("{s:s, s:i, s:i, s:s, s:[], s:{s:{s:{s:s}}, s:{s:[o], s:[o]}}}", "name",
                     step, "replicas", 1, "pods", 1, "ancestor", step, "dependsOn", "template",
                     "metadata", "labels", TRAINER_ANCESTOR_LABEL, step, "spec", "containers", c,
                     "volumes", claim_volume(claim));
}

/* The trainer's pods wait for step to complete and see the claim. */
static void wire_trainer(json_t *plan, const char *step, const char *claim)
{
    json_t *rj, *c;
    size_t i, k;

    json_array_foreach(json_object_get(plan, "rjobs"), i, rj) {
        json_t *spec, *vols;
        if (strcmp(json_string_value(json_object_get(rj, "ancestor")) ?: "", "trainer"))
            continue;
        json_array_append_new(json_object_get(rj, "dependsOn"),
                              json_pack("{s:s, s:s}", "name", step, "status", "Complete"));
        spec = json_object_get(json_object_get(rj, "template"), "spec");
        if (!json_is_object(spec))
            continue;
        vols = json_object_get(spec, "volumes");
        if (!json_is_array(vols)) {
            vols = json_array();
            json_object_set_new(spec, "volumes", vols);
        }
        if (json_object_get(plan, "initializerClaim"))
            continue; /* the other step wired the claim already */
        json_array_append_new(vols, claim_volume(claim));
        json_array_foreach(json_object_get(spec, "containers"), k, c) {
            json_t *mounts = json_object_get(c, "volumeMounts");
            if (!json_is_array(mounts)) {
                mounts = json_array();
                json_object_set_new(c, "volumeMounts", mounts);
            }
            json_array_append_new(mounts, json_pack("{s:s, s:s}", "name", CLAIM_VOLUME,
                                                    "mountPath", WORKSPACE));
        }
    }
}

void tj_add_initializers(json_t *plan, const json_t *trainjob)
{
    static const struct { const char *key, *step, *dir; } steps[] = {
        {"model", "model-initializer", WORKSPACE "/model"},
        {"dataset", "dataset-initializer", WORKSPACE "/dataset"},
    };
    const json_t *init = json_object_get(json_object_get(trainjob, "spec"), "initializer");
    const char *job = json_string_value(
        json_object_get(json_object_get(trainjob, "metadata"), "name")) ?: "";
    char claim[300];

    snprintf(claim, sizeof(claim), "%s-initializer", job);
    for (size_t k = 0; k < 2; k++) {
        const json_t *src = json_object_get(init, steps[k].key);
        if (!json_is_string(json_object_get(src, "storageUri")) ||
            has_ancestor(plan, steps[k].step))
            continue;
        json_array_insert_new(json_object_get(plan, "rjobs"), 0,
                              step_rjob(steps[k].step, steps[k].dir, src, claim));
        wire_trainer(plan, steps[k].step, claim);
        json_object_set_new(plan, "initializerClaim", json_string(claim));
    }
}
