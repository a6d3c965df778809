"""A training script's progress report, as Kubeflow Trainer's examples make
it: POST {"trainerStatus": {...}} to KUBEFLOW_TRAINER_SERVER_URL with the
token file's bearer token, over TLS with KUBEFLOW_TRAINER_SERVER_CA_CERT when
the URL is https. Prints the HTTP status.

usage: progress_report.py PERCENT NAME=VALUE [plain]
  plain: urllib's own Content-Type (a form type), as upstream's example sends
"""
import json
import os
import ssl
import sys
import urllib.error
import urllib.request

percent, metric = int(sys.argv[1]), sys.argv[2].split("=", 1)
url = os.environ["KUBEFLOW_TRAINER_SERVER_URL"]
with open(os.environ["KUBEFLOW_TRAINER_SERVER_TOKEN"]) as f:
    token = f.read().strip()
ca = os.environ.get("KUBEFLOW_TRAINER_SERVER_CA_CERT")
ctx = ssl.create_default_context(cafile=ca) if url.startswith("https") else None
body = json.dumps({"trainerStatus": {"progressPercentage": percent,
                   "metrics": [{"name": metric[0], "value": metric[1]}]}}).encode()
headers = {"Authorization": "Bearer " + token}
if sys.argv[3:] != ["plain"]:
    headers["Content-Type"] = "application/json"
req = urllib.request.Request(url, data=body, method="POST", headers=headers)
try:
    with urllib.request.urlopen(req, context=ctx) as r:
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code)
