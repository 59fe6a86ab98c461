"""The world around the robot in a physics run: the floor's friction and
softness, terrain (ramps along or across the path, stairs up and down, a
curb, a platform to step off, rough ground, slippery patches), a payload on
the trunk, an obstacle in the air, and the actuators' model
(controller/sim/actuators.py).

Worlds are data. A scorecard row's `world:` (and `motionctl sim --world`)
is either a mapping of WORLD_KEYS or the name of a world in
config/physics/worlds.yaml; `use: NAME` in a mapping starts from that named
world and changes what the mapping gives. The default World is the
unchanged model: a flat floor of the physics file's friction, ideal motors.

The terrain starts from the robot's start (the origin, facing +x); every
piece is ground, touched as the floor is, and its geoms' names start with
`terrain`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from typing import Any

import mujoco
import numpy as np
import yaml

from controller.robot.config import ConfigError
from controller.robot.resources import CONFIG_DIR

WORLDS_FILE = CONFIG_DIR / "physics" / "worlds.yaml"

TERRAIN_WIDTH = 2.0         # m across the path (y), centred on the start
RAMP_LENGTH = 4.0           # m along the incline
TERRAIN_THICKNESS = 0.1     # m: a ramp is a tilted box this thick
STEP_DEPTH = 4.0            # m: the step is a platform this long
LANDING = 2.0               # m of flat top after the last stair up
OBSTACLE = "obstacle"       # the mocap body of World.obstacle
OBSTACLE_PARK = 10.0        # m to the side where it waits
OBSTACLE_SOFTNESS = 0.05    # s: its contact's time constant (a hand, not a wall)
PLATFORM_BACK = 2.0         # m behind the start: where a start platform begins
PATCH_THICKNESS = 0.003     # m: a slippery patch is a sheet this thick on the floor
# Rough ground: a heightfield over this area (m behind / ahead of the start,
# half width), flat within ROUGH_FLAT m of the start and blending in over
# ROUGH_BLEND m, at ROUGH_CELL m a sample.
ROUGH_BEHIND, ROUGH_AHEAD, ROUGH_HALF_WIDTH = 3.0, 9.0, 3.0
ROUGH_FLAT, ROUGH_BLEND, ROUGH_CELL = 0.35, 0.3, 0.02
ROUGH_BASE = 0.05           # m of solid under the lowest point of the heightfield
PAYLOAD_DENSITY = 2000.0    # kg/m^3: how big the drawn payload block is
GROUND_RGBA = [0.62, 0.6, 0.55, 1.0]
PATCH_RGBA = [0.7, 0.85, 0.95, 1.0]


@dataclass(frozen=True)
class World:
    """What one run changes in the world, and nothing else.

    friction: the sliding friction of the floor and all terrain but slippery
    patches (None: the physics file's); it is the contact's, whatever the
    robot's geoms say. trunk_mass_scale: the trunk body's mass and inertia
    times this. slope: a ramp at this many degrees (> 0 up, < 0 down)
    starting `at` m ahead; downhill the robot starts on a platform as high as
    the ramp descends; `across: true` turns it to rise to the robot's left
    (+y) under the whole path, the robot placed on it (a row's start_rpy
    may roll it to the slope). step: a platform this
    high (m) from `at` on. curb: [height, depth] m, a single block at `at`.
    drop: the robot starts on a platform this high that ends `at` m ahead.
    stairs: [rise, run, count] m, m, steps from `at` (rise > 0 up to a
    landing, < 0 down from a platform the robot starts on). rough: [rms,
    correlation length, seed (, reach)]: a heightfield of Gaussian heights
    with this RMS (m) and correlation length (m, where the correlation falls
    to 1/e), flat at the start, reaching 3 m behind, 9 m ahead and 3 m to
    each side (or `reach` m every way). patches: [[friction, at, length], ...], slippery
    sheets across the path. soft: [time constant s, damping ratio], the
    ground's contact softness (MuJoCo's solref; default 0.02, 1).
    payload: [share of the robot's mass, x, y, z]: a block that heavy fixed
    on the trunk at (x, y, z) m in the trunk frame. obstacle: a fixed box
    in the air, (x, y, z, half x, half y, half z). actuators: the real
    actuators' model (controller/sim/actuators.py) with these changes to the
    physics file's figures ({} for the file's own); None: ideal motors.
    """
    friction: float | None = None
    trunk_mass_scale: float = 1.0
    slope: float = 0.0          # degrees
    across: bool = False
    step: float = 0.0           # m
    curb: tuple[float, ...] = ()
    drop: float = 0.0           # m
    at: float = 0.5             # m ahead of the start
    stairs: tuple[float, ...] = ()
    rough: tuple[float, ...] = ()
    patches: tuple[tuple[float, ...], ...] = ()
    soft: tuple[float, ...] = ()
    payload: tuple[float, ...] = ()
    obstacle: tuple[float, ...] = ()
    actuators: tuple[tuple[str, Any], ...] | None = None
    name: str = field(default="", compare=False)

    @classmethod
    def from_spec(cls, spec: dict[str, Any] | str | None, where: str) -> World:
        """A world from a row's `world:`: a mapping of WORLD_KEYS, or a name in
        config/physics/worlds.yaml. ConfigError names `where` and the key."""
        if spec is None:
            return cls()
        if isinstance(spec, str):
            spec = {"use": spec}
        if not isinstance(spec, dict):
            raise ConfigError(f"{where}: world: a mapping or a world's name, not {spec!r}")
        # Named in the label only when it is the named world unchanged.
        name = str(spec["use"]) if set(spec) == {"use"} else ""
        seen: set[str] = set()
        while "use" in spec:
            used = str(spec["use"])
            base = named_worlds().get(used)
            if base is None or used in seen:
                raise ConfigError(f"{where}: world: no world {used!r} in {WORLDS_FILE} "
                                  f"(known: {sorted(named_worlds())})" if base is None else
                                  f"{where}: world: {used!r} uses itself")
            seen.add(used)
            spec = {**base, **{k: v for k, v in spec.items() if k != "use"}}
        unknown = sorted(set(spec) - set(WORLD_KEYS))
        if unknown:
            raise ConfigError(f"{where}: world: unknown keys {unknown} (known: {list(WORLD_KEYS)})")
        try:
            world = cls(name=name, **{k: _parse(k, v) for k, v in spec.items()})
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: world: {exc}") from exc
        problem = world.problem()
        if problem:
            raise ConfigError(f"{where}: world: {problem}")
        return world

    def problem(self) -> str:
        """Why this world cannot be built, or ""."""
        if self.trunk_mass_scale <= 0 or (self.friction is not None and self.friction <= 0):
            return "friction and trunk_mass_scale must be positive"
        if abs(self.slope) >= 45 or self.step < 0 or self.drop < 0:
            return "slope must be within ±45 degrees, step and drop not negative"
        if self.across and self.slope <= 0:
            return "across needs a slope > 0 (it rises to the left)"
        starts = [self.drop > 0, self.slope < 0 and not self.across, bool(self.stairs) and self.stairs[0] < 0]
        if sum(starts) > 1:
            return "a drop, a downhill slope and stairs down each need the start platform: one at a time"
        shapes = {"curb": (self.curb, 2), "stairs": (self.stairs, 3), "rough": (self.rough, len(self.rough)),
                  "soft": (self.soft, 2), "payload": (self.payload, 4), "obstacle": (self.obstacle, 6)}
        for key, (value, n) in shapes.items():
            if value and len(value) != n:
                return f"{key} takes {n} numbers, not {len(value)}"
        if self.curb and min(self.curb) <= 0:
            return "curb is [height, depth], both positive"
        if self.stairs and (self.stairs[0] == 0 or self.stairs[1] <= 0 or self.stairs[2] < 1
                            or self.stairs[2] != int(self.stairs[2])):
            return "stairs is [rise (> 0 up, < 0 down), run > 0, a whole count >= 1]"
        if self.rough and (len(self.rough) not in (3, 4) or self.rough[0] < 0 or self.rough[1] < 2 * ROUGH_CELL
                           or len(self.rough) == 4 and not 1.0 <= self.rough[3] <= 20.0):
            return (f"rough is [rms >= 0, correlation length >= {2 * ROUGH_CELL} m, seed] and "
                    "optionally [..., reach 1-20 m each way]")
        if any(len(p) != 3 or p[0] <= 0 or p[2] <= 0 for p in self.patches):
            return "each patch is [friction > 0, at, length > 0]"
        if self.soft and (self.soft[0] <= 0 or self.soft[1] <= 0):
            return "soft is [time constant > 0, damping ratio > 0]"
        if self.payload and self.payload[0] <= 0:
            return "payload is [share of the robot's mass > 0, x, y, z]"
        if self.obstacle and min(self.obstacle[3:]) <= 0:
            return "obstacle is [x, y, z, half x, half y, half z], halves positive"
        return ""

    @property
    def changed(self) -> bool:
        return self != World()

    @property
    def label(self) -> str:
        """What differs from the unchanged world, e.g. "friction 0.5"."""
        if self.name:
            return self.name
        d = World()
        parts = [f"friction {self.friction:g}" if self.friction != d.friction else "",
                 f"trunk mass x{self.trunk_mass_scale:g}" if self.trunk_mass_scale != 1.0 else "",
                 f"slope {self.slope:g} deg{' across' if self.across else ''}" if self.slope else "",
                 f"step {self.step:g} m" if self.step else "",
                 f"a {self.curb[0]:g} m curb" if self.curb else "",
                 f"drop {self.drop:g} m" if self.drop else "",
                 "stairs {:g} x {:g} m".format(*self.stairs[:2]) if self.stairs else "",
                 f"rough {self.rough[0]:g} m rms" if self.rough else "",
                 "slippery patches" if self.patches else "",
                 "soft ground" if self.soft else "",
                 f"payload {self.payload[0]:g}" if self.payload else "",
                 "an obstacle" if self.obstacle else "",
                 _actuators_label(self.actuators)]
        return ", ".join(p for p in parts if p) or "unchanged"

    @property
    def start_height(self) -> float:
        """Height of the ground under the start (m)."""
        if self.drop:
            return self.drop
        if self.stairs and self.stairs[0] < 0:
            return -self.stairs[0] * self.stairs[2]
        if self.slope > 0 and self.across:
            return TERRAIN_WIDTH / 2 * math.tan(math.radians(self.slope))
        if self.rough:
            return float(rough_heights(self.rough)[1])
        return RAMP_LENGTH * math.sin(math.radians(-self.slope)) if self.slope < 0 else 0.0

    def actuator_changes(self) -> dict[str, Any] | None:
        return None if self.actuators is None else dict(self.actuators)


WORLD_KEYS = tuple(f.name for f in fields(World) if f.name != "name")


def _parse(key: str, value: Any) -> Any:
    if key == "friction":
        return None if value is None else float(value)
    if key == "across":
        if not isinstance(value, bool):
            raise ValueError(f"across is true or false, not {value!r}")
        return value
    if key == "patches":
        return tuple(tuple(float(v) for v in p) for p in value)
    if key == "actuators":
        if value is None:
            return None
        if not isinstance(value, dict):
            raise ValueError(f"actuators is a mapping of the physics file's actuator figures, not {value!r}")
        return tuple(sorted((str(k), v) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(float(v) for v in value)
    return float(value)


def _actuators_label(changes: tuple[tuple[str, Any], ...] | None) -> str:
    if changes is None:
        return ""
    extra = ", ".join(f"{k} {v}" for k, v in changes)
    return f"real actuators{' (' + extra + ')' if extra else ''}"


def on_top(world: World, name: str, where: str) -> World:
    """`world` with what the named world (config/physics/worlds.yaml)
    changes laid over it, e.g. the margin world "friction 0.5" on real
    motors; ConfigError names `where` when there is no such world."""
    over = World.from_spec(name, where)
    plain = World()
    changed = {f.name: getattr(over, f.name) for f in fields(World)
               if f.name != "name" and getattr(over, f.name) != getattr(plain, f.name)}
    return replace(world, name="", **changed)


@lru_cache(maxsize=1)
def named_worlds() -> dict[str, dict[str, Any]]:
    """config/physics/worlds.yaml's worlds, by name."""
    data = yaml.safe_load(WORLDS_FILE.read_text()) or {}
    worlds = data.get("worlds", {})
    if not isinstance(worlds, dict) or not all(isinstance(w, dict) for w in worlds.values()):
        raise ConfigError(f"{WORLDS_FILE}: `worlds` is a mapping of names to worlds")
    return worlds


def world_model(xml: str, world: World) -> Any:
    """The compiled MjModel of a robot's MJCF with `world`'s changes."""
    spec = mujoco.MjSpec.from_string(xml)
    floor = spec.geom("floor")
    ground = [_terrain_box(spec, name, centre, half, tilt, floor)
              for name, centre, half, tilt in terrain(world)]
    if world.rough:
        ground.append(_rough_ground(spec, world.rough, floor))
    if world.friction is not None:
        # The ground's and the robot's sliding friction both: a contact takes
        # the larger of its two, so it is the world's, and its softness stays
        # the mix of the robot's and the ground's (a priority on the ground
        # would make it the floor's, stiffening a maker's soft feet too).
        robot = [g for g in spec.geoms if g.parent != spec.worldbody]
        for geom in [floor, *ground, *robot]:
            geom.friction = [world.friction, *list(geom.friction)[1:]]
    if world.soft:
        for geom in [floor, *ground]:
            geom.solref = list(world.soft)
    for k, (friction, at, length) in enumerate(world.patches):
        sheet = _terrain_box(spec, f"terrain_patch{k}", np.array([at + length / 2, 0.0, PATCH_THICKNESS / 2]),
                             np.array([length / 2, TERRAIN_WIDTH / 2, PATCH_THICKNESS / 2]), (0.0, 0.0), floor)
        sheet.friction = [friction, *list(floor.friction)[1:]]
        sheet.priority = 2          # its friction governs, whatever the foot's
        sheet.rgba = PATCH_RGBA
        if world.soft:
            sheet.solref = list(world.soft)
    if world.obstacle:
        x, y, z, hx, hy, hz = world.obstacle
        body = spec.worldbody.add_body(name=OBSTACLE, mocap=True, pos=[x, y + OBSTACLE_PARK, z])
        body.add_geom(name="terrain_obstacle", type=mujoco.mjtGeom.mjGEOM_BOX, size=[hx, hy, hz],
                      contype=floor.contype, conaffinity=floor.conaffinity, friction=list(floor.friction),
                      rgba=[0.8, 0.3, 0.2, 1.0], priority=2, solref=[OBSTACLE_SOFTNESS, 1.0])
    if world.trunk_mass_scale != 1.0:
        trunk = spec.body("trunk")
        trunk.mass *= world.trunk_mass_scale
        trunk.fullinertia = [v * world.trunk_mass_scale for v in trunk.fullinertia]
    if world.payload:
        _payload(spec, world.payload)
    return spec.compile()


def _payload(spec: Any, payload: tuple[float, ...]) -> None:
    """A block of `share` of the robot's whole mass, fixed on the trunk at
    (x, y, z); drawn, and touching nothing (its mass is what it adds)."""
    share, x, y, z = payload
    robot_mass = float(spec.compile().body_subtreemass[spec.body("trunk").id])
    mass = share * robot_mass
    side = (mass / PAYLOAD_DENSITY) ** (1.0 / 3.0)
    body = spec.body("trunk").add_body(name="payload", pos=[x, y, z])
    body.add_geom(name="payload", type=mujoco.mjtGeom.mjGEOM_BOX, size=[side / 2] * 3, mass=mass,
                  contype=0, conaffinity=0, rgba=[0.85, 0.55, 0.2, 1.0])


Box = tuple[str, np.ndarray, np.ndarray, tuple[float, float]]


def terrain(world: World) -> list[Box]:
    """The boxes `world` puts on the floor: (name, centre, half sizes,
    (pitch, roll) in rad: pitch > 0 rises along +x, roll > 0 rises along +y)."""
    boxes: list[Box] = []
    half_w = TERRAIN_WIDTH / 2.0
    flat = (0.0, 0.0)
    if world.step > 0:
        boxes.append(("terrain_step", np.array([world.at + STEP_DEPTH / 2, 0.0, world.step / 2]),
                      np.array([STEP_DEPTH / 2, half_w, world.step / 2]), flat))
    if world.curb:
        height, depth = world.curb
        boxes.append(("terrain_curb", np.array([world.at + depth / 2, 0.0, height / 2]),
                      np.array([depth / 2, half_w, height / 2]), flat))
    if world.stairs:
        boxes += _stairs(world)
    top = world.start_height if not world.stairs and not world.rough and not world.across else 0.0
    if world.drop > 0 or (world.slope < 0 and not world.across):
        length = world.at + PLATFORM_BACK
        boxes.append(("terrain_platform", np.array([world.at - length / 2, 0.0, top / 2]),
                      np.array([length / 2, half_w, top / 2]), flat))
    if world.slope != 0 and not world.across:
        theta = math.radians(world.slope)
        along = np.array([math.cos(theta), 0.0, math.sin(theta)])
        normal = np.array([-math.sin(theta), 0.0, math.cos(theta)])
        centre = np.array([world.at, 0.0, top]) + along * RAMP_LENGTH / 2 - normal * TERRAIN_THICKNESS / 2
        boxes.append(("terrain_ramp", centre,
                      np.array([RAMP_LENGTH / 2, half_w, TERRAIN_THICKNESS / 2]), (theta, 0.0)))
    if world.across:
        theta = math.radians(world.slope)
        length = PLATFORM_BACK + world.at + 2 * RAMP_LENGTH
        # The surface is z = (y + half_w) tan(theta): on the floor at the right edge.
        normal = np.array([0.0, -math.sin(theta), math.cos(theta)])
        centre = np.array([length / 2 - PLATFORM_BACK, 0.0, half_w * math.tan(theta)]) \
            - normal * TERRAIN_THICKNESS / 2
        boxes.append(("terrain_side_slope", centre,
                      np.array([length / 2, half_w / math.cos(theta), TERRAIN_THICKNESS / 2]), (0.0, theta)))
    return boxes


def _stairs(world: World) -> list[Box]:
    rise, run, count = world.stairs[0], world.stairs[1], int(world.stairs[2])
    half_w = TERRAIN_WIDTH / 2.0
    boxes: list[Box] = []
    if rise > 0:                    # up: each step a block from its edge to the landing's end
        end = world.at + count * run + LANDING
        for i in range(1, count + 1):
            start = world.at + (i - 1) * run
            boxes.append((f"terrain_stair{i}", np.array([(start + end) / 2, 0.0, i * rise / 2]),
                          np.array([(end - start) / 2, half_w, i * rise / 2]), (0.0, 0.0)))
        return boxes
    drop = -rise
    total = drop * count            # down: the start platform, then count - 1 steps to the floor
    boxes.append(("terrain_platform", np.array([(world.at - PLATFORM_BACK) / 2, 0.0, total / 2]),
                  np.array([(world.at + PLATFORM_BACK) / 2, half_w, total / 2]), (0.0, 0.0)))
    for i in range(1, count):
        start = world.at + (i - 1) * run
        height = total - i * drop
        boxes.append((f"terrain_stair{i}", np.array([start + run / 2, 0.0, height / 2]),
                      np.array([run / 2, half_w, height / 2]), (0.0, 0.0)))
    return boxes


def _terrain_box(spec: Any, name: str, centre: np.ndarray, half: np.ndarray, tilt: tuple[float, float],
                 floor: Any) -> Any:
    """A static box of ground: collides with the robot as the floor does."""
    pitch, roll = tilt
    # A rotation of -pitch about y tilts the box's +x end up; +roll about x its +y side.
    qp = np.array([math.cos(-pitch / 2), 0.0, math.sin(-pitch / 2), 0.0])
    qr = np.array([math.cos(roll / 2), math.sin(roll / 2), 0.0, 0.0])
    quat = np.empty(4)
    mujoco.mju_mulQuat(quat, qp, qr)
    return spec.worldbody.add_geom(
        name=name, type=mujoco.mjtGeom.mjGEOM_BOX, pos=centre.tolist(), quat=quat.tolist(), size=half.tolist(),
        contype=floor.contype, conaffinity=floor.conaffinity, friction=list(floor.friction), rgba=GROUND_RGBA)


def rough_extent(rough: tuple[float, ...]) -> tuple[float, float, float]:
    """How far the rough ground reaches behind, ahead and to each side of
    the start (m): a fourth number in `rough` is all three."""
    if len(rough) > 3:
        return rough[3], rough[3], rough[3]
    return ROUGH_BEHIND, ROUGH_AHEAD, ROUGH_HALF_WIDTH


@lru_cache(maxsize=8)
def rough_heights(rough: tuple[float, ...]) -> tuple[np.ndarray, float]:
    """The rough ground's heights (rows along y, columns along x, m above
    the floor, all >= 0) and the height of its flat start. The heights are
    a seeded Gaussian field with the RMS and correlation length asked for
    (a white field smoothed by a Gaussian kernel, whose autocorrelation
    falls to 1/e at twice the kernel's sigma), blended to flat near the
    start."""
    rms, correlation, seed = rough[:3]
    behind, ahead, half_width = rough_extent(rough)
    nx = int(round((behind + ahead) / ROUGH_CELL)) + 1
    ny = int(round(2 * half_width / ROUGH_CELL)) + 1
    white = np.random.default_rng(int(seed)).standard_normal((ny, nx))
    sigma = correlation / 2.0 / ROUGH_CELL            # kernel sigma in cells
    ky = np.fft.fftfreq(ny)[:, None] * 2 * np.pi
    kx = np.fft.fftfreq(nx)[None, :] * 2 * np.pi
    field = np.real(np.fft.ifft2(np.fft.fft2(white) * np.exp(-0.5 * sigma ** 2 * (kx ** 2 + ky ** 2))))
    field *= rms / max(float(np.std(field)), 1e-12)
    x = np.linspace(-behind, ahead, nx)
    r = np.clip((np.abs(x) - ROUGH_FLAT) / ROUGH_BLEND, 0.0, 1.0)
    blend = r * r * (3 - 2 * r)                       # smoothstep: 0 at the start, 1 beyond
    field = field * blend[None, :]
    level = -float(field.min())
    return field + level, level


def _rough_ground(spec: Any, rough: tuple[float, ...], floor: Any) -> Any:
    heights, _ = rough_heights(rough)
    top = max(float(heights.max()), 1e-6)
    behind, ahead, hy = rough_extent(rough)
    hx = (behind + ahead) / 2
    field = spec.add_hfield(name="terrain_rough", size=[hx, hy, top, ROUGH_BASE],
                            nrow=heights.shape[0], ncol=heights.shape[1],
                            userdata=(heights / top).ravel().tolist())
    return spec.worldbody.add_geom(
        name="terrain_rough", type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=field.name,
        pos=[hx - behind, 0.0, 0.0], contype=floor.contype, conaffinity=floor.conaffinity,
        friction=list(floor.friction), rgba=GROUND_RGBA)
