"""The `bridge` section: how a robot bridge reaches the robot's own
low-level wire (docs/REAL_ROBOT.md). Absent: the defaults below, which are
the robot's published ones (SPEC §1.7a for CyberDog 2)."""
from __future__ import annotations

from dataclasses import dataclass

from controller.robot.config.reader import Reader

BRIDGES = ("cyberdog2",)


@dataclass(frozen=True)
class BridgeConfig:
    kind: str = "cyberdog2"
    group: str = "239.255.76.67"      # the robot's LCM multicast group
    port: int = 7667                  # motor_ctrl out; spi_data, motor_ctrl_state in
    estimator_port: int = 7669        # state_estimator in
    lan: bool = False                 # ttl=1: the robot is another machine on the LAN
    state_timeout_ms: float = 50.0    # robot state older than this is a fault
    entry_timeout_s: float = 6.0      # the board must accept low-level control by then
    entry_frames: int = 10            # all-zero motor_ctrl frames that ask for it

    def url(self, port_name: str) -> str:
        """The robot's LCM URL of port "robot" or "estimator"."""
        port = {"robot": self.port, "estimator": self.estimator_port}[port_name]
        return f"udpm://{self.group}:{port}?ttl={1 if self.lan else 0}"


def load_bridge(r: Reader) -> BridgeConfig:
    """The config's `bridge` section (its defaults when there is none)."""
    if "bridge" not in r.data:
        return BridgeConfig()
    br = r.sub("bridge")
    kind = br.get("kind", str, "cyberdog2")
    if kind not in BRIDGES:
        raise br.fail("kind", f"{kind!r}: the bridges are {', '.join(BRIDGES)}")
    d = BridgeConfig()
    return BridgeConfig(
        kind=kind,
        group=br.get("group", str, d.group),
        port=int(br.number("port", 1, 65535, d.port)),
        estimator_port=int(br.number("estimator_port", 1, 65535, d.estimator_port)),
        lan=br.get("lan", bool, d.lan),
        state_timeout_ms=br.number("state_timeout_ms", 4.0, 500.0, d.state_timeout_ms),
        entry_timeout_s=br.number("entry_timeout_s", 3.0, 60.0, d.entry_timeout_s),
        entry_frames=int(br.number("entry_frames", 1, 500, d.entry_frames)),
    )
