"""More frames a second than substeps (a Substep Rate under the frame rate, which the add-on
allows down to 30 Hz): a frame that falls between the same two substeps as the frame before it
is the blend of those two states, as every off-grid frame is. Each solver blended only the first
frame after a substep and gave the next one the later state (so two frames in a row were
equal, then the motion jumped): a cloth cage at 240 fps on 100 Hz substeps gained 75 % of its
fall in its output (tests/core/cloth/test_cloth_energy.py's counting)."""

from __future__ import annotations

import numpy as np

from waft import core
from waft.core.ragdoll import (
    RagdollDrive,
    RagdollParams,
    RagdollSettings,
    bake_ragdoll,
    build_ragdoll_model,
)
from waft.core.ragdoll._bench_cases import ground, humanoid_rest

RATE = 40.0  # substeps a second
PER = 3  # output frames per substep in the fine bake
SAMPLES = 240.0  # input samples a second (the same inputs for both bakes)


def _assert_blends(fine: np.ndarray, coarse: np.ndarray) -> None:
    """`fine` at PER × RATE frames a second against `coarse` at RATE: every PER-th frame is the
    coarse one, the frames between are near the segment between its neighbours: within 20 % of
    the step (strands re-place rigid segments on the blend, a chord: 12 % for the falling
    chain at 40 Hz; the later state, as before, is 33 % off at the second frame)."""
    k = (len(fine) - 1) // PER
    assert np.abs(fine[::PER][:k + 1] - coarse[:k + 1]).max() <= 1e-9
    step = np.linalg.norm(coarse[1:k + 1] - coarse[:k], axis=-1)
    assert step.max() > 1e-3  # it moves
    for j in range(1, PER):
        blend = coarse[:k] + (j / PER) * (coarse[1:k + 1] - coarse[:k])
        off = np.linalg.norm(fine[j::PER][:k] - blend, axis=-1)
        assert (off <= 0.2 * step + 1e-6).all(), (j, float((off / (step + 1e-9)).max()))


def _strands(rig, fps: float, seconds: float = 1.0) -> np.ndarray:
    """A 4-bone chain laid level from a still root swings down under gravity."""
    frames = int(round(seconds * fps)) + 1
    samples = int(round(seconds * SAMPLES)) + 1
    level = np.stack([0.1 * np.arange(5), np.zeros(5), np.full(5, 1.0)], axis=1)
    model, drive = rig.build([level], frames=samples, fps=SAMPLES)
    drive = core.Drive(fps=SAMPLES, reference=drive.reference, kinematic=drive.kinematic,
                       space=drive.space, collider_matrix=drive.collider_matrix,
                       params=drive.params, output_fps=fps, output_frames=frames)
    return core.bake(model, drive, core.SolverSettings(substep=1.0 / RATE)).positions[:, 0]


def test_strand_frames_between_two_substeps_blend_them(rig):
    _assert_blends(_strands(rig, PER * RATE), _strands(rig, RATE))


def _ragdoll(fps: float, seconds: float = 1.0) -> np.ndarray:
    rest = humanoid_rest(11)
    cs, M = ground(-0.3)
    model = build_ragdoll_model(ragdolls=[rest], colliders=cs)
    frames = int(round(seconds * fps)) + 1
    samples = int(round(seconds * SAMPLES)) + 1

    def targets(t):
        target = np.repeat(rest.rest_matrix[None], len(t), axis=0)
        target[:, :, :3, 3] += np.stack([0.3 * np.sin(4.0 * np.pi * t), 0 * t, 0 * t],
                                        axis=-1)[:, None]
        return target

    drive = RagdollDrive(fps=SAMPLES, target=targets(np.arange(samples) / SAMPLES),
                         collider_matrix=np.broadcast_to(M, (samples, 1, 4, 4)),
                         params=RagdollParams.defaults(11, 1, motor_strength=0.6,
                                                       motor_damping=0.3),
                         output_fps=fps, output_target=targets(np.arange(frames) / fps))
    result = bake_ragdoll(model, drive, RagdollSettings(substep=1.0 / RATE))
    return result.physics_matrix[..., :3, 3]


def test_ragdoll_frames_between_two_substeps_blend_them():
    _assert_blends(_ragdoll(PER * RATE), _ragdoll(RATE))
