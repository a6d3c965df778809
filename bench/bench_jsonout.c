/* bench_jsonout.c - serialising a stored pod: jansson's json_dumpb against
 * ty_json_append (src/base/jsonout.c), which the store uses for every write.
 *
 *   bench_jsonout [ROUNDS] [FILE.json]
 *
 * Not a test: it measures. Serialises the object (a Running PyTorchJob pod
 * as the simulated nodes leave it, 2.4 KB, unless FILE is given) ROUNDS times
 * (default 50,000) each way and prints the time per object and the ratio.
 * Both outputs are compared once: they must be the same bytes. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "base/jsonout.h"

static const char pod[] =
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"e2e-000000-mast"
    "er-0\", \"namespace\": \"bench-e2e-9636\", \"labels\": {\"training.kubeflow.org/operat"
    "or-name\": \"pytorchjob-controller\", \"training.kubeflow.org/job-name\": \"e2e-000000"
    "\", \"training.kubeflow.org/replica-type\": \"master\", \"training.kubeflow.org/replic"
    "a-index\": \"0\", \"training.kubeflow.org/job-role\": \"master\"}, \"ownerReferences\""
    ": [{\"apiVersion\": \"kubeflow.org/v1\", \"kind\": \"PyTorchJob\", \"name\": \"e2e-000"
    "000\", \"uid\": \"3d8732df-96dc-4cc8-a35b-60d8e3b671c1\", \"controller\": true, \"bloc"
    "kOwnerDeletion\": true}], \"annotations\": {\"trainyard.io/sim-duration\": \"30\", \"s"
    "cheduling.k8s.io/group-name\": \"e2e-000000\", \"volcano.sh/task-spec\": \"master\"}, "
    "\"uid\": \"05550417-5fae-4480-8427-96aa92d87185\", \"creationTimestamp\": \"2026-11-22"
    "T05:37:31Z\", \"generation\": 2, \"resourceVersion\": \"126\", \"finalizers\": [\"trai"
    "nyard.io/sim-runtime\"]}, \"spec\": {\"containers\": [{\"name\": \"pytorch\", \"image\""
    ": \"x\", \"command\": [\"/bin/true\"], \"resources\": {\"limits\": {\"nvidia.com/gpu\""
    ": \"1\"}, \"requests\": {\"cpu\": \"1\", \"memory\": \"1Gi\", \"nvidia.com/gpu\": \"1\""
    "}}, \"ports\": [{\"name\": \"pytorchjob-port\", \"containerPort\": 23456, \"protocol\""
    ": \"TCP\"}], \"env\": [{\"name\": \"PYTHONUNBUFFERED\", \"value\": \"1\"}, {\"name\": "
    "\"MASTER_PORT\", \"value\": \"23456\"}, {\"name\": \"MASTER_ADDR\", \"value\": \"e2e-0"
    "00000-master-0\"}, {\"name\": \"WORLD_SIZE\", \"value\": \"8\"}, {\"name\": \"RANK\", "
    "\"value\": \"0\"}], \"terminationMessagePath\": \"/dev/termination-log\", \"terminatio"
    "nMessagePolicy\": \"File\", \"imagePullPolicy\": \"Always\"}], \"restartPolicy\": \"Ne"
    "ver\", \"dnsPolicy\": \"ClusterFirst\", \"schedulerName\": \"default-scheduler\", \"te"
    "rminationGracePeriodSeconds\": 30, \"securityContext\": {}, \"enableServiceLinks\": tr"
    "ue, \"nodeName\": \"sim-8\"}, \"status\": {\"phase\": \"Running\", \"conditions\": [{\""
    "type\": \"PodScheduled\", \"status\": \"True\", \"lastTransitionTime\": \"2026-11-22T0"
    "5:37:31Z\", \"lastProbeTime\": null}, {\"type\": \"Initialized\", \"status\": \"True\""
    ", \"lastTransitionTime\": \"2026-11-22T05:37:31Z\", \"lastProbeTime\": null}, {\"type\""
    ": \"ContainersReady\", \"status\": \"True\", \"lastTransitionTime\": \"2026-11-22T05:3"
    "7:31Z\", \"lastProbeTime\": null}, {\"type\": \"Ready\", \"status\": \"True\", \"lastT"
    "ransitionTime\": \"2026-11-22T05:37:31Z\", \"lastProbeTime\": null}], \"hostIP\": \"10"
    ".0.0.9\", \"podIP\": \"100.64.0.9\", \"startTime\": \"2026-11-22T05:37:31Z\", \"qosCla"
    "ss\": \"Burstable\", \"containerStatuses\": [{\"name\": \"pytorch\", \"state\": {\"run"
    "ning\": {\"startedAt\": \"2026-11-22T05:37:31Z\"}}, \"lastState\": {}, \"ready\": true"
    ", \"restartCount\": 0, \"image\": \"x\", \"imageID\": \"\", \"containerID\": \"sim://0"
    "5550417-pytorch\", \"started\": true}]}}";

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 50000;
    json_t *v = argc > 2 ? json_load_file(argv[2], 0, NULL) : json_loads(pod, 0, NULL);
    size_t cap = 1 << 22, total = 0;
    char *buf = malloc(cap);
    ty_buf b = {0};
    int64_t t0, t1, t2;

    if (!v || !buf || rounds < 1) {
        fprintf(stderr, "usage: bench_jsonout [ROUNDS] [FILE.json]\n");
        return 2;
    }
    size_t n = json_dumpb(v, buf, cap, JSON_COMPACT);
    if (!n || n >= cap || ty_json_append(&b, v) < 0 || b.len != n || memcmp(b.data, buf, n)) {
        fprintf(stderr, "bench_jsonout: the two serialisations differ\n");
        return 1;
    }
    t0 = mono_ns();
    for (long i = 0; i < rounds; i++)
        total += json_dumpb(v, buf, cap, JSON_COMPACT);
    t1 = mono_ns();
    for (long i = 0; i < rounds; i++) {
        b.len = 0;
        ty_json_append(&b, v);
        total += b.len;
    }
    t2 = mono_ns();
    printf("object: %zu bytes, %ld rounds\n", n, rounds);
    printf("json_dumpb:     %.2f us per object\n", (double)(t1 - t0) / rounds / 1e3);
    printf("ty_json_append: %.2f us per object (%.1fx faster)\n",
           (double)(t2 - t1) / rounds / 1e3, (double)(t1 - t0) / (double)(t2 - t1));
    json_decref(v);
    ty_buf_free(&b);
    free(buf);
    return total == 0;
}
