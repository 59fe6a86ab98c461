"""The MuJoCo model of a robot: the quadruped's tree (controller/sim/model.py)
or the humanoid's (controller/sim/humanoid_model.py), from the robot config
and its physics figures; or the robot's own MJCF (`sim.mjcf`,
controller/sim/own_model.py)."""
from __future__ import annotations

from controller.robot.config import Config, ConfigError
from controller.robot.mass_properties import load_figures
from controller.sim.humanoid_model import humanoid_mjcf
from controller.sim.model import physics_path, quadruped_mjcf
from controller.sim.own_model import own_mjcf, own_model_path


def has_model(cfg: Config) -> bool:
    """Whether the robot can be simulated in physics: it names its own MJCF
    (`sim.mjcf`), or its physics figures exist."""
    if own_model_path(cfg) is not None:
        return cfg.kind in ("quadruped", "humanoid")
    return cfg.kind in ("quadruped", "humanoid") and physics_path(cfg).is_file()


def robot_mjcf(cfg: Config) -> str:
    """The MJCF of the robot of `cfg`; ConfigError when it cannot be modelled."""
    if own_model_path(cfg) is not None:
        if cfg.kind not in ("quadruped", "humanoid"):
            raise ConfigError(f"{cfg.path}: sim.mjcf: a robot's own MJCF is taken for quadrupeds and humanoids")
        return own_mjcf(cfg)
    path = physics_path(cfg)
    figures = load_figures(path)
    if cfg.kind == "humanoid":
        return humanoid_mjcf(cfg, figures, path)
    if cfg.kind != "quadruped":
        raise ConfigError(f"{cfg.path}: kind {cfg.kind!r}: no physics model for this kind of robot")
    return quadruped_mjcf(cfg, figures, path)
