"""Foxglove (controller/service/foxglove_*.py): `motionctl export` writes a
recording as MCAP, read back here with the mcap reader; `motionctl foxglove`
serves a running robot, connected to here as the Foxglove app does (its
WebSocket protocol, subprotocol foxglove.sdk.v1) while the Python client stands the
robot up. The messages are decoded from the protobuf schemas the file or the
server carries, and judged against the simulator's ground truth: the trunk's
frame where sim_state put it, the feet on the ground where the model's
kinematics put them."""
from __future__ import annotations

import json
import math
import re
import struct
import subprocess
import sys
import threading
import time
from base64 import b64decode
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from harness import stop_group
from live import LYING_Z, STANDING_Z, live_robot
from mcap.reader import make_reader

from controller import msgs
from controller.robot.config import load_config
from controller.service.recording import RecordingWriter, events, port_files
from controller.sim.trial import Trial

ROOT = Path(__file__).resolve().parent.parent
CFG = load_config()
FOOT_RADIUS_MAX = 0.04      # m: a foot geom's centre standing on the floor (z = 0)
# CyberDog 2's model draws its trunk, thighs and shanks (the abad links carry no geom).
BODIES = {"trunk"} | {f"{leg}_{part}" for leg in CFG.legs for part in ("hip", "knee")}
TOPICS = {"/robot/scene": "foxglove.SceneUpdate", "/tf": "foxglove.FrameTransforms",
          "/joint_states": "foxglove.JointStates", "/joint_cmd": "foxglove.JointStates",
          "/odometry/pose": "foxglove.PoseInFrame", "/odometry/path": "foxglove.PosesInFrame",
          "/contacts": "foxglove.SceneUpdate"}


def protobuf_class(name: str, descriptor_set: bytes) -> Any:
    """The message class of `name` from a FileDescriptorSet (as MCAP and the
    WebSocket protocol carry a protobuf schema)."""
    files = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set)
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def motionctl(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli.motionctl", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


def read_mcap(path: Path) -> dict[str, list[tuple[int, Any]]]:
    """topic -> [(log time ns, decoded message)]."""
    out: dict[str, list[tuple[int, Any]]] = {}
    classes: dict[int, Any] = {}
    with path.open("rb") as f:
        for schema, channel, message in make_reader(f).iter_messages():
            if channel.message_encoding == "json":
                value = json.loads(message.data)
            else:
                assert channel.message_encoding == "protobuf" and schema is not None
                if schema.id not in classes:
                    classes[schema.id] = protobuf_class(schema.name, schema.data)
                value = classes[schema.id].FromString(message.data)
            out.setdefault(channel.topic, []).append((message.log_time, value))
    return out


def frame_z(transforms: Any, frame: str) -> float:
    return next(t.translation.z for t in transforms.transforms if t.child_frame_id == frame)


def test_export_writes_a_recording_foxglove_opens_posed_from_the_ground_truth(tmp_path: Path) -> None:
    base = tmp_path / "stand"
    writer = RecordingWriter(base, list(CFG.lcm.ports))
    trial = Trial(CFG, recorder=writer)
    trial.send(12)
    trial.run(2.5)
    writer.close()
    out = tmp_path / "stand.mcap"
    done = motionctl("export", str(base), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert re.match(r"wrote .*stand\.mcap: \d+ messages drawn on, \d+ poses", done.stdout), done.stdout

    topics = read_mcap(out)
    with out.open("rb") as f:
        summary = make_reader(f).get_summary()
    assert summary is not None
    schemas = {c.topic: summary.schemas[c.schema_id].name for c in summary.channels.values()}
    for topic, schema in TOPICS.items():
        assert schemas.get(topic) == schema, (topic, schemas)

    # The model: one entity per robot body, locked to the body's frame, with its geoms.
    scene = topics["/robot/scene"][0][1]
    assert {e.frame_id for e in scene.entities} == BODIES
    assert all(e.frame_locked and (e.cubes or e.spheres or e.cylinders) for e in scene.entities)

    # Every /tf places the trunk where the recorded sim_state at the same time put it.
    truth = {e.timestamp_us * 1000: msgs.sim_state_t.decode(e.data)
             for e in events(port_files(base, ["joint"])["joint"])
             if e.channel == CFG.lcm.channels["sim_state"]}
    tf = topics["/tf"]
    assert len(tf) >= 2.5 * 25                           # thinned to 30 Hz from 500
    for t_ns, transforms in tf:
        assert frame_z(transforms, "trunk") == pytest.approx(truth[t_ns].position[2], abs=1e-9)
    assert frame_z(tf[0][1], "trunk") < LYING_Z and frame_z(tf[-1][1], "trunk") > STANDING_Z

    # Standing, the four feet the simulator says touch the floor are drawn on it.
    contacts = topics["/contacts"][-1][1].entities[0].spheres
    assert len(contacts) == 4 and all(s.pose.position.z < FOOT_RADIUS_MAX for s in contacts)

    status = [m for _, m in topics["/status"]]
    assert status[-1]["mode"] == 12 and status[-1]["progress"] == 100 and status[-1]["switch_name"] == "DONE"
    assert status[-1]["mode_name"] == CFG.fsm.name(12)
    joints = topics["/joint_states"][-1][1].joints
    assert [j.name for j in joints] == list(CFG.joint_names)


def test_export_refuses_to_overwrite_and_names_a_missing_recording(tmp_path: Path) -> None:
    out = tmp_path / "x.mcap"
    out.write_bytes(b"mine")
    done = motionctl("export", str(tmp_path / "nothing"), "-o", str(out))
    assert done.returncode == 1 and "exists" in done.stderr and out.read_bytes() == b"mine"
    done = motionctl("export", str(tmp_path / "nothing"), "-o", str(tmp_path / "y.mcap"))
    assert done.returncode == 1 and "no recording at" in done.stderr, done.stderr
    assert not (tmp_path / "y.mcap").exists()


class FoxgloveClient:
    """What the Foxglove app does on a live connection: read the advertised
    channels, subscribe, decode each message by its channel's schema."""

    def __init__(self, url: str, topics: list[str]) -> None:
        from websockets.sync.client import connect

        self.ws = connect(url, subprotocols=["foxglove.sdk.v1"], open_timeout=10).__enter__()  # type: ignore[list-item]
        self.channels: dict[int, dict[str, Any]] = {}
        self.messages: dict[str, list[tuple[float, Any]]] = {}
        self.lock = threading.Lock()
        deadline = time.monotonic() + 10
        while not all(any(c["topic"] == t for c in self.channels.values()) for t in topics):
            assert time.monotonic() < deadline, f"advertised: {[c['topic'] for c in self.channels.values()]}"
            frame = self.ws.recv(timeout=10)
            if isinstance(frame, str):
                op = json.loads(frame)
                if op.get("op") == "advertise":
                    self.channels.update({c["id"]: c for c in op["channels"]})
        self.subs: dict[int, tuple[str, Any]] = {}
        subscribe = []
        for k, (cid, c) in enumerate(c for c in self.channels.items() if c[1]["topic"] in topics):
            decode = (json.loads if c["encoding"] == "json"
                      else protobuf_class(c["schemaName"], b64decode(c["schema"])).FromString)
            self.subs[k] = (c["topic"], decode)
            subscribe.append({"id": k, "channelId": cid})
        self.ws.send(json.dumps({"op": "subscribe", "subscriptions": subscribe}))
        self.running = True
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        while self.running:
            try:
                frame = self.ws.recv(timeout=0.2)
            except TimeoutError:
                continue
            except Exception:  # noqa: BLE001 - the server went away: stop listening
                return
            if isinstance(frame, bytes) and frame[0] == 0x01:       # MESSAGE_DATA
                sub, _log_time = struct.unpack_from("<IQ", frame, 1)
                topic, decode = self.subs[sub]
                with self.lock:
                    self.messages.setdefault(topic, []).append((time.monotonic(), decode(frame[13:])))

    def last(self, topic: str) -> Any:
        with self.lock:
            return self.messages[topic][-1][1]

    def close(self) -> None:
        self.running = False
        self.thread.join(2)
        self.ws.close()


@pytest.mark.udpm
def test_foxglove_serves_the_robot_standing_up_to_a_websocket_client(tmp_path: Path) -> None:
    from controller.client import Robot

    with live_robot(tmp_path) as truth:
        server = subprocess.Popen([sys.executable, "-m", "controller.cli.motionctl", "foxglove", "--port", "0"],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  start_new_session=True)
        client = None
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            found = re.search(r"ws://127\.0\.0\.1:(\d+)", line)
            assert found, line + (server.stderr.read() if server.poll() is not None and server.stderr else "")
            topics = ["/robot/scene", "/tf", "/status", "/joint_states", "/contacts"]
            client = FoxgloveClient(f"ws://127.0.0.1:{found.group(1)}", topics)
            time.sleep(1.5)                              # the model comes once a second
            lying = frame_z(client.last("/tf"), "trunk")
            with Robot() as robot:
                robot.stand()
                time.sleep(1.0)
                standing = frame_z(client.last("/tf"), "trunk")
                state_z = truth.states[-1][3]
                status = client.last("/status")
                contacts = client.last("/contacts").entities[0].spheres
            scene = client.last("/robot/scene")
            joints = client.last("/joint_states").joints
        finally:
            if client is not None:
                client.close()
            stop_group(server)
    print(f"foxglove: trunk z {lying:.3f} m lying, {standing:.3f} m standing (sim_state {state_z:.3f}); "
          f"{len(scene.entities)} bodies, {len(contacts)} feet down")
    assert lying < LYING_Z and standing > STANDING_Z
    assert standing == pytest.approx(state_z, abs=0.01)  # ~30 ms apart at most
    assert status["mode"] == 12 and status["progress"] == 100
    assert {e.frame_id for e in scene.entities} == BODIES and all(e.frame_locked for e in scene.entities)
    assert len(contacts) == 4 and all(s.pose.position.z < FOOT_RADIUS_MAX for s in contacts)
    assert [j.name for j in joints] == list(CFG.joint_names)


@pytest.mark.udpm
def test_record_with_mcap_writes_the_session_for_foxglove_too(tmp_path: Path) -> None:
    from controller.client import Robot

    with live_robot(tmp_path):
        record = subprocess.Popen([sys.executable, "-m", "controller.cli.motionctl", "record", "--duration", "5",
                                   "-o", str(tmp_path / "session"), "--mcap", str(tmp_path / "session.mcap")],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert record.stdout is not None and "recording" in record.stdout.readline()
            with Robot() as robot:
                robot.stand()
            out, err = record.communicate(timeout=60)
        finally:
            if record.poll() is None:
                record.kill()
    assert record.returncode == 0, err
    assert "wrote" in out and "session.mcap" in out, out
    topics = read_mcap(tmp_path / "session.mcap")
    modes = [m["mode"] for _, m in topics["/status"]]
    assert 12 in modes and modes[-1] == 7                 # stood up, and lay down on leaving
    assert {e.frame_id for e in topics["/robot/scene"][0][1].entities} == BODIES


def test_a_real_robot_is_posed_from_its_joints_and_odometry_once_no_sim_state_comes(tmp_path: Path) -> None:
    """No sim_state on a real robot: after 0.5 s without one, joint_state
    poses the legs and global_to_robot places the trunk (its rpy turned into
    the frame's rotation)."""
    import foxglove

    from controller.service.foxglove_feed import Feed

    context = foxglove.Context()
    out = tmp_path / "real.mcap"
    writer = foxglove.open_mcap(str(out), context=context)
    feed = Feed(CFG, context=context)
    ch = CFG.lcm.channels
    odo = msgs.localization_lcmt()
    odo.xyz, odo.rpy = [1.5, -0.25, 0.27], [0.0, 0.0, 0.6]
    state = msgs.joint_state_t()
    state.num_joints = len(CFG.joint_names)
    state.position = [0.0, -0.8, 1.6] * 4
    state.velocity = state.torque = [0.0] * state.num_joints
    for k in range(500):                                 # 1 s at 500 Hz
        t_ns = 1_000_000_000 + k * 2_000_000
        feed.on_message(ch["global_to_robot"], odo.encode(), t_ns)
        feed.on_message(ch["joint_state"], state.encode(), t_ns)
    writer.close()
    tf = read_mcap(out)["/tf"]
    assert tf[0][0] > 1_000_000_000 + 500_000_000            # none before sim_state could have come
    trunk = next(t for t in tf[-1][1].transforms if t.child_frame_id == "trunk")
    assert (trunk.translation.x, trunk.translation.y, trunk.translation.z) == pytest.approx((1.5, -0.25, 0.27))
    assert (trunk.rotation.w, trunk.rotation.z) == pytest.approx((math.cos(0.3), math.sin(0.3)))
    # The legs bend as joint_state says: the thigh (hip to knee frame), straight
    # down in the model's reference pose, now hangs 0.8 rad from the vertical.
    scene = feed.scene
    scene.pose_default()
    thigh = {leg: scene.data.xpos[scene.model.body(f"{leg}_hip").id][2]
             - scene.data.xpos[scene.model.body(f"{leg}_knee").id][2] for leg in CFG.legs}
    z = {t.child_frame_id: t.translation.z for t in tf[-1][1].transforms}
    for leg in CFG.legs:
        assert z[f"{leg}_hip"] - z[f"{leg}_knee"] == pytest.approx(thigh[leg] * math.cos(0.8), abs=1e-4), leg
