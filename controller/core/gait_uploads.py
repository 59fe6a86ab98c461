"""User gaits and motions as mode 11 and 62 run them (SPEC §8): the Gait
Def and Gait Params uploaded on user_gait_file, the on-disk user gaits
(config locomotion.user_gaits), which one gait 110 runs, and the steps a
mode-62 block expands to."""
from __future__ import annotations

from controller.behaviours.locomotion import Locomotion
from controller.core.tick_state import TickState
from controller.motion.gait_table import GaitDefinition
from controller.motion.user_gait_files import UserGaitFiles, load_user_gaits
from controller.motion.usergait import DEF_HEADER, PARAMS_HEADER, parse_gait_def, parse_gait_params
from controller.protocol.block import Block
from controller.protocol.constants import USER_GAIT

LOCOMOTION = 11
USER_GAIT_HEADERS = {DEF_HEADER: "def", PARAMS_HEADER: "params"}


class GaitUploads:
    def __init__(self, ctl: TickState) -> None:
        self.ctl = ctl
        self.user_gait: dict[str, str] = {}       # the last upload of each kind, as sent
        self.user_params: list[Block] = []
        self.motion_refusal = ""      # why the last mode-62 block could not expand
        # User gaits as mode 11 runs them (SPEC §8.2): the on-disk ones
        # (config locomotion.user_gaits: 80-100 and 110's default), read once
        # here, and the last Def uploaded for 110.
        self.uploaded_gait: GaitDefinition | None = None
        self.disk_gaits = self.load_disk()

    def load_def(self, text: str, warnings: list[str]) -> str | None:
        loco = self.locomotion()
        if loco is None:
            return "this robot has no locomotion that takes user gaits"
        try:
            gait_def = parse_gait_def(text, warnings=warnings)
        except ValueError as exc:
            return str(exc)
        self.uploaded_gait = gait_def.definition(USER_GAIT, "uploaded user gait", "user_gait_file")
        loco.set_user_gait(self.uploaded_gait)
        return None

    def locomotion(self) -> Locomotion | None:
        ctl = self.ctl
        loco = ctl.fsm.behaviours.get(LOCOMOTION)
        return loco if isinstance(loco, Locomotion) else None

    def load_disk(self) -> UserGaitFiles | None:
        """The on-disk user gaits (controller/motion/user_gait_files.py), each
        registered with mode 11; a refused file is logged with its reason."""
        ctl = self.ctl
        loco = self.locomotion()
        directory = ctl.cfg.locomotion.user_gaits if ctl.cfg.locomotion is not None else None
        if loco is None or directory is None:
            return None
        found = load_user_gaits(directory)
        for gait_id, reason in sorted(found.errors.items()):
            ctl.log.error("disk_user_gait_refused", gait=gait_id, reason=reason)
        for gait in found.gaits.values():
            loco.set_user_gait(gait)
        return found

    def select(self, active: Block) -> None:
        """SPEC §8.2: the commanded mode-11 gait turning to 110 loads the
        uploaded Def (again: leaving OFF put the on-disk default back)."""
        ctl = self.ctl
        was = ctl.last_active
        if self.uploaded_gait is not None and (active.mode, active.gait_id) == (LOCOMOTION, USER_GAIT) \
                and (was.mode, was.gait_id) != (LOCOMOTION, USER_GAIT):
            loco = self.locomotion()
            assert loco is not None        # there is an upload
            loco.set_user_gait(self.uploaded_gait)

    def left_off(self) -> None:
        """SPEC §8.2: leaving OFF reloads the on-disk user gaits, and 110 is
        the on-disk default until the commanded gait next turns to 110. Only
        110 can have changed: 80-100 are the files read at start (motiond
        reads no file inside a tick; a changed file needs a restart)."""
        default = self.disk_gaits.gaits.get(USER_GAIT) if self.disk_gaits is not None else None
        loco = self.locomotion()
        if default is not None and loco is not None:
            loco.set_user_gait(default)

    def load_params(self, text: str, warnings: list[str]) -> str | None:
        ctl = self.ctl
        try:
            blocks = parse_gait_params(text, 1000.0 / ctl.cfg.tick_hz, warnings=warnings)
        except ValueError as exc:
            return str(exc)
        self.user_params = blocks
        return None

    def expand_motion(self, block: Block) -> list[Block] | None:
        """The steps of a mode-62 motion (SPEC §4.1): 110 runs the uploaded
        Gait Params, other ids the configured motion library."""
        ctl = self.ctl
        if block.gait_id == USER_GAIT:
            if not self.user_params:
                self.motion_refusal = "motion 110 needs Gait Params uploaded on user_gait_file"
                return None
            return [b.again() for b in self.user_params]
        if ctl.motions is None:
            self.motion_refusal = "this robot has no motion library"
            return None
        steps = ctl.motions.expand(block.gait_id, ctl.queue.motion_id)
        if steps is None:
            self.motion_refusal = ctl.motions.why_missing(block.gait_id)
        return steps
