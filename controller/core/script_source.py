"""Scripts as a command source (controller/core/director.py plays them):
starting the requests whose time has come or refusing them, a full-body
script taking the robot from the commanded mode, its end (stand, or the
damper after a getup failed twice), safety cancels, and the overlays
played on top of the mode's joints."""
from __future__ import annotations

from controller.behaviours.base import Behaviour, TickContext
from controller.core.director import SAFETY_MODES, ScriptRun
from controller.core.fsm import EDAMP, ESTOP
from controller.core.goals import Reason
from controller.core.reports import Reports
from controller.core.sources import CommandSources
from controller.core.tick_state import TickState
from controller.motion.playback import ScriptPlayback
from controller.protocol.block import FROM_FAULT, FROM_SCRIPT, FROM_TIMEOUT, Block

STAND_MODE = 12              # where the robot goes when a full-body script ends
DAMPER_MODE = 7              # ... when a getup failed twice
GETUP_UPRIGHT = 0.35         # rad: a getup that ends further from upright left the robot down


class ScriptSource:
    def __init__(self, ctl: TickState, reports: Reports, sources: CommandSources) -> None:
        self.ctl = ctl
        self.reports = reports
        self.sources = sources
        self.holds: set[int] = set()   # overlays already logged as outranking the mode
        self.state: Behaviour = ctl.fsm.state

    def safety_state(self) -> bool:
        ctl = self.ctl
        return ctl.fsm.mode in SAFETY_MODES or ctl.fsm.operating in (EDAMP, ESTOP) \
            or ctl.shutting_down

    def start_due(self, now_ns: int) -> None:
        """Start the script requests whose time has come, or refuse them."""
        ctl = self.ctl
        for run in ctl.director.due(now_ns):
            refusal = self.start(run, now_ns)
            if refusal:
                ctl.director.refuse(run, refusal)
                ctl.counters.commands_rejected += 1
                self.reports.error(now_ns, f"script request {run.request_id} refused: {refusal}",
                                  "script_refused")

    def start(self, run: ScriptRun, now_ns: int) -> str | None:
        ctl = self.ctl
        fsm = ctl.fsm
        name = ctl.cfg.fsm.name(fsm.mode)
        if fsm.mode == 0 or fsm.operating in (EDAMP, ESTOP) or ctl.shutting_down \
                or ctl.last_active.source in (FROM_TIMEOUT, FROM_FAULT):
            # A commanded damper (7) is not refused here: a full-body script
            # that outranks the command may start from it (get up).
            return f"the robot is in {name} ({ctl.last_active.source}); no script may start"
        if not fsm.measured:
            return "no joint_state has been received yet"
        blocked = ctl.director.blocking(run)
        if blocked:
            return blocked
        busy = fsm.state.limbs_in_use()
        busy = ctl.director.all_limbs if busy is None else busy
        if not run.limbs & busy:
            ctl.director.preempt_for(run)
            ctl.director.start_overlay(run, ctl.tick, ctl.q)
            return None
        limbs = ", ".join(sorted(run.limbs & busy))
        mode_priority = self.sources.priority(ctl.last_active)
        if mode_priority is not None and mode_priority >= run.priority:
            return (f"{limbs}: driven by {name} from {ctl.last_active.source} "
                    f"(priority {mode_priority} >= {run.priority})")
        script_mode = ctl.cfg.scripts.mode if ctl.cfg.scripts else None
        if script_mode is None:
            return f"{limbs}: driven by {name}, and this robot has no script mode"
        if fsm.mode != script_mode:
            refusal = fsm.why_refused(script_mode, Block(mode=script_mode, script=run))
            if refusal:
                return refusal
        ctl.director.preempt_for(run, everything_of_body=True)
        run.overlay = False
        ctl.director.body = run
        if ctl.goals.active:
            ctl.events += ctl.goals.preempt(now_ns, f"script {run.name} took over", ctl.odom)
        ctl.queue.replace_all(Block(mode=script_mode, source=FROM_SCRIPT, script=run))
        return None

    def still_down(self, run: ScriptRun) -> str | None:
        """Why a getup (config fall.except_scripts) that played to its end
        left the robot down (the IMU's tilt), or None: not a getup, upright,
        or no IMU to tell."""
        ctl = self.ctl
        fall = ctl.cfg.fall
        script = getattr(run.playback, "script", None)
        if fall is None or script is None or ctl.fsm.attitude is None \
                or not {p.name for p in script.parts} & fall.except_scripts:
            return None
        tilt = ctl.imu.tilt
        return None if tilt <= GETUP_UPRIGHT else f"the torso is {tilt:.2f} rad from upright"

    def retry_getup(self, run: ScriptRun, down: str, now_ns: int) -> None:
        """Play a getup that left the robot down once more, as the same request."""
        ctl = self.ctl
        assert isinstance(run.playback, ScriptPlayback)
        again = ScriptRun(run.request_id, ScriptPlayback(run.playback.script, ctl.director.joint_index,
                                                         ctl.cfg.dt),
                          run.priority, run.limbs, now_ns, overlay=False, retried=True)
        ctl.director.body = again
        ctl.queue.replace_all(Block(mode=ctl.fsm.mode, source=FROM_SCRIPT, script=again))
        ctl.log.warning("getup_retry", script=run.name, reason=down, tick=ctl.tick)

    def tick(self, now_ns: int, ctx: TickContext, active: Block) -> None:
        """After the state has run: the full-body script's end, safety
        cancels, and the overlays on top of the state's joints."""
        ctl = self.ctl
        director = ctl.director
        if ctl.fsm.state is not self.state:
            self.state = ctl.fsm.state
            director.release()
        safety = self.safety_state()
        if safety:
            director.cancel(0, f"the robot entered {ctl.cfg.fsm.name(ctl.fsm.mode)}")
        body = director.body
        if body is not None:
            after = STAND_MODE
            if body.ended:
                director.body = None
            elif active.script is not body:
                director.body = None
                director.end(body, Reason.PREEMPTED,
                             f"{active.source} mode {active.mode} took over")
            elif body.started and body.playback.done and ctl.fsm.state.ready():
                director.body = None
                down = self.still_down(body)
                if down is not None and not body.retried:
                    self.retry_getup(body, down, now_ns)
                elif down is not None:
                    after = DAMPER_MODE
                    director.end(body, Reason.FAILED, f"still down after a retry: {down}")
                    ctl.counters.last_error = f"getup {body.name} failed: {down}"
                    ctl.log.error("getup_failed", script=body.name, reason=down, tick=ctl.tick)
                else:
                    director.end(body, Reason.FINISHED, "played to its last frame")
            if director.body is None and active.script is body:
                # Finished or cancelled: stand, and the command timeout starts now;
                # a getup that failed twice leaves the robot in the damper.
                ctl.queue.replace_all(Block(mode=after, source=FROM_SCRIPT))
                ctl.intake.last_rx_ns = now_ns
        if not director.overlays and not director.holding.any():
            return          # nothing plays over the state: step_overlays would do nothing
        name = ctl.cfg.fsm.name(ctl.fsm.mode)
        limbs = ctl.fsm.state.limbs_in_use()
        limbs = director.all_limbs if limbs is None else limbs
        priority = None if safety else self.sources.priority(active)
        for run in director.overlays:
            if run.limbs & limbs and priority is not None and run.priority > priority \
                    and run.request_id not in self.holds:
                self.holds.add(run.request_id)
                ctl.log.info("script_keeps_limbs", script=run.name, request=run.request_id,
                             limbs=sorted(run.limbs & limbs), mode=name,
                             priority=run.priority, mode_priority=priority)
        director.step_overlays(ctx.tick, ctx.q, limbs, priority, f"mode {ctl.fsm.mode} {name}")
