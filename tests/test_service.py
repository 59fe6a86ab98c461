"""Running motiond as a systemd service: the unit file as the Makefile
installs it, and the real daemon under a stand-in for systemd (a notification
socket, the watchdog variables and a journal-like stderr socket).

systemd itself does not run here: `systemd-analyze verify` checks a unit
offline, without PID 1 and inside a network namespace alike.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path

import pytest

from controller.robot.config import load_config

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "config" / "systemd" / "motiond.service"
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)   # Linux; Python lacks the name
TICK_NS = 2_000_000


def render(out: Path, **variables: str) -> str:
    """The unit as `make install-service` writes it, with these variables."""
    cmd = ["make", "-s", "-C", str(ROOT), "service-unit", f"UNIT_OUT={out}"]
    cmd += [f"{k}={v}" for k, v in variables.items()]
    # Neither the caller's environment nor a parent make (`make test PREFIX=...`
    # passes its overrides down in MAKEFLAGS) may change the defaults.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PREFIX", "CONFDIR", "UNITDIR", "SERVICE_USER", "ROBOT", "UNIT_OUT",
                        "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return out.read_text()


def stub_prefix(tmp_path: Path) -> Path:
    """An install prefix whose bin/motiond is a stand-in that exits 0."""
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    stub = prefix / "bin" / "motiond"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    return prefix


def settings(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line and not line.startswith(("#", "[")):
            key, _, value = line.partition("=")
            out.setdefault(key, []).append(value)
    return out


def test_unit_passes_systemd_analyze_verify_without_a_word(tmp_path):
    """verify checks every key and value, and that ExecStart's program exists
    and is executable. The unit is rendered with PREFIX pointing at a stand-in
    motiond, so ExecStart's path is the only thing that differs from the file
    in the repository."""
    prefix = stub_prefix(tmp_path)
    unit = tmp_path / "unit" / "motiond.service"
    text = render(unit, PREFIX=str(prefix))
    original = UNIT.read_text().splitlines()
    changed = [(a, b) for a, b in zip(original, text.splitlines()) if a != b]
    assert len(text.splitlines()) == len(original)
    assert [b for _, b in changed] == [
        f"ExecStart={prefix}/bin/motiond --config /etc/motiond/config/cyberdog2.yaml"]
    verify(unit)


def verify(unit: Path) -> None:
    """systemd-analyze verify, which reads the drop-ins in unit's directory too."""
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing: `make system-deps` installs it (package systemd)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYSTEMD_")}
    env["SYSTEMD_LOG_LEVEL"] = "info"      # warnings and errors show; nothing else is printed
    result = subprocess.run([analyze, "verify", "--man=no", str(unit)], check=False,
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == "", \
        result.stdout + result.stderr


def test_the_documented_cpu_latency_drop_in_passes_verify(tmp_path):
    """docs/SERVICE.md "CPU idle latency": the drop-in it prints, taken from
    the text, changes what it says and passes verify with the unit (a key
    verify does not know fails it: tested by the second drop-in)."""
    doc = (ROOT / "docs" / "SERVICE.md").read_text()
    found = re.search(r"printf '(\[Service\][^']*)'\s*\\\s*\n\s*\| sudo tee (\S+)", doc)
    assert found, "the drop-in's printf is gone from docs/SERVICE.md"
    drop_in = found.group(1).replace("\\n", "\n")
    assert found.group(2) == "/etc/systemd/system/motiond.service.d/cpu-latency.conf"
    assert settings(drop_in) == {"PrivateDevices": ["no"], "DevicePolicy": ["closed"],
                                 "DeviceAllow": ["/dev/cpu_dma_latency w"]}
    unit = tmp_path / "unit" / "motiond.service"
    render(unit, PREFIX=str(stub_prefix(tmp_path)))
    (unit.parent / "motiond.service.d").mkdir()
    conf = unit.parent / "motiond.service.d" / "cpu-latency.conf"
    conf.write_text(drop_in)
    verify(unit)
    conf.write_text(drop_in + "NoSuchKey=1\n")
    with pytest.raises(AssertionError, match="NoSuchKey"):
        verify(unit)


def test_install_variables_reach_the_unit(tmp_path):
    default = render(tmp_path / "a.service")
    assert default == UNIT.read_text()
    custom = settings(render(tmp_path / "b.service", PREFIX="/srv/md", CONFDIR="/etc/robot",
                             ROBOT="nao22", SERVICE_USER="robot"))
    assert custom["ExecStart"] == ["/srv/md/bin/motiond --config /etc/robot/config/nao22.yaml"]
    assert custom["User"] == ["robot"] and custom["Group"] == ["robot"]
    # The config the default unit names is the repository's, where install copies it.
    config = settings(default)["ExecStart"][0].split("--config ")[1]
    assert load_config(ROOT / Path(config).relative_to("/etc/motiond")).robot == "cyberdog2"


def test_unit_leaves_real_time_and_the_lcm_network_alone():
    s = settings(UNIT.read_text())
    assert s["Type"] == ["notify"] and s["NotifyAccess"] == ["main"]
    assert s["CPUSchedulingPolicy"] == ["fifo"]
    assert int(s["LimitRTPRIO"][0]) >= int(s["CPUSchedulingPriority"][0]) > 0
    # RestrictRealtime= would forbid SCHED_FIFO; PrivateNetwork= would cut LCM off.
    assert s.get("RestrictRealtime", ["no"]) == ["no"]
    assert s.get("PrivateNetwork", ["no"]) == ["no"]
    assert "AF_INET" in s["RestrictAddressFamilies"][0].split()
    assert "AF_UNIX" in s["RestrictAddressFamilies"][0].split()   # the notification socket


# -- the daemon under a stand-in for systemd (opens udpm:// sockets) -----------------

def receive(sock: socket.socket, timeout: float) -> tuple[int, bytes] | None:
    """One datagram and the kernel's send time of it (ns), or None."""
    sock.settimeout(timeout)
    try:
        data, ancillary, _, _ = sock.recvmsg(4096, 1024)
    except TimeoutError:
        return None
    for level, kind, value in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            sec, nsec = int.from_bytes(value[:8], sys.byteorder), int.from_bytes(value[8:16], sys.byteorder)
            return sec * 1_000_000_000 + nsec, data
    raise AssertionError("no timestamp on the datagram")


@pytest.mark.udpm
@pytest.mark.realtime
def test_daemon_under_fake_systemd(tmp_path):
    """READY after start, WATCHDOG every half period from then on, journal
    log lines, STOPPING on SIGTERM and exit 0."""
    watchdog_usec = 200_000
    interval_ns = watchdog_usec * 1000 // 2
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    service_end, journald = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    st = os.fstat(service_end.fileno())
    env = dict(os.environ, NOTIFY_SOCKET=str(tmp_path / "notify"),
               WATCHDOG_USEC=str(watchdog_usec), JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli.motiond", "--sim"],
                            cwd=ROOT, env=env, stderr=service_end.fileno(), stdout=subprocess.DEVNULL)
    service_end.close()
    try:
        first = receive(notify, 20)
        assert first is not None, "no READY=1 within 20 s"
        assert first[1].startswith(b"READY=1\nSTATUS=" + load_config().robot.encode())
        pings: list[int] = []
        window_end = time.monotonic() + 1.5
        while time.monotonic() < window_end:
            got = receive(notify, 1.0)
            assert got is not None, f"no datagram for 1 s after {len(pings)} pings"
            assert got[1].startswith(b"WATCHDOG=1"), got
            pings.append(got[0])
        proc.send_signal(signal.SIGTERM)
        rest = []
        while (got := receive(notify, 5)) is not None:
            rest.append(got[1])
            if got[1].startswith(b"STOPPING=1"):
                break
        assert rest and rest[-1] == b"STOPPING=1", rest
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        notify.close()
    gaps = [b - a for a, b in pairwise(pings)]
    print(f"{len(pings)} pings in 1.5 s; gaps {min(gaps) / 1e6:.3f} to {max(gaps) / 1e6:.3f} ms")
    assert len(pings) >= 8
    # Never earlier than half the period (less a tick of timer and send jitter)
    # and always well inside the watchdog period, so systemd never fires.
    assert min(gaps) >= interval_ns - TICK_NS
    assert max(gaps) < watchdog_usec * 1000

    journald.settimeout(5)
    data = b""
    while chunk := journald.recv(65536):
        data += chunk
    journald.close()
    lines = data.decode().splitlines()
    assert lines and all(re.match(r"<[0-7]>\{", line) for line in lines), lines
    events = {json.loads(line[3:])["event"]: line[:3] for line in lines}
    for event in ("start", "ready", "stop_requested", "shutdown"):
        assert events.get(event) == "<6>", (event, lines)
    ready = next(json.loads(line[3:]) for line in lines if '"ready"' in line)
    assert ready["notify"] is True and ready["watchdog_ms"] == watchdog_usec // 1000


@pytest.mark.udpm
@pytest.mark.parametrize("level, start_logged", [("warning", False), ("info", True)])
def test_daemon_log_level(level, start_logged):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "JOURNAL_STREAM")}
    result = subprocess.run([sys.executable, "-m", "controller.cli.motiond", "--sim",
                             "--ticks", "50", "--log-level", level],
                            check=False, cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    logged = [json.loads(line) for line in result.stderr.splitlines()]
    events = [e["event"] for e in logged]
    assert ("start" in events) is start_logged and ("shutdown" in events) is start_logged
    if level == "warning":
        assert all(e["level"] in ("warning", "error") for e in logged), logged
