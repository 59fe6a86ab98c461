"""The hold: one process that keeps a command's heartbeat between motionctl
invocations (`motionctl hold`), so that a stand typed on one line is still
held when the trot is typed on the next.

The CyberDog 2 protocol lies the robot down 0.5 s after the last command
(SPEC §2.5), and each `motionctl send` keeps its command alive only while it
runs. A hold listens on a local socket (`hold_path`, one per user and per
controller: its command URL and channel) for the commands of `motionctl
send` and `motionctl play`: it gives each a fresh life_count, publishes it
and repeats it every 100 ms, as one client would. So two streams never fight
over the robot: while a hold runs, send and play hand their commands to it.

It stops repeating (and the controller lies the robot down) when told to
(`motionctl hold --stop`, Ctrl-C, SIGTERM) or after `idle` seconds without a
new command, and says so.

Requests are one JSON line each, answered by one JSON line:
  {"op": "send", "fields": {...}}           -> {"ok", "life_count", "pid"}
  {"op": "pause"}                           -> {"ok", "pid"}   (play takes over)
  {"op": "adopt", "fields", "life_count"}   -> {"ok", "pid"}   (play hands back)
  {"op": "status"}                          -> {"ok", "pid", "command", "idle_left_s"}
  {"op": "stop"}                            -> {"ok", "pid"}
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import select
import socket
import tempfile
import zlib
from pathlib import Path
from typing import Any, TextIO

from controller.cli.client import (
    POLL_S,
    Link,
    ModeNames,
    describe_command,
    emit,
    last_life_count,
    next_life_count,
)
from controller.motion.sequence import FieldError, Fields, build_command
from controller.robot.config.lcm import LcmConfig

DEFAULT_IDLE_S = 120.0      # a held command lapses after this long without a new one
REQUEST_TIMEOUT_S = 0.2     # a request line must arrive within this (the heartbeat waits)
MAX_REQUEST = 4096


class HoldError(RuntimeError):
    """The hold refused a request, or answered nothing usable."""


def hold_path(lcm: LcmConfig) -> Path:
    """The hold's socket for this controller: in $XDG_RUNTIME_DIR (else the
    temporary directory), named by the user and the command URL and channel."""
    where = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    key = f"{lcm.url('command')} {lcm.channels['command']}".encode()
    return Path(where) / f"motionctl-hold-{os.getuid()}-{zlib.crc32(key):08x}.sock"


def request(path: Path, message: dict[str, Any], timeout: float = 2.0) -> dict[str, Any] | None:
    """Ask the hold at `path`; None when no hold runs there (a stale socket
    file is removed). HoldError when it answers with an error."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(path))
    except FileNotFoundError:
        sock.close()
        return None
    except ConnectionRefusedError:        # its process is gone
        sock.close()
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    with sock:
        sock.sendall(json.dumps(message).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(MAX_REQUEST)
            if not chunk:
                break
            data += chunk
    try:
        answer = json.loads(data)
    except ValueError:
        raise HoldError(f"the hold at {path} answered {data[:80]!r}") from None
    if not isinstance(answer, dict):
        raise HoldError(f"the hold at {path} answered {answer!r}")
    if not answer.get("ok"):
        raise HoldError(str(answer.get("error", "refused")))
    return answer


def json_fields(fields: Fields) -> dict[str, Any]:
    """Command fields as JSON can carry them (tuples as lists)."""
    return {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in fields.items()}


class Hold:
    """The keeper: serves requests on `path` and heart-beats the held command
    on `link`. `run` returns when stopped or idle."""

    def __init__(self, link: Link, path: Path, names: ModeNames, out: TextIO,
                 idle_s: float = DEFAULT_IDLE_S, rng: random.Random | None = None) -> None:
        self.link = link
        self.path = path
        self.names = names
        self.out = out
        self.idle_s = idle_s
        self.rng = rng or random.Random()
        self.life: int | None = None
        self.command: str | None = None       # what is held, in words
        self.commanded_at = link.now()
        self.stop = False
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def open(self) -> None:
        """Bind the socket; HoldError if another hold serves this controller."""
        if request(self.path, {"op": "status"}) is not None:
            raise HoldError(f"a hold already runs for this controller ({self.path})")
        # Bound under another name and moved into place once it listens: a
        # socket file that is bound but not listening reads as a dead hold's,
        # which `request` removes, and `hold --start` polls it while this
        # starts (it once removed the file between the bind and the chmod).
        # (a name no longer than the real one: a socket path has 107 bytes)
        staged = self.path.with_name(f".{os.getpid():x}.sock")
        with contextlib.suppress(FileNotFoundError):
            staged.unlink()
        self.server.bind(str(staged))
        os.chmod(staged, 0o600)
        self.server.listen(8)
        os.replace(staged, self.path)
        self.server.setblocking(False)
        self.life = last_life_count(self.link)

    def close(self) -> None:
        self.link.stop_heartbeat()
        self.server.close()
        with contextlib.suppress(OSError):
            self.path.unlink()

    def run(self) -> str:
        """Serve until stopped; why it ended."""
        emit(self.out, f"hold: keeping the heartbeat of the commands `motionctl send` and `play` give it "
                       f"(pid {os.getpid()}); it lets go after {self.idle_s:g} s without a new one")
        try:
            while not self.stop:
                self.link.poll()
                if self.command is not None and self.link.now() - self.commanded_at >= self.idle_s:
                    return (f"no new command for {self.idle_s:g} s: stopped the heartbeat of "
                            f"{self.command}; the controller lies the robot down 0.5 s from now")
                ready, _, _ = select.select([self.server], [], [], 0)
                if ready:
                    self._serve_one()
                else:
                    self.link.sleep(POLL_S)
            return "stopped: the controller lies the robot down 0.5 s after the last heartbeat"
        finally:
            self.close()

    def _serve_one(self) -> None:
        try:
            conn, _ = self.server.accept()
        except BlockingIOError:
            return
        with conn:
            conn.settimeout(REQUEST_TIMEOUT_S)
            try:
                data = b""
                while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
                    chunk = conn.recv(MAX_REQUEST)
                    if not chunk:
                        break
                    data += chunk
                answer = self.answer(data)
                conn.sendall(json.dumps(answer).encode() + b"\n")
            except OSError:
                pass      # the asker went away; the heartbeat goes on

    def answer(self, data: bytes) -> dict[str, Any]:
        """The reply to one request line."""
        try:
            req = json.loads(data)
            op = req["op"]
        except (ValueError, KeyError, TypeError):
            return {"ok": False, "error": f"not a request: {data[:80]!r}"}
        pid = os.getpid()
        try:
            if op == "send":
                return {"ok": True, "pid": pid, "life_count": self.take(req["fields"])}
            if op == "adopt":
                self.take(req["fields"], int(req["life_count"]))
                return {"ok": True, "pid": pid}
            if op == "pause":
                self.link.stop_heartbeat()
                self.command = None
                emit(self.out, "hold: paused (motionctl play drives the robot)")
                return {"ok": True, "pid": pid}
            if op == "status":
                left = None if self.command is None else \
                    max(0.0, self.idle_s - (self.link.now() - self.commanded_at))
                return {"ok": True, "pid": pid, "command": self.command, "idle_left_s": left}
            if op == "stop":
                self.stop = True
                return {"ok": True, "pid": pid}
        except (FieldError, KeyError, TypeError, ValueError) as exc:
            return {"ok": False, "error": f"{op}: {exc}"}
        return {"ok": False, "error": f"unknown op {op!r}"}

    def take(self, fields: Fields, life: int | None = None) -> int:
        """Hold `fields` from now: with a fresh life_count (one past the
        controller's last accepted, as `send` chooses), or with `life` as
        given (play's last command, already accepted)."""
        if life is None:
            life = next_life_count(self.link.status, self.life, self.rng)
        msg = build_command(fields, life)
        self.link.send(msg)
        self.life = life
        self.command = describe_command(fields, self.names)
        self.commanded_at = self.link.now()
        emit(self.out, f"hold: {self.command}, life_count {life}")
        return life
