"""The bone-chain (strand) system behind the one Bake button (protocol: addon/systems.py).

prepare (read + validate every armature with flagged bone chains; nothing sampled or written) →
run_steps (sample every frame once, solve with core.strands, turn particles into bone rotations;
yields Progress) → the returned ``commit()`` writes each setup's action on the ``Waft`` track,
its ``Waft: rest`` track, and the strand outputs (render strands, addon/systems.py
``STRAND_OUTPUTS``). A failure or a closed generator before ``commit()`` leaves the file as it
was.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...core.key_reduction import chain_angles, chain_reach
from ...core.rotations import make_sign_continuous
from ...core.strands.bone_frames import basis_rotations, chain_axes
from ...core.strands.solver import BakeResult, bake_steps
from .. import preview, rest_channels, systems
from ..looping import simulate_for_bake
from ..progress import Progress, solve_steps
from ..report import ArmatureReport, SystemReport, timings
from ..sampling import frame_kept, sample_steps, sample_times, waft_tracks_muted
from . import loop, vrm_mode, writing
from .assemble import InputBuilder, chain_frames, solver_input
from .reading import SceneRead, find_setups, read_scene
from .sampling import Sampler

NAME = "strands"
SAMPLE_CHUNK = 10


@dataclass(kw_only=True)
class SetupReport(ArmatureReport):
    chains: int
    bones: int
    particles: int


@dataclass
class StrandReport(SystemReport):
    """What the bone-chain bake did, per armature (``setups``: ``SetupReport``)."""

    name: str = NAME
    frame_start: int = 0
    # Simulated particles per chain ("Rig: FirstBone" → (F, bones + 1, 3), world, Blender units),
    # so callers can compare what Blender plays back with what the solver computed.
    chain_positions: dict = field(default_factory=dict)
    keys: int = 0  # rotation keys written
    keys_unreduced: int = 0  # the keys a key on every frame would have been
    from_preview: bool = False  # the live preview had solved this exact input: not solved again

    def summary(self) -> str:
        names = ", ".join(s.name for s in self.setups)
        end = self.frame_start + self.frames - 1
        reduced = (f", {self.keys} of {self.keys_unreduced} keys kept"
                   if self.keys < self.keys_unreduced else "")
        reused = "; the preview's simulation, not solved again" if self.from_preview else ""
        return (f"Waft baked {names}: {self.bones} bones, frames {self.frame_start}–{end} "
                f"({timings(self)}){reduced}{reused}")


@dataclass(frozen=True)
class Prepared:
    read: SceneRead
    outputs: list  # (strand output module, its prepared input), render strands and the like


def claims(ob) -> bool:
    return ob.type == 'ARMATURE' and ob.waft.enabled


def prepare(scene, *, objects=None, frame_start=None, frame_end=None) -> Prepared | None:
    if objects is None and not any(claims(ob) for ob in scene.objects):
        return None
    read = read_scene(scene, objects=objects, frame_start=frame_start, frame_end=frame_end)
    outputs = [(module, module.prepare_output(scene, [s.object for s in read.setups]))
               for module in systems.strand_output_modules()]
    return Prepared(read=read,
                    outputs=[(module, item) for module, item in outputs if item is not None])


def _report_for(read: SceneRead) -> StrandReport:
    report = StrandReport(frame_start=read.frame_start,
                          frames=read.frame_end - read.frame_start + 1)
    for i, setup in enumerate(read.setups):
        chains = [c for c in read.chains if c.setup_index == i]
        bones = sum(len(c.bone_names) for c in chains)
        report.setups.append(SetupReport(name=setup.name, chains=len(chains), bones=bones,
                                         particles=bones + len(chains)))
    report.bones = sum(s.bones for s in report.setups)
    report.particles = sum(s.particles for s in report.setups)
    return report


def _static_channels(read: SceneRead) -> list:
    """Per setup, the simulated bones' unanimated rotation channels (read before sampling)."""
    return [rest_channels.static_channels(
        setup.object, [n for c in setup.chains for n in c.bone_names]) for setup in read.setups]


def _max_angles(read: SceneRead, f, reduction) -> dict[str, float] | None:
    """Per bone, the key reduction's angle from the world bound ``reduction`` = (distance in
    Blender units, angle in radians), or None without reduction."""
    if reduction is None:
        return None
    distance, angle = reduction
    angles = {}
    for s, chain in enumerate(read.chains):
        # World units per armature unit: the object's largest scale over the shot.
        scale = float(np.linalg.norm(f.object_matrix[:, s, :3, :3], axis=-2).max()
                      ) / read.unit_scale
        heads = chain.rest_matrix[:, :3, 3]
        tails = heads + chain.rest_matrix[:, :3, 1] * chain.bone_length[:, None]
        per_bone = chain_angles(reach=chain_reach(heads, tails),
                                max_distance=distance / max(scale, 1e-12), max_angle=angle)
        angles.update(zip(chain.bone_names, (float(a) for a in per_bone), strict=True))
    return angles


# Frames turned into bone rotations at a time: the per-frame temporaries (axes, swings,
# inverses: ~70 float64 per bone and frame) stay a few MB instead of growing with the shot (at
# 512 bones × 5,000 frames they were the bake's peak memory).
ROTATION_CHUNK = 256


def _rotations(f, positions, vrm) -> np.ndarray:
    """(F, S, B, 4) sign-continuous quaternions of every chain bone, ``ROTATION_CHUNK`` frames
    at a time; the same values as one pass over the whole shot (the continuity flips are exact
    sign changes, made once over all frames)."""
    F = positions.shape[0]
    quats = None
    for start in range(0, F, ROTATION_CHUNK):
        end = min(start + ROTATION_CHUNK, F)
        # (The pose matrices may be held in float32, as Blender gives them: read as float64.)
        axes = chain_axes(reference_matrix=f.reference_matrix[start:end].astype(np.float64),
                          object_matrix=f.object_matrix[start:end],
                          positions=positions[start:end])
        if vrm is not None:
            axes[:, list(vrm.chains), : vrm.axes.shape[2]] = vrm.axes[start:end]
        chunk = basis_rotations(rest_matrix=f.rest_matrix,
                                parent_rest_matrix=f.parent_rest_matrix,
                                parent_matrix=f.parent_matrix[start:end].astype(np.float64),
                                axes=axes)
        if quats is None:
            quats = np.empty((F,) + chunk.shape[1:])
        quats[start:end] = chunk
    return make_sign_continuous(quats, axis=0)


def _write(read: SceneRead, f, positions, report: StrandReport, static: list, vrm=None,
           reduction=None) -> None:
    """``f``: the chains' frames (``ChainFrames``) at the scene frames; ``vrm``: the VRM Spring
    Bone chains' own orientations (``vrm_mode.VrmSolve``), which carry their twist;
    ``reduction``: (distance, angle) of key reduction, or None for a key on every frame."""
    quats = _rotations(f, positions, vrm)
    frames = np.arange(read.frame_start, read.frame_end + 1, dtype=np.float64)
    max_angles = _max_angles(read, f, reduction)
    del f  # the bone matrices of every frame (143 MB at 512 bones × 5,000): not while keying
    for i, setup in enumerate(read.setups):
        bone_quats = {}
        for s, chain in enumerate(read.chains):
            if chain.setup_index == i:
                for b, name in enumerate(chain.bone_names):
                    bone_quats[name] = quats[:, s, b]
        keys = []
        action, count = writing.write_setup(setup.object, frames, bone_quats, static[i],
                                            max_angles=max_angles, keys=keys)
        report.keys += sum(k[0] for k in keys)
        report.keys_unreduced += sum(k[1] for k in keys)
        report.setups[i].fcurves = count
        report.setups[i].action = action.name


@dataclass(frozen=True)
class Simulation:
    """A solved bone-chain bake before anything is written (``simulate``)."""

    inputs: object  # assemble.SolverInput: the core model and drive
    frames: object  # assemble.ChainFrames at the scene frames (for the bone rotations)
    result: object  # core BakeResult (the scene frames)
    sample_s: float
    solve_s: float
    vrm: object = None  # vrm_mode.VrmSolve of the VRM Spring Bone chains, or None
    from_preview: bool = False  # the result is the live preview's (``preview.solved``)


# Samples read and converted at a time by the bake (``sampled_input``): the sampler's buffers
# hold this many (8 MB at 512 bones), and each block's conversion costs a few NumPy calls per
# chain, so blocks much smaller than this would multiply them.
SAMPLE_BLOCK = 256


def sampled_input(scene, read: SceneRead, times, on_grid, at_frames, *, rate, chunk: int):
    """Generator (yields Progress): read the scene at ``times`` (``sample_times``) a block of
    ``SAMPLE_BLOCK`` samples at a time, turn each block into the solver's input rows
    (``assemble.InputBuilder``) and let it go; returns ``solver_input``'s ``SolverInput`` of
    every sample, with the chain frames at the scene frames."""
    # The first block reaches the second grid sample: the builder tells a setting read once
    # (one row) from an animated one (a row per sample) by a block of two or more (a grid
    # coarser than 1/256 of the samples, e.g. 0.05 Hz, would otherwise start with one).
    held = max(SAMPLE_BLOCK, int(on_grid[1]) + 1 if len(on_grid) > 1 else 1)
    sampler = Sampler(scene, read, times, held=held)
    builder = InputBuilder(read, samples=len(on_grid), frames=len(at_frames), rate=rate)
    grid = scene_frames = 0  # grid samples and scene frames converted
    # A scene frame on the grid was checked with the grid rows of its block (at 24 fps on the
    # 120 Hz grid, every frame): its matrices are not checked a second time.
    on_grid_frame = np.isin(at_frames, on_grid)
    total = sampler.total
    with frame_kept(scene), waft_tracks_muted(s.object for s in read.setups):
        while sampler.done < total:
            sampler.sample_chunk(min(chunk, sampler.held - (sampler.done - sampler.base)))
            if sampler.done - sampler.base >= sampler.held or sampler.done == total:
                done = sampler.done
                grid_end = int(np.searchsorted(on_grid, done))
                frames_end = int(np.searchsorted(at_frames, done))
                # (A block may hold no scene frame: frames further apart than a block's
                # samples, e.g. 24 fps at an 8,000 Hz Sample Rate, or none on the grid.)
                builder.add(sampler.rows(on_grid[grid:grid_end]) if grid_end > grid else None,
                            None if rate is None or frames_end == scene_frames else
                            sampler.rows(at_frames[scene_frames:frames_end], settings=False,
                                         check=not on_grid_frame[scene_frames:frames_end].all()))
                grid, scene_frames = grid_end, frames_end
                sampler.release(done)
            yield Progress("sample", sampler.done, total, system=NAME)
    return builder.result()


def simulate(read: SceneRead, scene, *, settings, sample_chunk: int = SAMPLE_CHUNK):
    """Generator (yields Progress): sample every frame once, solve, return a ``Simulation``.
    The bake and Capture Settled Pose both run it."""
    t0 = time.perf_counter()
    rate = float(scene.waft.sample_rate)
    times, on_grid, at_frames = sample_times(read.frame_start, read.frame_end, read.fps, rate)
    sub_frame = rate > 0.0  # else the samples are the scene frames
    vrm = None
    if not vrm_mode.vrm_chains(read):
        inputs = yield from sampled_input(scene, read, times, on_grid, at_frames,
                                          rate=rate if sub_frame else None, chunk=sample_chunk)
        frames_out = inputs.frames
        t1 = time.perf_counter()
    else:
        # The VRM Spring Bone chains are solved over the whole shot at once: every sample
        # is held.
        samples = yield from sample_steps(
            scene, Sampler(scene, read, times), chunk=sample_chunk,
            muted=waft_tracks_muted(s.object for s in read.setups))
        inputs = solver_input(read, samples.take(on_grid), rate=rate if sub_frame else None)
        frames_out = chain_frames(read, samples.take(at_frames))[0] if sub_frame \
            else inputs.frames
        t1 = time.perf_counter()
        vrm = vrm_mode.solve(read, samples.take(at_frames) if sub_frame else samples,
                             inputs.drive.reference.shape[2],
                             preroll_frames=settings.preroll_frames if settings is not None
                             else 0)
        # The drive and the output frames hold what the solve and the writer read.
        del samples
    # The live preview played this very input through: its result is the bake's, bit for bit.
    result = preview.solved(scene, inputs, settings) if vrm is None else None
    from_preview = result is not None
    if vrm is not None and len(vrm.chains) == len(read.chains):
        result = BakeResult(positions=vrm.positions, substeps=0)  # nothing for Waft's solver
    elif result is None:
        result = yield from solve_steps(
            lambda: bake_steps(inputs.model, inputs.drive, settings), read.frame_start)
        if vrm is not None:
            result.positions[:, list(vrm.chains)] = vrm.positions
    return Simulation(inputs=inputs, frames=frames_out, result=result, sample_s=t1 - t0,
                      solve_s=time.perf_counter() - t1, vrm=vrm, from_preview=from_preview)


def run_steps(prepared: Prepared, scene, *, settings, sample_chunk: int = SAMPLE_CHUNK):
    """Sample, solve; return the commit closure that writes the strands (and their outputs)."""
    read = prepared.read
    report = _report_for(read)
    static = _static_channels(read)
    reduction = ((scene.waft.key_error_distance, scene.waft.key_error_angle)
                 if scene.waft.use_key_reduction else None)
    run = yield from simulate_for_bake(simulate, loop, read, scene, settings=settings,
                                       sample_chunk=sample_chunk)
    result, vrm = run.result, run.vrm
    frames_out = [run.frames]  # handed to the writer, which lets it go before it keys
    report.sample_s, report.solve_s = run.sample_s, run.solve_s
    report.from_preview = run.from_preview
    # The solver's input (the drive over every sample: 550 MB at 512 bones × 25,000 samples)
    # is not needed to write: it goes before the keys are made, not after.
    del run
    frames = np.arange(read.frame_start, read.frame_end + 1, dtype=np.float64)
    for s, chain in enumerate(read.chains):
        count = len(chain.bone_names) + 1
        positions = result.positions[:, s, :count]
        # In Blender units; metres already (a view, not a second copy of the result)
        report.chain_positions[read.chain_name(s)] = (
            positions if read.unit_scale == 1.0 else positions / read.unit_scale)
    output_commits = [module.build_output(item, report.chain_positions, frames)
                      for module, item in prepared.outputs]

    def commit() -> StrandReport:
        t2 = time.perf_counter()
        _write(read, frames_out.pop(), result.positions, report, static, vrm, reduction)
        for output_commit in output_commits:
            output_commit()
        report.write_s = time.perf_counter() - t2
        return report

    return commit


def clear(scene, *, objects=None) -> list[str]:
    if objects is None:
        targets = [ob for ob in scene.objects if claims(ob)]
    else:
        targets = find_setups(scene, objects)
    return [ob.name for ob in sorted(targets, key=lambda ob: ob.name)
            if writing.clear_setup(ob)]
