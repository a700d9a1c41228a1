"""Sample once: the bone-chain setups' per-frame inputs (reference pose, armature space,
collider matrices, animated settings) as ``(F, …)`` arrays, with ``FrameSampler`` stepping the
scene (addon/sampling.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...core.errors import SetupError
from .. import mesh_colliders
from ..reading import MIN_BONE_LENGTH
from ..sampling import (
    FrameSampler,
    animated_paths,
    check_scale_series,
    check_settings_finite,
    frame_kept,
    frame_text,
    pose_not_finite,
    setting_paths,
    settings_at,
    waft_tracks_muted,
)
from .reading import BONE_FLOAT_SETTINGS, VRM_FLOAT_SETTINGS, SceneRead

# Object.waft settings sampled per frame (or once): scalars, then the two non-float kinds.
SETUP_SCALARS = (
    "shape_stiffness", "shape_decay", "damping", "stretch_compliance", "bend_compliance",
    "use_bending", "use_tether", "max_distance", "radius", "gravity_factor",
    "world_motion_fraction", "wind_speed", "wind_turbulence", "wind_gust", "wind_seed", "drag",
    # Strand hair (docs/hair.md).
    "wind_direction_variation", "wind_tangent_response", "wind_strand_variation", "ftl_damping",
    "local_stiffness", "shape_range", "shock_propagation", "voxel_friction", "voxel_resolution",
)


SETUP_VECTORS = ("wind_direction",)


# The VRM Spring Bone solver's settings, sampled on armatures only (hair Curves have no VRM mode).
VRM_SCALARS = VRM_FLOAT_SETTINGS
VRM_VECTORS = ("vrm_gravity_dir",)
VECTORS = frozenset(SETUP_VECTORS + VRM_VECTORS)


BONE_SCALARS = ("use_overrides",) + BONE_FLOAT_SETTINGS


def animated_settings(ob) -> tuple[set[str], set[tuple[str, str]]]:
    """(setup setting names, (bone name, setting name) pairs) that are animated on ``ob``."""
    return setting_paths(animated_paths(ob))


@dataclass
class Samples:
    """Everything sampled, frame-major. Matrices in metres (unit scale applied)."""

    frames: np.ndarray  # (F,) scene frame numbers
    # per setup (F, read bones, 4, 4) float32 as Blender stores them, armature space, Blender
    # units: only the bones a reader needs (``read_bones``), in the order of
    # ``pose_columns[setup]``; ``bone_matrices`` gives their float64 rows by bone index (every
    # bone at every sample in float64 was 1.6 GB at 512 bones × 25,000 samples)
    pose_matrix: list
    object_matrix: np.ndarray  # (F, n_setups, 4, 4) world, metres
    collider_matrix: np.ndarray  # (F, K, 4, 4) world, metres
    gravity: np.ndarray  # (F, 3) scene gravity, m/s²
    setup_settings: list  # per setup: {name: (F or 1, …) array}
    bone_settings: list  # per chain: {name: (F or 1, B) array}
    meshes: object = None  # core MeshColliders (world metres per sample) or None
    # per setup: (bones,) int, the column of ``pose_matrix`` holding each bone (-1: not read),
    # or None when every bone is read in its own order
    pose_columns: list | None = None

    def bone_matrices(self, setup: int, bones) -> np.ndarray:
        """(F, len(bones), 4, 4) float64 pose matrices of ``bones`` (indices into the
        armature's pose bones) of a setup, or (F, 4, 4) for one bone index."""
        return self.pose_matrix[setup][:, self._buffer_columns(setup, bones)].astype(np.float64)

    def bone_axes(self, setup: int, bones) -> np.ndarray:
        """(F, len(bones), 3) float64 Y axes (head to tail, scaled) of ``bones``: the column
        of ``bone_matrices`` alone, without casting the other twelve numbers of every
        matrix (the bone-length check of 512 bones × 256 samples cast 8 MB for 1.5 MB)."""
        axes = self.pose_matrix[setup][:, :, :3, 1]  # (a view)
        return axes[:, self._buffer_columns(setup, bones)].astype(np.float64)

    def _buffer_columns(self, setup: int, bones):
        """The columns of ``pose_matrix[setup]`` holding ``bones`` (pose bone indices)."""
        columns = None if self.pose_columns is None else self.pose_columns[setup]
        if columns is not None:
            bones = columns[bones]
            if np.any(np.asarray(bones) < 0):
                raise KeyError(f"bone {bones} of setup {setup} was not sampled")
        return bones

    def take(self, index: np.ndarray) -> Samples:
        """The samples at ``index`` (settings read once keep their single row); these samples
        themselves, not a copy, when ``index`` is every sample in order (the grid samples are
        all of them whenever the scene frames lie on the grid: 24 fps at 120 Hz)."""
        index = np.asarray(index)
        if len(index) == len(self.frames) and np.array_equal(index, np.arange(len(index))):
            return self
        return Samples(
            frames=self.frames[index], pose_matrix=[p[index] for p in self.pose_matrix],
            pose_columns=self.pose_columns,
            object_matrix=self.object_matrix[index],
            collider_matrix=self.collider_matrix[index], gravity=self.gravity[index],
            setup_settings=settings_at(self.setup_settings, index, len(self.frames)),
            bone_settings=settings_at(self.bone_settings, index, len(self.frames)),
            meshes=mesh_colliders.take(self.meshes, index))


class Sampler(FrameSampler):
    """Samples a frame range in chunks (the modal operator steps it; ``sample_all`` runs it)."""

    def __init__(self, scene, read: SceneRead, times: np.ndarray | None = None, *,
                 held: int | None = None):
        """``held``: the samples the buffers hold at once, every one by default (``result``
        needs them all); the bake reads a block, converts it (``rows``) and lets it go
        (``release``), so a long shot never holds every bone at every sample."""
        super().__init__(scene, np.arange(read.frame_start, read.frame_end + 1)
                         if times is None else times)
        self.read = read
        self.base = 0  # the first sample in the buffers
        n_frames = len(self.frames) if held is None else min(held, len(self.frames))
        # Only the bones a reader needs are kept (chain bones, their parents, Space Bones): a
        # 4-bone tail on an 800-bone rig kept every bone at every sample.
        self._read_bones = [read_bones(read, s) for s in range(len(read.setups))]
        self._columns = [_columns(bones, setup.bone_count)
                         for bones, setup in zip(self._read_bones, read.setups, strict=True)]
        self._scratch = [None if columns is None else np.empty(setup.bone_count * 16, np.float32)
                         for columns, setup in zip(self._columns, read.setups, strict=True)]
        self._pose = [np.empty((n_frames, len(bones) * 16), np.float32)
                      for bones in self._read_bones]
        self._object = np.empty((n_frames, len(read.setups), 4, 4))
        self._collider = np.empty((n_frames, len(read.colliders), 4, 4))
        self._gravity = np.empty((n_frames, 3))
        # The scene's gravity is read once per bake unless a key or driver animates it (it
        # was a tuple, a flag and a row write at every one of a tail's 496 samples).
        self._gravity_animated = bool(animated_paths(scene) & {"gravity", "use_gravity"})
        if not self._gravity_animated:
            self._gravity[:] = scene_gravity(scene)
        self._meshes = mesh_colliders.MeshSampler(read.meshes, len(self.frames), held=n_frames)
        # Which settings are animated, once per setup (walks every F-curve of its actions).
        self._animated_settings = [animated_settings(s.object) for s in read.setups]
        self._setup_series = [self._setup_series_for(i, s.object)
                              for i, s in enumerate(read.setups)]
        self._bone_series = [self._bone_series_for(c) for c in read.chains]
        self._animated = [s for s in self._all_series() if s.animated]
        self._static_bone_rows: dict[tuple[int, str], np.ndarray] = {}  # see ``_bone_rows``

    def _setup_series_for(self, index: int, ob) -> dict:
        animated, _ = self._animated_settings[index]
        names = SETUP_SCALARS + VRM_SCALARS + SETUP_VECTORS + VRM_VECTORS
        return {n: SettingSeries(ob.waft, n, n in animated) for n in names}

    def _bone_series_for(self, chain) -> list:
        ob = self.read.setups[chain.setup_index].object
        _, animated = self._animated_settings[chain.setup_index]
        series = []
        for name in chain.bone_names:
            settings = ob.pose.bones[name].waft
            series.append({n: SettingSeries(settings, n, (name, n) in animated)
                           for n in BONE_SCALARS})
        return series

    def _all_series(self):
        for per_setup in self._setup_series:
            yield from per_setup.values()
        for chain in self._bone_series:
            for per_bone in chain:
                yield from per_bone.values()

    @property
    def held(self) -> int:
        """Samples the buffers hold at once."""
        return len(self._object)

    def block_samples(self, start: int, stop: int) -> None:
        """Read samples start..stop-1 (the scene set to each time in turn) with what every
        sample reads looked up once per block (each armature's pose bones, buffer and columns,
        the collider objects, the bound ``frame_set``): a 4-bone tail reads 5 matrices and an
        object matrix per sample, and the lookups around them cost as much as the reads. The
        same reads in the same order, so the same numbers."""
        if start >= stop:
            return
        if stop - 1 - self.base >= self.held:
            raise RuntimeError(f"sample {stop - 1} does not fit: release the samples before it")
        frame_set = self.scene.frame_set
        frames = self.frames[start:stop].tolist()
        armatures = [(setup.object, setup.object.pose.bones, self._pose[s], self._scratch[s],
                      self._read_bones[s], self._object[:, s])
                     for s, setup in enumerate(self.read.setups)]
        colliders = [(c.object, self._collider[:, k]) for k, c in enumerate(self.read.colliders)]
        meshes, gravity = self._meshes, self._gravity
        animated = self._gravity_animated
        for i, frame in zip(range(start, stop), frames, strict=True):
            whole = math.floor(frame)
            frame_set(whole, subframe=frame - whole)
            j = i - self.base
            for ob, bones, pose, scratch, columns, world in armatures:
                if scratch is None:
                    bones.foreach_get("matrix", pose[j])
                else:
                    bones.foreach_get("matrix", scratch)
                    pose[j] = scratch.reshape(-1, 16)[columns].ravel()
                world[j] = ob.matrix_world
            for ob, world in colliders:
                world[j] = ob.matrix_world
            meshes.sample(i)
            if animated:
                gravity[j] = scene_gravity(self.scene)
            for series in (self._all_series() if i == 0 else self._animated):
                series.sample()

    def release(self, upto: int) -> None:
        """The samples before ``upto`` are converted (``rows``) and will not be asked for
        again: the buffers start at ``upto``, the later samples read moved to their front."""
        if not self.base <= upto <= self.done:
            raise ValueError(f"cannot release up to sample {upto} ({self.base}..{self.done} "
                             "are held)")
        mesh_colliders.shift_rows((*self._pose, self._object, self._collider, self._gravity),
                                  upto - self.base, self.done - upto)
        self._meshes.release(upto, self.done)
        self.base = upto

    def _every_sample_held(self) -> None:
        if self.held < self.total:
            raise RuntimeError("this sampler holds a block of samples, not all of them")

    def result(self) -> Samples:
        self._check_finished()
        self._every_sample_held()
        return self._samples()

    def partial_result(self) -> Samples:
        """The samples read so far and, in place of every later one, a copy of the last read
        (placeholders for a bake fed as the timeline plays: the live preview)."""
        done = self.done
        if done < 1:
            raise RuntimeError("nothing is sampled yet")
        self._every_sample_held()
        for buf in (*self._pose, self._object, self._collider, self._gravity):
            buf[done:] = buf[done - 1]
        self._meshes.hold(done)
        return self._samples(done)

    def rows(self, index, *, settings: bool = True, check: bool = True) -> Samples:
        """The samples at ``index`` (each already read) alone, converted and checked as
        ``result`` converts them: what a bake fed row by row takes (the live preview), at a
        cost that does not grow with the range. ``settings=False``: the matrices only (the
        settings empty, no meshes), for the bone frames of one output frame; ``check=False``
        (with ``settings=False`` only): not checked again, every one of these samples was
        checked when its rows were taken with the settings."""
        index = np.asarray(index, dtype=np.int64)
        if len(index) and int(index.max()) >= self.done:
            raise ValueError(f"sample {int(index.max())} is not read yet ({self.done} are)")
        if len(index) and int(index.min()) < self.base:
            raise ValueError(f"sample {int(index.min())} is released")
        held = index - self.base  # rows of the buffers

        def series(s: SettingSeries) -> np.ndarray:
            values = s.array()
            return values[index] if s.animated else values

        scale = np.diag([self.read.unit_scale] * 3 + [1.0])
        n = len(index)
        samples = Samples(
            frames=self.frames[index],
            pose_matrix=[buf[held].reshape(n, -1, 4, 4).transpose(0, 1, 3, 2)
                         for buf in self._pose],
            pose_columns=self._columns,
            object_matrix=scale @ self._object[held],
            collider_matrix=scale @ self._collider[held],
            gravity=self._gravity[held] * self.read.unit_scale,
            setup_settings=[], bone_settings=[])
        if not settings:
            if check:
                check_matrices(self.read, samples)
            return samples
        samples.setup_settings = [{n: series(s) for n, s in d.items()}
                                  for d in self._setup_series]
        samples.bone_settings = [{n: self._bone_rows(c, n, series) for n in BONE_SCALARS}
                                 for c in range(len(self._bone_series))]
        samples.meshes = self._meshes.rows(index, self.read.unit_scale)
        check_samples(self.read, samples)
        return samples

    def _bone_rows(self, chain: int, name: str, series) -> np.ndarray:
        """(rows or 1, B) setting ``name`` of a chain's bones; when none of them is animated
        the (1, B) array is built once (512 bones × 7 settings per frame was 12 ms)."""
        key = (chain, name)
        cached = self._static_bone_rows.get(key)
        if cached is not None:
            return cached
        per_bone = [b[name] for b in self._bone_series[chain]]
        values = np.stack(np.broadcast_arrays(*(series(s) for s in per_bone)), axis=-1)
        if not any(s.animated for s in per_bone) and self.done > 0:
            values.flags.writeable = False  # shared by every later call
            self._static_bone_rows[key] = values
        return values

    def _samples(self, done: int | None = None) -> Samples:
        n_frames = self.total

        def series(s: SettingSeries) -> np.ndarray:
            values = s.array()
            if done is not None and s.animated and len(values) < n_frames:
                values = np.concatenate([values, np.repeat(values[-1:], n_frames - len(values),
                                                           axis=0)])
            return values

        scale = np.diag([self.read.unit_scale] * 3 + [1.0])
        pose = [buf.reshape(n_frames, -1, 4, 4).transpose(0, 1, 3, 2) for buf in self._pose]
        samples = Samples(
            frames=self.frames,
            pose_matrix=pose,
            pose_columns=self._columns,
            object_matrix=scale @ self._object,
            collider_matrix=scale @ self._collider,
            gravity=self._gravity * self.read.unit_scale,
            setup_settings=[{n: series(s) for n, s in d.items()} for d in self._setup_series],
            bone_settings=[
                {n: np.stack(np.broadcast_arrays(*(series(b[n]) for b in chain)), axis=-1)
                 for n in BONE_SCALARS}
                for chain in self._bone_series
            ],
            meshes=self._meshes.result(self.read.unit_scale),
        )
        check_samples(self.read, samples)
        return samples


def scene_gravity(scene) -> tuple[float, float, float]:
    """The scene's gravity (Blender units / s²), zero where Gravity is off."""
    return tuple(scene.gravity) if scene.use_gravity else (0.0, 0.0, 0.0)


def read_bones(read: SceneRead, setup: int) -> np.ndarray:
    """Indices (sorted) of the pose bones of ``read.setups[setup]`` that the bake reads: its
    chains' bones and their parents, and its Space Bone."""
    bones = {read.setups[setup].space_bone}
    for chain in read.chains:
        if chain.setup_index == setup:
            bones.update(chain.bone_indices)
            bones.add(chain.parent_index)
    bones.discard(-1)
    return np.array(sorted(bones), dtype=np.int64)


def _columns(bones: np.ndarray, count: int) -> np.ndarray | None:
    """Column of each of ``count`` pose bones in a buffer of ``bones`` (-1: not there); None
    when the buffer holds every bone in order."""
    if len(bones) == count:
        return None
    columns = np.full(count, -1, dtype=np.int64)
    columns[bones] = np.arange(len(bones))
    return columns


def check_matrices(read: SceneRead, samples: Samples) -> None:
    """Per-frame checks of the armatures: scales that animate to zero or negative, a pose that
    is not finite, bones scaled to zero length."""
    for s, setup in enumerate(read.setups):
        check_scale_series(samples.object_matrix[:, s], samples.frames,
                            f"Armature '{setup.name}'")
        bad = pose_not_finite(samples.pose_matrix[s])
        if bad is not None:
            f, column = bad
            columns = None if samples.pose_columns is None else samples.pose_columns[s]
            bone = column if columns is None else int(np.flatnonzero(columns == column)[0])
            raise SetupError(
                f"Armature '{setup.name}', bone '{setup.object.pose.bones[bone].name}': its "
                f"evaluated pose is not finite at frame {frame_text(samples.frames[f])} (a key, "
                f"driver or constraint gives NaN or infinity)")
    _check_bone_lengths(read, samples)


def check_samples(read: SceneRead, samples: Samples) -> None:
    """Per-frame checks: ``check_matrices``, settings keyed to NaN, colliders' scales."""
    frames = samples.frames
    check_matrices(read, samples)
    for s, setup in enumerate(read.setups):
        check_settings_finite(f"Armature '{setup.name}'", samples.setup_settings[s], frames)
    for chain, settings in zip(read.chains, samples.bone_settings, strict=True):
        for name, values in settings.items():
            bad = ~np.isfinite(values)
            if bad.any():
                f_idx, b_idx = np.argwhere(bad)[0]
                setup = read.setups[chain.setup_index].name
                raise SetupError(
                    f"Armature '{setup}', bone '{chain.bone_names[b_idx]}': setting '{name}' is "
                    f"not finite at frame {int(frames[min(f_idx, len(frames) - 1)])}")
    for k, collider in enumerate(read.colliders):
        check_scale_series(samples.collider_matrix[:, k], frames, f"Collider '{collider.name}'")


def _check_bone_lengths(read: SceneRead, samples: Samples) -> None:
    """A pose scale of 0 collapses a bone to a point: no direction to simulate or write. The
    error names the first chain (in ``read.chains`` order) with such a bone, at its first
    frame. One gather of the bones' Y axes and one norm per armature over all its chains'
    bones (the same lengths, row by row, so the same test): whole float64 matrices gathered
    chain by chain were most of the samples' checks (check_samples of 512 bones x 496
    samples)."""
    members: dict[int, list] = {}
    for c, chain in enumerate(read.chains):
        members.setdefault(chain.setup_index, []).append(c)
    bad_of = {}
    for setup, chains in members.items():
        bones = [i for c in chains for i in read.chains[c].bone_indices]
        lengths = np.concatenate([read.chains[c].bone_length for c in chains])
        length = np.linalg.norm(samples.bone_axes(setup, bones), axis=-1) * lengths[None]
        bad = length * read.unit_scale <= MIN_BONE_LENGTH
        if not bad.any():
            continue
        start = 0
        for c in chains:
            count = len(read.chains[c].bone_indices)
            bad_of[c] = bad[:, start:start + count]
            start += count
    for c in sorted(bad_of):
        bad = bad_of[c]
        if bad.any():
            chain = read.chains[c]
            f_idx, b_idx = np.argwhere(bad)[0]
            setup = read.setups[chain.setup_index].name
            raise SetupError(f"Armature '{setup}', bone '{chain.bone_names[b_idx]}': bone has "
                             f"zero length at frame {int(samples.frames[f_idx])} (pose scale 0?)")


def sample_scene(scene, read: SceneRead, *, chunk: int = 1 << 30) -> Samples:
    """Sample the whole range synchronously; restores the current frame and Waft's track mute."""
    sampler = Sampler(scene, read)
    with frame_kept(scene), waft_tracks_muted(s.object for s in read.setups):
        while sampler.done < sampler.total:
            sampler.sample_chunk(chunk)
    return sampler.result()


@dataclass
class SettingSeries:
    """One setting: a value per frame if animated, else a single value (leading axis 1)."""

    owner: object
    name: str
    animated: bool
    values: list = field(default_factory=list)

    def sample(self) -> None:
        value = getattr(self.owner, self.name)
        self.values.append(tuple(value) if self.name in VECTORS else value)

    def array(self) -> np.ndarray:
        return np.asarray(self.values, dtype=np.float64)
