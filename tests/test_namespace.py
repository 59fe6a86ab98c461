"""--namespace / lcm.namespace: every channel gets the same NAME/ prefix."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from controller.robot.config import DEFAULT_CONFIG, ConfigError, load_config, with_namespace

CFG = load_config()


def test_namespace_prefixes_every_channel_and_nothing_else() -> None:
    cfg = with_namespace(CFG, "dog1")
    assert cfg.lcm.namespace == "dog1"
    assert set(cfg.lcm.channels) == set(CFG.lcm.channels)
    for key, name in CFG.lcm.channels.items():
        assert cfg.lcm.channels[key] == f"dog1/{name}"
    assert [cfg.lcm.url(p) for p in cfg.lcm.ports] == [CFG.lcm.url(p) for p in CFG.lcm.ports]
    assert with_namespace(cfg, "dog2").lcm.channels["command"] == "dog2/robot_control_cmd"
    assert with_namespace(cfg, "").lcm.channels == CFG.lcm.channels
    assert with_namespace(CFG, None) is CFG


@pytest.mark.parametrize("bad", ["a b", "x/y", "a" * 33, "dog.1"])
def test_bad_namespace_is_refused_with_the_rule(bad: str) -> None:
    with pytest.raises(ConfigError, match="letters, digits"):
        with_namespace(CFG, bad)


def test_config_key_sets_the_namespace(tmp_path: Path) -> None:
    root = DEFAULT_CONFIG.parent.parent   # configs name their files relative to themselves
    shutil.copytree(root / "config", tmp_path / "config")
    shutil.copytree(root / "gaits", tmp_path / "gaits")
    data = yaml.safe_load(DEFAULT_CONFIG.read_text())
    data["lcm"]["namespace"] = "lab-3"
    path = tmp_path / "config" / DEFAULT_CONFIG.name
    path.write_text(yaml.safe_dump(data))
    assert load_config(path).lcm.channels["status"] == "lab-3/controller_status"
    data["lcm"]["namespace"] = "lab 3"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"lcm\.namespace"):
        load_config(path)
