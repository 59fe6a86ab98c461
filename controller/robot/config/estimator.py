"""The quadruped's `estimator` section: the noise figures of the state
estimate's Kalman filter and the foot load that makes a leg a stance leg
(controller/core/estimator.py, docs/LOCOMOTION.md)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from controller.robot.config.reader import Reader
from controller.robot.config.scale import Scale


@dataclass(frozen=True)
class EstimatorConfig:
    process_position: float = 0.02     # the filter's noise figures (the Cheetah family's)
    process_velocity: float = 0.02
    process_foot: float = 0.002
    sensor_position: float = 0.001
    sensor_velocity: float = 0.1
    sensor_height: float = 0.001
    contact_force: float = 12.0        # N: a foot pressing this hard stands (full trust)
    contact_band: float = 8.0          # N: trust ramps up over this band below it
    settle_time: float = 0.0           # s: a landed foot's trust ramps up over this much loaded time
    bias_time: float = 2.0             # s: the gyro's bias is averaged over this much standing still


def load_estimator(r: Reader, scale: Scale | None = None) -> EstimatorConfig:
    """The optional `estimator` section; a figure left out is the default
    above, the contact loads scaled to the robot's mass (`scale`,
    controller/robot/config/scale.py)."""
    d = EstimatorConfig()
    if scale is not None:
        d = replace(d, contact_force=scale.force("estimator.contact_force"),
                    contact_band=scale.force("estimator.contact_band"))
    if "estimator" not in r.data:
        return d
    er = r.sub("estimator")
    config = EstimatorConfig(
        process_position=er.number("process_position", 0.0001, 10.0, d.process_position),
        process_velocity=er.number("process_velocity", 0.0001, 10.0, d.process_velocity),
        process_foot=er.number("process_foot", 0.0001, 10.0, d.process_foot),
        sensor_position=er.number("sensor_position", 0.0001, 10.0, d.sensor_position),
        sensor_velocity=er.number("sensor_velocity", 0.0001, 10.0, d.sensor_velocity),
        sensor_height=er.number("sensor_height", 0.0001, 10.0, d.sensor_height),
        contact_force=er.number("contact_force", 0.1, 1000.0, d.contact_force),
        contact_band=er.number("contact_band", 0.1, 1000.0, d.contact_band),
        settle_time=er.number("settle_time", 0.0, 0.5, d.settle_time),
        bias_time=er.number("bias_time", 0.1, 600.0, d.bias_time),
    )
    if config.contact_band > config.contact_force:
        raise er.fail("contact_band", f"{config.contact_band} N is more than contact_force "
                                      f"{config.contact_force} N: a foot with no load would count")
    return config
