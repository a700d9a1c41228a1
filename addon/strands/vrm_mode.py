"""The VRM Spring Bone solver for setups that choose it (``Object.waft.solver == 'VRM'``).

Plain NumPy on what was read and sampled (no bpy): each chain bone is a VRM joint whose tail is
the next chain bone's head (the last bone's own tail), its rest transform relative to its parent
is VRM's ``initialLocalMatrix``, and its settings are the setup's VRM settings or the bone's
overrides (Radius is the hit radius). The Space Bone, when set, is the springs' centre node.
The result replaces the particle positions of those chains and gives the exact joint
orientations (twist included) the writer keys.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.affine import inverse3, inverse_affine
from ...core.strands.vrm_spring import VrmChains, VrmJointParams, simulate_vrm_springs
from ..reading import collider_set
from .reading import SceneRead
from .sampling import Samples

SOLVER = "VRM"


@dataclass(frozen=True)
class VrmSolve:
    """The VRM chains' results at the scene frames."""

    chains: tuple[int, ...]  # indices into read.chains
    positions: np.ndarray  # (F, len(chains), P, 3) world metres, padded with the tip
    axes: np.ndarray  # (F, len(chains), B, 3, 3) armature-space bone orientations


def vrm_chains(read: SceneRead) -> tuple[int, ...]:
    return tuple(s for s, chain in enumerate(read.chains)
                 if read.setups[chain.setup_index].solver == SOLVER)


def _rest(read: SceneRead, chains: tuple[int, ...]) -> VrmChains:
    n_joints = max(len(read.chains[s].bone_names) for s in chains)
    local = np.broadcast_to(np.eye(4), (len(chains), n_joints, 4, 4)).copy()
    child = np.zeros((len(chains), n_joints, 3))
    count = np.zeros(len(chains), dtype=np.int64)
    names = []
    for i, s in enumerate(chains):
        chain = read.chains[s]
        rest = chain.rest_matrix
        b = len(chain.bone_names)
        parents = np.concatenate((chain.parent_rest_matrix[None], rest[:-1]))
        local[i, :b] = inverse_affine(parents) @ rest
        heads = rest[1:, :, 3]  # the next joint's head, in the joint's own space
        child[i, : b - 1] = np.einsum("bij,bj->bi", inverse_affine(rest[:-1]), heads)[:, :3]
        child[i, b - 1] = (0.0, chain.bone_length[-1], 0.0)
        count[i] = b
        names.append(f"{read.setups[chain.setup_index].name}: {chain.bone_names[0]}")
    return VrmChains(local_matrix=local, child_position=child, count=count, names=tuple(names))


def _joint_values(read, samples, chains, name: str, n_joints: int, unit: float = 1.0):
    """(F or 1, S, J): the setup's value, a bone's override where it has one on."""
    n_frames = 1
    for s in chains:
        bones = samples.bone_settings[s]
        n_frames = max(n_frames, bones[name].shape[0], bones["use_overrides"].shape[0],
                       samples.setup_settings[read.chains[s].setup_index][name].shape[0])
    out = np.zeros((n_frames, len(chains), n_joints))
    for i, s in enumerate(chains):
        chain = read.chains[s]
        b = len(chain.bone_names)
        setup = np.broadcast_to(samples.setup_settings[chain.setup_index][name], (n_frames,))
        bones = samples.bone_settings[s]
        use = np.broadcast_to(bones["use_overrides"] > 0.5, (n_frames, b))
        value = np.broadcast_to(bones[name], (n_frames, b))
        out[:, i, :b] = np.where(use, value, setup[:, None])
    return out * unit


def _params(read: SceneRead, samples: Samples, chains, n_joints: int) -> VrmJointParams:
    directions = [samples.setup_settings[read.chains[s].setup_index]["vrm_gravity_dir"]
                  for s in chains]
    n_frames = max(d.shape[0] for d in directions)
    gravity_dir = np.stack([np.broadcast_to(d, (n_frames, 3)) for d in directions], axis=1)
    return VrmJointParams(
        stiffness=_joint_values(read, samples, chains, "vrm_stiffness", n_joints),
        gravity_power=_joint_values(read, samples, chains, "vrm_gravity_power", n_joints),
        gravity_dir=np.broadcast_to(gravity_dir[:, :, None], (n_frames, len(chains), n_joints, 3)),
        drag_force=_joint_values(read, samples, chains, "vrm_drag_force", n_joints),
        hit_radius=_joint_values(read, samples, chains, "radius", n_joints, read.unit_scale))


def solve(read: SceneRead, samples: Samples, n_particles: int, *, preroll_frames: int = 0
          ) -> VrmSolve | None:
    """Run the VRM chains over the sampled scene frames (``samples`` at those frames), after
    ``preroll_frames`` frames held at the first one so the springs settle before the shot (the
    state a VRM runtime reaches once the character has stood still)."""
    chains = vrm_chains(read)
    if not chains:
        return None
    rest = _rest(read, chains)
    preroll = max(int(preroll_frames), 0)
    samples = samples.take(np.concatenate((np.zeros(preroll, dtype=np.int64),
                                           np.arange(len(samples.frames)))))
    n_frames = len(samples.frames)
    eye = np.eye(4)
    parent = np.empty((n_frames, len(chains), 4, 4))
    center = np.broadcast_to(eye, (n_frames, len(chains), 4, 4)).copy()
    obj = np.empty((n_frames, len(chains), 4, 4))
    for i, s in enumerate(chains):
        chain = read.chains[s]
        setup = read.setups[chain.setup_index]
        obj[:, i] = samples.object_matrix[:, chain.setup_index]
        parent[:, i] = obj[:, i] @ (
            samples.bone_matrices(chain.setup_index, chain.parent_index)
            if chain.parent_index >= 0 else eye)
        if setup.space_bone >= 0:
            center[:, i] = obj[:, i] @ samples.bone_matrices(chain.setup_index,
                                                             setup.space_bone)
    result = simulate_vrm_springs(
        chains=rest, parent_matrix=parent, params=_params(read, samples, chains, rest.joints),
        fps=read.fps, colliders=collider_set(read.colliders),
        collider_matrix=samples.collider_matrix,
        collider_mask=read.collider_mask[:, list(chains)], center_matrix=center)
    shot = slice(preroll, None)
    head, tail = result.head[shot], result.tail[shot]
    positions = np.empty((n_frames - preroll, len(chains), n_particles, 3))
    positions[:, :, 0] = head
    for i, count in enumerate(rest.count):
        positions[:, i, 1: count + 1] = tail[:, i, :count]
        positions[:, i, count + 1:] = tail[:, i, count - 1: count]
    to_armature = inverse3(obj[shot, :, :3, :3])
    axes = np.einsum("fsij,fsbjk->fsbik", to_armature, result.world_matrix[shot, ..., :3, :3])
    return VrmSolve(chains=chains, positions=positions, axes=axes)
