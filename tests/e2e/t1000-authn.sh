#!/usr/bin/env bash
# Authentication and TLS, on by default: 401 without or with bogus
# credentials (kube-apiserver's body), the public paths open, TLS verified
# with the CA of the kubeconfig, the admin credential made once (mode 0600)
# and reloaded token files, --token-auth-file, client certificates
# (--client-ca-file), given serving certificates, and a server that will not
# start half-secured. Real kubectl, curl, openssl and the Python client.
#
# RBAC may come after this: users that must be allowed are in
# system:masters; the others are only checked to be authenticated (never 401).
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
k() { kubectl --request-timeout=20s "$@"; }
FLAGS=(--no-local-node --sim-nodes 1x0)
DATA=$E2E_TMP/data
code() { curl -s -o "$E2E_TMP/body" -w '%{http_code}' "$@"; }
mode() { stat -c %a "$1"; }

start_server "${FLAGS[@]}"
expect_match "the server listens on https" '^https://127\.0\.0\.1:[0-9]+$' "$SERVER"

# --- the admin credential and the self-signed pair
expect_eq "tokens.csv is the owner's alone" "600" "$(mode "$DATA/tokens.csv")"
expect_eq "the CA key is the owner's alone" "600" "$(mode "$DATA/pki/ca.key")"
expect_eq "the serving key is the owner's alone" "600" "$(mode "$DATA/pki/apiserver.key")"
expect_eq "kubeconfig -o writes mode 0600" "600" "$(mode "$KUBECONFIG")"
expect_match "the admin is in system:masters" '^[0-9a-f]{64},admin,admin,"system:masters"$' \
    "$(cat "$DATA/tokens.csv")"
expect_match "the kubeconfig carries the CA" 'certificate-authority-data: ' "$(cat "$KUBECONFIG")"
expect_eq "the data dir records the URL" "$SERVER" "$(cat "$DATA/server.url")"
sans=$(openssl x509 -in "$DATA/pki/apiserver.crt" -noout -ext subjectAltName 2>&1)
expect_match "the serving certificate names 127.0.0.1, ::1 and localhost" \
    'IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1, DNS:localhost' "$sans"

# --- the kubeconfig command finds the data directory as the server does
out=$(env -u TRAINYARD_SERVER TRAINYARD_DATA_DIR="$DATA" "$TRAINYARD" kubeconfig 2>&1)
expect_match "kubeconfig via TRAINYARD_DATA_DIR and server.url" "server: $SERVER" "$out"
expect_match "... with the admin's token" "token: \"$E2E_TOKEN\"" "$out"
out=$("$TRAINYARD" kubeconfig --data-dir "$E2E_TMP/nothing" 2>&1)
expect_eq "kubeconfig without a server's data directory: exit 1" "1" "$?"
expect_match "... naming what it looked for" "cannot read the admin credential $E2E_TMP/nothing/tokens.csv" "$out"
out=$("$TRAINYARD" get pods --context nosuch 2>&1)
expect_match "the CLI with an unknown --context says so" 'context "nosuch" not found' "$out"

# --- kubectl with the kubeconfig: TLS verified with its CA
check "kubectl works with the admin kubeconfig" k get namespaces
check "the trainyard CLI too" "$TRAINYARD" get namespaces
out=$(env -u TRAINYARD_SERVER -u KUBECONFIG TRAINYARD_DATA_DIR="$DATA" HOME="$E2E_TMP/nohome" \
    "$TRAINYARD" get namespaces 2>&1)
expect_match "... and without a kubeconfig, the data directory's admin credential" 'kube-system' "$out"

# --- 401s, kube-apiserver's body
expect_eq "no credentials: 401" "401" "$(code --cacert "$E2E_CA" "$SERVER/api/v1/namespaces")"
body=$(cat "$E2E_TMP/body")
for f in '"kind":"Status"' '"apiVersion":"v1"' '"status":"Failure"' '"message":"Unauthorized"' \
    '"reason":"Unauthorized"' '"code":401'; do
    expect_match "... body has $f" "$f" "$body"
done
expect_eq "a bogus token: 401" "401" \
    "$(code --cacert "$E2E_CA" -H 'Authorization: Bearer bogus' "$SERVER/api/v1/namespaces")"
expect_eq "a bogus token on /healthz too: 401" "401" \
    "$(code --cacert "$E2E_CA" -H 'Authorization: Bearer bogus' "$SERVER/healthz")"
expect_match "kubectl with a bogus token: Unauthorized" 'Unauthorized' \
    "$(k --token=bogus get pods 2>&1)"
for p in /healthz /livez /readyz /version; do
    expect_eq "$p is open without credentials" "200" "$(code --cacert "$E2E_CA" "$SERVER$p")"
done
expect_eq "the admin token: 200" "200" "$(kcurl -s -o /dev/null -w '%{http_code}' "$SERVER/api/v1/namespaces")"

# --- TLS: without the CA nothing verifies
curl -s -o /dev/null "$SERVER/healthz"
expect_eq "curl without the CA fails verification (60)" "60" "$?"
sed '/certificate-authority-data/d' "$KUBECONFIG" >"$E2E_TMP/noca.kubeconfig"
expect_match "kubectl without the CA: unknown authority" 'certificate signed by unknown authority|x509' \
    "$(KUBECONFIG="$E2E_TMP/noca.kubeconfig" k get pods 2>&1)"

# --- the Python client
cat >"$E2E_TMP/py.py" <<'PY'
import sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
print("namespaces:", ",".join(sorted(n.metadata.name for n in client.CoreV1Api().list_namespace().items)))
c = client.Configuration.get_default_copy()
c.api_key = {"authorization": "Bearer bogus"}
try:
    client.CoreV1Api(client.ApiClient(c)).list_namespace()
    print("bogus: allowed")
except ApiException as e:
    print("bogus:", e.status)
PY
out=$($PY "$E2E_TMP/py.py" "$KUBECONFIG" 2>&1)
expect_match "the Python client lists with the kubeconfig (CA data, token)" '^namespaces: default,kube-system' "$out"
expect_match "the Python client with a bogus token: 401" '^bogus: 401$' "$out"

# --- the token file is read again when it changes (a `user add` appends)
printf 'bobtoken,bob,bob-uid,"system:masters"\ncaroltoken,carol,carol-uid,team-c\n' >>"$DATA/tokens.csv"
ok_as() { [ "$(code --cacert "$E2E_CA" -H "Authorization: Bearer $1" "$SERVER/api/v1/namespaces")" = "$2" ]; }
check "an appended token works without a restart" wait_until 30 ok_as bobtoken 200
check "kubectl as bob (system:masters) creates" k --token=bobtoken create configmap by-bob
c=$(code --cacert "$E2E_CA" -H "Authorization: Bearer caroltoken" "$SERVER/api/v1/namespaces/default/configmaps")
expect_match "carol (no group) is authenticated: 200 or 403, never 401" '^(200|403)$' "$c"

# --- a restart reuses the CA and the admin credential
ca_before=$(sha256sum <"$DATA/pki/ca.crt")
tok_before=$E2E_TOKEN
old_kubeconfig=$E2E_TMP/old.kubeconfig
cp "$KUBECONFIG" "$old_kubeconfig"
stop_server
printf 'alicetoken,alice,a-1,"system:masters,team-a"\nevetoken,eve,e-1\n' >"$E2E_TMP/users.csv"
start_server "${FLAGS[@]}" --token-auth-file "$E2E_TMP/users.csv"
expect_eq "the CA is reused after a restart" "$ca_before" "$(sha256sum <"$DATA/pki/ca.crt")"
expect_eq "the admin token too" "$tok_before" "$E2E_TOKEN"
PORT=${SERVER##*:}
sed "s#server: https://127.0.0.1:[0-9]*#server: https://127.0.0.1:$PORT#" "$old_kubeconfig" >"$E2E_TMP/old2.kubeconfig"
check "a kubeconfig made before the restart still works" env KUBECONFIG="$E2E_TMP/old2.kubeconfig" kubectl get ns
check "--token-auth-file: alice (system:masters) creates" k --token=alicetoken create configmap by-alice
c=$(code --cacert "$E2E_CA" -H "Authorization: Bearer evetoken" "$SERVER/api/v1/namespaces/default/configmaps")
expect_match "--token-auth-file: eve is authenticated (200 or 403, never 401)" '^(200|403)$' "$c"
check "tokens.csv's appended users are still read" ok_as bobtoken 200

# --- client certificates
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$E2E_TMP/cca.key" -out "$E2E_TMP/cca.crt" -subj "/CN=test-client-ca" 2>/dev/null
mkcert() { # mkcert NAME SUBJECT [CA]: a client certificate signed by CA (default the test CA)
    local ca=${3:-cca}
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$E2E_TMP/$1.key" \
        -out "$E2E_TMP/$1.csr" -subj "$2" 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >"$E2E_TMP/ext"
    openssl x509 -req -in "$E2E_TMP/$1.csr" -CA "$E2E_TMP/$ca.crt" -CAkey "$E2E_TMP/$ca.key" \
        -CAcreateserial -out "$E2E_TMP/$1.crt" -days 1 -extfile "$E2E_TMP/ext" 2>/dev/null
}
mkcert dana "/O=system:masters/O=team-d/CN=dana"
mkcert frank "/O=team-f/CN=frank"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$E2E_TMP/other.key" -out "$E2E_TMP/other.crt" -subj "/CN=other-ca" 2>/dev/null
mkcert mallory "/O=system:masters/CN=mallory" other
stop_server
start_server "${FLAGS[@]}" --client-ca-file "$E2E_TMP/cca.crt"
certcode() { code --cacert "$E2E_CA" --cert "$E2E_TMP/$1.crt" --key "$E2E_TMP/$1.key" "$SERVER$2"; }
expect_eq "a client certificate of the CA: 200" "200" "$(certcode dana /api/v1/namespaces)"
expect_match "frank (no system:masters) is authenticated (200 or 403, never 401)" '^(200|403)$' \
    "$(certcode frank /api/v1/namespaces/default/configmaps)"
expect_eq "a certificate of another CA: 401" "401" "$(certcode mallory /api/v1/namespaces)"
cat >"$E2E_TMP/dana.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: t
  cluster:
    server: $SERVER
    certificate-authority-data: $(base64 -w0 <"$E2E_CA")
contexts:
- name: t
  context: {cluster: t, user: dana}
current-context: t
users:
- name: dana
  user:
    client-certificate-data: $(base64 -w0 <"$E2E_TMP/dana.crt")
    client-key-data: $(base64 -w0 <"$E2E_TMP/dana.key")
EOF
check "kubectl as dana (client certificate) creates" \
    env KUBECONFIG="$E2E_TMP/dana.kubeconfig" kubectl create configmap by-dana
check "the trainyard CLI with the client certificate" \
    env -u TRAINYARD_SERVER "$TRAINYARD" get configmaps --kubeconfig "$E2E_TMP/dana.kubeconfig"
out=$($PY - "$E2E_TMP/dana.kubeconfig" <<'PY' 2>&1
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
print("python:", client.CoreV1Api().read_namespaced_config_map("by-dana", "default").metadata.name)
PY
)
expect_eq "the Python client with a client certificate" "python: by-dana" "$out"

# --- anonymous requests: only with --anonymous-auth, and never past authorization
stop_server
start_server "${FLAGS[@]}" --anonymous-auth=true
expect_eq "--anonymous-auth: /healthz open" "200" "$(code --cacert "$E2E_CA" "$SERVER/healthz")"
expect_match "--anonymous-auth: the API is not open to system:anonymous" '^(401|403)$' \
    "$(code --cacert "$E2E_CA" "$SERVER/api/v1/namespaces/default/configmaps")"
expect_eq "--anonymous-auth: a bogus token is still 401" "401" \
    "$(code --cacert "$E2E_CA" -H 'Authorization: Bearer bogus' "$SERVER/api/v1/namespaces")"

# --- plain HTTP only on loopback, and still authenticated
stop_server
start_server "${FLAGS[@]}" --no-tls
expect_match "--no-tls on loopback: http://" '^http://127\.0\.0\.1:' "$SERVER"
expect_eq "--no-tls: still 401 without a token" "401" "$(code "$SERVER/api/v1/namespaces")"
check "--no-tls: the trainyard CLI with the kubeconfig" "$TRAINYARD" get ns
check "--no-tls: curl with the token" kcurl -sf "$SERVER/api/v1/namespaces"
# kubectl (client-go) sends no credentials over plain HTTP: with --no-tls it
# gets 401 (docs/compatibility.md).
stop_server

# --- never started half-secured
refuse() { # refuse NAME REGEX FLAGS...: the server exits 1 with a message matching REGEX
    local name=$1 re=$2; shift 2
    timeout 60 "$TRAINYARD" server --port 0 --data-dir "$E2E_TMP/refused" "${FLAGS[@]}" "$@" \
        >"$E2E_TMP/refused.out" 2>&1
    expect_eq "$name: exit 1" "1" "$?"
    expect_match "... saying why" "$re" "$(cat "$E2E_TMP/refused.out")"
}
refuse "--address 0.0.0.0 without a certificate" \
    'refusing to listen on 0\.0\.0\.0 without --tls-cert-file and --tls-private-key-file' \
    --address 0.0.0.0
refuse "--address 0.0.0.0 --no-tls" 'refusing to serve plain HTTP on 0\.0\.0\.0' \
    --address 0.0.0.0 --no-tls
printf 'good,admin2,1,system:masters\n"broken,user,2\n' >"$E2E_TMP/bad.csv"
refuse "a malformed token file" "$E2E_TMP/bad.csv:2: malformed CSV" --token-auth-file "$E2E_TMP/bad.csv"
printf 'only-two,fields\n' >"$E2E_TMP/bad2.csv"
refuse "a token line with two fields" "$E2E_TMP/bad2.csv:1: want token,user,uid" \
    --token-auth-file "$E2E_TMP/bad2.csv"
refuse "a missing token file" "cannot read token file $E2E_TMP/absent.csv" \
    --token-auth-file "$E2E_TMP/absent.csv"
echo garbage >"$E2E_TMP/garbage.pem"
refuse "a certificate that is not one" "--tls-cert-file $E2E_TMP/garbage.pem" \
    --tls-cert-file "$E2E_TMP/garbage.pem" --tls-private-key-file "$E2E_TMP/cca.key"
refuse "a key that is not the certificate's" "is not the key of --tls-cert-file" \
    --tls-cert-file "$E2E_TMP/cca.crt" --tls-private-key-file "$E2E_TMP/other.key"
refuse "a certificate without its key" "go together" --tls-cert-file "$E2E_TMP/cca.crt"
refuse "a client CA that is not one" "--client-ca-file $E2E_TMP/garbage.pem" \
    --client-ca-file "$E2E_TMP/garbage.pem"

# --- a given serving certificate, on every address
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$E2E_TMP/srv.key" \
    -out "$E2E_TMP/srv.csr" -subj "/CN=trainyard-test" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$E2E_TMP/srvext"
openssl x509 -req -in "$E2E_TMP/srv.csr" -CA "$E2E_TMP/cca.crt" -CAkey "$E2E_TMP/cca.key" \
    -CAcreateserial -out "$E2E_TMP/srv.crt" -days 1 -extfile "$E2E_TMP/srvext" 2>/dev/null
E2E_DATA=$E2E_TMP/given start_server "${FLAGS[@]}" --address 0.0.0.0 \
    --tls-cert-file "$E2E_TMP/srv.crt" --tls-private-key-file "$E2E_TMP/srv.key"
expect_eq "with a given certificate no pki is made" "" "$(ls "$E2E_TMP/given/pki" 2>/dev/null)"
"$TRAINYARD" kubeconfig --data-dir "$E2E_TMP/given" --server "$SERVER" \
    --certificate-authority "$E2E_TMP/cca.crt" -o "$E2E_TMP/given.kubeconfig"
check "--address 0.0.0.0 with a given certificate serves (verified with its CA)" \
    env KUBECONFIG="$E2E_TMP/given.kubeconfig" kubectl get ns

finish
