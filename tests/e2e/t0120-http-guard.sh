#!/usr/bin/env bash
# The front door, tried as an attacker would: one server per port and per data
# directory; cross-site writes (text/plain, forms, foreign Origin, rebound
# Host) refused before anything is stored; the in-flight cap answers 429 with
# Retry-After; idle half-open connections neither starve /healthz nor live
# for ever. Real curl, kubectl and Python sockets.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
k() { kubectl --request-timeout=20s "$@"; }

# A low soft open-file limit, as on many machines: the server raises it to the hard one.
ulimit -Sn 1024
start_server --no-local-node --sim-nodes 1x0 --request-timeout 3s \
    --cors-allowed-origins '^https://console\.example\.org$'
PORT=${SERVER##*:}
CM="$SERVER/api/v1/namespaces/default/configmaps"
body='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"NAME"},"data":{"a":"b"}}'
post() { # post NAME [curl args]: prints the HTTP code
    local name=$1; shift
    kcurl -s -o "$E2E_TMP/post.out" -w '%{http_code}' -XPOST "$@" --data "${body/NAME/$name}" "$CM"
}

# --- one server per port and per data directory
"$TRAINYARD" server --port "$PORT" --data-dir "$E2E_TMP/other" --no-local-node --sim-nodes 1x0 \
    >"$E2E_TMP/second.out" 2>&1
expect_eq "a second server on the same port exits with an error" "1" "$?"
expect_match "... saying the address is in use" 'cannot listen on 127.0.0.1:'"$PORT" "$(cat "$E2E_TMP/second.out")"
"$TRAINYARD" server --port 0 --data-dir "$E2E_TMP/data" --no-local-node --sim-nodes 1x0 \
    >"$E2E_TMP/second.out" 2>&1
expect_eq "a second server on the same data directory exits with an error" "1" "$?"
expect_match "... naming the holder's pid" "in use by another trainyard server \\(pid $SERVER_PID\\)" \
    "$(cat "$E2E_TMP/second.out")"
expect_eq "the first server still answers" "ok" "$(kcurl -s "$SERVER/healthz")"

# --- cross-site writes
expect_eq "POST text/plain: 415" "415" "$(post plain -H 'Content-Type: text/plain')"
expect_match "... with kube-apiserver's Status" '"reason":"UnsupportedMediaType"' "$(cat "$E2E_TMP/post.out")"
expect_eq "POST as a form: 415" "415" "$(post form -H 'Content-Type: application/x-www-form-urlencoded')"
expect_eq "POST multipart: 415" "415" "$(kcurl -s -o /dev/null -w '%{http_code}' -F "x=$body" "$CM")"
expect_eq "POST with a rebound Host: 403" "403" "$(post rebound -H "Host: attacker.example:$PORT" -H 'Content-Type: application/json')"
expect_match "... naming the flag that allows it" 'allowed-hosts' "$(cat "$E2E_TMP/post.out")"
expect_eq "POST from a foreign Origin: 403" "403" \
    "$(post foreign -H 'Origin: http://attacker.example' -H 'Content-Type: application/json')"
expect_eq "POST from Origin null: 403" "403" "$(post nullorigin -H 'Origin: null' -H 'Content-Type: application/json')"
expect_eq "GET with a rebound Host: 403 (reads leak too)" "403" \
    "$(kcurl -s -o /dev/null -w '%{http_code}' -H "Host: attacker.example:$PORT" "$CM")"
out=$(k get configmaps -o name 2>&1)
expect_eq "nothing refused was stored" "" "$(printf '%s\n' "$out" | grep -E 'plain|form|rebound|foreign|nullorigin')"

expect_eq "POST from the server's own origin: 201" "201" \
    "$(post same -H "Origin: $SERVER" -H 'Content-Type: application/json; charset=utf-8')"
expect_eq "POST YAML: 201" "201" "$(kcurl -s -o /dev/null -w '%{http_code}' -XPOST -H 'Content-Type: application/yaml' \
    --data-binary $'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml\n' "$CM")"
expect_eq "localhost as Host is fine" "ok" "$(kcurl -s -H "Host: localhost:$PORT" "$SERVER/healthz")"
code=$(post cors -H 'Origin: https://console.example.org' -H 'Content-Type: application/json' -D "$E2E_TMP/hdr")
expect_eq "POST from a configured origin: 201" "201" "$code"
expect_match "... with CORS headers for it" 'Access-Control-Allow-Origin: https://console.example.org' "$(tr -d '\r' <"$E2E_TMP/hdr")"
pre=$(kcurl -s -o /dev/null -D - -X OPTIONS -H 'Origin: https://console.example.org' \
    -H 'Access-Control-Request-Method: DELETE' "$CM/cors" | tr -d '\r')
expect_match "a preflight from a configured origin: 204" '^HTTP/1.1 204' "$pre"
expect_match "... allowing DELETE" 'Access-Control-Allow-Methods: .*DELETE' "$pre"
expect_eq "kubectl still creates" "configmap/kubectl created" "$(k create configmap kubectl --from-literal=a=b 2>&1)"

# --- 700 half-open connections (the server runs under ulimit -n 1024)
cat >"$E2E_TMP/halfopen.py" <<'PY'
import os, resource, socket, ssl, subprocess, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
port, n = int(sys.argv[1]), int(sys.argv[2])
tls = ssl.create_default_context(cafile=os.environ["E2E_CA"])
socks = []
for _ in range(n):
    s = tls.wrap_socket(socket.create_connection(("127.0.0.1", port)),
                        server_hostname="127.0.0.1")
    s.sendall(b"GET /healthz HTTP/1.1\r\nHo")
    socks.append(s)
r = subprocess.run(["curl", "-s", "-m", "30", "--cacert", os.environ["E2E_CA"],
                    f"https://127.0.0.1:{port}/healthz"], capture_output=True, text=True)
print("healthz:", r.stdout)
# --request-timeout 3s: every one is closed by the server, however slowly.
deadline = time.time() + 120
closed = 0
for s in socks:
    s.settimeout(max(1, deadline - time.time()))
    try:
        if s.recv(1) == b"":
            closed += 1
    except OSError:
        closed += 1 if time.time() < deadline else 0
print("closed:", closed)
PY
out=$($PY "$E2E_TMP/halfopen.py" "$PORT" 700)
expect_match "/healthz answers beside 700 half-open connections" 'healthz: ok' "$out"
expect_match "the server closes every idle half-open connection" 'closed: 700' "$out"

expect_eq "a pod log path that climbs out of the logs: 400" "400" \
    "$(kcurl -s --path-as-is -o /dev/null -w '%{http_code}' "$SERVER/api/v1/namespaces/../pods/x/log?container=supervisor")"

# What only looks like a stream is an ordinary request: its connection keeps
# the idle timeout afterwards (a GET /version?watch=1 used to clear it for
# the connection's life).
cat >"$E2E_TMP/lookalike.py" <<'PY'
import os, socket, ssl, sys, time
tls = ssl.create_default_context(cafile=os.environ["E2E_CA"])
s = tls.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))),
                    server_hostname="127.0.0.1")
s.sendall(b"GET /version?watch=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
s.settimeout(120)
got, t0 = b"", time.time()
while True:  # the answer, then the server's close once the connection idles
    b = s.recv(65536)
    if not b:
        break
    got += b
print("answered:", got.split(b"\r\n")[0].decode(), "closed by the server")
PY
out=$(timeout 150 $PY "$E2E_TMP/lookalike.py" "$PORT" 2>&1)
expect_match "a look-alike watch is answered and its idle connection closed" 'answered: HTTP/1.1 200 OK closed by the server' "$out"
code=$(kcurl -s -o "$E2E_TMP/big.out" -w '%{http_code}' -XPOST -H 'Content-Type: application/json' \
    -H 'Content-Length: 999999999' --max-time 30 "$CM" --data-binary '{}' 2>/dev/null)
expect_eq "a body announced past 3 MiB: 413 before it is read" "413" "$code"

# A watch is not an idle connection: it outlives --request-timeout (3s).
# (the watch lasts past both waits below; it is ended once they are done)
timeout $((E2E_WAIT * 3 + 30)) curl --cacert "$E2E_CA" -H "Authorization: Bearer $E2E_TOKEN" -sN \
    "$CM?watch=1&timeoutSeconds=$((E2E_WAIT * 3))" >"$E2E_TMP/watch.out" &
wpid=$!
wait_until file_has "$E2E_TMP/watch.out" '"name":"kubectl"'
sleep 6 # longer than the idle timeout: however slow the machine, no shorter
k create configmap late >/dev/null 2>&1
wait_until file_has "$E2E_TMP/watch.out" '"name":"late"'
expect_match "a watch idle past --request-timeout still delivers" '"name":"late"' "$(cat "$E2E_TMP/watch.out")"
kill $wpid 2>/dev/null; wait $wpid 2>/dev/null

# --- in-flight cap, on a server of its own with one write slot and the
# default idle timeout: a write whose body is still arriving holds the slot.
stop_server
E2E_DATA=$E2E_TMP/capped start_server --no-local-node --sim-nodes 1x0 --max-mutating-requests-inflight 1
PORT=${SERVER##*:}
CM="$SERVER/api/v1/namespaces/default/configmaps"
k create configmap kubectl --from-literal=a=b >/dev/null 2>&1
# A write without credentials is answered 401 from its headers and holds no
# slot while its body trickles in (kube-apiserver authenticates first too).
cat >"$E2E_TMP/unauth.py" <<'PY'
import os, socket, ssl, subprocess, sys
port, cm = int(sys.argv[1]), sys.argv[2]
tls = ssl.create_default_context(cafile=os.environ["E2E_CA"])
s = tls.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1")
s.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"meta")
s.settimeout(60)
print("anonymous:", s.recv(65536).split(b"\r\n")[0].decode())
r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert",
                    os.environ["E2E_CA"], "-H", "Authorization: Bearer " + os.environ["E2E_TOKEN"],
                    "-XPOST", "-H", "Content-Type: application/json", "--data",
                    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"beside"}}', cm],
                   capture_output=True, text=True)
print("beside:", r.stdout)
s.close()
PY
out=$(timeout 120 $PY "$E2E_TMP/unauth.py" "$PORT" "$CM" 2>&1)
expect_match "a write without credentials: 401 before its body is in" '^anonymous: HTTP/1.1 401' "$out"
expect_match "... holding no write slot meanwhile" '^beside: 201$' "$out"
cat >"$E2E_TMP/inflight.py" <<'PY'
import os, socket, ssl, subprocess, sys, time
port, cm = int(sys.argv[1]), sys.argv[2]
tls = ssl.create_default_context(cafile=os.environ["E2E_CA"])
auth = "Authorization: Bearer " + os.environ["E2E_TOKEN"]
s = tls.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1")
s.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
          auth.encode() + b"\r\n"
          b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"meta")
# The server has the headers once it answers anything on another connection
# in order after them; curl's request is sent after ours was written.
def curl(*args):
    return subprocess.run(["curl", "-s", "-D", "-", "--cacert", os.environ["E2E_CA"], "-H", auth,
                           *args], capture_output=True, text=True).stdout
held = ""
deadline = time.time() + int(sys.argv[3])
while time.time() < deadline:  # the slot is taken once the server has read our headers
    held = curl("-XPOST", "-H", "Content-Type: application/json", "--data",
                '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"over"}}', cm)
    if " 429" in held.split("\r\n")[0]:
        break
    time.sleep(0.05)
print(held.replace("\r", ""))
print("GET:", curl(cm + "/kubectl").split("\r\n")[0])
s.close()
PY
out=$($PY "$E2E_TMP/inflight.py" "$PORT" "$CM" "$E2E_WAIT")
expect_match "a write over the in-flight cap: 429" '^HTTP/1.1 429' "$out"
expect_match "... with Retry-After" 'Retry-After: 1' "$out"
expect_match "... and kube-apiserver's plain-text body" '^Too many requests, please try again later.$' "$out"
expect_match "reads have their own cap" 'GET: HTTP/1.1 200' "$out"
# the held slot is given back once its connection is gone
slot_back() { code=$(post after -H 'Content-Type: application/json'); [ "$code" = 201 ]; }
code=""
wait_until slot_back
expect_eq "the slot is given back when the request ends" "201" "$code"


# The server raised its own open-file limit; its pods get the one it was
# started with (ulimit -Sn 1024 above), not the raised one.
stop_server
E2E_DATA=$E2E_TMP/local start_server --fake-gpus 0
k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: nofile}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: busybox
    command: [sh, -c, "ulimit -n"]
YAML
phase=""
for _ in $(seq 1200); do
    phase=$(k get pod nofile -o jsonpath='{.status.phase}' 2>/dev/null)
    [ "$phase" = Succeeded ] || [ "$phase" = Failed ] && break; sleep 0.1
done
expect_eq "a pod runs with the open-file limit the server was started with" "1024" "$(k logs nofile 2>&1)"

finish
