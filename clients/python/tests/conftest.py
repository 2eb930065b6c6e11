"""Real daemons for the tests: the binary named by $KEYVAULTD, started in a temporary
folder as scripts/fuzz-api.sh starts one (a policy with a cheap KDF, --data-dir,
--socket, --policy and an embedded relay, --relay sqlite:PATH). Devices made by one
`circle` share that relay file, so they can enroll into each other's accounts."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time

import pytest

from keyvault_client import KeyVault

MAX_WAIT = 5  # [limits] max_wait_seconds: held reads in these tests stay short

POLICY = f"""# Tests only: an Argon2id cost below one MiB, so account creations and unlocks are cheap.
[kdf-test]
passes = 1
memory_kib = 64

[limits]
max_wait_seconds = {MAX_WAIT}

[[rule]]
uid = "self"
accounts = ["*"]
allow = ["*"]
"""


class Device:
    def __init__(self, root: str, relay: str, name: str):
        self.root = os.path.join(root, name)
        os.makedirs(os.path.join(self.root, "policy"))
        with open(os.path.join(self.root, "policy", "test.toml"), "w") as f:
            f.write(POLICY)
        self.socket = os.path.join(self.root, "kv.sock")
        self.log_path = os.path.join(self.root, "daemon.log")
        binary = os.environ["KEYVAULTD"]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [binary, "--data-dir", os.path.join(self.root, "data"), "--socket", self.socket,
                 "--policy", os.path.join(self.root, "policy"), "--relay", f"sqlite:{relay}"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            )
        self.client = KeyVault(self.socket)
        deadline = time.monotonic() + 20
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"keyvaultd exited {self.process.returncode}: {self.log()}")
            try:
                if self.client.http.get("/v1/health").status_code == 200:
                    break
            except Exception:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"keyvaultd did not answer /v1/health: {self.log()}")
            time.sleep(0.05)

    def log(self) -> str:
        with open(self.log_path, errors="replace") as f:
            return f.read()[-4000:]

    def request(self, method: str, path: str, json=None):
        """A raw request on the checked transport: (status, body, response)."""
        response = self.client.http.request(method, path, json=json)
        return response.status_code, response.json(), response

    def stop(self) -> None:
        self.client.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Circle:
    """Daemons sharing one embedded relay (a SQLite file)."""

    def __init__(self):
        # Short: a socket path is at most 107 bytes.
        self.root = tempfile.mkdtemp(prefix="kv-py-", dir="/tmp")
        self.relay = os.path.join(self.root, "relay.sqlite")
        self.devices = []

    def device(self) -> Device:
        device = Device(self.root, self.relay, f"d{len(self.devices)}")
        self.devices.append(device)
        return device

    def close(self) -> None:
        for device in self.devices:
            device.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def circle():
    if not os.environ.get("KEYVAULTD"):
        pytest.fail("set KEYVAULTD to a keyvaultd binary (scripts/python-client.sh test KEYVAULTD)")
    made = Circle()
    yield made
    made.close()


@pytest.fixture
def device(circle) -> Device:
    return circle.device()
