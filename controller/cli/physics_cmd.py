"""`motionctl physics`: the physics scorecard (controller/sim/scorecard.py,
config/physics/scorecard.yaml), as `make physics` runs it."""
from __future__ import annotations

import argparse
from typing import Any

from controller.cli.client import Formatter
from controller.cli.commands import summary
from controller.sim import scorecard


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser("physics", help=summary("physics"),
                                                description=scorecard.DESCRIPTION + " A failing row is a "
                                                "finding (exit 0); no row selected is exit 2.",
                                                formatter_class=Formatter)
    scorecard.add_arguments(p)
    p.set_defaults(func=scorecard.run)
    return p
