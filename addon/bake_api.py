"""The one bake entry point: the operator, the CLI command, the samples and the tests call it.

Order (DESIGN.md): read and validate everything → sample the scene once → solve offline → write
once. Every error before the write leaves the .blend as it was: nothing is created, Waft's track
mute state and the current frame are restored. ``bake_scene_steps`` is the same pipeline as a
generator, so the modal operator can show progress and cancel between chunks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ..core import solver
from ..core.bone_frames import chain_pose_rotations
from ..core.errors import SetupError
from . import reading, rest_channels, systems, writing
from .assemble import SolverInput, solver_input
from .progress import Progress, solve_steps
from .sampling import Sampler, sample_steps, waft_tracks_muted

# Frames sampled per modal step: small enough to keep the UI responsive.
SAMPLE_CHUNK = 10
# Solver frames per modal step.
SOLVE_CHUNK = 10


@dataclass
class SetupReport:
    name: str
    chains: int
    bones: int
    particles: int
    fcurves: int = 0
    action: str = ""


@dataclass
class BakeReport:
    """What a bake did, and where the time went (seconds)."""

    setups: list[SetupReport] = field(default_factory=list)
    frame_start: int = 0
    frame_end: int = 0
    substep_rate: float = 240.0
    sample_s: float = 0.0
    solve_s: float = 0.0
    write_s: float = 0.0
    total_s: float = 0.0
    # Simulated particles per chain ("Rig: FirstBone" → (F, bones + 1, 3), world, Blender units),
    # so callers can compare what Blender plays back with what the solver computed.
    chain_positions: dict = field(default_factory=dict)
    # The other systems' reports (cloth, ragdoll, ...), by system name (addon/systems.py).
    systems: dict = field(default_factory=dict)

    @property
    def frames(self) -> int:
        return self.frame_end - self.frame_start + 1

    @property
    def bones(self) -> int:
        return sum(s.bones for s in self.setups) + sum(r.bones for r in self.systems.values())

    @property
    def particles(self) -> int:
        return (sum(s.particles for s in self.setups)
                + sum(r.particles for r in self.systems.values()))

    def summary(self) -> str:
        parts = []
        if self.setups:
            names = ", ".join(s.name for s in self.setups)
            strand_bones = sum(s.bones for s in self.setups)
            parts.append(f"Waft baked {names}: {strand_bones} bones, frames {self.frame_start}–"
                         f"{self.frame_end} in {self.total_s:.2f} s (sample {self.sample_s:.2f}, "
                         f"solve {self.solve_s:.2f}, write {self.write_s:.2f})")
        parts.extend(r.summary() for r in self.systems.values())
        return "; ".join(parts)


def _settings(scene, substep_rate, preroll, iterations) -> solver.SolverSettings:
    rate = float(scene.waft.substep_rate if substep_rate is None else substep_rate)
    if not np.isfinite(rate) or rate <= 0.0:
        raise SetupError(f"Scene '{scene.name}': substep rate {rate} Hz must be positive")
    preroll = int(scene.waft.preroll if preroll is None else preroll)
    iterations = int(scene.waft.iterations if iterations is None else iterations)
    if preroll < 0 or iterations < 1:
        raise SetupError(f"Scene '{scene.name}': pre-roll must be ≥ 0 and iterations ≥ 1")
    return solver.SolverSettings(substep=1.0 / rate, iterations=iterations,
                                 preroll_frames=preroll)


def _report_for(read: reading.SceneRead, settings: solver.SolverSettings) -> BakeReport:
    report = BakeReport(frame_start=read.frame_start, frame_end=read.frame_end,
                        substep_rate=1.0 / settings.substep)
    for i, setup in enumerate(read.setups):
        chains = [c for c in read.chains if c.setup_index == i]
        bones = sum(len(c.bone_names) for c in chains)
        report.setups.append(SetupReport(name=setup.name, chains=len(chains), bones=bones,
                                         particles=bones + len(chains)))
    return report


def _static_channels(read: reading.SceneRead) -> list:
    """Per setup, the simulated bones' unanimated rotation channels (read before sampling)."""
    return [rest_channels.static_channels(
        setup.object, [n for c in setup.chains for n in c.bone_names]) for setup in read.setups]


def _write(read: reading.SceneRead, inputs: SolverInput, positions, report: BakeReport,
           static: list) -> None:
    f = inputs.frames
    quats = chain_pose_rotations(
        rest_matrix=f.rest_matrix, parent_rest_matrix=f.parent_rest_matrix,
        reference_matrix=f.reference_matrix, parent_matrix=f.parent_matrix,
        object_matrix=f.object_matrix, positions=positions)
    frames = np.arange(read.frame_start, read.frame_end + 1, dtype=np.float64)
    for s, chain in enumerate(read.chains):
        name = f"{read.setups[chain.setup_index].name}: {chain.bone_names[0]}"
        count = len(chain.bone_names) + 1
        report.chain_positions[name] = positions[:, s, :count] / read.unit_scale
    for i, setup in enumerate(read.setups):
        bone_quats = {}
        for s, chain in enumerate(read.chains):
            if chain.setup_index == i:
                for b, name in enumerate(chain.bone_names):
                    bone_quats[name] = quats[:, s, b]
        action, count = writing.write_setup(setup.object, frames, bone_quats, static[i])
        report.setups[i].fcurves = count
        report.setups[i].action = action.name


def _resolve(scene, ob):
    if isinstance(ob, str):
        found = scene.objects.get(ob)
        if found is None:
            raise SetupError(f"Object '{ob}' is not in scene '{scene.name}'")
        return found
    return ob


def _partition(scene, objects, modules) -> tuple[list | None, dict]:
    """Which objects each system bakes: (strand armatures, {system module: objects}).

    ``objects is None`` means every setup of the scene. An object may belong to several systems
    (an armature with hair chains and a ragdoll); one that belongs to none is an error.
    """
    if objects is None:
        strand = sorted((ob for ob in scene.objects if ob.type == 'ARMATURE' and ob.waft.enabled),
                        key=lambda ob: ob.name)
        return (strand or None), {module: None for module in modules}
    objects = [_resolve(scene, ob) for ob in objects]
    if not objects:
        raise SetupError("No objects given to bake")
    strand, claimed = [], {module: [] for module in modules}
    for ob in objects:
        owners = [module for module in modules if module.claims(ob)]
        for module in owners:
            claimed[module].append(ob)
        if not owners or (ob.type == 'ARMATURE' and ob.waft.enabled):
            strand.append(ob)  # reading.find_setups names what is wrong with a stray object
    return (strand or None), {module: obs for module, obs in claimed.items() if obs}


def _no_setup_error(scene) -> SetupError:
    return SetupError(
        f"Scene '{scene.name}' has no Waft setup: select bones in Pose Mode and use "
        f"Assign Bones, or enable Waft on an armature, a cloth cage or a ragdoll")


def _strand_steps(scene, read, settings, report, sample_chunk) -> Iterator[Progress]:
    """Sample, solve; return the commit closure that writes the strands (and their outputs)."""
    static = _static_channels(read)
    outputs = [(module, module.prepare_output(scene, [s.object for s in read.setups]))
               for module in systems.strand_output_modules()]
    outputs = [(module, prepared) for module, prepared in outputs if prepared is not None]
    t0 = time.perf_counter()
    samples = yield from sample_steps(
        scene, Sampler(scene, read), chunk=sample_chunk,
        muted=waft_tracks_muted(s.object for s in read.setups))
    inputs = solver_input(read, samples)
    t1 = time.perf_counter()
    result = yield from solve_steps(
        lambda: solver.bake_steps(inputs.model, inputs.drive, settings), read.frame_start)
    report.sample_s, report.solve_s = t1 - t0, time.perf_counter() - t1
    frames = np.arange(read.frame_start, read.frame_end + 1, dtype=np.float64)
    positions = {}
    for s, chain in enumerate(read.chains):
        name = f"{read.setups[chain.setup_index].name}: {chain.bone_names[0]}"
        positions[name] = result.positions[:, s, :len(chain.bone_names) + 1] / read.unit_scale
    output_commits = [module.build_output(prepared, positions, frames)
                      for module, prepared in outputs]

    def commit() -> None:
        t2 = time.perf_counter()
        _write(read, inputs, result.positions, report, static)
        for output_commit in output_commits:
            output_commit()
        report.write_s = time.perf_counter() - t2

    return commit


def bake_scene_steps(scene, *, objects=None, frame_start=None, frame_end=None,
                     substep_rate=None, preroll=None, iterations=None,
                     sample_chunk: int = SAMPLE_CHUNK) -> Iterator[Progress]:
    """Generator form of ``bake_scene``: yields ``Progress``; returns the ``BakeReport``.

    Every system (strands, then ``addon/systems.py``) is read and validated, then sampled and
    solved; only when all have succeeded do their commits write. Closing the generator before
    that (a cancelled modal bake) leaves the file unchanged: samplers restore the current frame
    and Waft's track mute state in ``finally``.
    """
    t0 = time.perf_counter()
    modules = systems.system_modules()
    strand_objects, claimed = _partition(scene, objects, modules)
    start, end = reading.frame_range(scene, frame_start, frame_end)
    read = None
    if strand_objects is not None:
        read = reading.read_scene(scene, objects=strand_objects, frame_start=start,
                                  frame_end=end)
    prepared = []
    for module, obs in claimed.items():
        item = module.prepare(scene, objects=obs, frame_start=start, frame_end=end)
        if item is not None:
            prepared.append((module, item))
    if read is None and not prepared:
        raise _no_setup_error(scene)
    settings = _settings(scene, substep_rate, preroll, iterations)
    if read is not None:
        report = _report_for(read, settings)
    else:
        report = BakeReport(frame_start=start, frame_end=end,
                            substep_rate=1.0 / settings.substep)
    commits = []
    if read is not None:
        commits.append((None, (yield from _strand_steps(scene, read, settings, report,
                                                        sample_chunk))))
    for module, item in prepared:
        commits.append((module, (yield from module.run_steps(item, scene, settings=settings))))
    yield Progress("write", 0, 1)
    for module, commit in commits:
        result = commit()
        if module is not None:
            report.systems[module.NAME] = result
    report.total_s = time.perf_counter() - t0
    return report


def bake_scene(scene, *, objects=None, frame_start=None, frame_end=None, substep_rate=None,
               preroll=None, iterations=None,
               progress: Callable[[Progress], None] | None = None) -> BakeReport:
    """Bake every Waft setup of ``scene`` (or ``objects``) synchronously; see module doc."""
    steps = bake_scene_steps(scene, objects=objects, frame_start=frame_start,
                             frame_end=frame_end, substep_rate=substep_rate, preroll=preroll,
                             iterations=iterations, sample_chunk=1 << 30)
    try:
        while True:
            item = next(steps)
            if progress is not None:
                progress(item)
    except StopIteration as stop:
        return stop.value


def clear_bake(scene, *, objects=None) -> list[str]:
    """Remove Waft's result from each setup of every system (all when ``objects`` is None).

    Returns the names of the objects that had something to clear.
    """
    modules = systems.system_modules()
    strand_objects, claimed = _partition(scene, objects, modules)
    cleared = []
    if objects is None:
        targets = strand_objects or []
    else:
        targets = reading.find_setups(scene, strand_objects) if strand_objects else []
    cleared += [ob.name for ob in targets if writing.clear_setup(ob)]
    for module, obs in claimed.items():
        cleared += [name for name in module.clear(scene, objects=obs) if name not in cleared]
    return cleared
