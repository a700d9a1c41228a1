"""Regenerate the README's benchmark table from what the benchmark scripts printed, so the
table cannot drift from what was measured (every number in it is a field of a recorded JSON
line; every row names its peer, measured in the same run).

    .venv/bin/python tools/bench_table.py --run                # run every benchmark, record, write
    .venv/bin/python tools/bench_table.py --run bench_ragdoll  # run some, keep the others' records
    .venv/bin/python tools/bench_table.py                      # rewrite the table from the records

Records: ``docs/benchmarks.jsonl``, one JSON object per line as the script printed it, plus the
script's name, the commit and the date it ran. The table takes each script's latest run. It
lives in README.md between ``<!-- bench-table:start -->`` and ``<!-- bench-table:end -->``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RECORDS = REPO / "docs" / "benchmarks.jsonl"
README = REPO / "README.md"
START, END = "<!-- bench-table:start -->", "<!-- bench-table:end -->"
SCRIPTS = ("bench_chains", "bench_memory", "bench_hair", "bench_mesh_colliders", "bench_cloth",
           "bench_ragdoll", "bench_batch")


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                         text=True, check=False)
    return out.stdout.strip() or "unknown"


def run(script: str) -> list[dict]:
    """Run ``tests/benchmarks/<script>.py``; its JSON lines, stamped."""
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "benchmarks" / f"{script}.py")],
                          cwd=REPO, capture_output=True, text=True, check=False)
    stamp = {"script": script, "commit": _commit(),
             "date": datetime.date.today().isoformat()}
    lines = [json.loads(line) for line in proc.stdout.splitlines()
             if line.startswith("{") and line.endswith("}")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{script} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return [{**line, **stamp} for line in lines]


def latest(records: list[dict]) -> dict[str, list[dict]]:
    """{script: the lines of its latest run}."""
    out: dict[str, list[dict]] = {}
    for record in records:
        script = record["script"]
        previous = out.get(script)
        if previous and (previous[0]["commit"], previous[0]["date"]) != (record["commit"],
                                                                          record["date"]):
            previous = None  # a later run replaces the earlier one
        out[script] = (previous or []) + [record]
    return out


def _find(runs: dict[str, list[dict]], script: str, **match) -> dict:
    for line in runs.get(script, []):
        if all(line.get(k) == v for k, v in match.items()):
            return line
    raise KeyError(f"{script}: no line with {match}; run it (tools/bench_table.py --run {script})")


def _chains(r) -> list[tuple[str, str, str, str]]:
    waft = _find(r, "bench_chains", bench="waft_end_to_end")
    nla = _find(r, "bench_chains", bench="nla_bake")
    ratio = _find(r, "bench_chains", bench="ratio")["ratio_waft_over_nla_bake"]
    core = {line["fps"]: line for line in r["bench_chains"] if line.get("bench") == "core_chains"}
    rows = [("bone chains",
             f"end to end, {waft['bones']} bones × {waft['frames']} frames at {waft['fps']} fps",
             f"{waft['end_to_end_us_per_bone_frame']:.1f} µs per bone-frame",
             f"`nla.bake` of the same bones {nla['nla_bake_us_per_bone_frame']:.1f}: ratio "
             f"**{ratio:.2f}** (target < 0.5)")]
    body = [line for line in r["bench_chains"] if line.get("bench") == "tail_beside_skinned_body"]
    if body:
        b = body[0]
        rows.append(("", f"{b['bones']}-bone tail × {b['frames']} frames beside a "
                         f"{b['body_vertices']:,}-vertex skinned body, end to end",
                     f"{1000 * b['waft_s']:.0f} ms (every object evaluated: "
                     f"{1000 * b['waft_every_object_evaluated_s']:.0f})",
                     f"`nla.bake` {1000 * b['nla_bake_s']:.0f} ms, with the body disabled first "
                     f"(Jiggle Physics' bake) {1000 * b['nla_bake_body_disabled_s']:.0f}: ratio "
                     f"**{b['ratio_waft_over_nla_bake_body_disabled']:.2f}** (target: 20 ms)"))
    if core:
        fields = " / ".join(f"{core[f]['us_per_bone_frame']:.2f}" for f in sorted(core))
        rows.append(("", f"core alone at {' / '.join(str(f) for f in sorted(core))} fps",
                     f"{fields} µs per bone-frame", "target ≤ 1"))
    return rows


def _memory(r) -> list[tuple[str, str, str, str]]:
    rows = []
    for waft in (line for line in r["bench_memory"] if line.get("bench") == "memory_waft"):
        peer = [line for line in r["bench_memory"] if line.get("bench") == "memory_nla_bake"
                and line["frames"] == waft["frames"]]
        versus = (f"`nla.bake` of the same bones {peer[0]['peak_mb']:,.0f} MB: ratio "
                  f"**{peer[0]['ratio_waft_over_nla_bake']:.1f}**; " if peer else "")
        keys = (f" ({waft['resident_after_mb']:,.0f} MB of it the keys, resident after the "
                f"bake; {waft['peak_above_after_mb']:,.0f} MB above them = "
                f"{waft['peak_above_after_mb'] / waft['result_mb']:.1f} × the result)"
                if "resident_after_mb" in waft else "")
        rows.append(("" if rows else "memory",
                      f"peak resident memory of a bake, {waft['bones']} bones × "
                      f"{waft['frames']:,} frames",
                      f"{waft['peak_mb']:,.0f} MB{keys}",
                      f"{versus}target ≤ 3 × the result ({3 * waft['result_mb']:,.0f} MB)"))
    return rows


def _hair(r) -> list[tuple[str, str, str, str]]:
    guides = r["bench_hair"][0]
    # The worst frame where the run measured it (every frame is what a user sees), else the
    # last frame, the only one older runs measured.
    stretch = ("worst frame", guides["max_stretch_any_frame"]) \
        if "max_stretch_any_frame" in guides else ("last frame", guides["max_stretch_last_frame"])
    rows = [("strand hair",
             f"{guides['guides']:,} guides × {guides['particles']} particles, "
             f"{guides['substep_hz']} Hz, {guides['colliders']} sphere colliders, "
             f"{guides['voxel']}³ voxel friction (segment stretch at the {stretch[0]} "
             f"{100 * stretch[1]:.2f} %)",
             f"{guides['ms_per_frame']:.1f} ms per frame", f"target ≤ {guides['target_ms']:.0f}")]
    python = [line for line in r["bench_hair"] if line.get("bench") == "seed000_python"]
    if python:
        ms = python[0]["ms_per_frame"]
        rows.append(("", "the same guides in a per-particle Python transcription of Alice: "
                         "Madness Returns' hair solver", f"{ms / 1000:.1f} s per frame",
                     f"Waft is **{ms / guides['ms_per_frame']:.0f}×** faster"))
    render = [line for line in r["bench_hair"] if line.get("bench") == "render_strands"
              and "ms_per_frame" in line]
    if render:
        line = render[0]
        rows.append(("", f"{line.get('strands', 50000):,} render strands × "
                         f"{line.get('points', 16)} points", f"{line['ms_per_frame']:.1f} ms "
                         "per frame", f"target ≤ {line['target_ms']:.0f}"))
    collision = [line for line in r["bench_hair"] if line.get("bench") == "render_collision"]
    if collision:
        line = collision[0]
        rows.append(("", f"the same strands pushed out of a head, neck and shoulders "
                         f"({line['points_moved']:,} point projections)",
                     f"{line['ms_best']:.1f} ms per frame",
                     f"every point against every collider {line['no_broad_phase_ms']:.0f} ms; "
                     f"target ≤ {line['target_ms']:.0f}"))
    return rows


def _mesh(r) -> list[tuple[str, str, str, str]]:
    body = _find(r, "bench_mesh_colliders", case="bake body")
    rows = [("body-mesh colliders",
             f"{body['guides']:,} guides × {body['points']} falling onto a "
             f"{body['triangles']:,}-triangle body, 240 Hz",
             f"{body['mesh_ms_per_frame']:,.0f} ms per frame",
             f"the same body as a sphere collider {body['peer_ms_per_frame']:,.0f} ms: ratio "
             f"**{body['ratio']:.1f}**")]
    render = [line for line in r["bench_mesh_colliders"] if line.get("case") == "render strands"
              and line["triangles"] > 1000]
    draped = next((line for line in render if not line.get("dipping_6cm")), None)
    deep = next((line for line in render if line.get("dipping_6cm")), None)
    if draped:
        text = f"{draped['mesh_ms_per_frame']:,.0f} ms per frame"
        if deep:
            text += (f" ({deep['mesh_ms_per_frame']:,.0f} with {deep['dipping_6cm']:,} cutting "
                     "6 cm deep)")
        rows.append(("", f"{draped['strands']:,} render strands × {draped['points']} over a "
                         f"{draped['triangles']:,}-triangle head", text,
                     f"the head as a sphere collider {draped['peer_ms_per_frame']:.0f} ms: "
                     f"ratio **{draped['ratio']:.0f}**"))
    return rows


def _cloth(r) -> list[tuple[str, str, str, str]]:
    grid = _find(r, "bench_cloth", bench="cloth_grid_vs_blender_cloth")
    rig = _find(r, "bench_cloth", bench="cloth_bone_rig_core")
    shape = rig["grid"].replace("x", " × ")
    return [("cloth-bones", f"32 × 32 grid (1,024 particles), {grid['substep_rate_hz']:.0f} Hz, "
                            f"{grid['fps']} fps",
             f"{grid['waft_core_ms_per_frame']:.1f} ms per frame",
             f"Blender Cloth (quality {grid['blender_cloth_quality']} = same steps) "
             f"{grid['blender_cloth_ms_per_frame']:.1f} ms: ratio "
             f"**{grid['ratio_waft_over_blender_cloth']:.2f}** (target ≤ 1)"),
            ("", f"{rig['particles']:,}-particle cloth-bone rig ({shape} grid, "
                 f"{rig['bones']:,} bones)",
             f"**{rig['core_frames_per_second']:.0f}** core frames per second",
             f"target ≥ {rig['target_fps']}")]


def _ragdoll(r) -> list[tuple[str, str, str, str]]:
    driven = _find(r, "bench_ragdoll", bench="ragdoll_waft_driven")
    limp = _find(r, "bench_ragdoll", bench="ragdoll_waft_limp")
    return [("ragdolls", f"{driven['bodies']}-body humanoid, {driven['frames']} frames, "
                         f"{driven['substep_hz']} Hz, {driven['iterations']} iterations "
                         "(driven / limp)",
             f"{driven['waft_core_ms_per_frame']:.1f} / {limp['waft_core_ms_per_frame']:.1f} ms "
             "per frame",
             f"Bullet {driven['bullet_bake_ms_per_frame']:.2f} ms: ratio "
             f"**{driven['ratio_waft_core_over_bullet']:.0f} / "
             f"{limp['ratio_waft_core_over_bullet']:.0f}** (target ≤ 1: **not met**)")] + _floor(r)


def _floor(r) -> list[tuple[str, str, str, str]]:
    """The NumPy floor line of bench_ragdoll (ragdoll_floor.py), when recorded."""
    try:
        floor = _find(r, "bench_ragdoll", bench="ragdoll_numpy_floor")
    except KeyError:
        return []
    return [("", f"NumPy floor: the same {floor['bodies'] - 1} ball joints alone, one Jacobi "
                 f"batch per iteration, same substeps and iterations "
                 f"({floor['calls_per_substep']:.0f} calls per substep, "
                 f"{floor['us_per_call']:.1f} µs each)",
             f"{floor['floor_ms_per_frame']:.2f} ms per frame",
             f"Bullet {floor['bullet_bake_ms_per_frame']:.2f} ms: ratio "
             f"**{floor['ratio_floor_over_bullet']:.0f}**")]


def _batch(r) -> list[tuple[str, str, str, str]]:
    lines = r["bench_batch"]
    peer = next(line for line in lines if line["run"].startswith("one Blender per shot"))
    best = max((line for line in lines if line["run"].startswith("bake_many")),
               key=lambda line: line["shots_per_minute"])
    return [("batch", f"{peer['shots']} sample shots, {best['run']}",
             f"{best['shots_per_minute']:.1f} shots per minute",
             f"one Blender per shot in sequence {peer['shots_per_minute']:.1f}: "
             f"**{best['shots_per_minute'] / peer['shots_per_minute']:.2f}×**")]


ROWS: tuple[Callable, ...] = (_chains, _memory, _hair, _mesh, _cloth, _ragdoll, _batch)


def table(runs: dict[str, list[dict]]) -> str:
    lines = ["| system | measure | Waft | peer / target |", "|---|---|---|---|"]
    for rows in ROWS:
        try:
            found = rows(runs)
        except KeyError:
            continue  # never recorded: the row is left out rather than invented
        lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in found]
    stamps = sorted({(lines_[0]["script"], lines_[0]["commit"], lines_[0]["date"])
                     for lines_ in runs.values()})
    measured = "; ".join(f"`{s}` {c} ({d})" for s, c, d in stamps)
    return "\n".join(lines) + f"\n\nMeasured by: {measured}.\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", nargs="*", help="run these benchmarks (default: all) first")
    args = parser.parse_args(argv)
    records = ([json.loads(line) for line in RECORDS.read_text().splitlines() if line.strip()]
               if RECORDS.is_file() else [])
    if args.run is not None:
        for script in args.run or SCRIPTS:
            new = run(script)
            records = [r for r in records if r["script"] != script] + new
            RECORDS.write_text("".join(json.dumps(r) + "\n" for r in records))
            print(f"{script}: {len(new)} lines recorded", flush=True)
    text = README.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"README.md has no {START} … {END} markers")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    README.write_text(head + START + "\n" + table(latest(records)) + END + tail)
    print("README.md table written", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
