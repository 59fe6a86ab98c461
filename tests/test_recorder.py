"""`motionctl record`'s logger (controller/service/recorder.py): nothing lost
while it is kept off the CPU, only motiond's channels, and its file series
(split by size, or rotated with --keep). The sockets are udpm: `make test`
runs inside its own network namespace (tests/netns.sh)."""
from __future__ import annotations

import time
from pathlib import Path

import lcm
import pytest

from controller.robot.config import load_config
from controller.service.recorder import Recorder
from controller.service.recording import PortLog, events, port_files

CFG = load_config()
pytestmark = pytest.mark.udpm
CH = CFG.lcm.channels


def test_a_recorder_kept_off_the_cpu_loses_nothing(tmp_path: Path) -> None:
    """5000 messages arrive while the recorder's loop does not run (as when a
    busy machine keeps it off the CPU): all are recorded, in order, on their
    port's file. LCM's default queue (lcm-logger's) would keep 30 of them."""
    base = tmp_path / "rec"
    recorder = Recorder(CFG.lcm, base, split_bytes=10**9, keep=0)
    tx = {port: lcm.LCM(CFG.lcm.url(port)) for port in CFG.lcm.ports}
    sent = dict.fromkeys(CFG.lcm.ports, 0)
    for i in range(5000):
        port, channel = ("joint", CH["joint_cmd"]) if i % 5 else ("command", CH["command"])
        tx[port].publish(channel, i.to_bytes(4, "big") + bytes(200))
        sent[port] += 1
        if i % 500 == 0:
            time.sleep(0.005)      # within the socket buffer, as a 500 Hz daemon would send
    tx["joint"].publish("someone_else/joint_cmd", bytes(8))     # not motiond's: not recorded
    time.sleep(0.3)
    recorder.run(0.5)
    recorder.close()
    assert recorder.counts == sent
    files = port_files(base, list(CFG.lcm.ports))
    for port, channel in (("joint", CH["joint_cmd"]), ("command", CH["command"])):
        got = list(events(files[port]))
        assert {e.channel for e in got} == {channel}
        order = [int.from_bytes(e.data[:4], "big") for e in got]
        assert len(order) == sent[port] and order == sorted(order)


def _write(log: PortLog, n: int) -> None:
    for i in range(n):
        log.write(1000 + i, "c", i.to_bytes(4, "big") + bytes(67))   # 100 bytes an event on file


def _numbers(path: Path) -> list[int]:
    return [int.from_bytes(e.data[:4], "big") for e in events([path])]


def test_parts_split_by_size_and_number_up_from_00(tmp_path: Path) -> None:
    log = PortLog(tmp_path / "rec", "joint", split_bytes=1000)
    _write(log, 25)
    log.close()
    parts = sorted(tmp_path.iterdir())
    assert [p.name for p in parts] == ["rec.joint.lcmlog.00", "rec.joint.lcmlog.01", "rec.joint.lcmlog.02"]
    assert [_numbers(p) for p in parts] == [list(range(0, 10)), list(range(10, 20)), list(range(20, 25))]
    assert all(p.stat().st_size == 100 * len(_numbers(p)) for p in parts)


def test_keep_rotates_the_newest_parts_newest_as_0(tmp_path: Path) -> None:
    log = PortLog(tmp_path / "rec", "joint", split_bytes=1000, keep=2)
    _write(log, 45)           # parts of 10 events: 0-9, 10-19, 20-29, 30-39, 40-44
    log.close()
    parts = {p.name: _numbers(p) for p in tmp_path.iterdir()}
    assert parts == {"rec.joint.lcmlog.0": list(range(40, 45)), "rec.joint.lcmlog.1": list(range(30, 40))}
