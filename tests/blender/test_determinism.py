"""Bitwise determinism of everything a bake writes, in one process and across processes.

Every sample scene is built and baked by tools/bake_digest.py in two fresh Blender processes with
different PYTHONHASHSEED, each bake in an empty file; one sample of every system is baked a
second time in the same process. Every F-curve's keys, handles and interpolation and every frame
of the played-back render-strand Curves must hash identically. The guarantee (README): the same
Waft, the same Blender and the same machine give the same bits.

The ragdoll samples are the sharpest check: before core/transcendental.py, a ragdoll bake's
bits depended on where NumPy's allocator placed temporaries (its AVX-512 `arctan2`/`exp`/… take
a scalar path when input and output memory touch), and a fall amplified one ulp into different
keys.

What each comparison can catch, and why the test bakes what it bakes (it was a third of the
test run's CPU time when it baked all 13 samples three times, 39 full bakes):

- Across processes (every sample, in both): the Python hash seed (the order of sets of names in
  the add-on's reading and assembly, so the order of bodies, chains and colliders in the solve),
  address-space layout, and bakes of other samples before this one: the second process bakes
  the samples in the opposite order, so every sample but the middle one has other bakes before
  it there than in the first (allocator history and module state another bake left behind).
  The first process's bakes of all samples are compared with the second's.
- Twice in one process (one sample per system and per path of its solve, REPEATED): module
  state a bake of the same scene leaves for the next one, and heap history (the second bake
  runs after every other sample's, so its temporaries land elsewhere). The repeats are split
  over the two processes so that they end together; which process a repeat runs in does not
  matter for what it catches. The samples not repeated run solves a repeated one also runs:
  cloth_jacket and cloth_skirt the cage solve of cloth_cape (which adds the rods), fox_tail the
  bone chains of ponytail, hair_curly_wind and hair_underwater the hair guides of hair_head_turn
  under the wind of cloth_cape (core/forces.py), ragdoll_walk and ragdoll_companion the motors
  and ground contacts of ragdoll_fall (the companion's carrier order, a ragdoll solved after the
  one carrying it, is compared across processes only).
- FRAMES: the long samples bake a shorter range where the later frames run no other code than
  the earlier ones did: the hash seed and the module state act before the first frame (the
  order things are solved in), and what the allocator does reaches the keys once a chaotic
  phase (a fall, a crumple, a contact) has amplified one ulp past float32. Every ragdoll
  shortened still goes through all its contacts (see FRAMES); ragdoll_walk's walker is baked
  over its whole range too, as ragdoll_companion's carrier.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

# Baked twice in one process: one sample per system and path of its solve, split over the two
# processes so that they end together.
REPEATED = {
    "seed 1": (
        "ponytail",  # bone chains (strands solver) against sphere colliders
        "hair_vrm",  # the VRM Spring Bone solver, its collider groups
        "ragdoll_rigify",  # 23 rigid bodies of a Rigify DEF skeleton crumpling: box, floor
    ),
    "seed 2": (
        "hair_head_turn",  # hair guides + 20,000 render strands, played back through modifiers
        "cloth_cape",  # the cloth cage and Cosserat rods in turbulent wind (core/forces.py,
        # shared with the strands), capsule and ellipsoid colliders
        "ragdoll_fall",  # motors, a root lock over steps and a wall, the release, the fall
    ),
}
# The first frames baked of the long samples (the others bake their whole range).
FRAMES = {
    # feet on the ground from the first substep and on both steps (from frames 6 and 18),
    # the hips against the wall (31), the lock releases (40: the historic divergence was at
    # frame 21, amplified by this fall), the body drops to the ground (a body on it from
    # frame 45) and slumps against the wall and step; the last 24 of the 84 frames only slump
    # lower with the same contacts (the highest bone head 0.59 -> 0.40 m)
    "ragdoll_fall": 60,
    # limp from frame 1: feet on the floor from the first frame, the box from frame 9, crumples
    # (the highest bone head 1.82 -> 0.53 m by frame 41) and lies on floor and box, friction
    # holding it; the 144 frames let it lie still for the sample's check (an arm and a leg
    # topple once more at frames 95-115: the same bodies against the same floor)
    "ragdoll_rigify": 48,
    # three cycles of the same walk (the object steps one cycle forward at frames 25 and 49):
    # the first cycle and the first step run the ground, motors, arm blend and root lock the
    # other two run again; and the whole 73 frames of this walker are baked again, with the same
    # settings, as the carrier in ragdoll_companion (whole range, both processes)
    "ragdoll_walk": 25,
}


def _start_digests(zip_path: Path, seed: str, samples: list[str]) -> subprocess.Popen:
    """tools/bake_digest.py in a fresh process with its own PYTHONHASHSEED, started."""
    env = {**os.environ, "PYTHONHASHSEED": seed}
    env.pop("BLENDER_USER_RESOURCES", None)  # the child makes its own throwaway user dir
    args = [f"{name}:{FRAMES[name]}" if name in FRAMES else name for name in samples]
    return subprocess.Popen(
        [sys.executable, str(REPO_ROOT / "tools" / "bake_digest.py"), "--zip", str(zip_path),
         *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


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


def test_every_sample_bakes_the_same_bits_in_two_processes_and_each_system_twice_in_one(
        waft_zip):
    names = sorted(p.stem for p in (REPO_ROOT / "samples").glob("*.py")
                   if not p.stem.startswith("_") and p.stem != "run_all")
    repeated = [name for group in REPEATED.values() for name in group]
    assert set(repeated) <= set(names) and set(FRAMES) <= set(names)
    assert len(set(repeated)) == len(repeated)
    # The two processes run side by side (each is one Blender, mostly on one core).
    orders = {"seed 1": names + list(REPEATED["seed 1"]),
              "seed 2": names[::-1] + list(REPEATED["seed 2"])}
    runs = {seed: _start_digests(waft_zip, seed.split()[1], order)
            for seed, order in orders.items()}
    results = {seed: _digests(run) for seed, run in runs.items()}
    for seed, order in orders.items():
        assert [d["sample"] for d in results[seed]] == order, seed
    first = {d["sample"]: d for d in results["seed 1"][:len(names)]}
    other = {d["sample"]: d for d in results["seed 2"][:len(names)]}
    # Samples that load a character from ../shared/assets are skipped without it; the ones
    # built from nothing always bake, and every sample that baked wrote keys.
    baked = {name: d for name, d in first.items() if "skipped" not in d}
    assert {"ponytail", "hair_head_turn", "ragdoll_fall", "ragdoll_rigify"} <= set(baked)
    assert all(d["fcurves"] > 0 for d in baked.values()), first
    assert baked["hair_head_turn"]["curves_objects"] >= 1  # render strands were played back
    for name, frames in FRAMES.items():
        if name in baked:
            assert baked[name]["frames"] == [1, frames], name
    for name in names:
        assert first[name] == other[name], f"{name}: bakes in two processes differ"
    for seed, group in REPEATED.items():
        for name, again in zip(group, results[seed][len(names):], strict=True):
            once = (first if seed == "seed 1" else other)[name]
            assert again == once, f"{name}: two bakes in one process differ ({seed})"
