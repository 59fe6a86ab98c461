"""What `motionctl check-config` says of a robot's own MJCF (`sim.mjcf`)
beyond whether it builds (controller/cli/check_config.py): the figures
that load but will cost the robot, each with what to do.

- kinematics: the feet (a humanoid's soles) where the config's leg geometry
  and joint map put them, against the model's, over poses inside the joint
  limits (the test tests/test_physics_model.py holds the generated model to,
  on the user's robot);
- a humanoid's joint axes: each joint of the model at the controller's
  zero pose against the controller's convention (humanoid20's axes, the
  same on both sides), so a joint_map direction the model contradicts is
  named, arms and head too (the sole check sees the legs only);
- joint damping in the model: a real motor's friction and damping are in
  its law already, and a maker's 2 N m s/rad cost a trot a quarter of its
  speed;
- soft foot contact: feet that sink let the lower legs rest on the floor;
- torque limits: the model's actuators against the config's
  `torque_limit` (the simulator's motors use the config's).
"""
from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

from controller.robot.config import Config
from controller.robot.config.quadruped import Geometry
from controller.robot.humanoid_kinematics import LEG_SIDES, HumanoidGeometry, HumanoidLegKinematics
from controller.robot.kinematics import QuadrupedKinematics
from controller.robot.mjcf_figures import maker_spec
from controller.sim.mjcf import robot_mjcf
from controller.sim.own_model import model_joints, own_model_path

FEET_TOLERANCE = 0.005        # m: the model's foot this far from the config's is a different leg
POSES = 200
DAMPING_WARN = 0.1            # N m s/rad
SOFT_TIMECONST = 0.02         # s: MuJoCo's default solref time constant
SOFT_DMIN = 0.9               # MuJoCo's default solimp dmin
TORQUE_TOLERANCE = 0.1        # share
# The controller's humanoid convention (humanoid20's model: config/physics/
# humanoid20.yaml, controller/sim/humanoid_model.py's LEG_AXES), the same on
# both sides; the hip yaw's is the geometry's hip_yaw_axis when it has one.
AXES = {"hip_yaw": (0.0, 0.0, 1.0), "hip_roll": (1.0, 0.0, 0.0), "hip_pitch": (0.0, 1.0, 0.0),
        "knee": (0.0, 1.0, 0.0), "ankle_pitch": (0.0, 1.0, 0.0), "ankle_roll": (1.0, 0.0, 0.0),
        "shoulder_pitch": (0.0, 1.0, 0.0), "shoulder_roll": (1.0, 0.0, 0.0), "elbow": (0.0, 1.0, 0.0),
        "head_yaw": (0.0, 0.0, 1.0), "head_pitch": (0.0, 1.0, 0.0)}
AXIS_ALONG = 0.9              # |cos|: an axis this close to the convention's is along it


def own_model_findings(cfg: Config) -> list[str]:
    """Warnings on the robot's own MJCF (module docstring); [] without one.
    The model must build (check_config.own_model_problem says why not)."""
    path = own_model_path(cfg)
    if path is None:
        return []
    model = mujoco.MjModel.from_xml_string(robot_mjcf(cfg))
    names, jm = model_joints(cfg)
    out = _kinematics(cfg, model, names, jm) + _soles(cfg, model, names, jm) + _axes(cfg, model, names, jm)
    out += _damping(model, names)
    out += _soft_feet(cfg, model)
    out += _torques(cfg, maker_spec(path, f"{cfg.path}: sim.mjcf")[0], names, jm)
    return out


def _kinematics(cfg: Config, model: Any, names: list[str], jm: Any) -> list[str]:
    if not isinstance(cfg.geometry, Geometry):
        return []
    kin = QuadrupedKinematics(cfg.geometry)
    data = mujoco.MjData(model)
    qadr = np.array([model.jnt_qposadr[model.joint(n).id] for n in names])
    rng = np.random.default_rng(0)
    worst, at, leg_at = 0.0, None, ""
    for _ in range(POSES):
        q = rng.uniform(cfg.q_min, cfg.q_max)
        data.qpos[:] = model.qpos0
        data.qpos[0:7] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]      # the trunk at the origin, level
        data.qpos[qadr] = jm.positions_to_wire(q)
        mujoco.mj_kinematics(model, data)
        feet = np.array([data.site(f"{leg}_foot").xpos for leg in cfg.legs])
        error = np.linalg.norm(feet - kin.forward(q.reshape(len(cfg.legs), 3)), axis=1)
        if error.max() > worst:
            worst, at, leg_at = float(error.max()), q, cfg.legs[int(error.argmax())]
    if worst <= FEET_TOLERANCE:
        return []
    assert at is not None
    pose = ", ".join(f"{n} {v:+.2f}" for n, v in zip(cfg.joint_names, at) if n.startswith(f"{leg_at}_"))
    return [f"sim.mjcf: the model's {leg_at} foot is {1000 * worst:.0f} mm from where the config puts it "
            f"(at {pose} rad): the controller's geometry (hip_offset, abad_link, hip_link, knee_link, "
            "foot_radius) or joint_map (wire_order, direction, offset) is not this model's; correct them "
            "from the model, or every stand and step lands elsewhere than planned"]


def _soles(cfg: Config, model: Any, names: list[str], jm: Any) -> list[str]:
    """A humanoid's soles where its leg kinematics put them (in the torso
    frame), over poses of the legs inside the joint limits."""
    if not isinstance(cfg.geometry, HumanoidGeometry):
        return []
    kin = HumanoidLegKinematics(cfg.geometry)
    data = mujoco.MjData(model)
    qadr = np.array([model.jnt_qposadr[model.joint(n).id] for n in names])
    legs = np.asarray(cfg.leg_indices)
    rng = np.random.default_rng(0)
    worst, at, side_at = 0.0, np.zeros(0), ""
    for _ in range(POSES):
        q = np.zeros(cfg.num_joints)
        q[legs] = rng.uniform(cfg.q_min[legs], cfg.q_max[legs])
        data.qpos[:] = model.qpos0
        data.qpos[0:7] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
        data.qpos[qadr] = jm.positions_to_wire(q)
        mujoco.mj_kinematics(model, data)
        for i, side in enumerate(LEG_SIDES):
            error = float(np.linalg.norm(data.site(f"{side}_sole").xpos
                                         - kin.forward(q[legs][6 * i:6 * i + 6], side).position))
            if error > worst:
                worst, at, side_at = error, q[legs][6 * i:6 * i + 6], side
    if worst <= FEET_TOLERANCE:
        return []
    pose = ", ".join(f"{v:+.2f}" for v in at)
    return [f"sim.mjcf: the model's {side_at} sole is {1000 * worst:.0f} mm from where the config puts it "
            f"(the {side_at} leg at [{pose}] rad, hip yaw to ankle roll): the controller's geometry "
            "(hip_offset, thigh, shank, ankle_height, hip_yaw_axis) or joint_map (direction, offset per "
            "joint) is not this model's; move each joint of the model by +0.3 rad and compare the foot's "
            "motion with the controller's convention (docs/NEW_ROBOT.md \"A new humanoid\")"]


def _axes(cfg: Config, model: Any, names: list[str], jm: Any) -> list[str]:
    """A humanoid's joint axes at the controller's zero pose (the model's
    joints at their offsets) against the controller's convention: the
    direction each implies, where the axis lies along the convention's."""
    if not isinstance(cfg.geometry, HumanoidGeometry):
        return []
    data = mujoco.MjData(model)
    data.qpos[:] = model.qpos0
    data.qpos[0:7] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    qadr = np.array([model.jnt_qposadr[model.joint(n).id] for n in names])
    data.qpos[qadr] = jm.positions_to_wire(np.zeros(cfg.num_joints))
    mujoco.mj_kinematics(model, data)
    order = list(jm.order)
    wrong, across = [], []
    for k, name in enumerate(cfg.joint_names):
        side, base = ("right", name[2:]) if name.startswith("r_") else \
            ("left", name[2:]) if name.startswith("l_") else ("", name)
        want = cfg.geometry.hip_yaw_axis.get(side, AXES["hip_yaw"]) if base == "hip_yaw" else AXES.get(base)
        if want is None:
            continue
        axis = data.xaxis[model.joint(names[order.index(k)]).id]
        along = float(np.dot(axis, want) / np.linalg.norm(want))
        if abs(along) < AXIS_ALONG:
            across.append(f"{name} ({_axis_name(axis)}, the controller's {_axis_name(np.asarray(want))})")
        elif np.sign(along) != np.sign(jm.direction[k]):
            wrong.append(f"{name} (the model's axis {_axis_name(axis)}: direction {int(np.sign(along))}, "
                         f"the config {jm.direction[k]:g})")
    out = []
    if wrong:
        out.append(f"sim.mjcf: joint_map.direction disagrees with the model's joint axes on "
                   f"{_joints(len(wrong))}: {', '.join(wrong)}; at the controller's zero pose the model "
                   "turns them the other way from the controller's convention (hip yaw, head yaw about z; "
                   "rolls about x; pitches, knees and elbows about y; the same on both sides)")
    if across:
        out.append(f"sim.mjcf: the model turns {_joints(len(across))} about another axis than the "
                   f"controller's: {', '.join(across)}; no direction follows from the axes, so check that "
                   "each moves the way the config's poses expect (motionctl joint-check)")
    return out


def _joints(n: int) -> str:
    return f"{n} joint" if n == 1 else f"{n} joints"


def _axis_name(axis: np.ndarray) -> str:
    """+x, -y, ... for an axis along one of the frame's, else its figures."""
    i = int(np.argmax(np.abs(axis)))
    if abs(axis[i]) >= AXIS_ALONG:
        return ("+" if axis[i] > 0 else "-") + "xyz"[i]
    return "[" + ", ".join(f"{v:.2f}" for v in axis) + "]"


def _damping(model: Any, names: list[str]) -> list[str]:
    damped = [(n, float(model.dof_damping[model.jnt_dofadr[model.joint(n).id]])) for n in names]
    damped = [(n, d) for n, d in damped if d > DAMPING_WARN]
    if not damped:
        return []
    worst = max(d for _, d in damped)
    return [f"sim.mjcf: {len(damped)} joints carry damping (up to {worst:g} N m s/rad, "
            f"{damped[0][0]} ...): the simulator's motors run the driver's law on top of it, and the "
            "controller adds it back as feed-forward (joint_damping: the model's unless written; without "
            "it a maker's 2 N m s/rad cost a trot 40 % of its speed). Where the model's damping stands in "
            "for its own servo's (a position actuator has no speed gain), the real joint has less: write "
            "joint_damping with what it has beyond its motor"]


def _soft_feet(cfg: Config, model: Any) -> list[str]:
    out = []
    for leg in cfg.legs:
        g = model.geom(f"{leg}_foot")
        timeconst, dmin = float(g.solref[0]), float(g.solimp[0])
        if timeconst > SOFT_TIMECONST or (g.solref[0] > 0 and dmin < SOFT_DMIN):
            out.append(f"sim.mjcf: the {leg} foot's contact is softer than MuJoCo's default (solref "
                       f"{g.solref.tolist()}, solimp {g.solimp[:3].tolist()}): the feet sink (the controller "
                       "stands on the sink the model shows, geometry.foot_sink, unless written) and a lower "
                       "leg may rest on the floor while the robot stands (a shank contact, not a fall); "
                       "use the default unless the real foot is that soft")
            break           # one line for the four feet
    return out


def _torques(cfg: Config, spec: Any, names: list[str], jm: Any) -> list[str]:
    """The maker's actuators' torque limits (forcerange, else ctrlrange times
    gear for a motor, else the joint's actuatorfrcrange) against the
    config's, per joint."""
    limit = cfg.torque_limit[jm.order]             # per wire slot, as the simulator's motors use it
    theirs: dict[str, float] = {}
    for actuator in spec.actuators:
        if actuator.trntype != mujoco.mjtTrn.mjTRN_JOINT or actuator.target not in names:
            continue
        gear = abs(float(actuator.gear[0])) or 1.0
        if actuator.forcelimited == mujoco.mjtLimited.mjLIMITED_TRUE or \
                (actuator.forcelimited == mujoco.mjtLimited.mjLIMITED_AUTO and actuator.forcerange[1] > 0):
            theirs[actuator.target] = float(max(abs(actuator.forcerange[0]), abs(actuator.forcerange[1])))
        elif actuator.ctrllimited != mujoco.mjtLimited.mjLIMITED_FALSE and actuator.ctrlrange[1] > 0 \
                and actuator.biastype == mujoco.mjtBias.mjBIAS_NONE:
            theirs[actuator.target] = float(max(abs(actuator.ctrlrange[0]), abs(actuator.ctrlrange[1]))) * gear
    for joint in spec.joints:                      # a joint's own actuator force range
        if joint.name in names and joint.name not in theirs and (
                joint.actfrclimited == mujoco.mjtLimited.mjLIMITED_TRUE or
                (joint.actfrclimited == mujoco.mjtLimited.mjLIMITED_AUTO and joint.actfrcrange[1] > 0)):
            theirs[joint.name] = float(max(abs(joint.actfrcrange[0]), abs(joint.actfrcrange[1])))
    missing = [n for n in names if n not in theirs]
    out = []
    if missing:
        out.append(f"sim.mjcf: the model gives no torque limit for {len(missing)} joints ({missing[0]} ...): "
                   "the simulator uses the config's torque_limit; check it against the motor's data sheet")
    differ = [(n, theirs[n], float(limit[k])) for k, n in enumerate(names)
              if n in theirs and abs(theirs[n] - limit[k]) > TORQUE_TOLERANCE * theirs[n]]
    if differ:
        n, model_limit, config_limit = differ[0]
        out.append(f"sim.mjcf: torque_limit differs from the model's actuators on {len(differ)} joints "
                   f"({n}: the model {model_limit:g} N m, the config {config_limit:g}): the simulated motors "
                   "use the config's; make them agree with the motor's data")
    return out
