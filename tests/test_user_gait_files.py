"""On-disk user gaits 80-100 and 110's default (SPEC §8.2, §12.A.4):
motiond's own files in gaits/user/cyberdog2, the robot's own define/ folder,
the loader's refusals, the config key and the controller that runs them."""
from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml
from harness import Rig
from structlog.testing import capture_logs

from controller import msgs
from controller.behaviours.locomotion import Locomotion
from controller.cli.check_config import refused_at_start, summary
from controller.core.fsm import BAN_TRANS
from controller.motion.gait_table import GaitDefinition
from controller.motion.user_gait_files import file_name, load_user_gaits
from controller.motion.usergait import parse_gait_def
from controller.robot.config import ConfigError, load_config
from controller.robot.config.locomotion import load_locomotion
from controller.robot.config.reader import Reader

ROOT = Path(__file__).resolve().parent.parent
OURS = ROOT / "gaits" / "user" / "cyberdog2"
CONFIG = ROOT / "config" / "cyberdog2.yaml"
# The robot's own files (read-only test data beside the repository, ../shared).
PEER = Path(__file__).resolve().parents[2] / "shared" / "peers" / "cyberdog2_motion_files" / "user" / "define"
DISK_IDS = set(range(80, 101))
USER_GAIT = 110
EXAMPLE_DEF = ROOT / "gaits" / "user" / "Gait_Def_example.toml"


# -- timetables from the SPEC's numbers -------------------------------------------------
def table(*runs: tuple[str, int]) -> np.ndarray:
    """Rows of contact FR FL RR RL ("1" = stance) repeated per run."""
    return np.array([[c == "1" for c in pattern] for pattern, n in runs for _ in range(n)], dtype=bool)


def times(n: int, *runs: tuple[str, int]) -> list[tuple[str, int]]:
    return list(runs) * n


ALL = "1111"
SPEC_81 = table(*times(6, (ALL, 9), ("0011", 7)), (ALL, 9))
SPEC_82 = table(*times(6, (ALL, 9), ("1100", 7)), (ALL, 9))
SPEC_90 = table(*times(4, (ALL, 8), ("0000", 2), ("0110", 6), ("0000", 2),
                      (ALL, 8), ("0000", 2), ("1001", 6), ("0000", 2)), (ALL, 8))
SPEC_DEFAULT = table(*times(4, (ALL, 6), ("0000", 2), ("0110", 6), ("0000", 2),
                           (ALL, 6), ("0000", 2), ("1001", 6), ("0000", 2)), (ALL, 6))
SPEC_100 = table((ALL, 10), ("1101", 5), ("1100", 5), ("1110", 5), (ALL, 5))


@pytest.fixture(scope="module")
def ours():
    return load_user_gaits(OURS)


@pytest.fixture(scope="module")
def peer():
    if not PEER.is_dir():
        pytest.fail(f"the robot's user-gait files are missing: {PEER} (the shared test data "
                    "beside the repository, ../shared/peers/cyberdog2_motion_files)")
    return load_user_gaits(PEER)


def test_file_names():
    assert [file_name(i) for i in (80, 81, 90, 100, 110)] == [
        "user_gait_00.toml", "user_gait_01.toml", "user_gait_10.toml", "user_gait_20.toml", "user_gait.toml"]
    with pytest.raises(ValueError, match="79"):
        file_name(79)


def test_every_shipped_file_loads(ours):
    assert ours.errors == {}
    assert set(ours.gaits) == DISK_IDS | {USER_GAIT}
    assert sorted(p.name for p in OURS.glob("*.toml")) == sorted(file_name(i) for i in ours.gaits)
    for gait_id, gait in ours.gaits.items():
        assert gait.id == gait_id and gait.legs == 4
        assert gait.contact[-1].all(), f"{gait.source}: the last section has every foot down"
    # Each also uploads as it is: a `# Gait Def` first line and nothing the parser skips.
    for path in sorted(OURS.glob("*.toml")):
        warnings: list[str] = []
        parse_gait_def(path.read_text(), name=path.name, warnings=warnings)
        assert warnings == [], path.name


@pytest.mark.parametrize("gait_id, expected", [(81, SPEC_81), (82, SPEC_82), (90, SPEC_90),
                                               (100, SPEC_100), (USER_GAIT, SPEC_DEFAULT)])
def test_timetables_are_the_specs(ours, gait_id, expected):
    np.testing.assert_array_equal(ours.gaits[gait_id].contact, expected)


def test_the_specs_totals_and_copies(ours):
    seg = {i: g.segments for i, g in ours.gaits.items()}
    assert (seg[81], seg[90], seg[100], seg[USER_GAIT]) == (105, 152, 30, 134)   # 3150, 4560, 900, 4020 ms
    assert seg[80] * 30 == 9600
    # 80 trots: (1001 x 4, 1111, 0110 x 4, 1111), over and over.
    np.testing.assert_array_equal(ours.gaits[80].contact,
                                  table(*times(seg[80] // 10, ("1001", 4), (ALL, 1), ("0110", 4), (ALL, 1))))
    # 83 walks RR, FR, RL, FL, nine segments each, for about 12 s.
    walk = ours.gaits[83].contact
    np.testing.assert_array_equal(walk[:36], table(("1101", 9), ("0111", 9), ("1110", 9), ("1011", 9)))
    assert 11.5 <= walk.shape[0] * 0.03 <= 12.5
    # 85/86 lift a diagonal, 88/89 one front leg, 87 pronks: seven (four) segments up.
    for gait_id, up, lifted in ((85, "0110", 7), (86, "1001", 7), (88, "0111", 7), (89, "1011", 7),
                                (87, "0000", 4)):
        contact = ours.gaits[gait_id].contact
        rows = {"".join("1" if c else "0" for c in row) for row in contact}
        assert rows == {ALL, up}, gait_id
        assert ours.gaits[gait_id].run_length[~contact.all(axis=1)].min() == lifted
    for gait_id in (92, 93, 94, 95):
        np.testing.assert_array_equal(ours.gaits[gait_id].contact, SPEC_DEFAULT)
    for gait_id in (96, 97, 98, 99):
        np.testing.assert_array_equal(ours.gaits[gait_id].contact, SPEC_90)


def test_the_robots_own_files_load(peer):
    """The define/ folder of the CyberDog 2 (no `# Gait Def` line) loads whole."""
    assert peer.errors == {}
    assert set(peer.gaits) == DISK_IDS | {USER_GAIT}
    assert not PEER.joinpath(file_name(81)).read_text().startswith("# Gait Def")


@pytest.mark.parametrize("gait_id", [81, 90])
def test_the_robots_81_and_90_are_ours(peer, ours, gait_id):
    np.testing.assert_array_equal(peer.gaits[gait_id].contact, ours.gaits[gait_id].contact)


def test_every_robot_timetable_is_ours(peer, ours):
    differ = [i for i in sorted(peer.gaits)
              if not np.array_equal(peer.gaits[i].contact, ours.gaits[i].contact)]
    assert differ == []


# -- refusals -------------------------------------------------------------------------------
BAD_CONTACT = "[[section]]\ncontact = [1, 1, 1]\nduration = 5\n"


@pytest.fixture
def bad_dir(tmp_path):
    """Our files, with 85's contact line broken, 86 not UTF-8 and 87 ending in the air."""
    for path in OURS.glob("*.toml"):
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / file_name(85)).write_text("# a broken file\n" + BAD_CONTACT)
    (tmp_path / file_name(86)).write_bytes(b"[[section]]\ncontact = [1, 1, 1, 1]\nduration = \xff\n")
    (tmp_path / file_name(87)).write_text("[[section]]\ncontact = [1, 1, 1, 1]\nduration = 6\n"
                                          "[[section]]\ncontact = [0, 0, 0, 0]\nduration = 4\n")
    return tmp_path


def test_a_bad_file_is_refused_naming_file_line_and_reason(bad_dir):
    found = load_user_gaits(bad_dir)
    assert set(found.errors) == {85, 86, 87}
    assert set(found.gaits) == DISK_IDS - {85, 86, 87} | {USER_GAIT}
    e85 = found.errors[85]
    assert str(bad_dir / file_name(85)) in e85 and "line 3" in e85 and "contact needs 4 values" in e85
    assert f"{bad_dir / file_name(86)}: cannot read" in found.errors[86]
    assert "line 5" in found.errors[87] and "full contact" in found.errors[87]
    assert found.refusal(85) == f"gait 85: its file was refused at start: {e85}"
    assert found.refusal(81) is None


def test_a_missing_directory_is_a_config_error_naming_the_key():
    data = yaml.safe_load(CONFIG.read_text())
    data["locomotion"]["user_gaits"] = "../gaits/user/not_there"
    with pytest.raises(ConfigError, match=r"locomotion\.user_gaits: .*not_there is not a directory"):
        load_locomotion(Reader(CONFIG, data), CONFIG)
    data["locomotion"].pop("user_gaits")
    assert load_locomotion(Reader(CONFIG, data), CONFIG).user_gaits is None


def test_the_shipped_config_names_our_files_and_check_config_reports_them(bad_dir):
    cfg = load_config(CONFIG)
    assert cfg.locomotion is not None and cfg.locomotion.user_gaits == OURS
    assert "22 user gaits in ../gaits/user/cyberdog2" in summary(cfg)
    assert not [w for w in refused_at_start(cfg) if "user_gaits" in w]
    bad = replace(cfg, locomotion=replace(cfg.locomotion, user_gaits=bad_dir))
    warnings = [w for w in refused_at_start(bad) if w.startswith("locomotion.user_gaits")]
    assert len(warnings) == 3 and warnings[0].endswith("(mode 11 refuses gait 85)")


# -- the controller ------------------------------------------------------------------------------
def loco(rig: Rig) -> Locomotion:
    behaviour = rig.ctl.fsm.behaviours[11]
    assert isinstance(behaviour, Locomotion)
    return behaviour


def running(rig: Rig) -> GaitDefinition:
    """The gait mode 11 runs now."""
    gait = loco(rig).gen.gait
    assert gait is not None
    return gait


def with_user_gaits(directory: Path | None) -> Rig:
    """A controller from the shipped config with `locomotion.user_gaits`
    replaced, on the joint-space sim (these tests look at mode 11's gait
    table and the refusals, not at what the body does)."""
    cfg = load_config(CONFIG)
    assert cfg.locomotion is not None
    return Rig(sim="joint", overrides={"locomotion": replace(cfg.locomotion, user_gaits=directory)})


def test_the_controller_runs_gait_81_from_the_shipped_config():
    rig = Rig()
    assert set(DISK_IDS | {USER_GAIT}) <= set(loco(rig).user_gaits)
    rig.stand()
    rig.send(11, 81, duration=3150)
    rig.run(400)
    assert rig.mode == 11 and running(rig).id == 81
    assert all(r.switch_status != BAN_TRANS for r in rig.responses[-150:])
    assert rig.last.gait_id == 81
    assert "refused" not in rig.ctl.counters.last_error


def test_a_refused_files_gait_is_refused_with_its_reason(bad_dir):
    with capture_logs() as logs:
        rig = with_user_gaits(bad_dir)
    refused = [e for e in logs if e["event"] == "disk_user_gait_refused"]
    assert [e["gait"] for e in refused] == [85, 86, 87]
    assert str(bad_dir / file_name(85)) in refused[0]["reason"] and "line 3" in refused[0]["reason"]
    rig.stand()
    rig.send(11, 85, duration=1000)
    rig.run(100)
    assert rig.mode == 12 and rig.last.switch_status == BAN_TRANS
    assert rig.ctl.counters.last_error.startswith("mode 11 refused: gait 85: its file was refused at start: ")
    assert "contact needs 4 values" in rig.ctl.counters.last_error


def upload(rig: Rig, path: Path) -> None:
    fs = msgs.file_send_lcmt()
    fs.data = path.read_text()
    rig.raw(rig.ch["user_gait_file"], fs.encode())
    rig.tick()


def test_leaving_off_puts_110_back_to_the_default_until_110_is_commanded():
    """SPEC §8.2: the upload is taken again when the commanded gait turns to 110."""
    rig = Rig(sim="joint")
    default = loco(rig).user_gaits[USER_GAIT]
    np.testing.assert_array_equal(default.contact, SPEC_DEFAULT)
    rig.run(20)
    upload(rig, EXAMPLE_DEF)
    uploaded = rig.ctl.gaits.uploaded_gait
    assert uploaded is not None and loco(rig).user_gaits[USER_GAIT] is uploaded
    rig.stand()                               # leaves OFF
    assert loco(rig).user_gaits[USER_GAIT] is default
    rig.send(11, USER_GAIT, duration=1200)
    rig.tick()
    assert loco(rig).user_gaits[USER_GAIT] is uploaded
    rig.run(300)
    assert rig.mode == 11 and running(rig) is uploaded


def test_110_runs_the_default_before_any_upload():
    rig = Rig(sim="joint")
    rig.stand()
    rig.send(11, USER_GAIT, duration=1200)
    rig.run(300)
    assert rig.mode == 11 and running(rig).id == USER_GAIT
    np.testing.assert_array_equal(running(rig).contact, SPEC_DEFAULT)


def test_without_user_gaits_110_needs_an_upload_and_80_100_are_unknown():
    rig = with_user_gaits(None)
    assert rig.ctl.gaits.disk_gaits is None and loco(rig).user_gaits == {}
    rig.stand()
    rig.send(11, USER_GAIT)
    rig.run(100)
    assert rig.mode == 12 and rig.last.switch_status == BAN_TRANS
    assert rig.ctl.counters.last_error == \
        "mode 11 refused: gait 110 needs a Gait Def uploaded on user_gait_file first"
    rig.send(11, 81)
    rig.run(100)
    assert rig.mode == 12 and "gait 81 has no definition" in rig.ctl.counters.last_error
