"""The systems the one Bake button reaches: bone chains, hair, ragdolls, cloth-bones and rods.

Each entry names a module under ``addon/`` (imported lazily, relative to this package) that
exposes the system protocol (docs/internals.md, "Systems"):

- ``NAME``: short id used in reports;
- ``claims(ob) -> bool``: ``ob`` is one of this system's (enabled) setups;
- ``prepare(scene, *, objects, frame_start, frame_end) -> prepared | None``: read and validate
  (raise ``SetupError`` naming the object and why), never modify the file;
- ``run_steps(prepared, scene, *, settings, sample_chunk)``: generator yielding ``Progress``,
  returning a ``commit()`` closure that writes and returns the system's report;
- ``clear(scene, *, objects=None) -> list[str]``.

``STRAND_OUTPUTS`` name modules that turn solved strand (guide) positions into more output
(render strands as Curves geometry): ``prepare_output(scene, setup_objects) -> prepared | None``
before sampling, and ``build_output(prepared, chain_positions, frames) -> commit()`` after the
solve; their commits run with the strands' write. ``preview_output(scene, setup_objects) ->
previewer | None`` gives the live preview's: ``previewer.frame(frame, chain_positions)`` returns
the entries a simulated frame shows (drawn by the overlay).
"""

from __future__ import annotations

import importlib

SYSTEMS: tuple[str, ...] = (
    "strands.system",
    "hair.system",
    "ragdoll.system",
    "cloth.system",
    "cloth.rod_system",
)

STRAND_OUTPUTS: tuple[str, ...] = (
    "hair.output",
)


def system_modules() -> list:
    return [importlib.import_module(f".{name}", __package__) for name in SYSTEMS]


def strand_output_modules() -> list:
    return [importlib.import_module(f".{name}", __package__) for name in STRAND_OUTPUTS]
