"""The `priorities` section: which command source wins when several own a limb.

Command sources in the CyberDog order (SPEC §2.2: motor_ctrl before
robot_control_cmd); motion goals below both. Script requests carry their
own priority (scripts.default_priority when they give none)."""
from __future__ import annotations

from controller.robot.config.reader import Reader

DEFAULT_PRIORITIES = {"motor_ctrl": 30, "robot_control_cmd": 20, "motion_goal": 10}
PRIORITY_RANGE = (1, 100)


def load_priorities(r: Reader) -> dict[str, int]:
    priorities = dict(DEFAULT_PRIORITIES)
    if "priorities" in r.data:
        pr = r.sub("priorities")
        for source in pr.data:
            if source not in DEFAULT_PRIORITIES:
                raise pr.fail(str(source), f"unknown command source (known: "
                                           f"{', '.join(DEFAULT_PRIORITIES)})")
            priorities[source] = int(pr.number(source, *PRIORITY_RANGE))
    return priorities
