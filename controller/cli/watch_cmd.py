"""`motionctl watch`: show the controller's status, live or once.

Reads motiond's controller_status, the last robot_control_response, the
`global_to_robot` odometry and the motion events. The screen is rendered as
plain text by pure functions (render_status, render_status_line), so the
tests call them directly.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from controller.cli.client import (
    EXIT_CODES_HELP,
    EXIT_OK,
    EXIT_TIMEOUT,
    Feedback,
    Formatter,
    Link,
    ModeNames,
    clamp_percent,
    describe_event,
    emit,
    open_link,
    status_word,
)
from controller.cli.commands import summary
from controller.msgs import controller_status_t, localization_lcmt, motion_event_t, robot_control_response_lcmt
from controller.robot.config.wire import Wire

WATCH_FRAME_S = 0.1      # ~10 Hz redraw
WATCH_STALE_S = 1.0      # status older than this is flagged in the live view
ONCE_WAIT_S = 2.0
EVENTS_SHOWN = 5         # motion events kept on the watch screen

WATCH_FEEDS = ("response", "status", "odometry", "event")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add `watch` to an argparse subparsers object; its func is `run`."""
    watch: argparse.ArgumentParser = sub.add_parser(
        "watch", help=summary("watch"),
        description="Show motiond's controller_status, the last robot_control_response, the "
                    "global_to_robot odometry (x, y, yaw, vx) and the last motion events: redrawn "
                    "in place at 10 Hz on a terminal; otherwise one line per status message (with "
                    "the odometry) and one per motion event. Ctrl-C ends it.",
        epilog=EXIT_CODES_HELP, formatter_class=Formatter)
    watch.add_argument("--once", action="store_true",
                       help=f"print one snapshot and exit (exit 3 if no status within {ONCE_WAIT_S:g} s)")
    watch.set_defaults(func=run)
    return watch


def run(args: argparse.Namespace, cfg: Wire) -> int:
    """`motionctl watch`: the exit code."""
    link = open_link(cfg, WATCH_FEEDS)
    if args.once:
        return watch_once(link, sys.stdout, cfg.fsm.name)
    return watch_live(link, sys.stdout, cfg.fsm.name, tty=sys.stdout.isatty())


def progress_bar(percent: int, width: int = 20) -> str:
    filled = round(clamp_percent(percent) * width / 100)
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def _motor_faults(resp: robot_control_response_lcmt) -> str:
    """Motors with any error or warning bit; bits 30-31 are the motor mode, not faults (SPEC §5.9)."""
    faults = [f"{i}:0x{word & 0x3FFFFFFF:x}" for i, word in enumerate(resp.motor_error)
              if word & 0x3FFFFFFF]
    return " ".join(faults) if faults else "ok"


def describe_odometry(odom: localization_lcmt) -> str:
    return (f"x {odom.xyz[0]:.3f} m  y {odom.xyz[1]:.3f} m  yaw {odom.rpy[2]:.3f} rad"
            f"  vx {odom.vBody[0]:.2f} m/s")


def render_status(status: controller_status_t | None, response: robot_control_response_lcmt | None,
                  names: ModeNames | None = None, odometry: localization_lcmt | None = None,
                  events: Sequence[motion_event_t] = (), error_age: str = "") -> str:
    """The `watch` screen as text (no ANSI codes): pure, so tests call it directly.

    Mode, gait, progress and switch_status come from controller_status when
    there is one (the daemon's own view), else from the last response. Then
    the global_to_robot odometry and the last few motion events, newest last.
    """
    def name(mode: int, given: str = "") -> str:
        label = given or (names(mode) if names else "")
        return f"{label} ({mode})" if label else f"mode {mode}"

    tail = [f"odometry  {describe_odometry(odometry) if odometry is not None else 'none received'}"]
    tail += [f"event     {describe_event(e)}" for e in events]
    if status is None and response is None:
        waiting = "waiting for controller_status and robot_control_response ..."
        return "\n".join([waiting, *tail]) if odometry is not None or events else waiting
    lines = []
    if status is not None:
        lines.append(f"motiond   tick {status.tick}")
        mode, gait = name(status.mode, status.mode_name), status.gait_id
        progress, switch = status.progress, status.switch_status
    else:
        assert response is not None
        lines.append("motiond   no controller_status received (is motiond running?)")
        mode, gait = name(response.mode), response.gait_id
        progress, switch = response.order_process_bar, response.switch_status
    lines += [
        f"mode      {mode}   gait {gait}",
        f"progress  {progress_bar(progress)} {clamp_percent(progress):3d} %",
        f"switch    {status_word(switch)} ({switch})",
    ]
    if status is not None:
        lines += [
            f"queue     {status.queue_depth} blocks, {status.block_remaining_ms} ms left in the active block",
            (f"timing    lateness p50 {status.lateness_p50_us:.0f} us  p99 {status.lateness_p99_us:.0f} us"
             f"  max {status.lateness_max_us:.0f} us   loop p99 {status.loop_p99_us:.0f} us"
             f"   overruns {status.tick_overruns}"),
            (f"counters  accepted {status.commands_accepted}  heartbeats {status.heartbeats}"
             f"  packets rejected {status.packets_rejected}  commands rejected {status.commands_rejected}"
             f"  timeouts {status.timeouts}"),
            f"script    {_script_words(status)}",
        ]
    if response is not None:
        lines.append(
            f"response  {name(response.mode)} gait {response.gait_id}"
            f"  {clamp_percent(response.order_process_bar)} %  {status_word(response.switch_status)}"
            f"   contact 0x{response.contact & 0xF:X}  ori_error {response.ori_error}"
            f"  footpos_error 0x{response.footpos_error & 0xFFF:03x}  motors {_motor_faults(response)}")
    else:
        lines.append("response  none received")
    if status is not None:
        lines.append(f"error     {status.last_error or '-'}{error_age}")
    return "\n".join(lines + tail)


def render_status_line(status: controller_status_t, odometry: localization_lcmt | None = None) -> str:
    """One plain line per status message, for logs and pipes (no redrawing)."""
    odom = f" odom {describe_odometry(odometry)}" if odometry is not None else ""
    return (f"tick {status.tick} {status.mode_name or 'mode'} ({status.mode}) gait {status.gait_id}"
            f" {clamp_percent(status.progress)} % {status_word(status.switch_status)}"
            f" queue {status.queue_depth} ({status.block_remaining_ms} ms)"
            f" late p99 {status.lateness_p99_us:.0f} us overruns {status.tick_overruns}"
            f" accepted {status.commands_accepted} rejected {status.packets_rejected}/{status.commands_rejected}"
            f" timeouts {status.timeouts} script {_script_words(status)}"
            f" error {status.last_error or '-'}{odom}")


def _script_words(status: controller_status_t) -> str:
    """'Wave frame 3 (40 %)' or '-': the scripts playing, as controller_status says."""
    return f"{status.script} ({clamp_percent(status.script_progress)} %)" if status.script else "-"


class WatchState:
    """The latest status, response and odometry, and the last EVENTS_SHOWN motion events."""

    def __init__(self) -> None:
        self.status: controller_status_t | None = None
        self.response: robot_control_response_lcmt | None = None
        self.odometry: localization_lcmt | None = None
        self.events: list[motion_event_t] = []
        # last_error is the daemon's last one, however old: when it changed
        # (None: it was there before this watch started).
        self.error_at: float | None = None

    def update(self, msg: Feedback, now: float = 0.0) -> None:
        if isinstance(msg, controller_status_t):
            if self.status is not None and msg.last_error != self.status.last_error:
                self.error_at = now
            self.status = msg
        elif isinstance(msg, robot_control_response_lcmt):
            self.response = msg
        elif isinstance(msg, localization_lcmt):
            self.odometry = msg
        else:
            self.events = [*self.events[-(EVENTS_SHOWN - 1):], msg]

    def render(self, names: ModeNames | None, now: float | None = None) -> str:
        return render_status(self.status, self.response, names, self.odometry, self.events,
                             self.error_age(now))

    def error_age(self, now: float | None) -> str:
        """How old last_error is, as far as this watch knows ("" when unknown)."""
        if now is None or self.status is None or not self.status.last_error:
            return ""
        if self.error_at is None:
            return "   (from before this watch started)"
        return f"   ({now - self.error_at:.0f} s ago)"


def watch_once(link: Link, out: TextIO, names: ModeNames, wait_s: float = ONCE_WAIT_S) -> int:
    """Print one snapshot once a controller_status arrives; exit 3 if none does in `wait_s`."""
    deadline = link.now() + wait_s
    state = WatchState()
    while True:
        for msg in link.poll():
            state.update(msg)
        if (state.status is not None and state.response is not None) or link.now() >= deadline:
            break
        if state.status is not None:
            # A response comes at 50 Hz; give it a moment, not the whole wait.
            deadline = min(deadline, link.now() + 0.1)
        link.sleep()
    if state.status is None:
        print(f"no controller_status within {wait_s:g} s (is motiond running?)", file=sys.stderr)
        return EXIT_TIMEOUT
    emit(out, state.render(names))
    return EXIT_OK


def watch_live(link: Link, out: TextIO, names: ModeNames, tty: bool) -> int:
    """Redraw the status screen at ~10 Hz on a terminal, else one line per status or
    motion event; until Ctrl-C."""
    state = WatchState()
    status_at = link.now()
    next_frame = link.now()
    try:
        while True:
            msgs = link.poll()
            now = link.now()
            for msg in msgs:
                state.update(msg, now)
                if isinstance(msg, controller_status_t):
                    status_at = now
                    if not tty:
                        emit(out, render_status_line(msg, state.odometry))
                elif isinstance(msg, motion_event_t) and not tty:
                    emit(out, f"event {describe_event(msg)}")
            if tty and now >= next_frame:
                next_frame = now + WATCH_FRAME_S
                status = state.status
                text = state.render(names, now)
                if status is not None and now - status_at > WATCH_STALE_S:
                    text += f"\n(no controller_status for {now - status_at:.1f} s)"
                # Home, each line cleared to its end, then everything below cleared.
                out.write("\x1b[H" + "\x1b[K\n".join(text.split("\n")) + "\x1b[K\n\x1b[J")
                out.flush()
            link.sleep()
    except KeyboardInterrupt:
        return EXIT_OK
