"""Sample once: one ``scene.frame_set`` per frame for every ragdoll and collider together.

Per frame: each armature's pose matrices (``pose.bones.foreach_get("matrix")``, armature space,
column-major blocks), its world matrix, the collider empties' world matrices, scene gravity, and
the ragdoll settings that are animated (the others are read once). Waft's result tracks
(``Waft``, ``Waft Cloth``, ``Waft Ragdoll``, …) are muted meanwhile so a previous bake is never
sampled as the animation target; ``Waft: original`` (the user's action) and the ``…: rest``
tracks (the user's static pose of baked channels) keep playing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import SetupError
from ..sampling import (
    FrameSampler,
    first_bad_frame,
    setting_paths,
    settings_at,
    user_paths,
)
from .properties import ANIMATED_BODY_SETTINGS, BONE_PREFIX, MODE_VALUES
from .reading import RagdollRead

MIN_SCALE = 1e-9

# Per-frame settings of Object.waft_ragdoll and of the pose bones (RagdollParams fields).
RAGDOLL_SERIES = ("gravity_factor", "root_lock", "fall_threshold", "use_recovery",
                  "recovery_delay", "recovery_time")
BODY_SERIES = tuple(ANIMATED_BODY_SETTINGS)  # PoseBone.waft_ragdoll_<name>

@dataclass
class Series:
    """One setting: a value per frame when animated, else one value (leading axis 1)."""

    owner: object
    name: str
    animated: bool
    attribute: str = ""  # of the owner, when not ``name``

    def __post_init__(self):
        self.values = []

    def sample(self) -> None:
        value = getattr(self.owner, self.attribute or self.name)
        self.values.append(MODE_VALUES[value] if self.name == "mode" else float(value))

    def array(self) -> np.ndarray:
        return np.asarray(self.values, dtype=np.float64)


@dataclass(frozen=True)
class RagdollSamples:
    frames: np.ndarray  # (F,) scene frames
    pose: list  # per ragdoll (F, bones, 4, 4) armature space, Blender units
    object_matrix: np.ndarray  # (F, R, 4, 4) world, Blender units
    collider_matrix: np.ndarray  # (F, K, 4, 4) world, Blender units
    gravity: np.ndarray  # (F, 3) scene gravity, Blender units/s²
    ragdoll_settings: list  # per ragdoll {name: (F or 1,)}
    body_settings: list  # per ragdoll {name: (F or 1, N)}

    def take(self, index: np.ndarray) -> RagdollSamples:
        """The samples at ``index`` (e.g. the scene frames among sub-frame samples)."""
        count = len(self.frames)
        return RagdollSamples(
            frames=self.frames[index], pose=[p[index] for p in self.pose],
            object_matrix=self.object_matrix[index],
            collider_matrix=self.collider_matrix[index], gravity=self.gravity[index],
            ragdoll_settings=settings_at(self.ragdoll_settings, index, count),
            body_settings=settings_at(self.body_settings, index, count))


class RagdollSampler(FrameSampler):
    """Steps the frame range in chunks (``sample_chunk``), then ``result()``."""

    def __init__(self, scene, reads: list[RagdollRead], colliders: list, frames: np.ndarray):
        super().__init__(scene, np.asarray(frames))
        self.reads = reads
        self.colliders = colliders
        n = len(self.frames)
        self._pose = [np.empty((n, r.bone_count * 16), np.float32) for r in reads]
        self._object = np.empty((n, len(reads), 4, 4))
        self._collider = np.empty((n, len(colliders), 4, 4))
        self._gravity = np.empty((n, 3))
        self._ragdoll_series, self._body_series = [], []
        for read in reads:
            ob = read.object
            paths = user_paths(ob)
            setup_animated, _ = setting_paths(paths, "waft_ragdoll")
            # a body's per-frame settings are the pose bone's own (PoseBone.waft_ragdoll_<name>)
            _, bone_animated = setting_paths(paths, "waft_ragdoll", bone_separator="_")
            self._ragdoll_series.append(
                {n: Series(ob.waft_ragdoll, n, n in setup_animated) for n in RAGDOLL_SERIES})
            self._body_series.append([
                {n: Series(ob.pose.bones[b], n, (b, n) in bone_animated, BONE_PREFIX + n)
                 for n in BODY_SERIES} for b in read.names])
        self._animated = [s for s in self._all_series() if s.animated]

    def _all_series(self):
        for per_ragdoll in self._ragdoll_series:
            yield from per_ragdoll.values()
        for bodies in self._body_series:
            for per_body in bodies:
                yield from per_body.values()

    def _sample_frame(self, i: int) -> None:
        for r, read in enumerate(self.reads):
            ob = read.object
            ob.pose.bones.foreach_get("matrix", self._pose[r][i])
            self._object[i, r] = np.array(ob.matrix_world)
        for k, collider in enumerate(self.colliders):
            self._collider[i, k] = np.array(collider.matrix_world)
        scene = self.scene
        self._gravity[i] = tuple(scene.gravity) if scene.use_gravity else (0.0, 0.0, 0.0)
        for series in (self._all_series() if i == 0 else self._animated):
            series.sample()

    def result(self) -> RagdollSamples:
        self._check_finished()
        n = self.total
        pose = [buf.reshape(n, -1, 4, 4).transpose(0, 1, 3, 2).astype(np.float64)
                for buf in self._pose]
        samples = RagdollSamples(
            frames=self.frames, pose=pose, object_matrix=self._object.copy(),
            collider_matrix=self._collider.copy(), gravity=self._gravity.copy(),
            ragdoll_settings=[{n: s.array() for n, s in d.items()}
                              for d in self._ragdoll_series],
            body_settings=[{n: np.stack(np.broadcast_arrays(*(b[n].array() for b in bodies)),
                                        axis=-1)
                            for n in BODY_SERIES} for bodies in self._body_series],
        )
        check_samples(self.reads, samples)
        return samples


def check_samples(reads: list[RagdollRead], samples: RagdollSamples) -> None:
    """Settings keyed to NaN and bones scaled to nothing, named with the frame."""
    frames = samples.frames
    for r, read in enumerate(reads):
        where = f"Armature '{read.name}'"
        for name, values in samples.ragdoll_settings[r].items():
            bad = ~np.isfinite(values)
            if bad.any():
                raise SetupError(f"{where}: ragdoll setting '{name}' is not finite at frame "
                                 f"{first_bad_frame(frames, bad)}")
        for name, values in samples.body_settings[r].items():
            bad = ~np.isfinite(values)
            if bad.any():
                body = int(np.argwhere(bad)[0][1])
                raise SetupError(f"{where}, bone '{read.names[body]}': setting '{name}' is not "
                                 f"finite at frame {first_bad_frame(frames, bad.any(axis=1))}")
        pose = samples.pose[r][:, read.keyed.bone_index]
        world = np.einsum("fij,fnjk->fnik", samples.object_matrix[:, r], pose)
        # A bone scaled to nothing along any axis has no frame to simulate.
        columns = np.linalg.norm(world[..., :3, :3], axis=-2).min(axis=-1)
        bad = ~np.isfinite(world).all(axis=(2, 3)) | ~(columns > MIN_SCALE)
        if bad.any():
            f, b = (int(v) for v in np.argwhere(bad)[0])
            raise SetupError(f"{where}, bone '{read.keyed.names[b]}': bone has zero length or "
                             f"is not finite at frame {int(frames[f])} (scaled to zero?)")
