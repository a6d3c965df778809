/* bench_pod.h - a stored pod as text, for the JSON benchmarks: a Running
 * PyTorchJob pod as the simulated nodes leave it (2.4 KB compact). */
#ifndef TY_BENCH_POD_H
#define TY_BENCH_POD_H

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

#endif
