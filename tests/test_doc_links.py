"""The README and docs/ are read in a clone: every relative link in them
resolves to a file or folder of the repository, none points outside it,
and the README stays short enough for a newcomer (issue 40: ≤ 250 lines)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "examples" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)      # code is not linked
    return [m.group(1) for m in LINK.finditer(text)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_inside_the_repository(page: Path) -> None:
    bad = []
    for target in links(page):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        path = target.split("#", 1)[0]
        if not path:
            continue                                                    # a heading on this page
        resolved = (page.parent / path).resolve()
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            bad.append(target)
    assert not bad, f"{page.relative_to(ROOT)}: links that do not resolve in the repository: {bad}"


def test_no_page_points_at_the_shared_folder_a_clone_does_not_have() -> None:
    assert not [p.relative_to(ROOT) for p in PAGES if "../shared" in p.read_text()]


def test_the_readme_stays_short() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 250, len(lines)
    assert any(line.startswith("<!-- quickstart -->") for line in lines)   # tests/test_quickstart.py reads it


def test_the_checker_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("see [a](missing.md) and [b](https://example.org) and\n```\n[c](in-code.md)\n```\n")
    assert links(page) == ["missing.md", "https://example.org"]


def test_the_performance_figures_are_what_the_committed_bench_results_give() -> None:
    """docs/PERFORMANCE.md's figures are generated from bench/results.json
    (tests/bench/report.py), never edited by hand."""
    import importlib.util
    import json
    from typing import Any
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "tests" / "bench" / "report.py")
    assert spec is not None and spec.loader is not None
    report: Any = importlib.util.module_from_spec(spec)   # puts tests/bench on sys.path, as run.py
    spec.loader.exec_module(report)
    results = json.loads(report.RESULTS.read_text())
    doc = report.DOC.read_text()
    assert report.render(doc, results) == doc, "run `python tests/bench/report.py` (make bench does)"
    # The section holds every target the results name, with its verdict.
    for target in report.targets(results):
        assert target.row() in doc
