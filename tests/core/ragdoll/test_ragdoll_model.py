"""Model building: capsule inertia, joint inertia, and clear errors for bad input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from waft.core.errors import SetupError
from waft.core.ragdoll import BodyMode, build_ragdoll_model, capsule_inertia
from waft.core.ragdoll._bench_cases import humanoid_rest

from .conftest import chain_rest


def test_capsule_inertia_limits():
    # A thin capsule is a rod (m L²/12 across, ~0 about the axis) ...
    rod = capsule_inertia(np.array([2.0]), np.array([1.0]), np.array([1e-5]))[0]
    assert rod[0] == pytest.approx(2.0 / 12.0, rel=1e-3)
    assert rod[1] == pytest.approx(0.0, abs=1e-9)
    # ... and a capsule of zero length a solid sphere (2/5 m r²).
    ball = capsule_inertia(np.array([3.0]), np.array([1e-9]), np.array([0.5]))[0]
    assert ball == pytest.approx([0.4 * 3.0 * 0.25] * 3, rel=1e-6)


def test_capsule_inertia_by_sampling():
    # Monte Carlo check of the closed form for a stubby capsule.
    rng = np.random.default_rng(1)
    L, r, m = 0.4, 0.15, 5.0
    p = rng.uniform([-r, -r - L / 2, -r], [r, L / 2 + r, r], size=(400_000, 3))
    y = np.clip(p[:, 1], -L / 2, L / 2)
    inside = (p[:, 0] ** 2 + (p[:, 1] - y) ** 2 + p[:, 2] ** 2) <= r * r
    q = p[inside]
    Ixx = m * np.mean(q[:, 1] ** 2 + q[:, 2] ** 2)
    Iyy = m * np.mean(q[:, 0] ** 2 + q[:, 2] ** 2)
    inertia = capsule_inertia(np.array([m]), np.array([L]), np.array([r]))[0]
    assert inertia[0] == pytest.approx(Ixx, rel=0.01)
    assert inertia[1] == pytest.approx(Iyy, rel=0.01)
    assert inertia[2] == inertia[0]


def test_model_concatenates_ragdolls_and_lists_joint_neighbours():
    a = humanoid_rest(5, setup="A")
    b = humanoid_rest(3, setup="B", offset=(2.0, 0, 0))
    model = build_ragdoll_model(ragdolls=[a, b])
    assert model.n_bodies == 8 and model.n_ragdolls == 2
    assert list(model.body_offset) == [0, 5, 8]
    assert list(model.ragdoll_of_body) == [0] * 5 + [1] * 3
    assert list(model.parent) == [-1, 0, 1, 2, 3, -1, 5, 6]
    assert model.setup_names == ("A", "B")
    assert {tuple(p) for p in model.neighbours} == {(1, 0), (2, 1), (3, 2), (4, 3), (6, 5),
                                                    (7, 6)}
    # A joint carries at least its own body; the root carries everything.
    assert np.all(model.joint_inertia >= model.inertia.max(1) - 1e-12)
    assert model.joint_inertia[0] > model.joint_inertia[1] > model.joint_inertia[4]
    assert int(BodyMode.KINEMATIC) == 0 and int(BodyMode.DRIVEN) == 1 and int(BodyMode.FREE) == 2


def _bad(**changes):
    rest = chain_rest([(0, 0, 1), (0, 0, 0.5)], [(0, 0, 0.5), (0, 0, 0.0)], setup="Hero")
    rest = dataclasses.replace(rest, names=("hips", "leg"), **changes)
    with pytest.raises(SetupError) as info:
        build_ragdoll_model(ragdolls=[rest])
    return str(info.value)


def test_errors_name_the_setup_and_bone():
    msg = _bad(length=np.array([0.5, 0.0]))
    assert "Hero" in msg and "leg" in msg and "zero length" in msg
    msg = _bad(mass=np.array([1.0, -2.0]))
    assert "leg" in msg and "mass" in msg
    msg = _bad(mass=np.array([0.0, 1.0]))
    assert "hips" in msg and "mass" in msg
    msg = _bad(twist_limit=np.array([[-1.0, 1.0], [0.5, -0.5]]))
    assert "leg" in msg and "min" in msg
    msg = _bad(parent=np.array([-1, 1]))
    assert "leg" in msg and "parent" in msg
    msg = _bad(radius=np.array([0.1, 0.0]))
    assert "leg" in msg and "radius" in msg


def test_carrier_cycles_and_unknown_carriers_are_errors():
    a = chain_rest([(0, 0, 1)], [(0, 0, 0.5)], setup="A", carrier=(1, 0))
    b = chain_rest([(1, 0, 1)], [(1, 0, 0.5)], setup="B", carrier=(0, 0))
    with pytest.raises(SetupError, match="cycle"):
        build_ragdoll_model(ragdolls=[a, b])
    c = chain_rest([(1, 0, 1)], [(1, 0, 0.5)], setup="C", carrier=(5, 0))
    with pytest.raises(SetupError, match="carrier"):
        build_ragdoll_model(ragdolls=[c])
    ok = build_ragdoll_model(ragdolls=[chain_rest([(0, 0, 1)], [(0, 0, 0.5)], setup="A"),
                                       dataclasses.replace(b, carrier=(0, 0))])
    assert list(ok.level) == [0, 1] and list(ok.carrier[1]) == [0, 0]


def _tiny_drive(**params):
    from waft.core.ragdoll import RagdollDrive, RagdollParams
    rest = chain_rest([(0, 0, 1), (0, 0, 0.5)], [(0, 0, 0.5), (0, 0, 0.0)], setup="Hero")
    rest = dataclasses.replace(rest, names=("hips", "leg"))
    model = build_ragdoll_model(ragdolls=[rest])
    target = np.repeat(rest.rest_matrix[None], 3, axis=0)
    return model, RagdollDrive(fps=24.0, target=target, collider_matrix=np.zeros((3, 0, 4, 4)),
                               params=RagdollParams.defaults(2, 1, **params))


def test_bad_settings_and_targets_are_setup_errors():
    from waft.core.ragdoll import RagdollSettings, bake_ragdoll
    model, drive = _tiny_drive(motor_strength=np.array([[0.5, 1.5]]))
    with pytest.raises(SetupError, match="motor_strength.*leg"):
        bake_ragdoll(model, drive)
    model, drive = _tiny_drive(joint_damping=np.nan)
    with pytest.raises(SetupError, match="joint_damping"):
        bake_ragdoll(model, drive)
    model, drive = _tiny_drive(mode=7)
    with pytest.raises(SetupError, match="mode"):
        bake_ragdoll(model, drive)
    model, drive = _tiny_drive(fall_threshold=-1.0)
    with pytest.raises(SetupError, match="fall_threshold.*Hero"):
        bake_ragdoll(model, drive)
    model, drive = _tiny_drive()
    scaled = drive.target.copy()
    scaled[1, 1, :3, :3] *= 2.0
    with pytest.raises(SetupError, match="leg.*not a rotation"):
        bake_ragdoll(model, dataclasses.replace(drive, target=scaled))
    with pytest.raises(SetupError, match="shape"):
        bake_ragdoll(model, dataclasses.replace(drive, target=scaled[:, :1]))
    # A location keyed "to infinity" (Blender stores 3.4e38, finite) names the keyed bone, not
    # the body the divergence check would find furthest from its target.
    far = drive.target.copy()
    far[2, 1, 2, 3] = 3.4e38
    with pytest.raises(SetupError, match="leg.*3.4e.38 m from the origin at frame 2"):
        bake_ragdoll(model, dataclasses.replace(drive, target=far))
    with pytest.raises(SetupError, match="iterations"):
        bake_ragdoll(model, drive, RagdollSettings(iterations=0))
    with pytest.raises(SetupError, match="substep"):
        bake_ragdoll(model, drive, RagdollSettings(substep=0.0))
    with pytest.raises(TypeError):
        _tiny_drive(no_such_field=1.0)
