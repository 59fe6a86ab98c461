"""`motionctl new-robot NAME --mjcf FILE`: the skeleton with the figures its
maker's MuJoCo model holds put in (controller/robot/maker_figures.py), each
line's mark "CyberDog 2's figure: measure yours" replaced by where the
figure came from, and `sim` pointed at the model instead of a physics file.
What the model does not hold keeps its mark, so check-config still lists it."""
from __future__ import annotations

from typing import Any

import yaml

from controller.robot.config.scale import REFERENCE_LEG, REFERENCE_STAND
from controller.robot.maker_figures import MakerQuadruped

MARK = "CyberDog 2's figure: measure yours"


def flow(value: Any) -> str:
    """`value` as one line of YAML flow style."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    if isinstance(value, float):          # plain decimals: YAML reads 1e-05 as a string
        text = f"{value:.6f}".rstrip("0")
        return "0.0" if text in ("0.", "-0.") else text + ("0" if text.endswith(".") else "")
    return str(value)


def set_key(text: str, path: str, value: Any, source: str) -> str:
    """`text` (a YAML file in block style) with the key at dotted `path` set
    to `value` on one line, its comment's mark replaced by `source`."""
    lines = text.split("\n")
    i, indent = 0, 0
    parts = path.split(".")
    for depth, part in enumerate(parts):
        prefix = " " * indent + f"{part}:"
        while not (lines[i].startswith(prefix) and not lines[i][indent].isspace()):
            i += 1
            if i == len(lines):
                raise KeyError(path)
        if depth < len(parts) - 1:
            i += 1
            while not lines[i].strip() or lines[i].lstrip().startswith("#"):
                i += 1
            indent = len(lines[i]) - len(lines[i].lstrip())
    j, depth_count = i, 0
    while True:
        code = lines[j].split("#", 1)[0]
        depth_count += code.count("[") + code.count("{") - code.count("]") - code.count("}")
        if depth_count <= 0:
            break
        j += 1
    comment = lines[j].split("#", 1)[1].strip() if "#" in lines[j] else ""
    comment = comment.replace(MARK, source) if MARK in comment else (f"{comment}. {source}" if comment else source)
    lines[i:j + 1] = [f"{' ' * indent}{parts[-1]}: {flow(value)}   # {comment}"]
    return "\n".join(lines)


def fill_from_model(text: str, figures: MakerQuadruped, model: str, physics_line: str) -> str:
    """The skeleton `text` with the model's figures in; `model` is the
    model's path as the config names it, `physics_line` the skeleton's
    `sim.physics` line that it replaces."""
    source = f"read from {model}"
    values: dict[str, Any] = {
        "joint_map.wire_order": figures.wire_order,
        "joint_map.direction": figures.direction,
        "joint_map.offset": figures.offset,
        **{f"joint_limits.{leg}": figures.joint_limits[leg] for leg in figures.legs},
        **{f"geometry.hip_offsets.{leg}": figures.hip_offsets[leg] for leg in figures.legs},
        "geometry.abad_link": figures.abad_link,
        "geometry.hip_link": figures.hip_link,
        "geometry.knee_link": figures.knee_link,
        "geometry.mass": figures.mass,
    }
    optional = {"torque_limit": figures.torque_limit, "geometry.foot_radius": figures.foot_radius,
                "poses.stand_height": figures.stand_height}
    values.update({key: value for key, value in optional.items() if value is not None})
    for key, value in values.items():
        text = set_key(text, key, value, source)
    text = _sized(text, figures)
    sim = [f"  mjcf: {model}   # the maker's model: the simulated body, and the masses the MPC plans with",
           f"  mjcf_joints: {flow(figures.mjcf_joints)}   # the model's leg joints, in the wire's order"]
    if figures.feet is not None:
        sim.append(f"  mjcf_feet: {flow(figures.feet)}   # the model's foot geoms")
    if physics_line not in text:
        raise KeyError("sim.physics")
    return text.replace(physics_line, "\n".join(sim))


# CyberDog 2's heights and stride in the skeleton, scaled to the model's
# stand height and leg length (still marked: a first guess, to measure).
BY_HEIGHT = ("pose_height_range", "posture_height_range", "locomotion.body_height", "locomotion.height_range",
             "locomotion.vertical_leg_height", "sim.rest_height")
BY_LEG = ("locomotion.half_stride",)


def _sized(text: str, figures: MakerQuadruped) -> str:
    """The skeleton's body heights in CyberDog 2's proportion to its stand
    height, and its stride to its leg length, for the model's robot."""
    if figures.stand_height is None:
        return text
    data = yaml.safe_load(text)
    height = figures.stand_height / REFERENCE_STAND
    leg = (figures.hip_link + figures.knee_link) / REFERENCE_LEG
    for keys, ratio, why in ((BY_HEIGHT, height, f"x {height:.3g}, the model's stand height over CyberDog 2's "
                                                 f"{REFERENCE_STAND} m"),
                             (BY_LEG, leg, f"x {leg:.3g}, the model's leg length over CyberDog 2's")):
        for key in keys:
            node: Any = data
            for part in key.split("."):
                node = node[part]
            value = [round(v * ratio, 3) for v in node] if isinstance(node, list) else round(node * ratio, 3)
            text = set_key(text, key, value, f"CyberDog 2's {why}. {MARK}")
    return text
