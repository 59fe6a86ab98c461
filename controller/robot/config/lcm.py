"""The `lcm` section: multicast group, ports, channel names and namespace."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from controller.robot.config.reader import ConfigError, Reader

NAMESPACE_RE = re.compile(r"[A-Za-z0-9_-]{1,32}")
# Channels every config names, and motiond's own, added later (optional).
REQUIRED_CHANNELS = ("command", "user_gait_file", "user_gait_result", "response", "motor_ctrl",
                     "motor_ctrl_state", "joint_cmd", "joint_state", "status", "global_to_robot",
                     "motion_goal", "motion_event")
OPTIONAL_CHANNELS = ("script_request", "tick_trace", "imu", "sim_state", "bridge_status")


def check_namespace(name: str) -> str:
    """A namespace is empty (none) or 1-32 letters, digits, '_' or '-'."""
    if name and not NAMESPACE_RE.fullmatch(name):
        raise ConfigError(f"namespace {name!r}: use 1-32 letters, digits, '_' or '-'")
    return name


@dataclass(frozen=True)
class LcmConfig:
    lan: bool
    group: str
    ports: dict[str, int]
    names: dict[str, str]     # channel names as configured, without the namespace
    status_hz: float
    namespace: str = ""       # several robots on one LAN: every channel becomes NAME/channel
    _channels: dict[str, str] = field(init=False, repr=False, compare=False)  # set in __post_init__

    @property
    def channels(self) -> dict[str, str]:
        """The channel names on the wire (namespace applied)."""
        return self._channels

    def __post_init__(self) -> None:
        check_namespace(self.namespace)
        prefix = f"{self.namespace}/" if self.namespace else ""
        object.__setattr__(self, "_channels",
                           {key: prefix + name for key, name in self.names.items()})

    def url(self, port_name: str) -> str:
        ttl = 1 if self.lan else 0
        return f"udpm://{self.group}:{self.ports[port_name]}?ttl={ttl}"


def load_lcm(r: Reader) -> LcmConfig:
    """The `lcm` section of the config read by `r`."""
    lr = r.sub("lcm")
    ports = {}
    for name in ("command", "response", "joint"):
        ports[name] = int(lr.sub("ports").number(name, 1, 65535))
    channels = {}
    cr = lr.sub("channels")
    for name in REQUIRED_CHANNELS:
        channels[name] = cr.get(name, str)
    for name in OPTIONAL_CHANNELS:
        channels[name] = cr.get(name, str, name)
    namespace = lr.get("namespace", str, "")
    try:
        check_namespace(namespace)
    except ConfigError as exc:
        raise lr.fail("namespace", str(exc).removeprefix("namespace ")) from None
    return LcmConfig(
        lan=lr.get("lan", bool, False),
        group=lr.get("group", str),
        ports=ports,
        names=channels,
        status_hz=lr.number("status_hz", 0.1, 100.0, 10.0),
        namespace=namespace,
    )
