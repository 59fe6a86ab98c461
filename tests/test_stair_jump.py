"""Mode 16 id 9, jump down a stair (issue 38, SPEC §12.D): the robot's own
trajectory is planned on the flat and left to a reactive landing. motiond's
JumpDownStair is optimised off 10, 15 and 20 cm platforms as well as on the
flat (motion_optimiser.Goal.stairs); here it jumps off the highest of the
scorecard's stairs in physics, judged on ground truth."""
from __future__ import annotations

from controller.sim.scorecard import expand, load_card, run_row


def test_jump_9_off_a_20_cm_stair_clears_the_edge_and_lands_upright_on_four_feet() -> None:
    rows = {r.name: r for r in expand("cyberdog2", load_card()["robots"]["cyberdog2"])}
    row = rows["jump (16/9) down a 20 cm stair"]
    assert row.spec["world"] == {"drop": 0.20, "at": 0.25}
    done = run_row(row)
    assert done.error == ""
    m = done.metrics
    # Nothing but the feet touched (a rear shank striking the edge counts),
    # it ends level on its four feet, well past the edge, with the bar at 100.
    assert m["trunk_contact_s"] == 0.0 and m["end_on_feet"] == 1.0
    assert m["end_tilt"] < 0.1
    assert 0.45 <= m["travel"] <= 0.75
    assert m["bar"] == 100
    assert done.passed
