"""``blender --background scene.blend --command waft bake …``: the headless front end.

Background Blender does not save on exit, so a bake is written to ``--output`` (or back to the
open file with ``--save``). Returns 0 on success and 1 with a one-line message on any Waft error.
"""

from __future__ import annotations

import argparse
import sys

import bpy

from ..core.errors import WaftError
from . import bake_api


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="blender --command waft",
                                     description="Bake or clear Waft secondary motion")
    commands = parser.add_subparsers(dest="command", required=True)
    bake = commands.add_parser("bake", help="simulate the Waft setups and write keyframes")
    bake.add_argument("--frames", nargs=2, type=int, metavar=("START", "END"))
    bake.add_argument("--substep-rate", type=float, metavar="HZ")
    bake.add_argument("--preroll", type=int, metavar="N")
    bake.add_argument("--iterations", type=int, metavar="N")
    clear = commands.add_parser("clear", help="remove Waft's baked result")
    for sub in (bake, clear):
        sub.add_argument("--objects", nargs="+", metavar="NAME",
                         help="armatures to act on (default: every Waft setup)")
        sub.add_argument("--output", metavar="PATH", help="save the result to this .blend")
        sub.add_argument("--save", action="store_true", help="save over the open .blend")
    return parser


def _save(args) -> None:
    if args.output:
        bpy.ops.wm.save_as_mainfile(filepath=args.output, copy=False)
    elif args.save:
        if not bpy.data.filepath:
            raise WaftError("--save needs an open .blend file; use --output PATH")
        bpy.ops.wm.save_mainfile()


def run(argv: list[str]) -> str:
    """Parse and run; returns a summary line, raises ``WaftError`` on failure."""
    args = build_parser().parse_args(argv)
    scene = bpy.context.scene
    if args.command == "bake":
        frames = args.frames or (None, None)
        report = bake_api.bake_scene(scene, objects=args.objects, frame_start=frames[0],
                                     frame_end=frames[1], substep_rate=args.substep_rate,
                                     preroll=args.preroll, iterations=args.iterations)
        summary = report.summary()
        for line in report.warnings:
            print(f"waft: warning: {line}", file=sys.stderr)
    else:
        cleared = bake_api.clear_bake(scene, objects=args.objects)
        summary = f"Waft cleared {', '.join(cleared) or 'nothing'}"
    _save(args)
    return summary


def main(argv) -> int:
    """The ``register_cli_command`` callback."""
    try:
        print(run(list(argv)))
    except WaftError as error:
        print(f"waft: error: {error}", file=sys.stderr)
        return 1
    except SystemExit as exit_:  # argparse: --help (0) or a usage error (2, already printed)
        return 0 if exit_.code in (0, None) else 1
    return 0
