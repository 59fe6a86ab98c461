"""A robot's own MJCF as the physics body (`sim.mjcf`, controller/sim/own_model.py):
config/physics/go2_own.xml is the Go2 in Unitree's own joint convention
(hip and knee about +y, the knee negative, legs FL FR RL RR, Unitree's joint
names), not generated from the config. The controller drives it through
config/go2.yaml's joint map alone, judged on the simulator's ground truth;
the wrong map (the identity) cannot make it stand."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import mujoco
import numpy as np
import pytest

from controller import msgs
from controller.robot.config import ConfigError, load_config
from controller.robot.config.joint_map import JointMap
from controller.sim import scorecard
from controller.sim.mjcf import robot_mjcf
from controller.sim.physics import geom_labels
from controller.sim.trial import Trial

GO2 = load_config(load_config().path.parent / "go2.yaml")
UNITREE_LEGS = ("FL", "FR", "RL", "RR")
OWN_JOINTS = [f"{leg}_{j}_joint" for leg in UNITREE_LEGS for j in ("hip", "thigh", "calf")]
OWN_FEET = {leg: f"{leg}_toe" for leg in UNITREE_LEGS}
OWN_SIM: dict[str, Any] = {"mjcf": "physics/go2_own.xml", "mjcf_joints": OWN_JOINTS, "mjcf_feet": OWN_FEET}


def own(joint_map: JointMap | None = None, **sim: Any) -> Any:
    return replace(GO2, sim={**GO2.sim, **OWN_SIM, **sim},
                   joint_map=GO2.joint_map if joint_map is None else joint_map)


def test_go2s_joint_map_is_unitrees_convention() -> None:
    jm = GO2.joint_map
    assert jm.wire_names == [f"{leg}_{j}" for leg in UNITREE_LEGS for j in ("abad", "hip", "knee")]
    assert [jm.direction[GO2.joint_names.index(f"FR_{j}")] for j in ("abad", "hip", "knee")] == [1, -1, -1]


def test_the_own_model_gets_what_the_simulator_needs_and_keeps_the_rest() -> None:
    model = mujoco.MjModel.from_xml_string(robot_mjcf(own()))
    assert model.opt.timestep == 0.0005
    assert model.body("trunk").mass[0] == pytest.approx(6.921)
    assert [model.actuator(i).name for i in range(model.nu)] == OWN_JOINTS    # ours, in the wire order
    assert model.actuator("FL_calf_joint").forcerange[1] == pytest.approx(45.43)
    assert {model.sensor(i).name for i in range(model.nsensor)} == {"imu_quat", "imu_gyro", "imu_acc"}
    assert model.site("imu").pos[2] == pytest.approx(0.04232)          # the model's own site kept
    for leg in GO2.legs:
        assert model.geom(f"{leg}_foot").size[0] == pytest.approx(0.022)
        assert model.site(f"{leg}_foot").bodyid == model.geom(f"{leg}_foot").bodyid
    assert model.jnt_range[model.joint("FL_calf_joint").id].tolist() == pytest.approx([-2.7227, -0.83776])


@pytest.mark.parametrize("sim, message", [
    ({"mjcf_joints": OWN_JOINTS[:-1]}, "sim.mjcf_joints: expected the model's 12 joint names"),
    ({"mjcf_joints": [*OWN_JOINTS[:-1], "RR_ankle_joint"]}, "['RR_ankle_joint'] are not joints"),
    ({"mjcf_feet": {"FR": "FR_toe"}}, "sim.mjcf_feet: expected the foot geom's name per leg"),
    ({"mjcf_feet": {**OWN_FEET, "RR": "RR_paw"}}, "sim.mjcf_feet.RR: no geom named 'RR_paw'"),
    ({"mjcf": "physics/nothing.xml"}, "is not a file"),
])
def test_a_bad_own_model_config_says_which_key_and_why(sim: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="sim.mjcf") as err:
        robot_mjcf(own(**sim))
    assert message in str(err.value)


def maker_style(tmp_path: Any, xml: str) -> Any:
    """The own model written as a maker's file may be: feet unnamed, a
    light aimed at the floating body and a contact exclusion naming it; and
    the config without sim.mjcf_feet."""
    path = tmp_path / "maker.xml"
    path.write_text(xml)
    cfg = own(mjcf=str(path))
    return replace(cfg, sim={k: v for k, v in cfg.sim.items() if k != "mjcf_feet"})


def makers_go2() -> str:
    xml = (GO2.path.parent / "physics" / "go2_own.xml").read_text()
    xml = re.sub(r' name="(FL|FR|RL|RR)_toe"', "", xml)
    xml = xml.replace("<worldbody>", '<worldbody>\n    <light name="spot" mode="targetbody" target="base" '
                      'pos="0 0 2"/>', 1)
    return xml.replace("</worldbody>", '</worldbody>\n  <contact><exclude body1="base" body2="FL_hip"/></contact>', 1)


def test_a_makers_model_with_unnamed_feet_and_references_to_its_body_loads_as_it_is(tmp_path: Any) -> None:
    named = mujoco.MjModel.from_xml_string(robot_mjcf(own()))
    model = mujoco.MjModel.from_xml_string(robot_mjcf(maker_style(tmp_path, makers_go2())))
    for leg in GO2.legs:        # the geom at each leg's end: the toe, as named
        mine, theirs = model.geom(f"{leg}_foot"), named.geom(f"{leg}_foot")
        assert model.body(int(mine.bodyid[0])).name == named.body(int(theirs.bodyid[0])).name == \
            {"FR": "FR_calf", "FL": "FL_calf", "RR": "RR_calf", "RL": "RL_calf"}[leg]
        assert mine.pos.tolist() == theirs.pos.tolist() and mine.size[0] == theirs.size[0]
        assert model.site(f"{leg}_foot").bodyid == mine.bodyid
    trunk = model.body("trunk").id       # renamed with the light and the exclusion that named it
    assert model.light("spot").targetbodyid[0] == trunk
    assert model.nexclude == 1 and trunk in (model.exclude_signature[0] >> 16, model.exclude_signature[0] & 0xFFFF)


def test_unnamed_geoms_are_told_apart_by_body_and_place(tmp_path: Any) -> None:
    """A maker's unnamed collision shapes are not all '' in traces and
    checks (a calf's capsule would read as the trunk's): body/place."""
    model = mujoco.MjModel.from_xml_string(robot_mjcf(maker_style(tmp_path, makers_go2())))
    labels = geom_labels(model)
    assert len(set(labels)) == model.ngeom
    assert labels[model.geom("FL_foot").id] == "FL_foot"
    calf = [label for g, label in enumerate(labels) if model.geom_bodyid[g] == model.body("FL_calf").id]
    assert calf == ["FL_calf/0", "FL_foot"]


def test_a_leg_with_nothing_to_stand_on_asks_for_its_foot_by_name(tmp_path: Any) -> None:
    xml = re.sub(r'(<body name="RL_calf".*?)<geom [^>]*size="0.022"[^>]*/>', r"\1", makers_go2(), flags=re.S)
    xml = re.sub(r'(<body name="RL_calf".*?)<geom [^>]*/>', r"\1", xml, flags=re.S)
    with pytest.raises(ConfigError, match="no collision geom below RL_calf_joint"):
        robot_mjcf(maker_style(tmp_path, xml))


def test_go2_stands_and_trots_on_its_own_model_through_its_joint_map() -> None:
    t = Trial(own())
    t.send(12)
    t.run(3.0)
    truth = t.robot.truth()
    assert truth.position[2] == pytest.approx(GO2.stand_height, abs=0.015)
    assert max(abs(a) for a in truth.rpy[:2]) < 0.05
    assert truth.contacts == {f"{leg}_foot" for leg in GO2.legs}
    assert t.trace.bar[-1] == 100
    # The wire and the model speak Unitree's convention: the knees negative,
    # the legs FL first; the controller's own angles are positive.
    state = msgs.joint_state_t.decode(t.robot.joint_state(0))
    model_q = t.robot.data.qpos[t.robot.qadr]
    assert (model_q[2::3] < -1.0).all() and (np.array(state.position)[2::3] < -1.0).all()
    np.testing.assert_allclose(state.position, model_q, atol=0.01)     # the sensors' noise and delay
    assert (t.robot.q[2::3] > 1.0).all()
    t.send(11, 3, vel_des=[0.4, 0.0, 0.0], step_height=[0.06, 0.06])
    t.run(5.0)
    vx = np.mean([v[0] for v in t.trace.body_velocity[-1500:]])
    assert abs(vx - 0.4) <= 0.05 + 0.1 * 0.4                           # issue 16's rule
    assert t.robot.truth().contacts <= {f"{leg}_foot" for leg in GO2.legs}


def test_with_the_wrong_map_the_robot_does_not_stand() -> None:
    """The same model and controller with the identity map (as if Go2 spoke
    the controller's convention): the body cannot stand. The map is what
    carries the convention, nothing else."""
    t = Trial(own(joint_map=JointMap(GO2.joint_names)))
    t.send(12)
    t.run(3.0)
    truth = t.robot.truth()
    standing = (abs(truth.position[2] - GO2.stand_height) < 0.015
                and truth.contacts == {f"{leg}_foot" for leg in GO2.legs})
    assert not standing


def test_a_calf_resting_on_the_floor_is_reported_not_a_fall(tmp_path: Any) -> None:
    """A maker's model whose calf capsule runs down to the foot and whose
    feet are soft (solimp): standing, the feet sink and the calves rest on
    the floor. The scorecard finds the lower legs from the model's tree
    (the bodies each leg's last joint moves, unnamed geoms included) and
    reports their contact (shank_contact_s) instead of calling the stand a
    fall; the trunk and upper legs stay the fall's judges."""
    xml = makers_go2().replace('<geom type="capsule" size="0.012" fromto="0 0 0 0 0 -0.19"/>',
                               '<geom type="capsule" size="0.02" fromto="0 0 0 0 0 -0.213"/>')
    xml = xml.replace('size="0.022" pos="0 0 -0.213"/>', 'size="0.022" pos="0 0 -0.213" solimp="0.5 0.95 0.01"/>')
    t = Trial(maker_style(tmp_path, xml))
    calves = {f"{leg}_calf/0" for leg in ("FL", "FR", "RL", "RR")}
    assert scorecard.lower_leg_geoms(t) == calves
    t.send(12)
    t.run(3.0)
    assert t.robot.truth().contacts == calves | {f"{leg}_foot" for leg in GO2.legs}
    m = scorecard.measure(t, 0, {"window": 0.5}, np.zeros(3), mode=12)
    assert m["shank_contact_s"] > 1.0
    assert m["fell"] == 0 and m["trunk_contact_s"] == 0 and m["end_on_feet"] == 1
    assert m["time_to_stand"] < 2.5


def test_the_generated_models_lower_legs_are_its_shanks() -> None:
    """Of CyberDog 2's generated legs only the shanks: not the feet, not
    the knee pads (a knee on the floor is a knee, knee_contact_s)."""
    t = Trial(load_config())
    assert scorecard.lower_leg_geoms(t) == {f"{leg}_shank" for leg in t.cfg.legs}
