"""The FSM table a config names (`fsm:`, e.g. config/cyberdog2_fsm.yaml): the
mode names and which mode may follow which, at once or when the running
motion is ready."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from controller.robot.config.reader import Reader, load_yaml


@dataclass(frozen=True)
class FsmTable:
    names: dict[int, str]
    immediate: dict[int, frozenset[int]]
    when_ready: dict[int, frozenset[int]]

    def allowed(self, src: int, dst: int) -> bool:
        return dst in self.immediate.get(src, ()) or dst in self.when_ready.get(src, ())

    def waits(self, src: int, dst: int) -> bool:
        return dst in self.when_ready.get(src, ())

    def name(self, mode: int) -> str:
        return self.names.get(mode, f"MODE_{mode}")


def load_fsm(path: Path) -> FsmTable:
    r = Reader(path, load_yaml(path))
    modes = r.get("modes", dict)
    names: dict[int, str] = {}
    for mode, entry in modes.items():
        if not isinstance(mode, int) or not isinstance(entry, dict) \
                or not isinstance(entry.get("name"), str):
            raise r.fail(f"modes.{mode}", "expected `<int>: {name: <string>}` (quote names "
                                          "like \"OFF\" that YAML reads as booleans)")
        names[mode] = str(entry["name"])
    immediate: dict[int, frozenset[int]] = {}
    when_ready: dict[int, frozenset[int]] = {}
    table = r.get("transitions", dict)
    for src, entry in table.items():
        if src not in names:
            raise r.fail(f"transitions.{src}", "not a mode listed under `modes`")
        er = Reader(path, entry, f"transitions.{src}")
        for key, out in (("immediate", immediate), ("when_ready", when_ready)):
            targets = er.get(key, list, [])
            for dst in targets:
                if dst not in names:
                    raise er.fail(key, f"{dst!r} is not a mode listed under `modes`")
            out[src] = frozenset(targets)
        both = immediate[src] & when_ready[src]
        if both:
            raise er.fail("when_ready", f"modes {sorted(both)} are also listed as immediate")
    return FsmTable(names, immediate, when_ready)
