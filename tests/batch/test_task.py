"""The Dask task without Dask or Blender: a stand-in child script plays Blender's part."""

from __future__ import annotations

import json
import os
import sys

import pytest

from waft.batch import task

# Writes the environment it got and the job it read as its result, like batch/child.py would.
ENV_CHILD = """
import json, os, sys
job = json.load(open(sys.argv[1]))
result = {"status": "ok", "environ": {k: os.environ.get(k) for k in job["environ"]},
          "resources": os.environ.get("BLENDER_USER_RESOURCES"), "parent": os.getppid()}
open(job["output"], "w").write("baked")
json.dump(result, open(job["result"], "w"))
"""
SLEEPING_CHILD = "import time\ntime.sleep(60)\n"
CRASHING_CHILD = "import os, signal\nprint('Blender: segfault at 0x0')\nos.kill(os.getpid(), 11)\n"


def _run(tmp_path, source: str, *, timeout=None, environ=None):
    job = {"shot": "sh010", "blend": str(tmp_path / "sh010.blend"),
           "output": str(tmp_path / "out" / "sh010.blend"), "environ": environ or {}}
    (tmp_path / "out").mkdir(exist_ok=True)
    return task.run_shot(job, b"zip", source, python=sys.executable, timeout=timeout,
                         state_dir=str(tmp_path / "state"))


def test_blender_gets_the_callers_environment_not_the_nannys(tmp_path, monkeypatch):
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # what a Dask nanny sets
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("BLENDER_USER_RESOURCES", "/home/artist/.config/blender")
    result = _run(tmp_path, ENV_CHILD,
                  environ={"MALLOC_TRIM_THRESHOLD_": None, "OMP_NUM_THREADS": "2"})
    assert result["status"] == "ok" and result["host"]
    assert result["environ"] == {"MALLOC_TRIM_THRESHOLD_": None, "OMP_NUM_THREADS": "2"}
    assert result["resources"] is None  # never the user's own Blender configuration
    assert result["parent"] == os.getpid()
    state = tmp_path / "state"
    assert not list((state / "running").iterdir())  # the marker goes when the shot ends
    assert (state / "logs" / "sh010.log").exists()


def test_a_shot_past_its_timeout_is_stopped(tmp_path):
    result = _run(tmp_path, SLEEPING_CHILD, timeout=0.5)
    assert result["status"] == "timeout" and "0.5 s" in result["error"]
    assert result["seconds"] < 10


def test_a_crash_is_reported_with_the_signal_and_blenders_last_words(tmp_path):
    result = _run(tmp_path, CRASHING_CHILD)
    assert result["status"] == "crashed"
    assert "signal 11" in result["error"] and "segfault at 0x0" in result["error"]
    assert not list((tmp_path / "out").iterdir())


@pytest.mark.parametrize("source", [SLEEPING_CHILD, CRASHING_CHILD])
def test_the_work_folder_and_partial_files_are_removed(tmp_path, source, monkeypatch):
    import tempfile

    work = tmp_path / "tmp"
    work.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(work))
    _run(tmp_path, source, timeout=0.3)
    assert not list(work.iterdir())
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".part")]


def test_job_file_names_the_temporary_beside_the_output(tmp_path):
    source = ("import json, sys\njob = json.load(open(sys.argv[1]))\n"
              "json.dump({'status': 'ok', 'job': job}, open(job['result'], 'w'))\n")
    job = _run(tmp_path, source)["job"]
    assert os.path.dirname(job["temporary"]) == str(tmp_path / "out")
    assert job["temporary"].endswith(".blend.part")
    assert json.dumps(job)  # plain JSON for the child
