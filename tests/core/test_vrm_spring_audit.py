"""Audit (session 41): the VRM Spring Bone solver (core/strands/vrm_spring.py) against the laws,
with settings the VRM tests did not use (frame rates, energy, determinism, colliders).

What holds: repeated runs give the same bits, in one process and across two (also through
Blender, where the user's channels stay bitwise).
What is by design: the motion depends on the frame rate (docs/vrm.md: the runtimes' per-frame
displacements; a 4-joint, 40 cm chain on a 5 g figure-eight parts from its 24 fps bake by
0.8-2 cm at 25 fps and 7-15 cm at 50 and 60 fps), so no frame-rate test here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from waft.core.colliders import ColliderKind, ColliderSet, shape_normal
from waft.core.strands.vrm_spring import VrmChains, VrmJointParams, simulate_vrm_springs

from .test_vrm_spring import rotation, translation


def _chain(joints: int, *, length: float = 0.1, bend: float = 0.0) -> VrmChains:
    """One chain hanging along -Z from its parent, every joint bent by ``bend`` about X."""
    local = [rotation(bend, "x")] + [translation(0.0, 0.0, -length) @ rotation(bend, "x")
                                   for _ in range(joints - 1)]
    return VrmChains(local_matrix=np.array(local)[None],
                     child_position=np.array([(0.0, 0.0, -length)] * joints)[None],
                     count=np.array([joints]), names=("audit",))


def _params(joints: int, *, stiffness: float, gravity_power: float, drag: float,
            hit_radius: float = 0.0) -> VrmJointParams:
    def column(value):
        return np.full((1, 1, joints), float(value))
    return VrmJointParams(stiffness=column(stiffness), gravity_power=column(gravity_power),
                          gravity_dir=np.broadcast_to((0.0, 0.0, -1.0), (1, 1, joints, 3)).copy(),
                          drag_force=column(drag), hit_radius=column(hit_radius))


def _figure_eight(fps: int, seconds: float, peak_g: float) -> np.ndarray:
    """(F, 1, 4, 4) parent on a 1.5 Hz figure-eight whose x peaks at ``peak_g``."""
    omega = 2.0 * math.pi * 1.5
    amplitude = peak_g * 9.81 / omega**2
    t = np.arange(int(round(seconds * fps)) + 1) / fps
    m = np.broadcast_to(np.eye(4), (t.size, 1, 4, 4)).copy()
    m[:, 0, 0, 3] = amplitude * np.sin(omega * t)
    m[:, 0, 2, 3] = 1.5 + 0.5 * amplitude * np.sin(2.0 * omega * t)
    return m


@pytest.mark.xfail(strict=True, reason="audit s41: the runtimes' algorithm pulls each joint after "
                   "its parent's new tail but never pulls the parent back (follow-the-leader "
                   "without a reaction), so with drag 0 the chain whips: the energy rose 0.83 "
                   "J/kg over an earlier low (14 % of the 5.94 released) at 24 fps, 6.98 (46 % "
                   "of 15.2) at 60 fps; by design (runtime equality), see docs/vrm.md")
@pytest.mark.parametrize("fps", [24, 60])
def test_passive_chain_without_drag_gains_no_energy(fps):
    """Four 10 cm joints bent 0.5 rad each, released under gravity alone (power 0.5, no
    stiffness, drag 0: the specification's range allows it) under a still parent. Gravity power
    is a displacement per frame, so the field is g = power / dt; the energy per unit tail mass
    (velocity: the tail's own per-frame step) may not rise above an earlier value by more than
    1 % of what the chain released by then."""
    joints, power = 4, 0.5
    result = simulate_vrm_springs(
        chains=_chain(joints, bend=0.5),
        parent_matrix=np.broadcast_to(np.eye(4), (10 * fps, 1, 4, 4)).copy(),
        params=_params(joints, stiffness=0.0, gravity_power=power, drag=0.0), fps=float(fps))
    x = result.tail[:, 0]
    v = np.diff(x, axis=0) * fps
    energy = 0.5 * np.sum(v * v, axis=(1, 2)) + power * fps * np.sum(x[1:, :, 2], axis=1)
    lowest = np.minimum.accumulate(energy)
    rise = float(np.max(energy - lowest))
    released = float(energy[0] - lowest[-1])
    assert released > 0.1
    assert rise <= 0.01 * released, (rise, released)


def _carried_colliders(parent: np.ndarray) -> dict:
    """A sphere (6 cm) and a capsule (4 cm, 16 cm long) beside the hanging chain, carried by its
    parent as body colliders are, clear of the rest pose."""
    colliders = ColliderSet.create(names=["sphere", "capsule"],
                                   kind=[ColliderKind.ELLIPSOID, ColliderKind.CAPSULE],
                                   size=[0.06, 0.08], radius_a=[0.0, 0.04], radius_b=[0.0, 0.04])
    offsets = np.stack([translation(0.09, 0.0, -0.2),
                        translation(-0.07, 0.0, -0.25) @ rotation(math.pi / 2, "x")])
    return {"colliders": colliders,
            "collider_matrix": np.einsum("fij,kjl->fkil", parent[:, 0], offsets)}


@pytest.mark.xfail(strict=True, reason="audit s41: tails ended frames up to 40.5 mm (hit radius "
                   "0) and 59.8 mm (2 cm) inside the 6 cm sphere: pushed out along the normal, "
                   "then put back on the bone length, a tail on the line from the head through "
                   "the centre returns to where it was (a fixed point); kept for runtime "
                   "equality (docs/vrm.md); the remedy "
                   "(turn the bone to the surface past 1 mm: 0.98 / 0.99 mm) moves the three-vrm "
                   "fixtures off the runtimes by 2.4 mm and 15 cm")
@pytest.mark.parametrize("hit_radius", [0.0, 0.02])
def test_tails_end_every_frame_outside_the_colliders(hit_radius):
    """The 4-joint chain on figure-eights of 5 and 8 g at 24 and 60 fps, stiffness 1,
    gravity 0.5, drag 0.3: no tail ends a frame (after frame 0, the rest state) closer to a
    sphere or capsule than its hit radius, past a micrometre."""
    worst = 0.0
    for fps in (24, 60):
        for peak_g in (5.0, 8.0):
            parent = _figure_eight(fps, 3.0, peak_g)
            setup = _carried_colliders(parent)
            result = simulate_vrm_springs(
                chains=_chain(4), parent_matrix=parent, fps=float(fps), **setup,
                params=_params(4, stiffness=1.0, gravity_power=0.5, drag=0.3,
                               hit_radius=hit_radius))
            colliders, matrices = setup["colliders"], setup["collider_matrix"]
            for f in range(1, parent.shape[0]):
                for k in range(colliders.count):
                    m = matrices[f, k]
                    _, distance = shape_normal(int(colliders.kind[k]), result.tail[f, 0], m,
                                               np.linalg.inv(m), colliders, k, similarity=True)
                    worst = max(worst, float(np.max(hit_radius - distance)))
    assert worst < 1e-6, worst
