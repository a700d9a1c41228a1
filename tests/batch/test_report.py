"""The report (JSON lines, summary table) and the terminal progress bar."""

from __future__ import annotations

import io

import pytest

from waft.batch import ShotResult, read_jsonl
from waft.batch.progress import ProgressBar
from waft.batch.report import summary_table, write_jsonl


def test_report_round_trips_and_the_table_counts_every_status(tmp_path):
    results = [ShotResult("sh010", "/a/sh010.blend", "/o/sh010.blend", "ok", 2.5, 1, ["Rig"],
                          28, 120, blender="5.0.1", host="node1"),
               ShotResult("sh020", "/a/sh020.blend", "/o/sh020.blend", "skipped"),
               ShotResult("sh030", "/a/sh030.blend", "/o/sh030.blend", "failed", 0.7, 1,
                          error="Scene 'Scene' has no Waft setup: select bones\nmore")]
    path = tmp_path / "r" / "report.jsonl"
    write_jsonl(results, path)
    assert read_jsonl(path) == results
    assert len(path.read_text().splitlines()) == 3
    table = summary_table(results, 12.0)
    assert "Scene 'Scene' has no Waft setup" in table and "more" not in table
    assert table.splitlines()[-1] == "3 shots in 12.0 s: 1 ok, 1 skipped, 1 failed"


def test_progress_prints_a_line_per_change_in_a_log():
    stream = io.StringIO()
    bar = ProgressBar(4, stream=stream)
    bar.update(done=0, running=2, failed=0, eta=None)
    bar.update(done=0, running=2, failed=0, eta=None)  # nothing changed: no new line
    bar.update(done=2, running=2, failed=1, eta=75.0)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert lines == ["waft batch [........................] 0/4 done, 2 running, 0 failed, "
                     "--:-- left",
                     "waft batch [############............] 2/4 done, 2 running, 1 failed, "
                     "1:15 left"]
    quiet = io.StringIO()
    ProgressBar(4, stream=quiet, enabled=False).update(done=1, running=0, failed=0, eta=0)
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("seconds", [0.0, 59.4, 61.0, 3725.0])
def test_clock_and_eta(seconds):
    from waft.batch.progress import _clock, eta_seconds

    text = _clock(seconds)
    parts = [int(p) for p in text.split(":")]
    total = parts[-1] + 60 * parts[-2] + (3600 * parts[0] if len(parts) == 3 else 0)
    assert total == round(seconds)
    assert eta_seconds([], 3, 2) is None
    assert eta_seconds([], 0, 2) == 0.0
    assert eta_seconds([10.0, 20.0], 4, 2) == pytest.approx(30.0)
