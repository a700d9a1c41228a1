"""Bitwise determinism of everything a bake writes, in one process and across processes.

Every sample scene is built and baked by tools/bake_digest.py: twice in one fresh Blender
process (each time in an empty file: in-process heap history differs between the two) and once
more in a second fresh process with a different PYTHONHASHSEED. Every F-curve's keys, handles and
interpolation and every frame of the played-back render-strand Curves must hash identically
across all three. The guarantee (README): the same Waft, the same Blender and the same machine
give the same bits.

The ragdoll samples are the sharpest check: before core/transcendental.py, a ragdoll bake's
bits depended on where NumPy's allocator placed temporaries (its AVX-512 `arctan2`/`exp`/… take
a scalar path when input and output memory touch), and a fall amplified one ulp into different
keys.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _start_digests(zip_path: Path, seed: str, repeat: int) -> subprocess.Popen:
    """tools/bake_digest.py in a fresh process with its own PYTHONHASHSEED, started."""
    env = {**os.environ, "PYTHONHASHSEED": seed}
    env.pop("BLENDER_USER_RESOURCES", None)  # the child makes its own throwaway user dir
    return subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "tools" / "bake_digest.py"), "--zip", str(zip_path),
         "--repeat", str(repeat)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env)


def _digests(run: subprocess.Popen) -> list[dict]:
    """The digest lines of a started `_start_digests` process, once it has ended."""
    try:
        # a guard against a hung Blender, not a speed bound: the bakes share the cores with
        # the other test workers (tools/test.sh) and took up to 15 minutes on a loaded machine
        out, err = run.communicate(timeout=2400)
    except subprocess.TimeoutExpired:
        run.kill()
        out, err = run.communicate()
    assert run.returncode == 0, err[-3000:]
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_every_sample_bakes_the_same_bits_twice_in_a_process_and_in_another(waft_zip):
    names = sorted(p.stem for p in (REPO_ROOT / "samples").glob("*.py")
                   if not p.stem.startswith("_") and p.stem != "run_all")
    # The two processes run side by side (each is one Blender, mostly on one core): the
    # test's three bakes of every sample took about four minutes one after the other.
    runs = _start_digests(waft_zip, "1", 2), _start_digests(waft_zip, "2", 1)
    twice, other = (_digests(run) for run in runs)
    assert [d["sample"] for d in twice] == [n for n in names for _ in range(2)]
    assert [d["sample"] for d in other] == names
    # Samples that load a character from ../shared/assets are skipped without it; the ones
    # built from nothing always bake, and every sample that baked wrote keys.
    baked = {d["sample"]: d for d in other if "skipped" not in d}
    assert {"ponytail", "hair_head_turn", "ragdoll_fall"} <= set(baked)
    assert all(d["fcurves"] > 0 for d in baked.values()), other
    assert baked["hair_head_turn"]["curves_objects"] >= 1  # render strands were played back
    for name in names:
        first, second = (d for d in twice if d["sample"] == name)
        assert first == second, f"{name}: two bakes in one process differ"
        assert first == next(d for d in other if d["sample"] == name), \
            f"{name}: bakes in two processes differ"
