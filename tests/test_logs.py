"""controller/logs.py: the three renderings of stderr and the level filter.

The journal case uses what systemd really gives a service: a connected
AF_UNIX stream socket as stderr, named by JOURNAL_STREAM=<device>:<inode>.
"""
from __future__ import annotations

import io
import json
import os
import socket

import pytest
import structlog
from harness import Rig

from controller import logs
from controller.cli.motiond import build_parser
from controller.logs import configure, get_logger


@pytest.fixture(autouse=True)
def restore_structlog():
    saved, level = structlog.get_config(), logs._min_level
    yield
    structlog.configure(**saved)
    logs._min_level = level


@pytest.fixture
def journal():
    """A stream socket like journald's, the stream the service writes to, and
    the reader's end."""
    service_end, journald_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    stream = service_end.makefile("w")
    journald_end.settimeout(5)
    yield stream, journald_end
    stream.close()
    service_end.close()
    journald_end.close()


def stream_id(fileno: int) -> str:
    st = os.fstat(fileno)
    return f"{st.st_dev}:{st.st_ino}"


def read_lines(sock: socket.socket, count: int) -> list[str]:
    data = b""
    while data.count(b"\n") < count:
        data += sock.recv(65536)
    return data.decode().splitlines()


def log_every_level() -> None:
    log = get_logger("test")
    log.debug("tick_detail", tick=1)
    log.info("mode_change", to="RECOVERY_STAND")
    log.warning("command_timeout", fallback_mode=7)
    log.error("config_invalid", error="bad")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("internal_error", count=1)


def test_journal_stream_gets_priority_prefixes_and_one_json_line_per_event(journal):
    stream, journald = journal
    configure("debug", stream, environ={"JOURNAL_STREAM": stream_id(stream.fileno())})
    log_every_level()
    lines = read_lines(journald, 5)
    assert [line[:3] for line in lines] == ["<7>", "<6>", "<4>", "<3>", "<3>"]
    events = [json.loads(line[3:]) for line in lines]
    assert [e["event"] for e in events] == ["tick_detail", "mode_change", "command_timeout",
                                             "config_invalid", "internal_error"]
    assert events[1]["to"] == "RECOVERY_STAND" and events[2]["fallback_mode"] == 7
    # The traceback stays inside its event's line (journald splits on newlines).
    assert "ValueError: boom" in events[4]["exception"]


@pytest.mark.parametrize("value", ["other", "12", "1:2:3", "x:y", ""])
def test_other_stream_or_bad_value_gives_plain_json(journal, value):
    stream, journald = journal
    if value == "other":
        # Inherited from a parent whose stderr was the journal; ours is not.
        r, w = os.pipe()
        value = stream_id(r)
        os.close(r)
        os.close(w)
    configure("info", stream, environ={"JOURNAL_STREAM": value})
    get_logger("test").warning("command_timeout", fallback_mode=7)
    (line,) = read_lines(journald, 1)
    assert line.startswith("{")
    assert json.loads(line)["event"] == "command_timeout"


def test_a_stream_without_a_file_descriptor_is_not_the_journal():
    buf = io.StringIO()
    configure("info", buf, environ={"JOURNAL_STREAM": "1:1"})
    get_logger("test").info("start", robot="cyberdog2")
    assert json.loads(buf.getvalue())["robot"] == "cyberdog2"


def test_a_terminal_gets_the_readable_console():
    controller_end, terminal_end = os.openpty()
    stream = os.fdopen(terminal_end, "w")
    try:
        configure("info", stream, environ={})
        get_logger("test").info("mode_change", to="RECOVERY_STAND", tick=42)
        stream.flush()
        text = os.read(controller_end, 65536).decode()
    finally:
        stream.close()
        os.close(controller_end)
    assert "mode_change" in text and "RECOVERY_STAND" in text and "tick" in text
    assert "{" not in text and '"event"' not in text
    assert "\x1b[" in text                       # coloured: it is a terminal


@pytest.mark.parametrize("level, shown", [
    ("warning", ["command_timeout", "config_invalid", "internal_error"]),
    ("info", ["mode_change", "command_timeout", "config_invalid", "internal_error"]),
])
def test_log_level_option_filters(level, shown):
    args = build_parser().parse_args(["--log-level", level])
    buf = io.StringIO()
    configure(args.log_level, buf, environ={})
    log_every_level()
    assert [json.loads(line)["event"] for line in buf.getvalue().splitlines()] == shown


@pytest.mark.parametrize("level", ["debug", "info"])
def test_each_new_command_is_a_debug_line_only_at_debug_level(level):
    """The tick skips building the debug event unless it is written
    (logs.debug_enabled): at --log-level debug each accepted command is a
    line, at info there is none."""
    buf = io.StringIO()
    configure(level, buf, environ={})
    rig = Rig()
    rig.send(12)
    rig.tick()
    rig.send(11, gait_id=3)
    rig.tick()
    lines = [json.loads(line) for line in buf.getvalue().splitlines()]
    commands = [(e["mode"], e["gait"]) for e in lines if e["event"] == "command"]
    assert commands == ([(12, 0), (11, 3)] if level == "debug" else [])
    assert logs.debug_enabled() == (level == "debug")
