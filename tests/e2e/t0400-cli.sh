#!/usr/bin/env bash
# The trainyard CLI against the real server (it speaks HTTP, never the database).
. "$(dirname "$0")/lib.sh"
start_server
ty() { "$TRAINYARD" "$@"; }
# The examples, suspended so that the job engine starts nothing while the CLI is
# exercised (every one of them would otherwise train for real).
EX="$E2E_TMP/examples"
mkdir -p "$EX"
for f in "$(dirname "$0")"/../../examples/*.yaml; do
    sed 's/^  runPolicy:$/  runPolicy:\n    suspend: true/' "$f" >"$EX/$(basename "$f")"
    grep -q 'suspend: true' "$EX/$(basename "$f")" || case "$(basename "$f")" in
        volcano-*) ;;  # Volcano Jobs have no suspend field: this one runs (it is light)
        *) sed -i 's/^spec:$/spec:\n  runPolicy:\n    suspend: true/' "$EX/$(basename "$f")" ;;
    esac
done

out=$(ty apply -f "$EX" 2>&1)
expect_match "apply -f DIR applies every manifest" 'pytorchjob.kubeflow.org/pytorch-ddp created' "$out"
expect_match "apply -f DIR handles Volcano jobs" 'job.batch.volcano.sh/tf-ps-worker created' "$out"
expect_eq "apply -f again: unchanged" "pytorchjob.kubeflow.org/pytorch-ddp unchanged" "$(ty apply -f "$EX/pytorch-ddp.yaml")"
out=$(printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: "1"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n' | ty apply -f - 2>&1)
expect_eq "apply -f - with two documents" "configmap/a created
configmap/b created" "$out"

out=$(ty get pytorchjobs)
expect_match "get prints a table" '^NAME +STATE +AGE' "$out"
expect_match "get lists the job" '^pytorch-ddp ' "$out"
expect_eq "get -o name" "pytorchjob.kubeflow.org/pytorch-ddp" "$(ty get pytorchjob -o name)"
expect_match "get -o yaml" 'kind: PyTorchJob' "$(ty get pytorchjob pytorch-ddp -o yaml)"
expect_match "get -o json" '"kind": "PyTorchJob"' "$(ty get pytorchjob pytorch-ddp -o json)"
expect_match "get by short name (vcjob)" '^tf-ps-worker' "$(ty get vcjob)"
expect_match "get -A shows namespaces" '^NAMESPACE +NAME' "$(ty get configmaps -A)"
out=$(ty describe pytorchjob pytorch-ddp)
expect_match "describe" 'Name: +pytorch-ddp' "$out"
expect_match "describe shows events section" 'Events:' "$out"

out=$(ty get pytorchjob nope 2>&1); rc=$?
expect_eq "not found exits non-zero" "1" "$rc"
expect_eq "not found message" 'Error from server (NotFound): pytorchjobs.kubeflow.org "nope" not found' "$out"
out=$(ty get nosuchkind 2>&1)
expect_match "unknown resource type" "doesn't have a resource type \"nosuchkind\"" "$out"
out=$(ty get pods -o bogus 2>&1); rc=$?
expect_eq "bad -o is a usage error" "2" "$rc"
out=$(ty server --port notaport 2>&1); rc=$?
expect_eq "bad flag is a usage error" "2" "$rc"
expect_match "bad flag says why" 'invalid --port' "$out"
out=$(ty frobnicate 2>&1); rc=$?
expect_eq "unknown command exits 2" "2" "$rc"
expect_match "unknown command lists commands" 'commands:' "$out"

# logs: the server serves <data-dir>/logs/<ns>/<pod>/<container>.log (the pod is for
# another scheduler, so no node agent writes that file while the test reads it)
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: lp}\nspec:\n  schedulerName: someone-else\n  containers: [{name: main, image: x}]\n' | ty apply -f - >/dev/null
mkdir -p "$E2E_TMP/data/logs/default/lp"
printf '2026-01-01T00:00:01.000000000Z line one\n2026-01-01T00:00:02.000000000Z line two\n2026-01-01T00:00:03.000000000Z line three\n' >"$E2E_TMP/data/logs/default/lp/main.log"
expect_eq "logs" "line one
line two
line three" "$(ty logs lp)"
expect_eq "logs --tail" "line three" "$(ty logs lp --tail 1)"
expect_eq "logs --timestamps" "2026-01-01T00:00:03.000000000Z line three" "$(ty logs lp --tail 1 --timestamps)"
expect_eq "kubectl logs reads the same" "line two
line three" "$(kubectl logs lp --tail=2)"
out=$(ty logs lp -c other 2>&1)
expect_match "logs of a container that never ran" 'is waiting to start' "$out"

out=$(ty delete pytorchjob pytorch-ddp)
expect_eq "delete" 'pytorchjob.kubeflow.org "pytorch-ddp" deleted' "$out"
out=$(ty delete -f "$EX/tfjob.yaml" 2>&1)
expect_match "delete -f" 'tfjob.kubeflow.org "tf-ps" deleted' "$out"
# a name is one segment of the path: `delete pods ..` was a DELETE of the
# namespace, `../..` of every namespace (URL rules squash dot segments)
kubectl create namespace scratch >/dev/null
kubectl -n scratch create configmap keep >/dev/null
out=$(ty delete pods .. -n scratch 2>&1)
expect_match "delete pods .. is refused, not sent" 'a name may not be "\." or "\.\."' "$out"
out=$(ty delete pods ../.. -n scratch 2>&1)
expect_match "... ../.. is one name (no pod has it)" 'NotFound' "$out"
expect_eq "... the namespace and what it holds are still there" "configmap/keep" \
    "$(kubectl -n scratch get configmaps -o name 2>&1)"
out=$(ty get configmaps keep/x -n scratch 2>&1)
expect_match "get NAME with a slash asks for that name, not a subresource" 'NotFound|not found' "$out"

out=$(ty version)
expect_match "version names the release" '^trainyard 0\.1\.0 ' "$out"
# The server's malloc is jemalloc's (CMakeLists.txt): a build that lost it
# took a third more CPU and said nothing.
expect_match "version names the allocator, jemalloc" '^allocator: jemalloc [0-9]' "$out"
expect_match "kubeconfig points at the server" "server: $SERVER" "$(ty kubeconfig --data-dir "$E2E_TMP/data" --server "$SERVER")"

finish
