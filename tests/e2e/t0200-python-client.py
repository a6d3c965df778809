"""The Debian python3-kubernetes client against the real server.

CustomObjectsApi create/list/get/patch/delete and a watch stream; CoreV1Api
list namespaces and pods. Run by tests/e2e/run.sh with /usr/bin/python3.
"""
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

TRAINYARD = os.environ["TRAINYARD"]
GROUP, VERSION, PLURAL = "kubeflow.org", "v1", "pytorchjobs"


def job(name, workers=2):
    container = {"name": "pytorch", "image": "pytorch:cpu", "command": ["python3", "-c", "print(1)"]}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "labels": {"suite": "python"}},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": {"spec": {"containers": [container]}}},
                "Worker": {"replicas": workers, "template": {"spec": {"containers": [container]}}},
            }
        },
    }


class PythonClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # (pod supervisors may still write into it while it goes: see tearDownClass)
        cls.tmp = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        cls.server = subprocess.Popen(
            [TRAINYARD, "server", "--port", "0", "--data-dir", cls.tmp.name + "/data"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = cls.server.stdout.readline()
        assert line.startswith("listening on "), line
        url = line.split()[-1]
        kubeconfig = cls.tmp.name + "/kubeconfig"
        with open(kubeconfig, "w") as f:
            subprocess.run([TRAINYARD, "kubeconfig", "--data-dir", cls.tmp.name + "/data",
                            "--server", url], stdout=f, check=True)
        config.load_kube_config(config_file=kubeconfig)
        cls.custom = client.CustomObjectsApi()
        cls.core = client.CoreV1Api()

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        cls.server.wait(60)
        # Pod supervisors outlive the server by design; this test's must not
        # outlive the test, nor write into its directory while it goes (as
        # lib.sh's cleanup).
        pattern = "supervise --pod-dir " + cls.tmp.name + "/"
        subprocess.run(["pkill", "-TERM", "-f", pattern], check=False)
        time.sleep(0.2)
        subprocess.run(["pkill", "-KILL", "-f", pattern], check=False)
        cls.tmp.cleanup()

    def test_custom_objects_crud(self):
        created = self.custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, job("py-a"))
        self.assertEqual(created["metadata"]["name"], "py-a")
        self.assertTrue(created["metadata"]["uid"])
        self.assertEqual(created["spec"]["pytorchReplicaSpecs"]["Master"]["restartPolicy"], "OnFailure")

        listed = self.custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL,
                                                           label_selector="suite=python")
        self.assertIn("py-a", [i["metadata"]["name"] for i in listed["items"]])

        got = self.custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "py-a")
        self.assertEqual(got["metadata"]["uid"], created["metadata"]["uid"])

        patched = self.custom.patch_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, "py-a",
            {"spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 4}}}})
        self.assertEqual(patched["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"], 4)
        self.assertGreater(int(patched["metadata"]["resourceVersion"]),
                           int(created["metadata"]["resourceVersion"]))

        self.custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "py-a")
        with self.assertRaises(ApiException) as ctx:
            self.custom.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "py-a")
        self.assertEqual(ctx.exception.status, 404)

    def test_invalid_is_422_with_field(self):
        bad = job("py-bad")
        bad["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = 3
        with self.assertRaises(ApiException) as ctx:
            self.custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, bad)
        self.assertEqual(ctx.exception.status, 422)
        self.assertIn("spec.pytorchReplicaSpecs.Master.replicas", ctx.exception.body)

    def test_conflict_on_stale_update(self):
        created = self.custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, job("py-c"))
        self.custom.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "py-c",
                                                   {"metadata": {"labels": {"x": "1"}}})
        stale = dict(created)
        stale["metadata"]["labels"] = {"x": "2"}
        with self.assertRaises(ApiException) as ctx:
            self.custom.replace_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "py-c", stale)
        self.assertEqual(ctx.exception.status, 409)

    def test_watch_stream(self):
        base = self.custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)
        rv = base["metadata"]["resourceVersion"]
        seen = []

        def consume():
            w = watch.Watch()
            for ev in w.stream(self.custom.list_namespaced_custom_object, GROUP, VERSION, "default",
                               PLURAL, resource_version=rv, timeout_seconds=120):
                seen.append((ev["type"], ev["object"]["metadata"]["name"]))
                if ev["type"] == "DELETED" and ev["object"]["metadata"]["name"] == "py-w":
                    w.stop()

        t = threading.Thread(target=consume)
        t.start()
        time.sleep(0.5)
        self.custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, job("py-w"))
        self.custom.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "py-w",
                                                   {"metadata": {"labels": {"step": "2"}}})
        self.custom.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "py-w")
        t.join(150)
        self.assertFalse(t.is_alive(), "watch did not end")
        # The job engine writes status too, so MODIFIED may come more than once.
        mine = [s[0] for s in seen if s[1] == "py-w"]
        self.assertEqual(mine[0], "ADDED")
        self.assertEqual(mine[-1], "DELETED")
        self.assertIn("MODIFIED", mine[1:-1])
        self.assertEqual(set(mine[1:-1]), {"MODIFIED"})

    def test_core_v1(self):
        names = [n.metadata.name for n in self.core.list_namespace().items]
        self.assertIn("default", names)
        self.assertIn("kube-system", names)
        pod = client.V1Pod(metadata=client.V1ObjectMeta(name="pp"),
                           spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]))
        created = self.core.create_namespaced_pod("default", pod)
        # the create response is the pod as stored: Pending until the runtime
        # has it (a pod without a command fails soon after, so read it here)
        self.assertEqual(created.status.phase, "Pending")
        pods = self.core.list_namespaced_pod("default")
        self.assertIn("pp", [p.metadata.name for p in pods.items])
        allpods = self.core.list_pod_for_all_namespaces()
        self.assertIn("pp", [p.metadata.name for p in allpods.items])
        self.assertIn(self.core.read_namespaced_pod("pp", "default").status.phase,
                      ("Pending", "Failed"))


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() else 1)
