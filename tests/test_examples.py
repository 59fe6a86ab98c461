"""The C and Java example clients (examples/) against motiond --sim over udpm.

Each example is built with its own Makefile into a temporary directory (the
lcm-gen code included), then run as a user would run it. A fresh daemon per
run keeps its last accepted life_count at -1, which the clients never pick.
The daemon's controller_status is the independent witness: it must show the
stand finished, taken from a command with the life_count the client printed.
Every test opens udpm:// sockets: tests/netns.sh only.
"""
from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import lcm
import pytest

from controller import msgs
from controller.robot.config import load_config, with_namespace

pytestmark = pytest.mark.udpm

ROOT = Path(__file__).resolve().parent.parent
CFG = load_config()
EXAMPLES = {"c": ("make", "cc"), "java": ("make", "javac", "java")}
RESPONSE = re.compile(r"response: mode (-?\d+) gait (-?\d+) switch_status (-?\d+) "
                      r"order_process_bar (-?\d+)$", re.MULTILINE)
LIFE_COUNT = re.compile(r"^sending mode 12 gait 0 life_count (-?\d+) ", re.MULTILINE)


@pytest.fixture(scope="module", params=sorted(EXAMPLES))
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's build/stand_client, built by `make` from examples/<lang>."""
    missing = [tool for tool in EXAMPLES[request.param] if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{request.param} example needs {', '.join(missing)} (not on PATH)")
    build = tmp_path_factory.mktemp(f"example-{request.param}")
    proc = subprocess.run(["make", "-C", str(ROOT / "examples" / request.param),
                           f"PYTHON={sys.executable}", f"BUILD={build}"],
                          capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return build / "stand_client"


class StatusWatch:
    """Collects motiond's controller_status in a thread."""

    def __init__(self, namespace: str = "") -> None:
        self.lcm = lcm.LCM(CFG.lcm.url("joint"))
        self.lcm.subscribe(with_namespace(CFG, namespace).lcm.channels["status"], self._on_status)
        self.status: list[msgs.controller_status_t] = []
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _on_status(self, _channel: str, data: bytes) -> None:
        with self.lock:
            self.status.append(msgs.controller_status_t.decode(data))

    def _spin(self) -> None:
        while self.running:
            self.lcm.handle_timeout(50)

    def since(self, start: int) -> list[msgs.controller_status_t]:
        with self.lock:
            return self.status[start:]

    def wait_for(self, predicate: Callable[[msgs.controller_status_t], bool], timeout: float,
                 start: int = 0) -> msgs.controller_status_t | None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for s in self.since(start):
                if predicate(s):
                    return s
            time.sleep(0.02)
        return None

    def close(self) -> None:
        self.running = False
        self.thread.join(1)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[StatusWatch]:
    yield from _daemon(tmp_path, "")


@pytest.fixture
def dog1(tmp_path: Path) -> Iterator[StatusWatch]:
    """A daemon started with --namespace dog1."""
    yield from _daemon(tmp_path, "dog1")


def _daemon(tmp_path: Path, namespace: str) -> Iterator[StatusWatch]:
    log_path = tmp_path / "motiond.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli.motiond", "--sim",
                                 "--log-level", "info", "--namespace", namespace],
                                cwd=ROOT, stderr=log, stdout=log)
        watch = StatusWatch(namespace)
        try:
            first = watch.wait_for(lambda s: True, 15)
            assert first is not None, log_path.read_text()
            assert proc.poll() is None, log_path.read_text()
            yield watch
        finally:
            watch.close()
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(5)


def run_client(client: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(client), "--cmd-url", CFG.lcm.url("command"),
                           "--resp-url", CFG.lcm.url("response"), *args],
                          capture_output=True, text=True, timeout=60, check=False)


def test_client_stands_the_robot(client, daemon):
    mark = len(daemon.since(0))
    t0 = time.monotonic()
    proc = run_client(client, "--timeout", "10")
    elapsed = time.monotonic() - t0
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert re.search(r"^done: mode 12 gait 0 at order_process_bar (9[5-9]|100) after ", proc.stdout,
                     re.MULTILINE), out
    responses = [tuple(map(int, m)) for m in RESPONSE.findall(proc.stdout)]
    mode, gait, _status, bar = responses[-1]
    assert (mode, gait) == (12, 0) and bar >= 95, out
    sending = LIFE_COUNT.search(proc.stdout)
    assert sending is not None, out
    life_count = int(sending.group(1))

    # The daemon saw the stand through, from this client's command. It keeps
    # mode 12 for 0.5 s after the last heartbeat: status comes at 10 Hz.
    stood = daemon.wait_for(lambda s: s.mode == 12 and s.progress >= 95, 0.4, mark)
    assert stood is not None, [(s.mode, s.progress) for s in daemon.since(mark)]
    assert stood.last_life_count == life_count
    assert stood.commands_accepted == 1
    print(f"{client.parent.name}: stood in {elapsed:.2f} s (client run time)")


def test_client_stands_a_namespaced_robot_with_the_prefix(client, dog1):
    """motiond --namespace dog1 takes commands on dog1/robot_control_cmd only."""
    proc = run_client(client, "--prefix", "dog1/", "--timeout", "10")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stood = dog1.wait_for(lambda s: s.mode == 12 and s.progress >= 95, 0.4)
    assert stood is not None and stood.commands_accepted == 1


def test_client_times_out_without_an_answer(client, daemon):
    """A prefix nothing listens on: no command reaches the daemon and no
    response comes back, so the client gives up with exit 3."""
    proc = run_client(client, "--prefix", "nobody/", "--timeout", "0.5")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 3, out
    assert "sending mode 12 gait 0 life_count" in proc.stdout and " on nobody/robot_control_cmd " in out
    assert re.search(r"^timeout: .*\(no response received\)$", proc.stdout, re.MULTILINE), out
    latest = daemon.wait_for(lambda s: True, 1.0, len(daemon.since(0)))
    assert latest is not None and latest.commands_accepted == 0 and latest.mode == 0
