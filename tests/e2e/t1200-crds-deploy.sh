#!/usr/bin/env bash
# `trainyard crds` and deploy/: the CRDs validate with kubectl (client and
# server dry runs) and, applied, are Established on Trainyard's own server;
# deploy/crds is what the generator prints; the deploy/ manifests parse, the
# kinds Trainyard serves pass a server dry run, and the rest say what
# operator mode needs (webhook rules and RBAC for every CRD's plural); the
# scheduler configuration is one the server starts with; webhook-cert.sh
# makes a certificate the Secret and the caBundle agree on.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEPLOY=$ROOT/deploy
k() { kubectl --request-timeout=30s "$@"; }
py() { /usr/bin/python3 "$@"; }

# The scheduler configuration deploy/ ships is one the scheduler accepts:
# the server refuses to start on an unknown action or plugin.
py - "$DEPLOY/20-scheduler-config.yaml" "$E2E_TMP/volcano-scheduler.conf" <<'EOF'
import sys, yaml
cm = yaml.safe_load(open(sys.argv[1]))
open(sys.argv[2], "w").write(cm["data"]["volcano-scheduler.conf"])
EOF
start_server --scheduler-conf "$E2E_TMP/volcano-scheduler.conf"
pass "the server starts with deploy/'s volcano-scheduler.conf"

# ---- the generator --------------------------------------------------------
"$TRAINYARD" crds >"$E2E_TMP/crds.yaml"
ncrds=$(grep -c '^kind: CustomResourceDefinition$' "$E2E_TMP/crds.yaml")
expect_eq "trainyard crds prints 19 CRDs" "19" "$ncrds"
out=$(k apply --dry-run=client -f "$E2E_TMP/crds.yaml" 2>&1)
expect_eq "trainyard crds | kubectl apply --dry-run=client: every one" "$ncrds" \
    "$(grep -c 'created (dry run)$' <<<"$out")"
out=$("$TRAINYARD" crds | k apply --dry-run=client -f - 2>&1)
expect_match "... from a pipe" 'customresourcedefinition.apiextensions.k8s.io/pytorchjobs.kubeflow.org created \(dry run\)' "$out"
out=$("$TRAINYARD" crds -o json | k apply --dry-run=client -f - 2>&1)
expect_eq "-o json: a List kubectl applies" "$ncrds" "$(grep -c 'created (dry run)$' <<<"$out")"
out=$(k apply --dry-run=server -f "$E2E_TMP/crds.yaml" 2>&1)
expect_eq "kubectl apply --dry-run=server: every one" "$ncrds" \
    "$(grep -c 'created (server dry run)$' <<<"$out")"
out=$(k apply --server-side --dry-run=server -f "$DEPLOY/crds" 2>&1)
expect_eq "kubectl apply --server-side (docs/kubernetes.md's way): every one" "$ncrds" \
    "$(grep -c 'serverside-applied (server dry run)$' <<<"$out")"
mkdir "$E2E_TMP/gen"
"$TRAINYARD" crds --output-dir "$E2E_TMP/gen"
check "deploy/crds is what trainyard crds --output-dir writes (make crds)" \
    diff -r "$E2E_TMP/gen" "$DEPLOY/crds"
out=$("$TRAINYARD" crds -o table 2>&1); rc=$?
expect_eq "an unknown output format: exit 2" "2" "$rc"
expect_match "... and kubectl's words" 'unable to match a printer suitable for the output format "table"' "$out"

# ---- applied: Established -------------------------------------------------
out=$(k apply -f "$DEPLOY/crds" 2>&1)
expect_eq "kubectl apply -f deploy/crds (the Kustomization is passed by)" "$ncrds" \
    "$(grep -c ' created$' <<<"$out")"
check "every CRD becomes Established" \
    kubectl wait --for=condition=Established crd -l app.kubernetes.io/part-of=trainyard \
    --timeout="${E2E_WAIT}s"
expect_eq "mpijobs.kubeflow.org: two versions, v1 stored" "v1 v2beta1|v1" \
    "$(k get crd mpijobs.kubeflow.org -o jsonpath='{.spec.versions[*].name}|{.status.storedVersions[*]}')"
expect_eq "Volcano's short names are accepted" "vcjob vj" \
    "$(k get crd jobs.batch.volcano.sh -o jsonpath='{.status.acceptedNames.shortNames[*]}')"
out=$(k apply -f "$DEPLOY/crds" 2>&1)
expect_eq "applied again: unchanged" "$ncrds" "$(grep -c ' unchanged$' <<<"$out")"
out=$(k get crd 2>&1)
expect_match "kubectl get crd: NAME and CREATED AT" '^NAME +CREATED AT' "$out"
expect_match "... and the CRDs" 'podgroups.scheduling.volcano.sh +[0-9]{4}-' "$out"
# Jobs still served as before, next to their CRDs.
expect_match "pytorchjobs are still served" 'No resources found' \
    "$(k get pytorchjobs 2>&1)"

# A CRD for a kind Trainyard does not serve: stored, not Established.
cat >"$E2E_TMP/widget.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
EOF
expect_eq "an unserved kind's CRD is stored" \
    "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created" \
    "$(k apply -f "$E2E_TMP/widget.yaml" 2>&1)"
expect_eq "... Established False, and why" \
    "False NotServedByTrainyard Trainyard does not serve widgets.example.com and makes no kinds from CustomResourceDefinitions" \
    "$(k get crd widgets.example.com -o jsonpath='{.status.conditions[?(@.type=="Established")].status} {.status.conditions[?(@.type=="Established")].reason} {.status.conditions[?(@.type=="Established")].message}')"
expect_match "... and kubectl does not know widgets" "the server doesn't have a resource type \"widgets\"" \
    "$(k get widgets 2>&1)"

# An invalid CRD is refused in kube-apiserver's words.
sed -e 's/  - name: v1/  - name: v2\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n  - name: v1/' \
    -e 's/name: widgets.example.com/name: gadgets.example.com/' "$E2E_TMP/widget.yaml" >"$E2E_TMP/bad.yaml"
out=$(k apply -f "$E2E_TMP/bad.yaml" 2>&1)
expect_match "a CRD named otherwise: refused" \
    '^\* metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural\+"."\+spec.group$' \
    "$out"
expect_match "... and two storage versions" \
    '^\* spec.versions: Invalid value: 2: must have exactly one version marked as storage version$' \
    "$out"

# ---- deploy/ ----------------------------------------------------------------
check "kubectl kustomize deploy/ builds" sh -c "kubectl kustomize '$DEPLOY' >'$E2E_TMP/all.yaml'"
expect_eq "... the CRDs and every manifest" \
    "ClusterRole ClusterRoleBinding ConfigMap CustomResourceDefinition Deployment MutatingWebhookConfiguration Namespace Role RoleBinding Service ServiceAccount ValidatingWebhookConfiguration" \
    "$(sed -n 's/^kind: //p' "$E2E_TMP/all.yaml" | sort -u | tr '\n' ' ' | sed 's/ $//')"
# The kinds Trainyard serves: a server dry run, then for real (the
# namespace first: a dry run of it makes no namespace for the others).
expect_eq "kubectl apply --dry-run=server: the namespace" \
    "namespace/trainyard-system created (server dry run)" \
    "$(k apply --dry-run=server -f "$DEPLOY/00-namespace.yaml" 2>&1)"
check "... applied" k apply -f "$DEPLOY/00-namespace.yaml"
served=(-f "$DEPLOY/10-rbac.yaml" -f "$DEPLOY/20-scheduler-config.yaml")
out=$(k apply --dry-run=server "${served[@]}" 2>&1)
expect_eq "kubectl apply --dry-run=server: RBAC, scheduler configuration" "5" \
    "$(grep -c 'created (server dry run)$' <<<"$out")"
check "... applied" k apply "${served[@]}"
py - "$DEPLOY/30-webhook.yaml" "$E2E_TMP/svc.yaml" <<'EOF'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "Service"]
yaml.safe_dump_all(docs, open(sys.argv[2], "w"))
EOF
check "the webhook's Service: server dry run" k apply --dry-run=server -f "$E2E_TMP/svc.yaml"
# The kinds a cluster serves and Trainyard does not (apps/v1 Deployment, the
# webhook configurations): what operator mode needs of them.
"$TRAINYARD" crds -o json >"$E2E_TMP/crds.json"
out=$(py - "$DEPLOY" "$E2E_TMP/crds.json" <<'EOF' 2>&1
import glob, json, sys, yaml
deploy, crds = sys.argv[1], json.load(open(sys.argv[2]))["items"]
docs = []
for f in sorted(glob.glob(deploy + "/*.yaml")):
    docs += [d for d in yaml.safe_load_all(open(f)) if d]
def one(kind):
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, kind
    return found[0]
bad = []
want = {(c["spec"]["group"], c["spec"]["names"]["plural"]) for c in crds}
for kind, path in (("MutatingWebhookConfiguration", "/mutate"),
                   ("ValidatingWebhookConfiguration", "/validate")):
    for w in one(kind)["webhooks"]:
        if (w["failurePolicy"], w["sideEffects"], w["admissionReviewVersions"]) != ("Fail", "None", ["v1"]):
            bad.append(kind + ": failurePolicy/sideEffects/admissionReviewVersions")
        svc = w["clientConfig"]["service"]
        if (svc["name"], svc["namespace"], svc["path"]) != ("trainyard-webhook", "trainyard-system", path):
            bad.append(kind + ": clientConfig")
        got = {(g, r) for rule in w["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
        if got != want:
            bad.append("%s rules %s, CRDs %s" % (kind, sorted(got ^ want), "differ"))
rules = one("ClusterRole")["rules"]
def allowed(group, res, verb):
    return any(group in r["apiGroups"] and res in r["resources"] and verb in r["verbs"] for r in rules)
for g, p in sorted(want):
    # Queues are the platform team's: the scheduler writes their status only.
    for verb in ("get", "list", "watch") + (() if p == "queues" else ("update",)):
        if not allowed(g, p, verb):
            bad.append("ClusterRole: %s %s.%s" % (verb, p, g))
    if not allowed(g, p + "/status", "update"):
        bad.append("ClusterRole: update %s/status.%s" % (p, g))
for g, res, verb in (("", "pods", "create"), ("", "pods/binding", "create"),
                     ("", "pods/status", "update"), ("", "nodes", "watch"),
                     ("", "events", "create"), ("scheduling.k8s.io", "priorityclasses", "list")):
    if not allowed(g, res, verb):
        bad.append("ClusterRole: %s %s" % (verb, res))
if any("leases" in r["resources"] for r in rules):
    bad.append("ClusterRole grants leases: they are the Role's, in trainyard-system")
d = one("Deployment")
spec, c = d["spec"], d["spec"]["template"]["spec"]["containers"][0]
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
if spec["replicas"] != 2 or c["args"][0] != "operator":
    bad.append("Deployment: 2 replicas of trainyard operator")
if (c["livenessProbe"]["httpGet"]["path"], c["readinessProbe"]["httpGet"]["path"]) != ("/healthz", "/readyz"):
    bad.append("Deployment: probes")
if ports != {"http": 8080, "webhook": 9443}:
    bad.append("Deployment: ports %s" % ports)
vols = {v["name"]: v for v in d["spec"]["template"]["spec"]["volumes"]}
if vols["webhook-cert"]["secret"]["secretName"] != "trainyard-webhook-cert":
    bad.append("Deployment: the webhook certificate's Secret")
if d["spec"]["template"]["spec"]["serviceAccountName"] != "trainyard-operator":
    bad.append("Deployment: service account")
print("\n".join(bad) if bad else "ok")
EOF
)
expect_eq "webhooks, RBAC and Deployment cover every CRD and what the operator needs" "ok" "$out"

# cert-manager's component: the CA injection annotation on both webhooks.
mkdir -p "$E2E_TMP/overlay"
ln -s "$DEPLOY" "$E2E_TMP/overlay/deploy"
printf 'resources: [deploy]\ncomponents: [deploy/cert-manager]\n' >"$E2E_TMP/overlay/kustomization.yaml"
out=$(kubectl kustomize "$E2E_TMP/overlay" 2>&1)
expect_eq "deploy/cert-manager: both webhooks get cert-manager.io/inject-ca-from" "2" \
    "$(grep -c 'cert-manager.io/inject-ca-from: trainyard-system/trainyard-webhook' <<<"$out")"
expect_match "... and a Certificate for the Secret" 'secretName: trainyard-webhook-cert' "$out"

# ---- webhook-cert.sh ----------------------------------------------------------
# kubectl as the script sees it: the webhook configurations (which
# Trainyard does not serve) answered from deploy/ and their patches kept.
cat >"$E2E_TMP/kubectl" <<EOF
#!/usr/bin/env bash
case "\$1 \$2" in
"get mutatingwebhookconfiguration"|"get validatingwebhookconfiguration") echo one ;;
"patch mutatingwebhookconfiguration"|"patch validatingwebhookconfiguration")
    printf '%s\n' "\$*" >>"$E2E_TMP/patches" ;;
*) exec kubectl "\$@" ;;
esac
EOF
chmod +x "$E2E_TMP/kubectl"
check "webhook-cert.sh makes the Secret and patches caBundle" \
    env KUBECTL="$E2E_TMP/kubectl" "$ROOT/scripts/webhook-cert.sh" --days 2
for f in tls.crt tls.key ca.crt; do
    k get secret -n trainyard-system trainyard-webhook-cert \
        -o jsonpath="{.data.${f//./\\.}}" | base64 -d >"$E2E_TMP/$f"
done
expect_eq "the Secret is kubernetes.io/tls" "kubernetes.io/tls" \
    "$(k get secret -n trainyard-system trainyard-webhook-cert -o jsonpath='{.type}')"
check "tls.crt is signed by ca.crt" openssl verify -CAfile "$E2E_TMP/ca.crt" "$E2E_TMP/tls.crt"
expect_match "... for the Service's name" 'DNS:trainyard-webhook.trainyard-system.svc' \
    "$(openssl x509 -in "$E2E_TMP/tls.crt" -noout -ext subjectAltName 2>&1)"
check "tls.key is tls.crt's key" sh -c "[ \"\$(openssl pkey -in '$E2E_TMP/tls.key' -pubout)\" = \"\$(openssl x509 -in '$E2E_TMP/tls.crt' -noout -pubkey)\" ]"
expect_eq "caBundle is ca.crt, on both webhook configurations" "2 2" \
    "$(grep -c 'patch' "$E2E_TMP/patches") $(grep -c "\"value\":\"$(base64 <"$E2E_TMP/ca.crt" | tr -d '\n')\"" "$E2E_TMP/patches")"

finish
