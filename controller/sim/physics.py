"""The robot as a MuJoCo physics body (model: controller/sim/model.py).

Each 2 ms tick takes the kernel's joint command (position, velocity, gains,
feed-forward torque) and runs the motor law as a motor driver does, at every
0.5 ms physics step: tau = tau_ff + kp (q_des - q) + kd (qd_des - qd),
clipped to the joint's torque limit. The command's gains act from the tick
they arrive. The controller sees only what a robot's sensors give:
joint_state and imu, with the imperfections of controller/sim/sensors.py.
The base pose, velocity and contacts are ground truth for tests and tools
(`truth()`, the sim_state message), never for the controller.

A World with `actuators` (controller/sim/actuators.py) puts the real motor
between the command and the joint: the command acts after its transport
delay, each physics step's torque stays inside the torque-speed envelope,
the driver holds the rotor side of the gear's play, and the encoder counts
in steps.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import mujoco
import numpy as np

from controller import msgs
from controller.robot.angles import quat_rpy, rpy_quat
from controller.robot.config import Config
from controller.robot.mass_properties import load_figures
from controller.robot.mjcf_figures import reach_below
from controller.robot.motors import envelope
from controller.sim.actuators import Actuators, MotorFigures
from controller.sim.bridge import WireBridge
from controller.sim.faults import Fault, FaultInjector
from controller.sim.mjcf import robot_mjcf
from controller.sim.model import physics_path
from controller.sim.own_model import model_joints
from controller.sim.sensors import Reading, SensorConfig, Sensors
from controller.sim.world import OBSTACLE, OBSTACLE_PARK, World, world_model

DROP_MARGIN = 0.002   # m: the robot starts this far above the floor
PLACE_TRIES = 5       # lifts out of uneven ground at the start


@dataclass(frozen=True)
class Truth:
    """Ground truth of the physics body, for tests and tools."""
    position: np.ndarray          # base origin in the world (m)
    quaternion: np.ndarray        # base orientation, w x y z
    velocity: np.ndarray          # base linear velocity in the world (m/s)
    angular_velocity: np.ndarray  # base angular velocity in the base frame (rad/s)
    contacts: frozenset[str]      # robot geoms touching the ground (the floor or terrain)

    @property
    def rpy(self) -> tuple[float, float, float]:
        return quat_rpy(self.quaternion)


def geom_labels(model: mujoco.MjModel) -> list[str]:
    """Each geom's name, or for an unnamed one (a maker's model often leaves
    its collision shapes unnamed) its body's name and its place among that
    body's geoms, "FL_calf/1": every geom told apart in traces and checks."""
    labels, seen = [], np.zeros(model.nbody, dtype=int)
    for g in range(model.ngeom):
        body = int(model.geom_bodyid[g])
        name = model.geom(g).name
        labels.append(name or f"{model.body(body).name or f'body{body}'}/{seen[body]}")
        seen[body] += 1
    return labels


class PhysicsRobot:
    def __init__(self, cfg: Config, world: World | None = None) -> None:
        """`world` changes the world for one scorecard row (model.py's World:
        floor friction, terrain, trunk mass); None is the unchanged model."""
        self.cfg = cfg
        self.world = world or World()
        xml = robot_mjcf(cfg)
        self.model = world_model(xml, self.world) if self.world.changed else mujoco.MjModel.from_xml_string(xml)
        self.data = mujoco.MjData(self.model)
        ticks = cfg.dt / self.model.opt.timestep
        if abs(ticks - round(ticks)) > 1e-9:
            raise ValueError(f"{cfg.path}: tick {cfg.dt} s is not a multiple of the physics "
                             f"step {self.model.opt.timestep} s")
        self.substeps = int(round(ticks))
        # The model's joints, and the map from the controller's arrays to
        # them: the identity for the generated model, the robot's joint map
        # for its own MJCF (controller/sim/own_model.py). Every public array
        # here (q, qd, tau, step's arguments) is in the controller's order and
        # convention; the model's own are *_model.
        names, self.model_map = model_joints(cfg)
        ids = [self.model.joint(n).id for n in names]
        self.qadr = np.array([self.model.jnt_qposadr[i] for i in ids])
        self.vadr = np.array([self.model.jnt_dofadr[i] for i in ids])
        self.act = np.array([self.model.actuator(n).id for n in names])
        self.limit = cfg.torque_limit.astype(float)
        self._kp, self._kd = np.zeros(len(names)), np.zeros(len(names))
        self._q_des, self._qd_des, self._tau_ff = np.zeros(len(names)), np.zeros(len(names)), np.zeros(len(names))
        self.geom_names = geom_labels(self.model)
        # The ground: the floor and any terrain, the world body's geoms.
        self.is_ground = self.model.geom_bodyid == 0
        self.ground_names = {n for n, ground in zip(self.geom_names, self.is_ground) if ground}
        pose = cfg.sim.get("start_pose", "fold")
        start = cfg.poses.get(pose)
        if start is None:
            raise ValueError(f"{cfg.path}: sim.start_pose: {pose!r} is not one of the "
                             f"poses {sorted(cfg.poses)}")
        self._place(start)
        changes = self.world.actuator_changes()
        self.actuators = None if changes is None else self._real_actuators(changes)
        self.tau = np.zeros(cfg.num_joints)
        self.faults = FaultInjector(cfg.num_joints)
        self.step_ns = 0
        self.battery_voltage = self.full_voltage = float(cfg.sim.get("battery_voltage", 25.2))
        self.bridge = WireBridge(cfg)     # joint_state out, joint_cmd in: the robot's convention
        self.imu_msg = msgs.imu_t()
        self.state_msg = msgs.sim_state_t()
        self.state_msg.num_joints = cfg.num_joints
        self.acc_adr = self.model.sensor_adr[self.model.sensor("imu_acc").id]
        self.sensors = Sensors(SensorConfig.from_sim(cfg.sim, cfg.path), cfg.dt)
        self._measure()

    def _real_actuators(self, changes: dict) -> Actuators:
        """The real motors of the physics file's `motor` figures with a
        World's changes, mapped to the model's joints."""
        path = physics_path(self.cfg)
        section = load_figures(path).get("motor") if path.is_file() else None
        f = MotorFigures.load(self.cfg, section, changes, path)
        mm, m = self.model_map, self.model
        if f.frictionloss is not None:
            m.dof_frictionloss[self.vadr] = f.frictionloss
        m.actuator_forcelimited[self.act] = 1
        return Actuators(f, mm.plain_to_wire(self.limit), mm.plain_to_wire(f.knee_speed),
                         mm.plain_to_wire(f.no_load_speed), mm.plain_to_wire(f.backlash),
                         m.opt.timestep, self.data.qpos[self.qadr].copy())

    def inject(self, fault: Fault) -> None:
        """Break a part now (controller/sim/faults.py)."""
        self.faults.add(fault, float(self.data.time))
        self.faults.update(self)

    def place_obstacle(self, there: bool = True) -> None:
        """Put the world's obstacle (World.obstacle) where it belongs, now (a
        hand held into the robot's way), or (`there` False) take it away."""
        if not self.world.obstacle:
            raise ValueError("this world has no obstacle")
        body = self.model.body(OBSTACLE)
        x, y, z = self.world.obstacle[:3]
        self.data.mocap_pos[body.mocapid[0]] = (x, y if there else y + OBSTACLE_PARK, z)

    def place(self, q: np.ndarray, rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        """Start over: joints at q, the base at roll/pitch/yaw `rpy` (e.g.
        (pi, 0, 0): on its back), the lowest point just above the floor."""
        self._place(np.asarray(q, dtype=float), rpy)
        if self.actuators is not None:
            self.actuators.rotor[:] = self.data.qpos[self.qadr]
        self._measure()

    def _place(self, q: np.ndarray, rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> None:
        d = self.data
        d.qpos[:] = 0.0
        d.qpos[3:7] = rpy_quat(*rpy)
        d.qpos[self.qadr] = self.model_map.positions_to_wire(q)
        mujoco.mj_kinematics(self.model, d)
        m = self.model                  # drawn-only geoms (no contact bits) are never the lowest point
        lowest = min(float(d.geom_xpos[g][2] - reach_below(m, d, g)) for g in range(m.ngeom)
                     if not self.is_ground[g] and (m.geom_contype[g] or m.geom_conaffinity[g]))
        d.qpos[2] -= lowest - DROP_MARGIN - self.world.start_height
        d.qvel[:] = 0.0
        d.time = 0.0
        mujoco.mj_forward(self.model, d)
        # Ground that is not level under the whole body (a side slope, rough
        # ground): lift the body out of it.
        for _ in range(PLACE_TRIES):
            depth = self._deepest()
            if depth >= 0.0:
                break
            d.qpos[2] += DROP_MARGIN - depth
            mujoco.mj_forward(self.model, d)

    def _deepest(self) -> float:
        """The deepest penetration of the robot into the ground (m, < 0), or 0."""
        d = self.data
        pairs = d.contact.geom[:d.ncon]
        ground = self.is_ground[pairs].any(axis=1) & ~self.is_ground[pairs].all(axis=1)
        dist = d.contact.dist[:d.ncon][ground]
        return float(min(0.0, dist.min())) if len(dist) else 0.0

    @property
    def q(self) -> np.ndarray:
        return self.model_map.positions_from_wire(self.data.qpos[self.qadr])

    @property
    def qd(self) -> np.ndarray:
        return self.model_map.signed_from_wire(self.data.qvel[self.vadr])

    def step(self, q_des: np.ndarray, qd_des: np.ndarray, kp: np.ndarray, kd: np.ndarray,
             tau_ff: np.ndarray, dt: float) -> None:
        """One controller tick of physics under the given joint command."""
        if abs(dt - self.cfg.dt) > 1e-12:
            raise ValueError(f"physics runs at the config's tick {self.cfg.dt} s, not {dt} s")
        started = time.perf_counter_ns()
        m, d, mm = self.model, self.data, self.model_map
        act = self.act
        if not mm.identity:         # a robot's own MJCF: its joints in its convention
            q_des = mm.positions_to_wire(q_des, self._q_des)
            qd_des = mm.signed_to_wire(qd_des, self._qd_des)
            tau_ff = mm.signed_to_wire(tau_ff, self._tau_ff)
            kp, kd = mm.plain_to_wire(kp, self._kp), mm.plain_to_wire(kd, self._kd)
        # The driver's law, by MuJoCo at every physics step (model.py's motors):
        # force = tau_ff + kp (q_des - q) + kd (qd_des - qd), clipped.
        ctrl = tau_ff + kp * q_des + kd * qd_des
        if self.faults.any:
            ctrl = self._broken(ctrl, kp)
        if self.actuators is None:
            m.actuator_biasprm[act, 1] = -kp
            m.actuator_biasprm[act, 2] = -kd
            d.ctrl[act] = ctrl
            mujoco.mj_step(m, d, nstep=self.substeps)
        else:
            self._step_real(ctrl, kp, kd)
        self.tau = mm.signed_from_wire(d.actuator_force[act])
        self._measure()
        self.step_ns = time.perf_counter_ns() - started     # what this tick of physics cost

    def _broken(self, ctrl: np.ndarray, kp: np.ndarray) -> np.ndarray:
        """This tick's broken parts (model order): each driver's law on its
        own encoder's reading, each motor's torque limit scaled."""
        f, mm = self.faults, self.model_map
        f.update(self)
        offset = mm.signed_to_wire(f.driver_offset(self.q))
        limit = mm.plain_to_wire(self.limit * f.torque_scale)
        if self.actuators is not None:
            self.actuators.limit = limit
        else:
            self.model.actuator_forcerange[self.act, 0] = -limit
            self.model.actuator_forcerange[self.act, 1] = limit
        self.battery_voltage = self.full_voltage * f.voltage_scale
        return ctrl - kp * offset

    def _step_real(self, ctrl: np.ndarray, kp: np.ndarray, kd: np.ndarray) -> None:
        """One tick through the real motors (controller/sim/actuators.py),
        a physics step at a time: the command of `delay_s` ago, the law on
        the rotor side of the play, the torque inside the envelope."""
        m, d, act, a = self.model, self.data, self.act, self.actuators
        assert a is not None
        a.command(ctrl, kp, kd, self.substeps)
        for _ in range(self.substeps):
            ctrl, kp, kd = a.next()
            offset = a.follow(d.qpos[self.qadr])
            low, high = envelope(d.qvel[self.vadr], a.limit, a.knee, a.no_load)
            m.actuator_forcerange[act, 0] = low
            m.actuator_forcerange[act, 1] = high
            m.actuator_biasprm[act, 1] = -kp
            m.actuator_biasprm[act, 2] = -kd
            d.ctrl[act] = ctrl - kp * offset
            mujoco.mj_step(m, d)
        a.follow(d.qpos[self.qadr])

    def _measure(self) -> None:
        """Sample the sensors on the state the tick ended in. Orientation and
        rate come from that state; the accelerometer from the last physics
        step's forward pass (0.5 ms earlier), as MuJoCo computes it."""
        d = self.data
        accel = d.sensordata[self.acc_adr:self.acc_adr + 3].copy()
        if not np.any(accel):        # before the first step: at rest
            accel = self._gravity_in_body()
        q = self.q
        a = self.actuators
        if a is not None:
            q = a.encoder(self.model_map.positions_from_wire(a.rotor))
        if self.faults.any:
            q = q + self.faults.encoder_offset
        self.sensors.measure(q, self.qd, self.tau, d.qpos[3:7].copy(), d.qvel[3:6].copy(),
                             accel)

    def _gravity_in_body(self) -> np.ndarray:
        rot = self.data.xmat[self.model.body("trunk").id].reshape(3, 3)
        return rot.T @ -self.model.opt.gravity

    @property
    def reading(self) -> Reading:
        """What the sensors report now (noisy, delayed)."""
        return self.sensors.reading

    def command(self, data: bytes) -> None:
        """One controller tick of physics under a joint_cmd as the robot's
        bridge receives it (its joint convention); ValueError if it is not
        one this robot takes."""
        c = self.bridge.command(data)
        self.step(c.q, c.qd, c.kp, c.kd, c.tau, self.cfg.dt)

    def joint_state(self, utime: int) -> bytes:
        """The joint_state the robot's bridge publishes (its joint convention)."""
        r = self.reading
        return self.bridge.joint_state(utime, r.q, r.qd, r.tau, self.battery_voltage)

    def imu(self, utime: int) -> bytes:
        r, msg = self.reading, self.imu_msg
        msg.utime = utime
        msg.quaternion = r.quaternion.tolist()
        msg.gyro = r.gyro.tolist()
        msg.accel = r.accel.tolist()
        return msg.encode()

    def sim_state(self, utime: int) -> bytes:
        t, msg = self.truth(), self.state_msg
        msg.utime = utime
        msg.sim_time = float(self.data.time)
        msg.position = t.position.tolist()
        msg.quaternion = t.quaternion.tolist()
        msg.velocity = t.velocity.tolist()
        msg.angular_velocity = t.angular_velocity.tolist()
        msg.q = self.q.tolist()
        msg.qd = self.qd.tolist()
        msg.tau = self.tau.tolist()
        msg.contacts = sorted(t.contacts)
        msg.num_contacts = len(msg.contacts)
        return msg.encode()

    def messages(self, utime: int, truth: bool = True) -> list[tuple[str, bytes]]:
        """What the simulator publishes before a tick, by channel key;
        `truth` False: the sensors only, for a caller that never reads the
        ground truth (the in-process runs skip encoding it every tick)."""
        sensors = [("joint_state", self.joint_state(utime)), ("imu", self.imu(utime))]
        return sensors + [("sim_state", self.sim_state(utime))] if truth else sensors

    def truth(self) -> Truth:
        d = self.data
        pairs = d.contact.geom[:d.ncon]
        on_ground = self.is_ground[pairs]
        touching = {self.geom_names[g] for g in pairs[on_ground[:, 1], 0]} | \
            {self.geom_names[g] for g in pairs[on_ground[:, 0], 1]}
        touching -= self.ground_names
        return Truth(d.qpos[0:3].copy(), d.qpos[3:7].copy(), d.qvel[0:3].copy(),
                     d.qvel[3:6].copy(), frozenset(touching))
