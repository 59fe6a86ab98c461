"""The README's GIF (`make gif`): CyberDog 2 in physics, driven as a client
would (stand, trot, a motion, lie down), recorded in process and drawn by
`motionctl render` into docs/motiond.gif.

The motion is the robot's own hi-five file (the one a CyberDog 2 ships,
played unchanged as mode 62 / id 1) when a folder of the robot's motion
files is given or found at ROBOT_FILES; otherwise motiond's own hi-five.

    python tests/bench/readme_gif.py [OUT.gif] [--robot-files DIR]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from controller.logs import configure
from controller.robot.config import load_config
from controller.robot.config.motions import MotionsConfig
from controller.service.recording import RecordingWriter
from controller.sim.trial import Trial

# Where the repository's neighbours keep the CyberDog 2's own files (read, never copied).
ROBOT_FILES = ROOT.parent / "shared" / "peers" / "cyberdog2_motion_files" / "preinstalled"
HI_FIVE = "cyberdog2_hiFive_LFleg_posCtrl.toml"
STEPS: list[tuple[dict[str, Any], float]] = [  # (command fields, seconds)
    ({"mode": 12}, 3.0),
    ({"mode": 11, "gait_id": 3, "vel_des": [0.6, 0.0, 0.0], "step_height": [0.06, 0.06]}, 4.0),
    ({"mode": 12}, 1.5),
    ({"mode": 62, "gait_id": 1}, 10.0),     # the hi-five: head up, the left paw raised and waved
    ({"mode": 7, "gait_id": 1}, 2.5),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / "docs" / "motiond.gif")
    parser.add_argument("--robot-files", type=Path, default=ROBOT_FILES,
                        help="a folder of the robot's own motion files (default: %(default)s)")
    args = parser.parse_args()
    configure("error")
    cfg = load_config()
    own_file = args.robot_files / HI_FIVE
    if own_file.is_file():
        cfg = replace(cfg, motions=MotionsConfig(args.robot_files, {1: HI_FIVE}))
        print(f"motion 1: the robot's own {own_file}")
    else:
        print(f"motion 1: motiond's own hi-five ({own_file} not found)")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "demo"
        writer = RecordingWriter(base, list(cfg.lcm.ports))
        trial = Trial(cfg, recorder=writer)
        for fields, seconds in STEPS:
            trial.send(**fields)
            trial.run(seconds)
        writer.close()
        return subprocess.call([sys.executable, "-m", "controller.cli.motionctl", "render", str(base),
                                "-o", str(args.out), "--fps", "10", "--size", "400x300"], cwd=ROOT)


if __name__ == "__main__":
    raise SystemExit(main())
