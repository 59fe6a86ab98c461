"""A quadruped's `mass_model` and `two_leg` sections: where the robot's mass
sits, and the figures of mode 64's balance on the rear feet
(controller/motion/two_leg.py, controller/behaviours/two_leg.py)."""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from controller.robot.config.reader import Reader


@dataclass(frozen=True)
class MassModel:
    """Where the robot's mass is, for its centre of mass at any joint angles:
    the trunk (mass, centre in the body frame) and per leg the abad link (at
    the abad axis), the thigh (its centre `thigh_at` m down the thigh) and
    the shank (`shank_at` m down the shank); a rotor counts with the link it
    sits in."""
    trunk: float
    trunk_com: tuple[float, float, float]
    abad: float
    thigh: float
    thigh_at: float
    shank: float
    shank_at: float

    @property
    def total(self) -> float:
        return self.trunk + 4 * (self.abad + self.thigh + self.shank)


@dataclass(frozen=True)
class TwoLegGains:
    """The sagittal LQR's weights (each the stray it tolerates) and the PD
    gains of the other axes (accelerations per metre or radian of error)."""
    q_x: float = 0.06           # m: the centre of mass off the feet
    q_pitch: float = 0.165      # rad: the trunk off its pitch reference
    q_vx: float = 1.4           # m/s
    q_pitch_rate: float = 0.27  # rad/s
    r_force: float = 20.0       # N of horizontal push it may spend (larger: stiffer, noisier)
    height_kp: float = 240.0    # 1/s^2
    height_kd: float = 50.0     # 1/s
    side_kp: float = 80.0
    side_kd: float = 14.0
    roll_kp: float = 60.0
    roll_kd: float = 10.0
    yaw_kp: float = 30.0
    yaw_kd: float = 6.0
    velocity_filter_s: float = 0.0018  # s: low-pass of the velocities from joint rates and the gyro
    friction: float = 0.4             # the friction pyramid the feet's forces stay inside
    # s: the sagittal state is predicted this far ahead (the LQR's own model
    # driven by the last force) before the gain acts on it: the motors apply
    # a force some time after the state it was computed from was read.
    latency_s: float = 0.0
    # m: how far the rear feet's rolling resistance moves their centre of
    # pressure, a moment of this times the load against a foot that rolls
    # on the floor (MuJoCo's rolling friction, a maker's rubber toe): read
    # from the robot's MJCF when not written (config loader), 0 for none.
    foot_rolling: float = 0.0


@dataclass(frozen=True)
class TwoLegPlan:
    """The stages' figures (durations in s, angles in rad nose up, heights in m)."""
    kneel_s: float = 1.5
    kneel_height: float = 0.21       # body origin over the feet's centres, kneeling
    kneel_pitch: float = 0.25
    kneel_margin: float = 0.005      # the centre of mass this far ahead of the rear feet
    rear_s: float = 2.3
    pitch: float = 1.25              # on two legs
    height: float = 0.37             # centre of mass over the rear feet's contact, on two legs
    min_pitch: float = 1.0           # the rear-up failed below this
    greet_s: float = 1.0
    wave: float = 0.25               # the front right abad swings this far each way
    wave_hz: float = 1.0
    reach_s: float = 0.5
    land_s: float = 2.0
    lean_s: float = 0.4
    lean: float = 0.05               # the centre of mass led this far ahead of the rear feet
    stand_s: float = 0.9
    tuck: tuple[float, float, float] = (0.0, -0.2, 2.2)   # front legs' joints on two legs
    rear_kd: float = 0.3             # N m s/rad on the rear joints (torque control, kp 0)
    lose_x: float = 0.10             # centre of mass this far off the feet: the balance lost it
    lose_pitch: float = 0.7          # trunk this far off its reference: lost
    pitch_integral: float = 0.008    # m per rad s: slow correction of the centre of mass model
    joint_friction: float = 0.246    # N m: a joint's dry friction (gestures 6 and 7 feel past it)
    # rad; 0: the rear-up's pitch reference runs on the clock. Above 0 its
    # clock slows while the trunk lags it, stopping at this lag (a trunk
    # held back by a calf on the floor is waited for, not left behind), and
    # the centre of mass's height follows that reference.
    rear_lead: float = 0.0
    # The height's share of its rise at a share s of the pitch's:
    # 1 - (1 - s)^k. 1: in proportion; above 1 the legs straighten early,
    # so a shank that lies flat kneeling stands up before the trunk does.
    rear_height_ease: float = 1.0


@dataclass(frozen=True)
class TwoLegConfig:
    plan: TwoLegPlan
    gains: TwoLegGains


# Every key and its accepted range (lo, hi); `tuck`'s range is per joint.
PLAN_KEYS: dict[str, tuple[float, float]] = {
    "kneel_s": (0.1, 10.0), "kneel_height": (0.05, 1.0), "kneel_pitch": (-0.5, 1.0),
    "kneel_margin": (-0.1, 0.1), "rear_s": (0.3, 10.0), "pitch": (0.5, 1.5),
    "height": (0.05, 1.0), "min_pitch": (0.2, 1.5), "greet_s": (0.1, 60.0), "wave": (0.0, 1.0),
    "wave_hz": (0.1, 5.0), "reach_s": (0.1, 10.0), "land_s": (0.3, 10.0), "lean_s": (0.1, 10.0),
    "lean": (0.0, 0.1), "stand_s": (0.1, 10.0), "tuck": (-3.2, 3.2), "rear_kd": (0.0, 10.0),
    "lose_x": (0.01, 0.5), "lose_pitch": (0.1, 1.5), "pitch_integral": (0.0, 1.0),
    "joint_friction": (0.0, 5.0), "rear_lead": (0.0, 1.0), "rear_height_ease": (1.0, 5.0),
}
BALANCE_KEYS: dict[str, tuple[float, float]] = {
    "q_x": (0.0001, 1.0), "q_pitch": (0.001, 3.0), "q_vx": (0.001, 10.0),
    "q_pitch_rate": (0.001, 30.0), "r_force": (0.1, 1000.0), "height_kp": (0.0, 2000.0),
    "height_kd": (0.0, 500.0), "side_kp": (0.0, 2000.0), "side_kd": (0.0, 500.0),
    "roll_kp": (0.0, 2000.0), "roll_kd": (0.0, 500.0), "yaw_kp": (0.0, 2000.0),
    "yaw_kd": (0.0, 500.0), "velocity_filter_s": (0.0001, 0.1), "friction": (0.05, 2.0),
    "latency_s": (0.0, 0.02), "foot_rolling": (0.0, 0.05),
}


def _read(s: Reader, cls: type, table: dict[str, tuple[float, float]]) -> object:
    """A dataclass of numbers from the mapping `s` reads (missing keys keep
    their defaults; unknown keys are refused)."""
    default = cls()
    unknown = sorted(set(s.data) - set(table))
    if unknown:
        raise s.fail(unknown[0], f"unknown key (known: {', '.join(table)})")
    values: dict[str, object] = {}
    for f in fields(cls):
        lo, hi = table[f.name]
        current = getattr(default, f.name)
        if isinstance(current, tuple):
            triple = tuple(float(v) for v in s.vector(f.name, len(current), s.data.get(f.name, list(current))))
            if not all(lo <= v <= hi for v in triple):
                raise s.fail(f.name, f"each must be in [{lo:g}, {hi:g}]")
            values[f.name] = triple
        else:
            values[f.name] = s.number(f.name, lo, hi, current)
    return cls(**values)


def load_two_leg(r: Reader) -> TwoLegConfig:
    """`two_leg` (every key optional): the stages at its top level, the
    balance's weights and gains under `two_leg.balance`."""
    if "two_leg" not in r.data:
        return TwoLegConfig(TwoLegPlan(), TwoLegGains())
    tr = r.sub("two_leg")
    plan_data = {k: v for k, v in tr.data.items() if k != "balance"}
    plan = _read(Reader(tr.path, plan_data, tr.where), TwoLegPlan, PLAN_KEYS)
    gains = _read(tr.sub("balance"), TwoLegGains, BALANCE_KEYS) if "balance" in tr.data else TwoLegGains()
    assert isinstance(plan, TwoLegPlan) and isinstance(gains, TwoLegGains)
    if plan.min_pitch > plan.pitch:
        raise tr.fail("min_pitch", f"{plan.min_pitch} is above the pitch aimed for, {plan.pitch}")
    return TwoLegConfig(plan, gains)


def load_mass_model(r: Reader) -> MassModel | None:
    """`mass_model`: trunk {mass, com}, abad (kg), thigh and shank {mass, at}."""
    if "mass_model" not in r.data:
        return None
    mr = r.sub("mass_model")
    trunk, thigh, shank = mr.sub("trunk"), mr.sub("thigh"), mr.sub("shank")
    com = trunk.vector("com", 3)
    if np.any(np.abs(com) > 1.0):
        raise trunk.fail("com", "the trunk's centre of mass is over 1 m from the body origin")
    return MassModel(trunk=trunk.number("mass", 0.01, 1000.0), trunk_com=(float(com[0]), float(com[1]), float(com[2])),
                     abad=mr.number("abad", 0.0, 100.0),
                     thigh=thigh.number("mass", 0.0, 100.0), thigh_at=thigh.number("at", 0.0, 2.0),
                     shank=shank.number("mass", 0.0, 100.0), shank_at=shank.number("at", 0.0, 2.0))
