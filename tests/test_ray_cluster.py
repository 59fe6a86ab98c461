"""The scorecard and the workers on a Ray cluster (issue 43): a head
started with `ray start --head --num-cpus 2` on 127.0.0.1 (TCP on the test
namespace's loopback, no multicast), driven as a user would: `motionctl
physics --ray ADDRESS` gives the same rows, figure for figure, as the local
processes; a task whose Ray worker dies is run again, one that kills it
twice is reported lost."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_workers

from controller.sim.workers import Lost, Workers

ROOT = Path(__file__).resolve().parent.parent
RAY = Path(sys.executable).with_name("ray")
# Two quick rows of CyberDog 2's card: a stand, a motion.
ROWS = ["stand up (12)", "motion (62/14) [friction 1]"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kill_session(sid: int) -> None:
    """SIGKILL every process of session `sid` (Ray's workers are in their
    own process groups, in the head's session), until none is left."""
    for _ in range(50):
        pids = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":      # state, ppid, pgrp, session
                pids.append(int(stat.parent.name))
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    raise AssertionError(f"processes of the Ray session {sid} outlived 50 SIGKILLs")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A one-node Ray cluster of 2 CPUs; its address. Its session files in
    a short temporary folder (Ray's sockets need a short path)."""
    assert RAY.exists(), f"{RAY} is missing: Ray is installed by `make` (pip install 'ray>=2.9')"
    tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    port = free_port()
    log = open(Path(tmp) / "start.log", "w")     # noqa: SIM115 - the head writes it until the end
    head = subprocess.Popen([str(RAY), "start", "--head", "--block", "--num-cpus", "2",
                             "--node-ip-address", "127.0.0.1", "--port", str(port), "--temp-dir", tmp,
                             "--include-dashboard", "false", "--disable-usage-stats"],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while "Ray runtime started" not in (Path(tmp) / "start.log").read_text():
            assert head.poll() is None, (Path(tmp) / "start.log").read_text()
            assert time.monotonic() < deadline, "the Ray head did not start within 90 s"
            time.sleep(0.5)
        yield address
    finally:
        import ray
        ray.shutdown()
        # `ray start --block` takes some 30 s over a SIGTERM; the cluster is
        # this session's processes (head, GCS, raylet, workers): end them all.
        kill_session(head.pid)
        head.wait(10)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def scorecard(tmp_path: Path, name: str, *extra: str) -> dict:
    out = tmp_path / f"{name}.json"
    args = [sys.executable, "-m", "controller.cli.motionctl", "physics", "--robot", "cyberdog2",
            *[a for row in ROWS for a in ("--only", row)], "-o", str(out), *extra]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return {"result": json.loads(out.read_text()), "stderr": done.stderr}


def test_the_scorecard_on_a_ray_cluster_gives_the_local_rows(cluster: str, tmp_path: Path) -> None:
    local = scorecard(tmp_path, "local", "--jobs", "2")
    on_ray = scorecard(tmp_path, "ray", "--ray", cluster)
    assert f"on the Ray cluster at {cluster} (2 CPUs)" in on_ray["stderr"]
    rows = {r["row"]: r for r in local["result"]["rows"]}
    assert sorted(rows) == sorted(ROWS)
    for r in on_ray["result"]["rows"]:
        mine = rows[r["row"]]
        assert r["error"] is None, r["error"]
        # Physics is deterministic: the same row is the same run wherever it ran.
        assert r["metrics"] == mine["metrics"], r["row"]
        assert r["passed"] == mine["passed"]
    # Progress streamed back a line per row as it finished.
    assert sum(line.startswith("[") and "cyberdog2" in line for line in on_ray["stderr"].splitlines()) == len(ROWS)


def test_a_dying_ray_worker_is_retried_once_then_its_task_reported_lost(cluster: str, tmp_path: Path) -> None:
    import ray
    ray.cloudpickle.register_pickle_by_value(test_workers)    # the workers do not import tests/
    marker = str(tmp_path / "died")
    w = Workers(2, ray=cluster)
    assert w.map(test_workers.die_once, [(x, marker) for x in range(6)]) == [x * x for x in range(6)]
    assert Path(marker).exists(), "the task never killed its worker: nothing was tested"
    out = w.map(test_workers.die_always, range(5))
    assert isinstance(out[2], Lost) and "died 2 times" in out[2].why
    assert [o for i, o in enumerate(out) if i != 2] == [0, 1, 3, 4]
    with pytest.raises(ValueError, match="a task's own error"):
        w.map(test_workers.raises, range(3))


def test_the_optimiser_on_a_ray_cluster_makes_the_local_runs_motion(cluster: str, tmp_path: Path) -> None:
    """The same seed, the same candidates, the same rollouts: the same file."""
    made = {}
    for name, extra in (("local", ["--workers", "2"]), ("ray", ["--ray", cluster])):
        out = tmp_path / f"{name}.yaml"
        done = subprocess.run([sys.executable, "-m", "controller.cli.motionctl", "optimise", "yaw-left",
                               "-o", str(out), "--generations", "2", "--population", "4", "--nominal",
                               *extra], cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "lost" not in done.stderr
        made[name] = out.read_text()
    assert "  evaluations: 8\n" in made["local"], made["local"][:2000]
    assert made["ray"] == made["local"]
