"""VRM-compatible mode: the VRM 1.0 spring-bone algorithm (VRMC_springBone), frame by frame.

What a VRM runtime (UniVRM, three-vrm, the VRM Add-on) plays for a character's spring bones,
reproduced so that a character baked in Blender moves as it will in the engine. It follows the
specification's reference algorithm ("SpringBone Algorithm", VRMC_springBone-1.0), which is
frame-based Verlet on each joint's tail, once per frame, root to tip:

    inertia   = (current_tail - previous_tail) * (1 - drag_force)
    stiffness = dt * stiffness * normalize(parent_rotation * initial_local_rotation * bone_axis)
    external  = dt * gravity_power * gravity_dir
    next_tail = head + normalize(current_tail + inertia + stiffness + external - head) * length
    (each collider: push out along its normal by the penetration, then back onto the length)
    rotation  = initial_local_rotation * from_to(bone_axis, next_tail in the initial local frame)

Deliberately *not* Waft's own solver: the stiffness and gravity terms are displacements per
frame, not forces, so the motion depends on the frame rate and the bone length exactly as it does
in VRM runtimes. With a centre node the tails are kept in its space, so only motion relative
to it is inertia; everything else is evaluated in world space, which for a rigid centre is the
same as VRM's centre-space evaluation, and gravity is a world direction as the specification
says.
Colliders are the Waft colliders (a sphere and a capsule give VRM's distance functions exactly; a
plane is VRM's extended plane); ``inside`` turns a sphere or capsule into VRM's extended "inside"
collider (distance measured from the inner side).

Joints are vectorised across chains; the loop runs over frames and over the joints of a chain
(each joint needs its parent's new rotation first, as in every VRM runtime).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..affine import inverse_affine
from ..colliders import ColliderSet, is_similarity, shape_normal
from ..errors import SetupError
from ..rotations import swing_matrix

_EPS = 1e-12


@dataclass(frozen=True)
class VrmChains:
    """Rest data of S spring chains of up to J joints (padding joints are ignored).

    ``local_matrix[s, j]`` is joint j's rest transform relative to its parent (joint 0: relative
    to the chain's parent, whose world matrix the drive gives per frame): VRM's
    ``initialLocalMatrix``. ``child_position[s, j]`` is the joint's tail (its child joint, or the
    end of the last bone) in the joint's own space: VRM's ``initialLocalChildPosition``.
    """

    local_matrix: np.ndarray  # (S, J, 4, 4)
    child_position: np.ndarray  # (S, J, 3)
    count: np.ndarray  # (S,) int, joints per chain
    names: tuple[str, ...] = ()

    @property
    def chains(self) -> int:
        return int(self.local_matrix.shape[0])

    @property
    def joints(self) -> int:
        return int(self.local_matrix.shape[1])


@dataclass(frozen=True)
class VrmJointParams:
    """Per-joint settings, shaped (F or 1, S, J) (``gravity_dir``: (F or 1, S, J, 3), world).

    Defaults and ranges of VRMC_springBone 1.0: stiffness 1 (≥ 0), gravity power 0 (≥ 0),
    drag force 0.5 (0–1), hit radius 0 m (≥ 0). The direction is normalised as VRM runtimes use
    it (a zero vector means no gravity).
    """

    stiffness: np.ndarray
    gravity_power: np.ndarray
    gravity_dir: np.ndarray
    drag_force: np.ndarray
    hit_radius: np.ndarray


@dataclass(frozen=True)
class VrmResult:
    world_matrix: np.ndarray  # (F, S, J, 4, 4) each joint's new world matrix
    tail: np.ndarray  # (F, S, J, 3) each joint's tail, world
    head: np.ndarray  # (F, S, 3) joint 0's head, world


def _chain_name(chains: VrmChains, s: int) -> str:
    return chains.names[s] if s < len(chains.names) else f"chain {s}"


def _check(chains: VrmChains, params: VrmJointParams, frames: int) -> dict[str, np.ndarray]:
    S, J = chains.chains, chains.joints
    out = {}
    for name, lo, hi in (("stiffness", 0.0, np.inf), ("gravity_power", 0.0, np.inf),
                         ("drag_force", 0.0, 1.0), ("hit_radius", 0.0, np.inf)):
        value = np.asarray(getattr(params, name), dtype=np.float64)
        if value.ndim != 3 or value.shape[1:] != (S, J) or value.shape[0] not in (1, frames):
            raise SetupError(f"VRM spring {name} has shape {value.shape}, expected "
                             f"(1 or {frames}, {S}, {J})")
        bad = ~np.isfinite(value) | (value < lo) | (value > hi)
        bad[:, np.arange(J)[None, :] >= chains.count[:, None]] = False
        if bad.any():
            f, s, j = (int(i) for i in np.argwhere(bad)[0])
            raise SetupError(f"VRM spring '{_chain_name(chains, s)}', joint {j}: {name} "
                             f"{value[f, s, j]:g} is outside [{lo:g}, {hi:g}]")
        out[name] = value
    direction = np.asarray(params.gravity_dir, dtype=np.float64)
    if direction.ndim != 4 or direction.shape[1:] != (S, J, 3) or direction.shape[0] not in (
            1, frames):
        raise SetupError(f"VRM spring gravity_dir has shape {direction.shape}, expected "
                         f"(1 or {frames}, {S}, {J}, 3)")
    if not np.all(np.isfinite(direction)):
        raise SetupError("VRM spring gravity_dir is not finite")
    norm = np.linalg.norm(direction, axis=-1, keepdims=True)
    out["gravity_dir"] = np.where(norm > _EPS, direction / np.maximum(norm, _EPS), 0.0)
    return out


def _transform_points(m: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(S, 4, 4) affine matrices applied to (S, 3) points."""
    return np.einsum("sij,sj->si", m[:, :3, :3], p) + m[:, :3, 3]


def _normalise(v: np.ndarray, fallback: np.ndarray | None = None) -> np.ndarray:
    length = np.sqrt(np.einsum("si,si->s", v, v))[:, None]
    unit = v / np.maximum(length, _EPS)
    if fallback is not None:
        unit = np.where(length > _EPS, unit, fallback)
    return unit


def _onto_length(tail: np.ndarray, head: np.ndarray, length: np.ndarray) -> np.ndarray:
    """VRM's length constraint: the tail back onto the sphere of the bone length."""
    return head + _normalise(tail - head) * length[:, None]


def _collide(tail, head, length, hit_radius, colliders: ColliderSet, matrices, inverses,
             similar, inside, mask) -> np.ndarray:
    """Each collider in order: push the tail out by its penetration, then restore the length."""
    for k in range(colliders.count):
        use = mask[k]
        if not use.any():
            continue
        n, sd = shape_normal(int(colliders.kind[k]), tail, matrices[k], inverses[k], colliders, k,
                             similarity=bool(similar[k]))
        n = np.array(n, dtype=np.float64)  # a plane's normal is a broadcast view
        if inside[k]:  # VRM extended collider: the surface faces inwards
            n, sd = -n, -sd
        distance = sd - hit_radius
        hit = use & (distance < 0.0)
        if hit.any():
            pushed = _onto_length(tail - n * distance[:, None], head, length)
            tail = np.where(hit[:, None], pushed, tail)
    return tail


def simulate_vrm_springs(
    *,
    chains: VrmChains,
    parent_matrix: np.ndarray,
    params: VrmJointParams,
    fps: float,
    colliders: ColliderSet | None = None,
    collider_matrix: np.ndarray | None = None,
    collider_mask: np.ndarray | None = None,
    inside: np.ndarray | None = None,
    center_matrix: np.ndarray | None = None,
) -> VrmResult:
    """Run the VRM spring-bone update once per frame over F frames (frame 0: the rest state).

    Args (keyword-only; F frames, S chains, J joints, K colliders):
        chains: rest transforms and tails (``VrmChains``).
        parent_matrix: (F, S, 4, 4) world matrix of each chain's parent (animated).
        params: per-joint settings (``VrmJointParams``).
        fps: frames per second; each update advances ``dt = 1 / fps`` (VRM's ``deltaTime``).
        colliders, collider_matrix (F, K, 4, 4), collider_mask (K, S): Waft colliders, each
            applied to the chains its mask enables, in order.
        inside: (K,) bool, VRM's extended "inside" sphere or capsule.
        center_matrix: (F, S, 4, 4) world matrix of each chain's centre node, or None (world).

    Frame 0 sets the initial state (every joint at its rest transform under the animated parent;
    tails at rest, no velocity), as a VRM runtime does when the character is loaded.
    """
    parent_matrix = np.asarray(parent_matrix, dtype=np.float64)
    S, J = chains.chains, chains.joints
    if parent_matrix.ndim != 4 or parent_matrix.shape[1:] != (S, 4, 4):
        raise SetupError(f"parent_matrix has shape {parent_matrix.shape}, expected (F, {S}, 4, 4)")
    F = parent_matrix.shape[0]
    if not fps > 0.0 or not np.isfinite(fps):
        raise SetupError(f"frames per second must be positive, got {fps!r}")
    if np.any(chains.count < 1) or np.any(chains.count > J):
        raise SetupError(f"every VRM spring needs 1 to {J} joints")
    p = _check(chains, params, F)
    if colliders is None:
        colliders = ColliderSet.empty()
    K = colliders.count
    collider_matrix = (np.zeros((F, 0, 4, 4)) if collider_matrix is None
                       else np.asarray(collider_matrix, dtype=np.float64))
    if collider_matrix.shape != (F, K, 4, 4):
        raise SetupError(f"collider_matrix has shape {collider_matrix.shape}, expected "
                         f"({F}, {K}, 4, 4)")
    mask = (np.ones((K, S), dtype=bool) if collider_mask is None
            else np.asarray(collider_mask, dtype=bool))
    inside = np.zeros(K, dtype=bool) if inside is None else np.asarray(inside, dtype=bool)
    if center_matrix is not None:
        center_matrix = np.asarray(center_matrix, dtype=np.float64)
        if center_matrix.shape != (F, S, 4, 4):
            raise SetupError(f"center_matrix has shape {center_matrix.shape}, expected "
                             f"({F}, {S}, 4, 4)")

    local, child = _padded_rest(chains)
    axis = child / np.maximum(np.linalg.norm(child, axis=-1, keepdims=True), _EPS)
    dt = 1.0 / float(fps)
    similar = np.array([[is_similarity(m) for m in frame] for frame in collider_matrix],
                       dtype=bool).reshape(F, K)
    collider_inverse = inverse_affine(collider_matrix) if K else collider_matrix

    world = np.empty((F, S, J, 4, 4))
    tails = np.empty((F, S, J, 3))
    heads = np.empty((F, S, 3))
    # Tails now and one frame ago, in each chain's centre space (world without a centre).
    current = np.empty((S, J, 3))
    previous = np.empty((S, J, 3))
    swing = np.broadcast_to(np.eye(4), (S, 4, 4)).copy()

    for f in range(F):
        parent = parent_matrix[f]
        at = {name: value[min(f, value.shape[0] - 1)] for name, value in p.items()}
        center = None if center_matrix is None else center_matrix[f]
        for j in range(J):
            # The joint at rest under its (new) parent, world.
            initial = np.einsum("sij,sjk->sik", parent, local[:, j])
            head = initial[:, :3, 3]
            rest_tail = _transform_points(initial, child[:, j])
            length = np.linalg.norm(rest_tail - head, axis=-1)
            if f == 0:  # initial state: the tail at rest, no velocity
                next_tail = rest_tail
            else:
                now, before = current[:, j], previous[:, j]
                if center is not None:  # the centre's own motion is not inertia
                    now, before = _transform_points(center, now), _transform_points(center, before)
                stiff_dir = _normalise(np.einsum("sij,sj->si", initial[:, :3, :3], axis[:, j]))
                next_tail = (now
                             + (now - before) * (1.0 - at["drag_force"][:, j, None])
                             + stiff_dir * (at["stiffness"][:, j, None] * dt)
                             + at["gravity_dir"][:, j] * (at["gravity_power"][:, j, None] * dt))
                next_tail = _onto_length(next_tail, head, length)
                next_tail = _collide(next_tail, head, length, at["hit_radius"][:, j], colliders,
                                     collider_matrix[f], collider_inverse[f], similar[f], inside,
                                     mask)
            stored = next_tail if center is None else _transform_points(
                inverse_affine(center), next_tail)
            previous[:, j] = current[:, j] if f else stored
            current[:, j] = stored
            # Rotation: the shortest arc from the rest bone axis to the tail, in the joint's
            # rest frame under its new parent (VRM's from-to quaternion).
            target = _normalise(_transform_points(inverse_affine(initial), next_tail),
                                fallback=axis[:, j])
            swing[:, :3, :3] = swing_matrix(axis[:, j], target)
            joint_world = np.einsum("sij,sjk->sik", initial, swing)
            world[f, :, j] = joint_world
            tails[f, :, j] = _transform_points(joint_world, child[:, j])
            if j == 0:
                heads[f] = head
            parent = joint_world
    return VrmResult(world_matrix=world, tail=tails, head=heads)


def _padded_rest(chains: VrmChains) -> tuple[np.ndarray, np.ndarray]:
    """Local matrices and tails with padding joints made harmless (identity, unit tail)."""
    local = np.array(chains.local_matrix, dtype=np.float64)
    child = np.array(chains.child_position, dtype=np.float64)
    padding = np.arange(chains.joints)[None, :] >= np.asarray(chains.count)[:, None]
    local[padding] = np.eye(4)
    child[padding] = (0.0, 1.0, 0.0)
    if not (np.all(np.isfinite(local)) and np.all(np.isfinite(child))):
        raise SetupError("VRM spring rest data is not finite")
    short = (np.linalg.norm(child, axis=-1) < 1e-9) & ~padding
    if short.any():
        s, j = (int(i) for i in np.argwhere(short)[0])
        raise SetupError(f"VRM spring '{_chain_name(chains, s)}', joint {j}: the tail is on the "
                         "head (zero-length bone)")
    return local, child


__all__ = ["VrmChains", "VrmJointParams", "VrmResult", "simulate_vrm_springs"]
