"""The one bake entry point: the operator, the CLI command, the samples and the tests call it.

Order (DESIGN.md): read and validate everything → sample the scene once → solve offline → write
once, for every system of ``addon/systems.py`` alike (bone chains, hair, ragdolls, cloth, rods).
Every error before the write leaves the .blend as it was: nothing is created, Waft's track mute
state and the current frame are restored. ``bake_scene_steps`` is the same pipeline as a
generator, so the modal operator can show progress and cancel between chunks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import SetupError
from ..core.timestep import SolverSettings
from . import constrained, preview, reading, sampling_scope, staging, systems
from .merging import merge_baked
from .progress import Progress, run_to_end
from .sampling import at_first_frame

# Frames sampled per modal step: small enough to keep the UI responsive.
SAMPLE_CHUNK = 10
# Solved and written before the others, which then sample their result (bone chains, hair and
# cloth on a ragdolled character follow the ragdoll, not the animation under it).
FIRST_SYSTEMS = ("ragdoll",)


@dataclass
class BakeReport:
    """What a bake did: each system's report by its name (``systems["strands"]``, ``"hair"``,
    ``"ragdoll"``, ``"cloth"``, ``"rod"``), and the whole bake's time (seconds)."""

    frame_start: int = 0
    frame_end: int = 0
    substep_rate: float = 240.0
    total_s: float = 0.0
    systems: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)  # baked bones something would override
    merged: list = field(default_factory=list)  # merged copies made (Bake Target: Merged Copy)

    @property
    def frames(self) -> int:
        return self.frame_end - self.frame_start + 1

    @property
    def bones(self) -> int:
        return sum(r.bones for r in self.systems.values())

    @property
    def particles(self) -> int:
        return sum(r.particles for r in self.systems.values())

    # The bone-chain report's fields, where scripts written before every system had its own
    # report read them (``report.setups``, ``report.chain_positions``, its phase times).
    def _strands(self, name: str, empty):
        strands = self.systems.get("strands")
        return empty if strands is None else getattr(strands, name)

    setups = property(lambda self: self._strands("setups", []))
    chain_positions = property(lambda self: self._strands("chain_positions", {}))
    sample_s = property(lambda self: self._strands("sample_s", 0.0))
    solve_s = property(lambda self: self._strands("solve_s", 0.0))
    write_s = property(lambda self: self._strands("write_s", 0.0))

    def summary(self) -> str:
        text = "; ".join(r.summary() for r in self.systems.values())
        if self.merged:
            text += f"; merged into {', '.join(repr(name) for name in self.merged)}"
        return text


def _settings(scene, substep_rate, preroll, iterations) -> SolverSettings:
    rate = float(scene.waft.substep_rate if substep_rate is None else substep_rate)
    if not np.isfinite(rate) or rate <= 0.0:
        raise SetupError(f"Scene '{scene.name}': substep rate {rate} Hz must be positive")
    preroll = int(scene.waft.preroll if preroll is None else preroll)
    iterations = int(scene.waft.iterations if iterations is None else iterations)
    if preroll < 0 or iterations < 1:
        raise SetupError(f"Scene '{scene.name}': pre-roll must be ≥ 0 and iterations ≥ 1")
    return SolverSettings(substep=1.0 / rate, iterations=iterations,
                          preroll_frames=preroll)


def solver_settings(scene) -> SolverSettings:
    """The scene's solver settings (Waft scene panel), as a bake without overrides uses."""
    return _settings(scene, None, None, None)


def _resolve(scene, ob):
    if isinstance(ob, str):
        found = scene.objects.get(ob)
        if found is None:
            raise SetupError(f"Object '{ob}' is not in scene '{scene.name}'")
        return found
    return ob


def _partition(scene, objects, modules) -> dict:
    """Which objects each system bakes: {system module: objects, or None for all its setups}.

    ``objects is None`` means every setup of the scene. An object may belong to several systems
    (an armature with hair chains and a ragdoll); one that belongs to none is an error.
    """
    if objects is None:
        return {module: None for module in modules}
    objects = [_resolve(scene, ob) for ob in objects]
    if not objects:
        raise SetupError("No objects given to bake")
    claimed = {module: [] for module in modules}
    for ob in objects:
        owners = [module for module in modules if module.claims(ob)]
        if not owners:
            raise SetupError(
                f"Object '{ob.name}' is not a Waft setup: enable Waft on it (bone chains on "
                f"an armature, Waft Hair on hair curves, Waft Cloth on a cage, Waft Ragdoll)")
        for module in owners:
            claimed[module].append(ob)
    return {module: obs for module, obs in claimed.items() if obs}


def _no_setup_error(scene) -> SetupError:
    return SetupError(
        f"Scene '{scene.name}' has no Waft setup: select bones in Pose Mode and use "
        f"Assign Bones, or enable Waft on an armature, a cloth cage or a ragdoll")


def bake_scene_steps(scene, *, objects=None, frame_start=None, frame_end=None,
                     substep_rate=None, preroll=None, iterations=None,
                     sample_chunk: int = SAMPLE_CHUNK) -> Iterator[Progress]:
    """Generator form of ``bake_scene``: yields ``Progress``; returns the ``BakeReport``.

    Every system (strands, then ``addon/systems.py``) is read and validated, then sampled and
    solved; only when all have succeeded do their commits write. Closing the generator before
    that (a cancelled modal bake) leaves the file unchanged: samplers restore the current frame
    and Waft's track mute state in ``finally``. The live preview is suspended meanwhile
    (``preview.suspended``): the bake reads the animator's pose, never the preview's.
    """
    with preview.suspended():
        return (yield from _bake_steps(scene, objects, frame_start, frame_end, substep_rate,
                                       preroll, iterations, sample_chunk))


def _bake_steps(scene, objects, frame_start, frame_end, substep_rate, preroll, iterations,
                sample_chunk) -> Iterator[Progress]:
    t0 = time.perf_counter()
    claimed = _partition(scene, objects, systems.system_modules())
    start, end = reading.frame_range(scene, frame_start, frame_end)
    prepared = []
    with at_first_frame(scene, start):
        for module, obs in claimed.items():
            item = module.prepare(scene, objects=obs, frame_start=start, frame_end=end)
            if item is not None:
                prepared.append((module, item))
    if not prepared:
        raise _no_setup_error(scene)
    settings = _settings(scene, substep_rate, preroll, iterations)
    report = BakeReport(frame_start=start, frame_end=end, substep_rate=1.0 / settings.substep)
    armatures = [ob for ob in scene.objects if ob.type == "ARMATURE"]
    held = constrained.held_before_bake(armatures)
    first = [(m, item) for m, item in prepared if m.NAME in FIRST_SYSTEMS]
    rest = [(m, item) for m, item in prepared if m.NAME not in FIRST_SYSTEMS]
    aside = None
    try:
        if first and rest:
            # Systems on a ragdolled character follow the ragdoll's NEW result: it is solved
            # and written first (its previous result set aside, muted, until the whole bake
            # succeeds), then the others sample the scene with it playing.
            aside = staging.set_aside([m for m, _ in first], [item for _, item in first])
            yield from _run_and_write(first, scene, settings, sample_chunk, report)
            yield from _run_and_write(rest, scene, settings, sample_chunk, report)
        else:
            yield from _run_and_write(prepared, scene, settings, sample_chunk, report)
    except BaseException:  # also GeneratorExit: a cancelled modal bake changes nothing
        if aside is not None:
            staging.restore(scene, aside)
        raise
    if aside is not None:
        staging.discard(aside)
    report.warnings = constrained.resolve(scene, armatures, held)
    if scene.waft.bake_target == 'MERGED':
        report.merged = merge_baked(armatures, loop=scene.waft.use_loop)
    report.total_s = time.perf_counter() - t0
    return report


def _run_and_write(prepared, scene, settings, sample_chunk, report) -> Iterator[Progress]:
    """Sample and solve every system of ``prepared``, then (only when all succeeded) write."""
    commits = []
    with sampling_scope.unneeded_hidden(scene):  # only what the bake reads is evaluated
        for module, item in prepared:
            commits.append((module, (yield from module.run_steps(
                item, scene, settings=settings, sample_chunk=sample_chunk))))
    yield Progress("write", 0, 1)
    for module, commit in commits:
        report.systems[module.NAME] = commit()


def bake_scene(scene, *, objects=None, frame_start=None, frame_end=None, substep_rate=None,
               preroll=None, iterations=None,
               progress: Callable[[Progress], None] | None = None) -> BakeReport:
    """Bake every Waft setup of ``scene`` (or ``objects``) synchronously; see module doc."""
    steps = bake_scene_steps(scene, objects=objects, frame_start=frame_start,
                             frame_end=frame_end, substep_rate=substep_rate, preroll=preroll,
                             iterations=iterations, sample_chunk=1 << 30)
    return run_to_end(steps, progress)


def clear_bake(scene, *, objects=None) -> list[str]:
    """Remove Waft's result from each setup of every system (all when ``objects`` is None).

    Returns the names of the objects that had something to clear.
    """
    cleared = []
    for module, obs in _partition(scene, objects, systems.system_modules()).items():
        cleared += [name for name in module.clear(scene, objects=obs) if name not in cleared]
    return cleared
