"""Sample once: one ``scene.frame_set`` per sample time for every cage, armature, body and
collider (sample times may be sub-frame: ``addon.sampling.sample_times``).

The reference shape of a cage is its evaluated (skinned) mesh,
``attributes["position"].data.foreach_get("vector")`` (reference/blender-api.md §2), in world
space. Waft's result tracks on the armatures are muted while sampling so a previous bake never
becomes the reference. Settings are sampled per frame only when animated.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ...core.errors import SetupError
from .. import mesh_colliders
from ..sampling import (
    FrameSampler,
    animated_paths,
    check_scale_series,
    check_settings_finite,
    frame_text,
    is_followed,
    is_result_or_rest_track,
    pose_not_finite,
    sample_steps,
    settings_at,
    tracks_muted,
)
from .reading import FLOAT_SETTINGS, VECTOR_SETTINGS, ClothRead

# Per-frame settings: every ClothParams field, ints and bools included (an animated one is
# sampled per frame like the floats), plus use_backstop. max_distance is sampled with the
# floats but unused: its per-vertex limit is read once when the bake starts
# (reading._max_distance); max_distance_scale is the animated one.
SAMPLED = FLOAT_SETTINGS + VECTOR_SETTINGS + ("cut_blend_frames", "wind_seed",
                                              "use_hard_vertical", "use_backstop")


def result_tracks_muted(objects):
    """Mute every ``Waft…`` NLA track (strands and cloth results) except the stashed original
    action and the ragdoll's: cloth on a ragdolled character follows the ragdoll, which the
    bake writes first (``bake_api.FIRST_SYSTEMS``). The mute state is restored afterwards."""
    return tracks_muted({o.name: o for o in objects}.values(),
                        lambda name: is_result_or_rest_track(name) and not is_followed(name))


@dataclass
class ClothSamples:
    frames: np.ndarray  # (F,) scene frames
    cage: list  # per setup (F, N, 3) world, metres
    pose: list  # per setup (F, bones, 4, 4) armature space, Blender units
    armature_world: list  # per setup (F, 4, 4) Blender units
    body: list  # per setup (F, V, 3) world metres, or None
    body_triangles: list  # per setup (T, 3) vertex indices, or None
    collider_matrix: np.ndarray  # (F, K, 4, 4) metres
    settings: list  # per setup {name: (F or 1, ...) array}
    meshes: object = None  # core MeshColliders (world metres per sample) or None

    def take(self, index: np.ndarray) -> ClothSamples:
        """The samples at ``index`` (settings read once keep their single row)."""
        return ClothSamples(
            frames=self.frames[index], cage=[c[index] for c in self.cage],
            pose=[p[index] for p in self.pose],
            armature_world=[m[index] for m in self.armature_world],
            body=[None if b is None else b[index] for b in self.body],
            body_triangles=self.body_triangles, collider_matrix=self.collider_matrix[index],
            settings=settings_at(self.settings, index, len(self.frames)),
            meshes=mesh_colliders.take(self.meshes, index))


class ClothSampler(FrameSampler):
    """Samples the frame range in chunks (``sample_chunk``), like the strands' Sampler."""

    def __init__(self, scene, read: ClothRead, times: np.ndarray | None = None):
        super().__init__(scene, np.arange(read.frame_start, read.frame_end + 1)
                         if times is None else times)
        self.read = read
        n = len(self.frames)
        self._cage = [np.empty((n, s.n_vertices * 3), np.float32) for s in read.setups]
        self._cage_world = np.empty((n, len(read.setups), 4, 4))
        self._pose = [np.empty((n, s.bone_count * 16), np.float32) for s in read.setups]
        self._armature_world = np.empty((n, len(read.setups), 4, 4))
        self._body = [None] * len(read.setups)
        self._body_world = np.empty((n, len(read.setups), 4, 4))
        self._triangles = [None] * len(read.setups)
        self._collider = np.empty((n, len(read.colliders), 4, 4))
        self._meshes = mesh_colliders.MeshSampler(read.meshes, n)
        self._animated = [{p.split(".", 1)[1] for p in animated_paths(s.object)
                           if p.startswith("waft_cloth.")} for s in read.setups]
        self._settings = [{name: [] for name in SAMPLED} for _ in read.setups]

    def _sample_frame(self, i: int) -> None:
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for s, setup in enumerate(self.read.setups):
            cage = setup.object.evaluated_get(depsgraph)
            cage.data.attributes["position"].data.foreach_get("vector", self._cage[s][i])
            self._cage_world[i, s] = np.array(cage.matrix_world)
            armature = setup.armature
            armature.pose.bones.foreach_get("matrix", self._pose[s][i])
            self._armature_world[i, s] = np.array(armature.matrix_world)
            if setup.surface_body is not None:
                self._sample_body(i, s, setup.surface_body.evaluated_get(depsgraph))
            settings = setup.object.waft_cloth
            for name, values in self._settings[s].items():
                if i == 0 or name in self._animated[s]:
                    value = getattr(settings, name)
                    values.append(tuple(value) if name in VECTOR_SETTINGS else value)
        for k, collider in enumerate(self.read.colliders):
            self._collider[i, k] = np.array(collider.object.matrix_world)
        self._meshes.sample(i)

    def _sample_body(self, i: int, s: int, body) -> None:
        mesh = body.data
        if self._body[s] is None:
            self._triangles[s] = mesh_colliders.loop_triangles(mesh)
            self._body[s] = np.empty((self.total, len(mesh.vertices) * 3), np.float32)
        if len(mesh.vertices) * 3 != self._body[s].shape[1]:
            raise SetupError(f"Body '{body.name}': its vertex count changes during the "
                             f"animation")
        mesh.attributes["position"].data.foreach_get("vector", self._body[s][i])
        self._body_world[i, s] = np.array(body.matrix_world)

    def result(self) -> ClothSamples:
        self._check_finished()
        return self._samples()

    def partial_result(self) -> ClothSamples:
        """The samples read so far and, in place of every later one, a copy of the last read
        (placeholders for a bake fed as the timeline plays: the live preview)."""
        done = self.done
        if done < 1:
            raise RuntimeError("nothing is sampled yet")
        for buf in (*self._cage, self._cage_world, *self._pose, self._armature_world,
                    self._body_world, self._collider,
                    *(b for b in self._body if b is not None)):
            buf[done:] = buf[done - 1]
        self._meshes.hold(done)
        return self._samples(done)

    def rows(self, index) -> ClothSamples:
        """The samples at ``index`` (each already read) alone, converted and checked as
        ``result`` converts them (what the live preview hands the solver a few at a time, at a
        cost that does not grow with the range)."""
        index = np.asarray(index, dtype=np.int64)
        if len(index) and int(index.max()) >= self.done:
            raise ValueError(f"sample {int(index.max())} is not read yet ({self.done} are)")
        unit = self.read.unit_scale
        n = len(index)
        setups = range(len(self.read.setups))
        scale = np.diag([unit] * 3 + [1.0])
        samples = ClothSamples(
            frames=self.frames[index],
            cage=[unit * _world(self._cage_world[index, s], self._cage[s][index])
                  for s in setups],
            pose=[buf[index].reshape(n, -1, 4, 4).transpose(0, 1, 3, 2).astype(np.float64)
                  for buf in self._pose],
            armature_world=[self._armature_world[index, s] for s in setups],
            body=[None if self._body[s] is None else
                  unit * _world(self._body_world[index, s], self._body[s][index])
                  for s in setups],
            body_triangles=self._triangles,
            collider_matrix=scale @ self._collider[index],
            settings=[{name: np.asarray(values, np.float64)[index]
                       if name in self._animated[s] else np.asarray(values, np.float64)
                       for name, values in d.items()} for s, d in enumerate(self._settings)],
            meshes=self._meshes.rows(index, unit))
        check_samples(self.read, samples)
        return samples

    def _samples(self, done: int | None = None) -> ClothSamples:
        """Everything sampled; with ``done``, an animated setting's later samples hold its
        last value read."""
        def series(values: list) -> np.ndarray:  # an animated setting's samples
            array = np.asarray(values, dtype=np.float64)
            if done is not None and len(array) < self.total:
                array = np.concatenate([array, np.repeat(array[-1:], self.total - len(array),
                                                         axis=0)])
            return array

        unit = self.read.unit_scale
        cage, body = [], []
        for s in range(len(self.read.setups)):
            cage.append(unit * _world(self._cage_world[:, s], self._cage[s]))
            body.append(None if self._body[s] is None else
                        unit * _world(self._body_world[:, s], self._body[s]))
        scale = np.diag([unit] * 3 + [1.0])
        samples = ClothSamples(
            frames=self.frames, cage=cage,
            pose=[buf.reshape(self.total, -1, 4, 4).transpose(0, 1, 3, 2).astype(np.float64)
                  for buf in self._pose],
            armature_world=[self._armature_world[:, s] for s in range(len(self.read.setups))],
            body=body, body_triangles=self._triangles,
            collider_matrix=scale @ self._collider,
            settings=[{n: series(v) if n in self._animated[s] else np.asarray(v, np.float64)
                       for n, v in d.items()} for s, d in enumerate(self._settings)],
            meshes=self._meshes.result(unit))
        check_samples(self.read, samples)
        return samples


def _world(matrices: np.ndarray, local: np.ndarray) -> np.ndarray:
    """(F, 4, 4) object matrices and flat (F, N*3) local positions → (F, N, 3) world."""
    points = local.reshape(len(local), -1, 3).astype(np.float64)
    return np.einsum("fij,fnj->fni", matrices[:, :3, :3], points) + matrices[:, None, :3, 3]


def check_samples(read: ClothRead, samples: ClothSamples) -> None:
    """Per-frame checks: non-finite skinned cages, poses or settings keyed to NaN."""
    frames = samples.frames
    for s, setup in enumerate(read.setups):
        where = f"Cloth cage '{setup.name}'"
        # The armature first: a bone keyed to NaN makes the skinned cage NaN too, and the
        # message should name the bone, not a vertex.
        armature = f"Armature '{setup.armature.name}'"
        check_scale_series(samples.armature_world[s], frames, armature)
        bad = pose_not_finite(samples.pose[s])
        if bad is not None:
            f, bone = bad
            raise SetupError(
                f"{armature}, bone '{setup.armature.pose.bones[bone].name}': its evaluated pose "
                f"is not finite at frame {frame_text(frames[f])} (a key, driver or constraint "
                f"gives NaN or infinity)")
        bad = ~np.isfinite(samples.cage[s]).all(axis=2)
        if bad.any():
            f, v = np.argwhere(bad)[0]
            raise SetupError(f"{where}: skinned position of vertex {int(v)} is not finite at "
                             f"frame {frame_text(frames[f])}")
        check_settings_finite(where, samples.settings[s], frames)


def sample_cloth(scene, read: ClothRead, *, times: np.ndarray | None = None,
                 chunk: int = 1 << 30, system: str = "cloth"):
    """Generator: sample every frame (or the scene frames ``times``, possibly fractional),
    yielding ``Progress``; returns ``ClothSamples``. The current frame and the tracks' mute
    state are restored however it ends (also when closed early: a cancelled bake)."""
    return (yield from sample_steps(
        scene, ClothSampler(scene, read, times), chunk=chunk,
        muted=result_tracks_muted(s.armature for s in read.setups), system=system))
