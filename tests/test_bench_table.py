"""tools/bench_table.py writes the README's benchmark table from recorded benchmark lines only:
the latest run of each script wins, a script never recorded leaves its rows out (nothing is
invented), and the README outside the markers is untouched."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "bench_table.py"


@pytest.fixture
def bench_table():
    spec = importlib.util.spec_from_file_location("bench_table", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ragdoll(commit: str, driven_ms: float) -> list[dict]:
    stamp = {"script": "bench_ragdoll", "commit": commit, "date": "2026-11-27"}
    common = {"bodies": 17, "frames": 250, "substep_hz": 240, "iterations": 4,
              "bullet_bake_ms_per_frame": 0.4}
    return [{"bench": "ragdoll_waft_driven", "waft_core_ms_per_frame": driven_ms,
             "ratio_waft_core_over_bullet": driven_ms / 0.4, **common, **stamp},
            {"bench": "ragdoll_waft_limp", "waft_core_ms_per_frame": 60.0,
             "ratio_waft_core_over_bullet": 150.0, **common, **stamp}]


def test_the_table_comes_from_the_latest_recorded_run(bench_table, tmp_path, monkeypatch):
    records = tmp_path / "benchmarks.jsonl"
    records.write_text("".join(json.dumps(r) + "\n"
                               for r in _ragdoll("aaa", 30.0) + _ragdoll("bbb", 40.0)))
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{bench_table.START}\nold table\n{bench_table.END}\noutro\n")
    monkeypatch.setattr(bench_table, "RECORDS", records)
    monkeypatch.setattr(bench_table, "README", readme)
    assert bench_table.main([]) == 0
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("outro\n") and "old table" not in text
    assert "40.0 / 60.0 ms per frame" in text and "**100 / 150**" in text
    assert "30.0" not in text  # the earlier run is replaced, not mixed in
    assert "`bench_ragdoll` bbb (2026-11-27)" in text
    assert "bone chains" not in text and "cloth" not in text  # never recorded: left out


def test_a_readme_without_markers_is_refused(bench_table, tmp_path, monkeypatch):
    monkeypatch.setattr(bench_table, "RECORDS", tmp_path / "none.jsonl")
    monkeypatch.setattr(bench_table, "README", tmp_path / "README.md")
    (tmp_path / "README.md").write_text("no markers\n")
    with pytest.raises(SystemExit, match="markers"):
        bench_table.main([])
