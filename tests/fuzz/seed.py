#!/usr/bin/python3
"""Writes the seed corpora of tests/fuzz/corpus/<target>/seed-* from
examples/, the manifests of the end-to-end tests, the simulator's traces and
a few hand-made inputs (the protobuf envelopes are encoded here the way
tests/unit/test_protobuf.c does). Run from the repository root after adding
an example; the crashes found (crash-*) are kept beside the seeds."""
import glob
import hashlib
import json
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    name = "seed-" + hashlib.sha1(data).hexdigest()[:12]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def manifests():
    """(text, [docs]) of every example and every heredoc manifest of the
    end-to-end tests that loads as YAML."""
    texts = [open(p).read() for p in sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml")))]
    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "e2e", "*.sh"))):
        for m in re.finditer(r"<<-?'?(\w+)'?\n(.*?)\n\1\n", open(p).read(), re.S):
            if "kind:" in m.group(2) or '"kind"' in m.group(2):
                texts.append(m.group(2))
    out = []
    for t in texts:
        try:
            docs = [d for d in yaml.safe_load_all(t) if d]
        except yaml.YAMLError:
            continue
        out.append((t, docs))
    return out


def varint(v):
    b = bytearray()
    while v >= 0x80:
        b.append((v & 0x7F) | 0x80)
        v >>= 7
    b.append(v)
    return bytes(b)


def pb_bytes(field, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(field << 3 | 2) + varint(len(data)) + data


def pb_int(field, v):
    return varint(field << 3) + varint(v)


def pb_entry(field, k, v):
    return pb_bytes(field, pb_bytes(1, k) + pb_bytes(2, v))


def envelope(av, kind, raw):
    tm = pb_bytes(1, av) + pb_bytes(2, kind)
    return b"k8s\0" + pb_bytes(1, tm) + pb_bytes(2, raw) + pb_bytes(
        4, "application/vnd.kubernetes.protobuf")


def protobufs():
    meta = pb_bytes(1, "cm1") + pb_bytes(3, "default") + pb_entry(11, "app", "web")
    yield envelope("v1", "ConfigMap", pb_bytes(1, meta) + pb_entry(2, "a", "1"))
    yield envelope("v1", "Secret", pb_bytes(1, pb_bytes(1, "s1")) +
                   pb_bytes(2, pb_bytes(1, "pw") + pb_bytes(2, b"hunter2")) + pb_bytes(3, "Opaque"))
    yield envelope("scheduling.k8s.io/v1", "PriorityClass",
                   pb_bytes(1, pb_bytes(1, "high")) + pb_int(2, 1000))
    port = pb_bytes(1, "http") + pb_bytes(2, "TCP") + pb_int(3, 80) + pb_bytes(
        4, pb_int(1, 0) + pb_int(2, 8080))
    spec = pb_bytes(1, port) + pb_entry(2, "app", "web") + pb_bytes(4, "ClusterIP")
    yield envelope("v1", "Service", pb_bytes(1, pb_bytes(1, "web")) + pb_bytes(2, spec))
    yield envelope("v1", "Namespace", pb_bytes(1, pb_bytes(1, "ns1")))


def main():
    docs_all = []
    for text, docs in manifests():
        put("yaml", text)
        put("write", text)
        for d in docs:
            docs_all.append(d)
            put("write", json.dumps(d))
            put("write", yaml.safe_dump(d))
            put("objtext", json.dumps(d, separators=(",", ":")))
    for b in protobufs():
        put("protobuf", b)
        put("write", b)
    for y in ["a: &x {b: 1}\nc: *x\nd:\n  <<: *x\n  e: [1, 2.5, ~, yes, '0x1', 0o7]\n",
              "---\n- 1\n---\nk: |\n  text\n  more\n...\n", "{\"json\": [true, null]}\n"]:
        put("yaml", y)
    for p in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "traces", "*"))):
        put("trace", open(p, "rb").read())
    put("trace", "32x4")
    for s in ["app=web,tier!=db", "env in (prod, qa),!legacy", "x notin (a),k", "a==b,c!=d",
              "metadata.name=a,spec.nodeName!=", "status.phase=Running",
              '{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"In","values":["v"]}]}']:
        put("selector", s)
    for q in ["500m", "1.5Gi", "2e3", "1Ki", "0.1", "-1", "100M", "1E", "12345678901234567890"]:
        put("quantity", q)
    for c in ["*/1 * * * *", "0 9 * * MON-FRI", "5/20 0-6/2 1,15 jan,JUL ?", "30 2 * * *",
              "0 0 13 * 5", "0 0 29 2 *", "@every 1h30m", "@monthly", "59 23 31 12 *"]:
        put("cron", c)
    # A hand-made TZif: version 2, two transitions, two types (+1 h, +2 h).
    import struct
    def tzif(ver, tsize, times):
        hdr = b"TZif" + ver + b"\0" * 15 + struct.pack(">6I", 0, 0, 0, len(times), 2, 8)
        body = b"".join(struct.pack(">q" if tsize == 8 else ">i", t) for t in times)
        body += bytes(i % 2 for i in range(len(times)))
        body += struct.pack(">iBB", 3600, 0, 0) + struct.pack(">iBB", 7200, 1, 4) + b"CET\0CEST"
        return hdr + body
    put("cron", tzif(b"2", 4, [1774746000, 1792890000]) + tzif(b"2", 8, [1774746000, 1792890000])
        + b"\nCET-1CEST,M3.5.0,M10.5.0/3\n")
    pod = {"metadata": {"name": "p", "labels": {"a": "b"}},
           "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}]}]}}
    put("patch", json.dumps([pod, {"metadata": {"labels": {"a": None, "c": "d"}}}]))
    put("patch", json.dumps([pod, [{"op": "add", "path": "/spec/containers/-", "value": {"name": "d"}},
                                   {"op": "copy", "from": "/metadata", "path": "/x"},
                                   {"op": "move", "from": "/x", "path": "/y"},
                                   {"op": "test", "path": "/metadata/name", "value": "p"},
                                   {"op": "remove", "path": "/y/labels/a"},
                                   {"op": "replace", "path": "/spec/containers/0/image", "value": "j"}]]))
    put("patch", json.dumps([pod, {"spec": {"containers": [{"name": "c", "image": "k"},
                                                           {"name": "e", "$patch": "delete"}],
                                            "$setElementOrder/containers": [{"name": "c"}]},
                                   "metadata": {"$retainKeys": ["name"]}}, "Pod"]))
    for d in docs_all[:8]:
        put("patch", json.dumps([d, {"spec": {"x": 1}}, d.get("kind", "")]))
    slurm()
    exec_requests()
    webhook_reviews(docs_all)
    return 0


def webhook_reviews(docs):
    """fuzz_webhook: AdmissionReviews as kube-apiserver sends them
    (tests/fuzz/fuzz_webhook.c): creates of a few examples, an update, a
    queue's delete, one malformed."""
    def review(op, d, old=None, uid="u-1"):
        group, _, version = d.get("apiVersion", "v1").rpartition("/")
        kind = d.get("kind", "")
        return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "request": {"uid": uid,
                                       "kind": {"group": group, "version": version, "kind": kind},
                                       "resource": {"group": group, "version": version,
                                                    "resource": kind.lower() + "s"},
                                       "operation": op, "namespace": "default",
                                       "name": d.get("metadata", {}).get("name", ""),
                                       "userInfo": {"username": "alice"},
                                       "object": None if op == "DELETE" else d,
                                       "oldObject": old, "dryRun": False}})
    for d in docs[:6]:
        put("webhook", review("CREATE", d))
    for d in docs[:2]:
        nd = json.loads(json.dumps(d))
        nd.setdefault("metadata", {}).setdefault("labels", {})["x/y~z"] = "1"
        put("webhook", review("UPDATE", nd, old=d))
    q = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
         "metadata": {"name": "closed"}, "spec": {"weight": 1}, "status": {"state": "Closed"}}
    put("webhook", review("DELETE", q, old=q))
    put("webhook", '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}}')


def exec_requests():
    """fuzz_exec: what a pod sends its supervisor (tests/fuzz/fuzz_exec.c)."""
    put("exec", b"job-worker-0\0env=OMPI_MCA_plm_rsh_agent=/etc/mpi/kubexec.sh\0"
                b"env=PATH=/x\0--\0/bin/sh\0-c\0orted -mca ess env\0")
    put("exec", b"job-worker-1.job.default.svc\0--\0true\0")
    put("exec", b"h\0env=I_MPI_HYDRA_BOOTSTRAP=rsh\0--\0")


def slurm():
    """fuzz_slurm: the first byte picks the parser (tests/fuzz/fuzz_slurm.c);
    the texts are what Slurm 22.05 prints in the backend's formats."""
    for h in ["n1", "n[1-3,5]", "gpu-[01-03],login1", "n[08-10]-ib", "a[1-2]b[3-4]", "(null)",
              "n[1-99999999]"]:
        put("slurm", "h" + h)
    for g in ["gpu:2", "gpu:tesla:2(S:0-1)", "gpu:2,mps:100", "mps:4K,gpu:a100:4(S:0,1)", "(null)"]:
        put("slurm", "g" + g)
    put("slurm", "n" + "gpu-01|10.0.0.11|64|515000|gpu:a100:8(S:0-1)|mixed|gpu*\n"
        "gpu-02|gpu-02|64|515000|gpu:a100:8(S:0-1)|drained*|gpu*\n"
        "cpu-01|cpu-01|128|257000|(null)|idle~|cpu\n"
        "gpu-01|10.0.0.11|64|515000|gpu:a100:8(S:0-1)|mixed|all\n")
    put("slurm", "q" + "4242|RUNNING|None|gpu-[01-02]|trainyard:default/pt-0/uid-1|ty-pt-0\n"
        "4243+0|PENDING|Resources||a|b|ty-het\n4250_[4-9%2]|PENDING|JobArrayTaskLimit||(null)|x\n")
    put("slurm", "j" + "JobId=4242 JobName=ty-pt-0 UserId=ty(1000) JobState=RUNNING Reason=None "
        "NodeList=gpu-[01-02] TRES=cpu=128,mem=1000G,node=2 ReqB:S:C:T=0:0:*:* Socks/Node=* "
        "Comment=trainyard:default/pt-0 with spaces Power= StdOut=/tmp/x.out\n"
        "JobId=4243 HetJobId=4243 HetJobOffset=0 JobState=PENDING\n")
    for st in ["COMPLETED", "CANCELLED by 1000", "CG"]:
        put("slurm", "s" + st)
    for b in ["4242\n", "4243;cluster-a\n"]:
        put("slurm", "b" + b)


if __name__ == "__main__":
    sys.exit(main())
