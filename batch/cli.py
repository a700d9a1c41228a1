"""``python -m waft.batch bake SHOTS... --out DIR``: the command line of ``bake_many``.

Exit status: 0 when every shot baked or was skipped, 1 when any shot failed (the report says
which and why), 2 when the batch could not start (a bad option, a missing file, no Dask).
"""

from __future__ import annotations

import argparse
import sys

from .errors import BatchError
from .ledger import BakeSettings
from .report import FAILED
from .run import REPORT_NAME, bake_many


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m waft.batch",
        description="Bake Waft secondary motion for many .blend shots on a Dask cluster")
    commands = parser.add_subparsers(dest="command", required=True)
    bake = commands.add_parser(
        "bake", help="bake every shot; unchanged shots since the last run are skipped",
        description="Each shot is baked in its own Blender process (the bpy wheel) on a Dask "
                    "worker, exactly as baking the file alone; results go to DIR/<shot>.blend.")
    bake.add_argument("shots", nargs="+", metavar="SHOT",
                      help=".blend files, or .txt/.json shot lists (per-shot frames, objects)")
    bake.add_argument("--out", required=True, metavar="DIR",
                      help="where baked files, the report and the batch's ledger go")
    bake.add_argument("--in-place", action="store_true",
                      help="save each baked shot over its own .blend (DIR keeps the report)")
    bake.add_argument("--frames", nargs=2, type=int, metavar=("START", "END"),
                      help="frame range for shots that do not give their own")
    bake.add_argument("--objects", nargs="+", metavar="NAME",
                      help="Waft setups to bake in shots that do not list their own")
    bake.add_argument("--scene", metavar="NAME", help="scene to bake (default: the active one)")
    bake.add_argument("--substep-rate", type=float, metavar="HZ")
    bake.add_argument("--preroll", type=int, metavar="N")
    bake.add_argument("--iterations", type=int, metavar="N")
    bake.add_argument("--scheduler", metavar="ADDRESS",
                      help="an existing Dask scheduler (tcp://host:8786); default: a local "
                           "cluster on this machine")
    bake.add_argument("--workers", type=int, metavar="N",
                      help="local cluster size (default: one per core, memory permitting)")
    bake.add_argument("--retries", type=int, default=1, metavar="N",
                      help="retries of a shot whose Blender crashed, whose worker died or that "
                           "timed out (default 1); a bake error is not retried")
    bake.add_argument("--timeout", type=float, metavar="SECONDS",
                      help="stop a shot's Blender after this long (default: no limit)")
    bake.add_argument("--force", action="store_true", help="bake unchanged shots too")
    bake.add_argument("--zip", metavar="PATH",
                      help="the Waft extension zip to bake with (default: built from this "
                           "checkout)")
    bake.add_argument("--python", metavar="PATH",
                      help="Python with the bpy wheel on the workers (default: the worker's)")
    bake.add_argument("--report", metavar="PATH",
                      help=f"JSON lines report (default: DIR/{REPORT_NAME})")
    bake.add_argument("--no-progress", action="store_true",
                      help="no progress bar, dashboard link or summary table")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = BakeSettings(substep_rate=args.substep_rate, preroll=args.preroll,
                            iterations=args.iterations)
    try:
        results = bake_many(args.shots, args.out, in_place=args.in_place, settings=settings,
                            frames=tuple(args.frames) if args.frames else None,
                            objects=args.objects, scene=args.scene, scheduler=args.scheduler,
                            workers=args.workers, retries=args.retries, timeout=args.timeout,
                            force=args.force, zip_path=args.zip, python=args.python,
                            report_path=args.report, progress=not args.no_progress)
    except BatchError as error:
        print(f"waft batch: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("waft batch: interrupted; finished shots are kept and skipped next time",
              file=sys.stderr)
        return 130
    return 1 if any(r.status in (*FAILED, "cancelled") for r in results) else 0
