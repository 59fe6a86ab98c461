"""The `bridge` section: how a robot bridge reaches the robot's own
low-level wire (docs/REAL_ROBOT.md). Absent: the defaults below, which are
the robot's published ones (SPEC §1.7a for CyberDog 2; Unitree SDK2's for
the Go2)."""
from __future__ import annotations

from dataclasses import dataclass

from controller.robot.config.reader import Reader

BRIDGES = ("cyberdog2", "unitree_go2")


@dataclass(frozen=True)
class BridgeConfig:
    kind: str = "cyberdog2"
    state_timeout_ms: float = 50.0    # robot state older than this is a fault
    # cyberdog2: the motor SDK's LCM.
    group: str = "239.255.76.67"      # the robot's LCM multicast group
    port: int = 7667                  # motor_ctrl out; spi_data, motor_ctrl_state in
    estimator_port: int = 7669        # state_estimator in
    lan: bool = False                 # ttl=1: the robot is another machine on the LAN
    entry_timeout_s: float = 6.0      # the board must accept low-level control by then
    entry_frames: int = 10            # all-zero motor_ctrl frames that ask for it
    # unitree_go2: Unitree SDK2 over DDS.
    domain: int = 0                   # DDS domain id (Unitree's simulator: 1)
    interface: str = ""               # network interface DDS uses ("": cyclonedds decides)
    simulator: bool = False           # Unitree's simulator: no motion switcher, no state CRC
    damping_kd: float = 2.0           # N m s/rad: the Go2's safe command (kp 0, this kd)
    switcher_timeout_s: float = 1.0   # how long the motion switcher may take to answer
    kp_max: float | None = None       # N m/rad: every joint's kp capped (None: as commanded)
    kd_max: float | None = None       # N m s/rad: every joint's kd capped (None: as commanded)

    def url(self, port_name: str) -> str:
        """The robot's LCM URL of port "robot" or "estimator" (cyberdog2)."""
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
        state_timeout_ms=br.number("state_timeout_ms", 4.0, 500.0, d.state_timeout_ms),
        group=br.get("group", str, d.group),
        port=int(br.number("port", 1, 65535, d.port)),
        estimator_port=int(br.number("estimator_port", 1, 65535, d.estimator_port)),
        lan=br.get("lan", bool, d.lan),
        entry_timeout_s=br.number("entry_timeout_s", 3.0, 60.0, d.entry_timeout_s),
        entry_frames=int(br.number("entry_frames", 1, 500, d.entry_frames)),
        domain=int(br.number("domain", 0, 232, d.domain)),
        interface=br.get("interface", str, d.interface),
        simulator=br.get("simulator", bool, d.simulator),
        damping_kd=br.number("damping_kd", 0.0, 50.0, d.damping_kd),
        switcher_timeout_s=br.number("switcher_timeout_s", 0.1, 30.0, d.switcher_timeout_s),
        kp_max=_optional(br, "kp_max", 1000.0),
        kd_max=_optional(br, "kd_max", 100.0),
    )


def _optional(r: Reader, key: str, hi: float) -> float | None:
    """A number in [0, hi], or None when absent or null."""
    return None if r.get(key, (int, float, type(None)), None) is None else r.number(key, 0.0, hi)
