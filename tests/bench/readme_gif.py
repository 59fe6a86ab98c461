"""The README's GIF (`make gif`): CyberDog 2 in physics, driven as a client
would (stand, trot, the ballet (62/11), lie down), recorded in process and
drawn by `motionctl render` into docs/motiond.gif.

    python tests/bench/readme_gif.py [OUT.gif]
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from controller.logs import configure
from controller.robot.config import load_config
from controller.service.recording import RecordingWriter
from controller.sim.trial import Trial

STEPS: list[tuple[dict[str, Any], float]] = [  # (command fields, seconds)
    ({"mode": 12}, 3.0),
    ({"mode": 11, "gait_id": 3, "vel_des": [0.6, 0.0, 0.0], "step_height": [0.06, 0.06]}, 4.0),
    ({"mode": 12}, 1.5),
    ({"mode": 62, "gait_id": 11}, 8.0),     # the ballet: motion gaits 69, 68, 69
    ({"mode": 7, "gait_id": 1}, 2.5),
]


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "motiond.gif"
    configure("error")
    cfg = load_config()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "demo"
        writer = RecordingWriter(base, list(cfg.lcm.ports))
        trial = Trial(cfg, recorder=writer)
        for fields, seconds in STEPS:
            trial.send(**fields)
            trial.run(seconds)
        writer.close()
        return subprocess.call([sys.executable, "-m", "controller.cli.motionctl", "render", str(base),
                                "-o", str(out), "--fps", "10", "--size", "400x300"], cwd=ROOT)


if __name__ == "__main__":
    raise SystemExit(main())
