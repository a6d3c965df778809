#!/usr/bin/env python3
"""idle-watchers.py BINARY N: the server CPU that N idle watches cost.

Starts BINARY server (simulated node, throwaway data directory), opens N
watch connections on configmaps (no events follow), and reads the server's
CPU time from /proc over 20 s, and its thread count."""
import resource, socket, ssl, sys, time, subprocess, os
resource.setrlimit(resource.RLIMIT_NOFILE, (8192, 8192))
binp, n = sys.argv[1], int(sys.argv[2])
d = "/tmp/idlew-%d" % os.getpid()
p = subprocess.Popen([binp, "server", "--port", "0", "--data-dir", d, "--no-local-node", "--sim-nodes", "1x0", "--log-level", "warn"], stdout=subprocess.PIPE, text=True)
port = int(p.stdout.readline().strip().rsplit(":", 1)[1])
def cpu():
    with open(f"/proc/{p.pid}/stat") as f: x = f.read().rsplit(")", 1)[1].split()
    return (int(x[11]) + int(x[12])) / os.sysconf("SC_CLK_TCK")
# TLS and the admin's token, as the server made them in its data directory
tls = ssl.create_default_context(cafile=d + "/pki/ca.crt")
token = open(d + "/tokens.csv").readline().split(",")[0]
socks = []
for i in range(n):
    s = tls.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1")
    s.sendall(b"GET /api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=600 HTTP/1.1\r\n"
              b"Host: 127.0.0.1\r\nAuthorization: Bearer " + token.encode() + b"\r\n\r\n")
    socks.append(s)
time.sleep(5)
c0 = cpu(); t0 = time.time(); time.sleep(20); c1 = cpu(); t1 = time.time()
th = [l for l in open(f"/proc/{p.pid}/status") if l.startswith("Threads")][0].strip()
print(f"{binp}: {n} idle watchers: server CPU {c1-c0:.2f} s over {t1-t0:.1f} s ({(c1-c0)/(t1-t0)*100:.1f}% of a core), {th}")
for s in socks: s.close()
p.terminate(); p.wait(); subprocess.run(["rm", "-rf", d])
