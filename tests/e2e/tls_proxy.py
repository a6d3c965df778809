#!/usr/bin/python3
"""tls_proxy.py CERT KEY BACKEND - a TLS front for a plain-HTTP server, for
the e2e tests that need kubectl to send a bearer token (kubectl sends
credentials only over TLS). Listens on 127.0.0.1, a free port, printed as
`listening on https://127.0.0.1:PORT`; forwards every request, headers and
body as they are, and answers with the backend's answer (bodies read whole:
no watches). BACKEND may be https:// too (its certificate is not checked)."""
import http.client
import http.server
import ssl
import sys
import urllib.parse

CERT, KEY, BACKEND = sys.argv[1:4]
B = urllib.parse.urlsplit(BACKEND)
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
       "proxy-connection", "content-length", "host"}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def forward(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        if B.scheme == "https":
            conn = http.client.HTTPSConnection(B.hostname, B.port, timeout=120,
                                               context=ssl._create_unverified_context())
        else:
            conn = http.client.HTTPConnection(B.hostname, B.port, timeout=120)
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in HOP]
        conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", B.netloc)
        for k, v in headers:
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        data = resp.read()
        self.send_response(resp.status, resp.reason)
        for k, v in resp.getheaders():
            if k.lower() not in HOP:
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = forward


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(CERT, KEY)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("listening on https://127.0.0.1:%d" % srv.server_address[1], flush=True)
srv.serve_forever()
