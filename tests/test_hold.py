"""`motionctl hold` (controller/cli/hold.py) and the mode words of `send`
(controller/cli/names.py), on the fake controller of test_motionctl: no LCM.
The hold's own socket is a local Unix socket in the test's directory."""
from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from test_motionctl import CFG, NAMES, FakeClock, FakeController, make_link

from controller.cli import motionctl as mc
from controller.cli import send_cmd
from controller.cli.hold import Hold, HoldError, request
from controller.cli.names import resolve_mode


def make_hold(tmp_path: Path, idle_s: float = 10.0, last_life: int = 5) -> tuple[Hold, FakeController]:
    clock = FakeClock()
    ctl = FakeController(clock, last_life_count=last_life)
    hold = Hold(make_link(ctl), tmp_path / "h.sock", NAMES, io.StringIO(), idle_s=idle_s)
    hold.open()
    return hold, ctl


def ask(hold: Hold, **req: object) -> dict:
    return hold.answer(json.dumps(req).encode())


def run_for(hold: Hold, seconds: float) -> None:
    end = hold.link.now() + seconds
    while hold.link.now() < end:
        hold.link.poll()
        hold.link.sleep(0.01)


def test_the_hold_gives_each_command_a_fresh_life_count_and_keeps_it_alive(tmp_path: Path) -> None:
    hold, ctl = make_hold(tmp_path)
    assert hold.life == 5                        # learnt from controller_status
    assert ask(hold, op="send", fields={"mode": 12})["life_count"] == 6
    run_for(hold, 1.0)
    assert ask(hold, op="send", fields={"mode": 11, "gait_id": 3, "vel_des": [0.3, 0, 0]})["life_count"] == 7
    run_for(hold, 1.0)
    assert [(c.mode, c.gait_id, c.life_count) for _, c in ctl.accepted] == [(12, 0, 6), (11, 3, 7)]
    beats = [t for t, c in ctl.published if c.life_count == 6]
    assert len(beats) == 10 and max(b - a for a, b in zip(beats, beats[1:])) <= 0.11   # 100 ms heartbeat
    status = ask(hold, op="status")
    assert status["command"].startswith("LOCOMOTION (11) gait 3") and status["idle_left_s"] == pytest.approx(9.0)
    hold.close()


def test_the_hold_lets_go_after_idle_seconds_and_on_stop(tmp_path: Path) -> None:
    hold, ctl = make_hold(tmp_path, idle_s=3.0)
    ask(hold, op="send", fields={"mode": 12})
    why = hold.run()
    assert why.startswith("no new command for 3 s: stopped the heartbeat of RECOVERY_STAND (12)")
    last = ctl.published[-1][0]
    assert last == pytest.approx(3.0, abs=0.11)          # nothing sent after letting go
    assert not (tmp_path / "h.sock").exists()


def test_play_pauses_the_hold_and_hands_it_its_last_command(tmp_path: Path) -> None:
    hold, ctl = make_hold(tmp_path)
    ask(hold, op="send", fields={"mode": 12})
    ask(hold, op="pause")
    n = len(ctl.published)
    run_for(hold, 1.0)
    assert len(ctl.published) == n                        # paused: the player's heartbeat alone
    ask(hold, op="adopt", fields={"mode": 21, "contact": 15}, life_count=40)
    run_for(hold, 0.5)
    assert {c.life_count for _, c in ctl.published[n:]} == {40}   # held as it was, not re-sent as new
    hold.close()


@pytest.mark.parametrize("req, error", [
    (b"not json", "not a request"),
    (b'{"op": "send", "fields": {"mode": 300}}', "send: mode: 300 is outside the int8 range"),
    (b'{"op": "send"}', "send: 'fields'"),
    (b'{"op": "jump"}', "unknown op 'jump'"),
])
def test_a_bad_request_is_refused_and_the_heartbeat_goes_on(tmp_path: Path, req: bytes, error: str) -> None:
    hold, ctl = make_hold(tmp_path)
    ask(hold, op="send", fields={"mode": 12})
    answer = hold.answer(req)
    assert answer["ok"] is False and error in answer["error"]
    run_for(hold, 0.3)
    assert ctl.published[-1][1].life_count == 6 and ctl.published[-1][1].mode == 12
    hold.close()


def test_requests_over_the_socket_and_a_second_hold_refused(tmp_path: Path) -> None:
    hold, _ = make_hold(tmp_path, idle_s=1e9)
    thread = threading.Thread(target=hold.run)
    thread.start()
    path = tmp_path / "h.sock"
    try:
        answer = request(path, {"op": "send", "fields": {"mode": 12}})
        assert answer is not None and answer["life_count"] == 6
        with pytest.raises(HoldError, match="unknown op"):
            request(path, {"op": "nothing"})
        with pytest.raises(HoldError, match="a hold already runs"):
            Hold(make_link(FakeController(FakeClock())), path, NAMES, io.StringIO()).open()
    finally:
        request(path, {"op": "stop"})
        thread.join(5)
    assert not thread.is_alive()
    assert request(path, {"op": "status"}) is None      # gone, and its socket with it


def test_a_poll_while_the_hold_starts_leaves_its_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`hold --start` polls the socket while the hold starts; a poll between
    the hold's bind and its listen once took the bound file for a dead
    hold's and removed it (CI 43: the hold exited at its chmod). A poll is
    made there now: it finds no hold, and the hold's socket is in place."""
    from controller.cli import hold as hold_module
    path = tmp_path / "h.sock"
    polled = []
    chmod = os.chmod

    def chmod_then_poll(target: object, mode: int) -> None:
        chmod(target, mode)                       # type: ignore[arg-type]
        polled.append(request(path, {"op": "status"}))
    monkeypatch.setattr(hold_module.os, "chmod", chmod_then_poll)
    hold, _ = make_hold(tmp_path, idle_s=1e9)
    assert polled == [None]
    thread = threading.Thread(target=hold.run, daemon=True)     # a failure here must not hang the suite
    thread.start()
    try:
        answer = request(path, {"op": "status"})
        assert answer is not None and answer["pid"] == os.getpid()
        assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    finally:
        request(path, {"op": "stop"})
        thread.join(5)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_no_hold_and_a_stale_socket_read_as_none(tmp_path: Path) -> None:
    assert request(tmp_path / "none.sock", {"op": "status"}) is None
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(tmp_path / "stale.sock"))
    stale.close()                                        # bound, never listening: a dead hold's file
    assert request(tmp_path / "stale.sock", {"op": "status"}) is None
    assert not (tmp_path / "stale.sock").exists()


@pytest.mark.parametrize("argv, fields", [
    (["--mode", "stand"], {"mode": 12, "gait_id": 0}),
    (["--mode", "lie"], {"mode": 7, "gait_id": 1}),
    (["--mode", "trot", "--vel", "0.3", "0", "0"], {"mode": 11, "gait_id": 3, "vel_des": [0.3, 0.0, 0.0]}),
    (["--mode", "trot", "--gait", "walk"], {"mode": 11, "gait_id": 6}),
    (["--mode", "RECOVERY_STAND"], {"mode": 12, "gait_id": 0}),
    (["--mode", "pose-absolute", "--pos", "0", "0", "0.2"], {"mode": 21, "gait_id": 5, "pos_des": [0.0, 0.0, 0.2]}),
    (["--mode", "0x0c", "--gait", "2"], {"mode": 12, "gait_id": 2}),
])
def test_send_takes_mode_and_gait_words(argv: list[str], fields: dict) -> None:
    args = mc.build_parser().parse_args(["send", *argv])
    assert send_cmd.fields_from_args(args, CFG.fsm.names) == fields


def test_an_unknown_mode_word_lists_the_words_and_the_states() -> None:
    with pytest.raises(ValueError, match=r"'sit'.*stand.*PURE_DAMPER"):
        resolve_mode("sit", CFG.fsm.names)


@pytest.mark.parametrize("argv", [["send", "--mode", "no-such-mode"], ["hold", "--status"], ["watch", "--help"]])
def test_the_talking_commands_start_without_numpy_or_the_robot_config(argv: list[str], tmp_path: Path) -> None:
    """What makes motionctl start fast (its time is in `make bench`): the
    command given is the only one imported, and it reads the config's wire
    part alone, without numpy, the simulator or the robot's body."""
    probe = ("import sys, runpy\n"
             f"sys.argv = ['motionctl', *{argv!r}]\n"
             "try:\n"
             "    runpy.run_module('controller.cli.motionctl', run_name='__main__')\n"
             "except SystemExit:\n"
             "    pass\n"
             "heavy = [m for m in ('numpy', 'mujoco', 'controller.robot.config.loader', 'controller.core.goals',\n"
             "                     'controller.cli.render_cmd', 'controller.sim') if m in sys.modules]\n"
             "print('HEAVY', heavy)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)})
    assert "HEAVY []" in done.stdout, done.stdout + done.stderr
