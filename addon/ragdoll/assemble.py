"""Turn what was read and sampled into the core's input, and the core's output into pose keys.

Pure NumPy (no bpy). Input: ``RagdollRest`` per armature, one ``ColliderSet`` (the Waft collider
empties, then one ground plane per ragdoll that wants one) with its (N, K) mask, and the
``RagdollDrive``: animation targets = each body's bone frame at its head in world metres with
scale removed, and every setting broadcast to (F, N) / (F, R) in SI units (0 = off becomes inf
for the distance limits and the fall threshold).

Output: the solved world body frames (metres, no scale) become Blender world matrices again
(the sampled bone scale put back, Blender units), then ``matrix_basis`` through
``core.bone_pose.basis_from_world`` — a body whose parent bone is a body uses the parent's NEW
world matrix, the root body uses its parent bone's sampled one (or the armature's) — and
``split_basis``: a rotation per body, the location of the root body. A bone welded to a body
(``reading.KeyedBones``) is keyed too, carried by that body (``keyed_world``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.bone_pose import basis_from_world, split_basis
from ...core.colliders import ColliderKind, ColliderSet
from ...core.rotations import make_sign_continuous, quat_from_matrix
from .reading import RagdollRead, without_scale


@dataclass(frozen=True)
class ColliderInput:
    colliders: ColliderSet
    mask: np.ndarray  # (N, K) bool
    n_empties: int  # the first K_e colliders are empties; the rest are ground planes
    ground_height: np.ndarray  # (K - K_e,) metres


def collider_input(reads: list[RagdollRead], collider_reads: list) -> ColliderInput:
    """``collider_reads``: ``addon.reading.ColliderRead`` of every empty any ragdoll touches."""
    names = [c.name for c in collider_reads]
    kinds = [c.kind for c in collider_reads]
    sizes = [c.size for c in collider_reads]
    ra = [c.radius_a for c in collider_reads]
    rb = [c.radius_b for c in collider_reads]
    friction = [c.friction for c in collider_reads]
    heights = []
    grounded = [r for r in reads if r.ground is not None]
    for read in grounded:
        names.append(f"{read.name}: ground")
        kinds.append(int(ColliderKind.PLANE))
        sizes.append(1.0)
        ra.append(0.0)
        rb.append(0.0)
        friction.append(0.0)  # the core uses each body's own friction against colliders
        heights.append(read.ground)
    colliders = ColliderSet.create(names=names, kind=kinds, size=sizes, radius_a=ra,
                                   radius_b=rb, friction=friction)
    n_bodies = sum(len(r.names) for r in reads)
    mask = np.zeros((n_bodies, len(names)), dtype=bool)
    start, ground = 0, len(collider_reads)
    for read in reads:
        stop = start + len(read.names)
        touched = {ob.name for ob in read.colliders}
        for k, c in enumerate(collider_reads):
            mask[start:stop, k] = c.name in touched
        if read.ground is not None:
            mask[start:stop, ground] = True
            ground += 1
        start = stop
    return ColliderInput(colliders=colliders, mask=mask, n_empties=len(collider_reads),
                         ground_height=np.asarray(heights, dtype=np.float64))


def collider_matrices(inputs: ColliderInput, sampled: np.ndarray, unit: float) -> np.ndarray:
    """(F, K, 4, 4) world metres: the sampled empties, then the ground planes (+Z up)."""
    n_frames = sampled.shape[0]
    scale = np.diag([unit, unit, unit, 1.0])
    grounds = np.broadcast_to(np.eye(4), (n_frames, len(inputs.ground_height), 4, 4)).copy()
    grounds[:, :, 2, 3] = inputs.ground_height[None, :]
    return np.concatenate((scale @ sampled, grounds), axis=1)


def sampled_world(pose: np.ndarray, object_matrix: np.ndarray) -> np.ndarray:
    """(F, B, 4, 4) world bone matrices in Blender units (with scale) from armature space."""
    return object_matrix[:, None] @ pose


def targets(read: RagdollRead, pose: np.ndarray, object_matrix: np.ndarray,
            unit: float) -> np.ndarray:
    """(F, N, 4, 4) animation target body frames: world, metres, scale removed."""
    scale = np.diag([unit, unit, unit, 1.0])
    return without_scale(scale @ sampled_world(pose[:, read.bone_index], object_matrix))


def _frames(values: np.ndarray, n_frames: int) -> np.ndarray:
    return np.broadcast_to(values, (n_frames,) + values.shape[1:])


def _off_is_inf(values: np.ndarray, unit: float) -> np.ndarray:
    """0 = off in the UI; inf = off in the core."""
    return np.where(values > 0.0, values * unit, np.inf)


def params_fields(reads: list[RagdollRead], samples, unit: float) -> dict[str, np.ndarray]:
    """Every ``RagdollParams`` field at full shape, SI units."""
    n_frames = len(samples.frames)
    body = {}
    for name in samples.body_settings[0]:
        body[name] = np.concatenate([_frames(s[name], n_frames) for s in samples.body_settings],
                                    axis=1)
    fields = {name: body[name] for name in body}
    fields["mode"] = body["mode"].astype(np.int64)
    fields["distance_limit"] = _off_is_inf(body["distance_limit"], unit)
    fields["distance_limit_speed"] = _off_is_inf(body["distance_limit_speed"], unit)

    def per_ragdoll(name: str) -> np.ndarray:
        return np.stack([_frames(s[name], n_frames) for s in samples.ragdoll_settings], axis=1)

    gravity = samples.gravity * unit  # (F, 3) m/s²
    fields["gravity"] = gravity[:, None, :] * per_ragdoll("gravity_factor")[:, :, None]
    fields["root_lock"] = per_ragdoll("root_lock") > 0.5
    fields["fall_threshold"] = _off_is_inf(per_ragdoll("fall_threshold"), unit)
    fields["recovery_delay"] = np.where(per_ragdoll("use_recovery") > 0.5,
                                        per_ragdoll("recovery_delay"), np.inf)
    fields["recovery_time"] = per_ragdoll("recovery_time")
    return fields


def new_world(read: RagdollRead, body_matrix: np.ndarray, sampled: np.ndarray,
              unit: float) -> np.ndarray:
    """(F, N, 4, 4) Blender world matrices of the bodies: solved frame, sampled bone scale.

    ``sampled``: (F, N, 4, 4) the bodies' sampled world matrices (Blender units, with scale).
    """
    scale = np.linalg.norm(sampled[..., :3, :3], axis=-2)  # (F, N, 3) column lengths
    world = np.array(body_matrix, dtype=np.float64, copy=True)
    world[..., :3, :3] *= scale[..., None, :]
    world[..., :3, 3] /= unit
    return world


def keyed_world(read: RagdollRead, world: np.ndarray, sampled: np.ndarray) -> np.ndarray:
    """(F, W, 4, 4) Blender world matrices of every keyed bone (``read.keyed``): a body's is
    ``world`` (F, N, …, ``new_world``); a welded bone keeps its sampled pose relative to the
    bone carrying it, W_bone = W_body_new · W_body_sampled⁻¹ · W_bone_sampled, as a child bone
    the bake does not touch follows its simulated parent (Rigify's twist along a limb plays
    on). ``sampled``: (F, W, 4, 4) the keyed bones' sampled world matrices."""
    keyed = read.keyed
    out = world[:, keyed.body]
    welded = np.flatnonzero(keyed.welded)
    if len(welded):
        carrying = np.flatnonzero(~keyed.welded)[keyed.body[welded]]
        relative = np.linalg.solve(sampled[:, carrying], sampled[:, welded])
        out[:, welded] = out[:, welded] @ relative
    return out


def keyed_frames(read: RagdollRead, body_matrix: np.ndarray, world: np.ndarray,
                 unit: float) -> np.ndarray:
    """(F, W, 4, 4) world frames of every keyed bone at its head, metres, no scale: the solved
    body frames (``body_matrix``, F, N) and the welded bones' from ``keyed_world`` (``world``)."""
    scale = np.diag([unit, unit, unit, 1.0])
    out = without_scale(scale @ world)
    own = np.flatnonzero(~read.keyed.welded)
    out[:, own] = body_matrix
    return out


def carried_object_matrix(object_matrix: np.ndarray, carrier_new: np.ndarray,
                          carrier_sampled: np.ndarray) -> np.ndarray:
    """The armature's world matrix at playback when it is parented to a carrier's body bone.

    While sampling the carrier played its animation; once baked, its bone plays the simulated
    motion, and an object parented to that bone moves with it: O' = W_new @ W_anim⁻¹ @ O.
    """
    return carrier_new @ np.linalg.solve(carrier_sampled, object_matrix)


@dataclass(frozen=True)
class PoseKeys:
    rotation: np.ndarray  # (F, W, 4) quaternions (w, x, y, z), sign-continuous over frames
    location: np.ndarray  # (F, located bones, 3) location channels of ``read.keyed.located``


def pose_keys(read: RagdollRead, world: np.ndarray, pose: np.ndarray,
              object_matrix: np.ndarray) -> PoseKeys:
    """Pose channels giving each keyed bone the world matrix ``world`` (F, W, 4, 4, Blender
    units, ``keyed_world``).

    ``pose``: (F, bones, 4, 4) sampled armature-space matrices; ``object_matrix``: (F, 4, 4)
    the armature's world matrix at playback.
    """
    keyed = read.keyed
    # A bone hangs from its parent bone's new frame when that is keyed too, else (the root, a
    # detached body) from its parent bone as sampled, or from the armature object.
    parent_world = np.empty_like(world)
    on_keyed = keyed.parent >= 0
    parent_world[:, on_keyed] = world[:, keyed.parent[on_keyed]]
    on_bone = keyed.frame_parent_bone >= 0
    parent_world[:, on_bone] = object_matrix[:, None] @ pose[:, keyed.frame_parent_bone[on_bone]]
    parent_world[:, ~on_keyed & ~on_bone] = object_matrix[:, None]
    basis = basis_from_world(world=world, rest=keyed.rest_local[None],
                             parent_world=parent_world, parent_rest=keyed.parent_rest_local[None])
    location, rotation, _ = split_basis(basis)
    quats = make_sign_continuous(quat_from_matrix(rotation), axis=0)
    return PoseKeys(rotation=quats, location=location[:, keyed.located])
