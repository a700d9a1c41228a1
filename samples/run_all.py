"""Build every sample scene, bake it through the installed Waft add-on, save and render it.

    python samples/run_all.py [--zip dist/waft-0.1.0.zip] [--out out] [--only NAME] [--no-render]

The zip is installed into a throwaway Blender user directory exactly as a user's
Install from Disk would; each sample's ``build_scene()`` runs in an empty file, then the scene is
baked with ``addon.bake_api.bake_scene`` (the same function the operator and the CLI call),
saved as ``out/<sample>.blend`` and rendered as ``out/<sample>.png`` (a contact sheet of frames)
and ``out/<sample>.webp`` (an animated preview of the whole range).
Exits non-zero when any sample fails; a sample whose assets are missing is reported as skipped.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = REPO_ROOT / "samples"
# Every samples/*.py that is not a helper (leading underscore) or this runner, in name order.
SAMPLES = tuple(sorted(p.stem for p in SAMPLES_DIR.glob("*.py")
                       if not p.stem.startswith("_") and p.stem != "run_all"))
sys.path[:0] = [str(REPO_ROOT / "tools"), str(SAMPLES_DIR)]

import blender_env  # noqa: E402

bpy = blender_env.import_bpy_isolated()  # the throwaway user dir is set before bpy loads

import contact_sheet  # noqa: E402  (imports bpy)


@dataclass
class Row:
    setup: str
    bones: int
    particles: int
    frames: int
    seconds: float
    status: str = "ok"

    @property
    def ms_per_frame(self) -> float:
        return 1e3 * self.seconds / max(self.frames, 1)

    @property
    def us_per_bone_frame(self) -> float:
        return 1e6 * self.seconds / max(self.bones * self.frames, 1)


def load_sample(name: str):
    spec = importlib.util.spec_from_file_location(f"waft_sample_{name}", SAMPLES_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_written(scene, setups: list[str]) -> None:
    """The bake must leave Waft's NLA track on every setup (internals.md: track ``Waft``)."""
    for name in setups:
        ad = scene.objects[name].animation_data
        if ad is None or ad.nla_tracks.get("Waft") is None:
            raise RuntimeError(f"bake_scene returned but '{name}' has no 'Waft' NLA track")


def run_sample(name: str, bake_api, out_dir: Path, *, render: bool) -> Row:
    module = load_sample(name)
    missing = getattr(module, "missing_assets", lambda: None)()
    if missing:
        print(f"[{name}] skipped: {missing}")
        return Row(name, 0, 0, 0, 0.0, status="skipped")
    blender_env.reset_to_empty_file()
    scene = module.build_scene()
    frames = scene.frame_end - scene.frame_start + 1
    start = time.perf_counter()
    result = bake_api.bake_scene(scene, preroll=getattr(module, "PREROLL", 0))
    seconds = time.perf_counter() - start
    # The add-on's BakeReport (addon/bake_api.py) knows the counts and the time split, for the
    # bone chains (result.setups) and for every other system (result.systems).
    setups = [s.name for s in result.setups]
    setups += [s.name for report in result.systems.values() for s in report.setups]
    if not setups:
        raise RuntimeError(f"sample {name} built no Waft setup")
    check_written(scene, [s.name for s in result.setups])
    if hasattr(module, "check"):  # the sample's own check of what the bake wrote
        module.check(scene, result)
    bones, particles = result.bones, result.particles
    print(f"[{name}] {result.summary()}")
    out_dir.mkdir(parents=True, exist_ok=True)
    blend = out_dir / f"{name}.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    print(f"[{name}] saved {blend}")
    if render:
        sheet_frames = getattr(module, "SHEET_FRAMES", None) or tuple(
            round(scene.frame_start + i * (frames - 1) / 7) for i in range(8)
        )
        png = contact_sheet.render_contact_sheet(scene, sheet_frames, out_dir / f"{name}.png")
        print(f"[{name}] rendered {png} (frames {', '.join(map(str, sheet_frames))})")
        webp = contact_sheet.render_animation(scene, out_dir / f"{name}.webp")
        print(f"[{name}] animated preview {webp} ({webp.stat().st_size // 1024} kB)")
    return Row(", ".join(setups) + f" ({name})", bones, particles, frames, seconds)


def print_table(rows: list[Row]) -> None:
    header = (
        f"{'setup':<44} {'bones':>6} {'particles':>9} {'frames':>6} {'seconds':>8} "
        f"{'ms/frame':>9} {'µs/bone-frame':>14}"
    )
    print()
    print(header)
    print("-" * len(header))
    for row in rows:
        if row.status != "ok":
            print(f"{row.setup:<44} {row.status}")
            continue
        print(
            f"{row.setup:<44} {row.bones:>6} {row.particles:>9} {row.frames:>6} "
            f"{row.seconds:>8.3f} {row.ms_per_frame:>9.1f} {row.us_per_bone_frame:>14.1f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build, bake, save and render the samples.")
    parser.add_argument("--zip", type=Path, default=REPO_ROOT / "dist" / "waft-0.1.0.zip")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "out")
    parser.add_argument("--only", nargs="*", choices=SAMPLES, default=None)
    parser.add_argument("--no-render", action="store_true")
    args = parser.parse_args(argv)

    module_name, _ = blender_env.install_extension(args.zip)
    print(f"installed {args.zip.name} as {module_name} (Blender {bpy.app.version_string})")
    bake_api = blender_env.bake_api(module_name)

    rows, failed = [], []
    for name in args.only or SAMPLES:
        try:
            rows.append(run_sample(name, bake_api, args.out, render=not args.no_render))
        except Exception:  # report every sample, then fail the job
            traceback.print_exc()
            failed.append(name)
            rows.append(Row(name, 0, 0, 0, 0.0, status="FAILED"))
    print_table(rows)
    if failed:
        print(f"\nfailed samples: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
