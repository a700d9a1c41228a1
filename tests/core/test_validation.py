"""Bad input raises SetupError naming the thing at fault; the model is built as documented."""

from __future__ import annotations

import numpy as np
import pytest

from waft import core
from waft.core import ChainRest, ColliderKind, SetupError


def chain(name="Hair.001", n=3, setup="Rig", **kw):
    points = np.array([[0.0, 0.0, 1.0 - 0.1 * i] for i in range(n)])
    kin = np.zeros(n, dtype=bool)
    kin[0] = True
    return ChainRest(setup=setup, name=name, rest_positions=points, kinematic=kin, **kw)


def test_model_pads_chains_and_computes_rest_data():
    model = core.build_strand_model(chains=[chain(n=3), chain("Tail", n=5, setup="Fox")])
    assert model.particles == 5 and model.strands == 2
    assert np.allclose(model.rest_length[0], [0.1, 0.1, 0.0, 0.0])
    assert np.allclose(model.bend_rest_length[1], [0.2, 0.2, 0.2])
    assert np.allclose(model.bend_rest_length[0], [0.2, 0.0, 0.0])
    assert np.allclose(model.tether_length[1], [0.0, 0.1, 0.2, 0.3, 0.4])
    assert np.array_equal(model.active[0], [True, True, True, False, False])
    assert np.array_equal(model.inv_mass[0], [0.0, 1.0, 1.0, 0.0, 0.0])
    assert model.setup_names == ("Rig", "Fox") and list(model.strand_setup) == [0, 1]
    assert model.collider_mask.shape == (0, 2)


def test_zero_length_segment_names_setup_chain_and_segment():
    bad = chain("Hair.L.002", n=4)
    points = bad.rest_positions.copy()
    points[2] = points[1]
    with pytest.raises(SetupError, match=r"'Rig'.*'Hair.L.002'.*segment 1"):
        core.build_strand_model(chains=[ChainRest("Rig", "Hair.L.002", points, bad.kinematic)])


def test_too_short_and_non_finite_chains():
    with pytest.raises(SetupError, match="at least 2 particles"):
        core.build_strand_model(chains=[ChainRest("Rig", "Stub", np.zeros((1, 3)), [True])])
    points = chain().rest_positions.copy()
    points[1, 0] = np.nan
    with pytest.raises(SetupError, match="'Rig'.*'Hair.001'.*particle 1"):
        core.build_strand_model(chains=[ChainRest("Rig", "Hair.001", points, [True, False, False])])
    with pytest.raises(SetupError, match="root particle must be kinematic"):
        core.build_strand_model(chains=[ChainRest("Rig", "Hair.001", chain().rest_positions,
                                                  [False, False, False])])


@pytest.mark.parametrize("kind, field", [(ColliderKind.ELLIPSOID, "size"),
                                         (ColliderKind.BOX, "size"),
                                         (ColliderKind.CAPSULE, "radius")])
def test_collider_of_zero_size_is_named(kind, field):
    with pytest.raises(SetupError, match="'Head'"):
        core.ColliderSet.create(names=["Head"], kind=[kind], size=[0.0 if field == "size" else 1],
                                radius_a=[0.0], radius_b=[0.1])


def _drive(model, frames=4, **overrides):
    S, P, K = model.strands, model.particles, model.colliders.count
    ref = np.zeros((frames, S, P, 3))
    ref[..., 2] = -0.1 * np.arange(P)
    kin = np.zeros((S, P), dtype=bool)
    kin[:, 0] = True
    values = dict(fps=24.0, reference=ref, kinematic=kin,
                  space=np.broadcast_to(np.eye(4), (frames, S, 4, 4)),
                  collider_matrix=np.broadcast_to(np.eye(4), (frames, K, 4, 4)),
                  params=core.StrandParams.defaults(S, P))
    values.update(overrides)
    return core.Drive(**values)


def test_nan_setting_names_the_field_and_setup():
    model = core.build_strand_model(chains=[chain(), chain("Tail", setup="Fox")])
    params = core.StrandParams.defaults(2, 3)
    damping = np.array(params.damping, dtype=float)
    damping[0, 1, 2] = np.nan
    with pytest.raises(SetupError, match=r"'damping'.*'Fox'"):
        core.bake(model, _drive(model, params=params.replace(damping=damping)))


def test_negative_compliance_and_infinite_radius_are_rejected():
    model = core.build_strand_model(chains=[chain()])
    params = core.StrandParams.defaults(1, 3, stretch_compliance=-1e-3)
    with pytest.raises(SetupError, match="'stretch_compliance'.*'Rig'"):
        core.bake(model, _drive(model, params=params))
    params = core.StrandParams.defaults(1, 3, radius=np.inf)
    with pytest.raises(SetupError, match="'radius'"):
        core.bake(model, _drive(model, params=params))


def test_degenerate_collider_matrix_names_collider_and_frame():
    colliders = core.ColliderSet.create(names=["Hand.R"], kind=[0], size=[0.1])
    model = core.build_strand_model(chains=[chain()], colliders=colliders)
    M = np.tile(np.eye(4), (4, 1, 1, 1))
    M[2, 0, 0, 0] = 0.0  # zero X scale at frame index 2
    with pytest.raises(SetupError, match=r"'Hand.R'.*frame index 2"):
        core.bake(model, _drive(model, collider_matrix=M))
    M[2, 0, 0, 0] = -1.0  # mirrored (negative scale)
    with pytest.raises(SetupError, match="'Hand.R'"):
        core.bake(model, _drive(model, collider_matrix=M))


def test_bad_drive_shapes_and_settings():
    model = core.build_strand_model(chains=[chain()])
    with pytest.raises(SetupError, match="reference"):
        core.bake(model, _drive(model, reference=np.zeros((4, 1, 2, 3))))
    with pytest.raises(SetupError, match="fps"):
        core.bake(model, _drive(model, fps=0.0))
    ref = np.zeros((4, 1, 3, 3))
    ref[1, 0, 2, 1] = np.inf
    with pytest.raises(SetupError, match="'Hair.001'.*particle 2.*frame index 1"):
        core.bake(model, _drive(model, reference=ref))
    with pytest.raises(SetupError, match="substep"):
        core.SolverSettings(substep=0.0)
    with pytest.raises(SetupError, match="iterations"):
        core.SolverSettings(iterations=0)


def test_bake_steps_reports_progress_and_result():
    model = core.build_strand_model(chains=[chain()])
    job = core.bake_steps(model, _drive(model, frames=5), core.SolverSettings())
    progress = list(job)
    assert progress == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
    assert job.result.positions.shape == (5, 1, 3, 3)
