"""A companion armature parented to a bone of its carrier's ragdoll plays back on the carrier's
SIMULATED motion: Waft writes the companion's keys against the object matrix the companion
will have at playback (the carrier bone's new motion), not the one sampled from the animation.

The stand-in solver moves the whole carrier rigidly by G(f) (a turn and a slide) and, as the
core's contract says, the carried ragdoll with its carrier body: so at playback the companion's
bodies must sit exactly where they sat relative to the carrier's chest in the animation.
"""

from __future__ import annotations

import numpy as np
import pytest
import ragdoll_rigs as rigs

FRAMES = list(range(1, 13))


def _moved(target: np.ndarray) -> np.ndarray:
    n = target.shape[0]
    angle = 0.4 * np.sin(np.arange(n) / 3.0)
    g = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
    g[:, 0, 0], g[:, 0, 1], g[:, 1, 0], g[:, 1, 1] = (np.cos(angle), -np.sin(angle),
                                                      np.sin(angle), np.cos(angle))
    g[:, 0, 3] = 0.05 * np.arange(n)
    return g[:, None] @ target


@pytest.fixture
def rigid_core(kinematic_core):
    class Job:
        def __init__(self, model, drive):
            self.model, self.drive, self.result = model, drive, None

        def __iter__(self):
            from types import SimpleNamespace
            yield 1, 1
            body = _moved(np.asarray(self.drive.output_target))  # the scene's frames
            self.result = SimpleNamespace(body_matrix=body, physics_matrix=body,
                                          fell_at=np.full(self.model.n_ragdolls, -1))

    kinematic_core.bake_ragdoll_steps = lambda model, drive, settings: Job(model, drive)
    return kinematic_core


def _companion(scene, carrier):
    ob = rigs.humanoid(scene, "Companion", location=(0.0, 0.2, 1.3))
    ob.scale = (0.25, 0.25, 0.25)
    world = ob.matrix_world.copy()
    ob.parent = carrier
    ob.parent_type = 'BONE'
    ob.parent_bone = "chest"
    scene.frame_set(1)
    ob.matrix_world = world
    ob.waft_ragdoll.carrier = carrier
    ob.waft_ragdoll.carrier_bone = "chest"
    ob.waft_ragdoll.use_ground = False
    return ob


def _relative(scene, carrier, companion) -> np.ndarray:
    out = []
    for frame in FRAMES:
        scene.frame_set(frame)
        chest = carrier.matrix_world @ carrier.pose.bones["chest"].matrix
        out.append([np.array(chest.inverted() @ companion.matrix_world @ pb.matrix)
                    for pb in companion.pose.bones])
    return np.array(out)


def test_companion_follows_the_simulated_carrier(scene, bake_api, rigid_core):
    carrier = rigs.humanoid(scene, "Carrier")
    carrier.waft_ragdoll.use_ground = False
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    rigs.animate_wave(carrier, FRAMES, travel=(0.0, -0.05, 0.0))
    companion = _companion(scene, carrier)
    rigs.animate_wave(companion, FRAMES)
    animated = _relative(scene, carrier, companion)
    hips_animated = np.array(carrier.pose.bones["hips"].head)  # at the last frame
    report = bake_api.bake_scene(scene)
    assert [s.name for s in report.systems["ragdoll"].setups] == ["Carrier", "Companion"]
    scene.frame_set(FRAMES[-1])
    moved = np.linalg.norm(np.array(carrier.pose.bones["hips"].head) - hips_animated)
    assert moved > 0.2  # the carrier did move off its animation
    assert np.allclose(_relative(scene, carrier, companion), animated, atol=1e-4)


def test_companion_without_its_carrier_in_the_bake(scene, bake_api, rigid_core, setup_error):
    carrier = rigs.humanoid(scene, "Carrier")
    scene.frame_start, scene.frame_end = FRAMES[0], FRAMES[-1]
    rigs.animate_wave(carrier, FRAMES)
    companion = _companion(scene, carrier)
    with pytest.raises(setup_error, match=r"'Companion'.*carrier 'Carrier' is not baked with it"):
        bake_api.bake_scene(scene, objects=[companion])
