#!/usr/bin/env bash
# Every other framework's example runs to Succeeded with the environment its
# framework expects: TF (every task reaches every other through TF_CONFIG),
# MSJob (workers reach MS_SCHED_HOST:MS_SCHED_PORT), XGBoost (Rabit tracker),
# MPI (mpirun over the hostfile), Paddle and JAX (environment checked).
. "$(dirname "$0")/lib.sh"
start_server
EX=$(cd "$(dirname "$0")/../../examples" && pwd)
run() { # run KIND NAME FILE
    kubectl apply -f "$EX/$3" >/dev/null
    local state; state=$(wait_job "$1" "$2" Succeeded 240)
    expect_eq "$1 $2 succeeds" "Succeeded" "$state"
    [ "$state" = Succeeded ] || dump_job "$1" "$2"
}
run tfjob tf-ps tfjob.yaml
expect_match "TF chief reached every task" 'chief-0 reached 4 peers and heard from 4' "$(kubectl logs tf-ps-chief-0 2>&1)"
# `msjob` alone means kubeflow.org's MSJob (t0715): this one is named by its group.
run msjobs.mindspore.gitee.com ms-dynamic msjob.yaml
# MSJob's cleanPodPolicy defaults to Running, so the scheduler pod may be gone:
# its log is still served (trainyard logs reads it without the pod object).
expect_match "MS scheduler heard from both workers" 'MS_NODE_ID=ms-dynamic-worker-1' "$("$TRAINYARD" logs ms-dynamic-scheduler-0 2>&1)"
run xgboostjob xgboost-dist xgboostjob.yaml
expect_match "XGBoost ranks allreduce over the tracker" "rank [0-2]/3 .*allreduce 6" "$(kubectl logs xgboost-dist-master-0 2>&1)"
run mpijob mpi-allreduce mpijob.yaml
expect_match "mpirun ran 2 ranks that allreduce to 3" 'allreduce 3' "$(kubectl logs mpi-allreduce-launcher 2>&1)"
run paddlejob paddle-collective paddlejob.yaml
run jaxjob jax-simple jaxjob.yaml
finish
