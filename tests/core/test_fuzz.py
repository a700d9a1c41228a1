"""Hypothesis: random settings never produce NaN/inf or leave a generous bound."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from waft import core

finite = dict(allow_nan=False, allow_infinity=False)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    damping=st.floats(0.0, 50.0, **finite),
    stretch=st.floats(0.0, 1e-2, **finite),
    bend=st.one_of(st.just(np.inf), st.floats(0.0, 1.0, **finite)),
    stiffness=st.floats(0.0, 1.0, **finite),
    decay=st.floats(0.0, 5.0, **finite),
    radius=st.floats(0.0, 0.1, **finite),
    wind=st.tuples(*[st.floats(-20.0, 20.0, **finite)] * 3),
    turbulence=st.floats(0.0, 1.0, **finite),
    gust=st.floats(0.0, 1.0, **finite),
    drag=st.floats(0.0, 10.0, **finite),
    gravity=st.floats(-30.0, 30.0, **finite),
    fraction=st.floats(0.0, 1.0, **finite),
    tether=st.booleans(),
    max_distance=st.one_of(st.just(np.inf), st.floats(0.0, 1.0, **finite)),
    fps=st.sampled_from([24, 25, 30, 50, 60]),
    swing=st.floats(0.0, 1.0, **finite),
)
def test_random_settings_stay_finite_and_bounded(rig, damping, stretch, bend, stiffness, decay,
                                                 radius, wind, turbulence, gust, drag, gravity,
                                                 fraction, tether, max_distance, fps, swing):
    rest = rig.vertical_chain(bones=5, length=0.08)
    frames = fps // 2
    motion = lambda t: np.stack([swing * np.sin(9 * t), 0.5 * swing * np.sin(5 * t), 0 * t], -1)  # noqa: E731
    t = np.arange(frames) / fps
    space = np.tile(np.eye(4), (frames, 1, 1, 1))
    space[:, 0, :3, 3] = motion(t)
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    M[:, 0, :3, :3] *= 0.1
    M[:, 0, :3, 3] = (0.05, 0.0, 0.75)
    colliders = core.ColliderSet.create(names=["Ball"], kind=[0], size=[1.0], friction=[0.5])
    model, drive = rig.build(
        [rest], frames=frames, fps=fps, root_motion=motion, space=space, colliders=colliders,
        collider_matrix=M, damping=damping, stretch_compliance=stretch, bend_compliance=bend,
        shape_stiffness=stiffness, shape_decay=decay, radius=radius, wind_velocity=wind,
        wind_turbulence=turbulence, wind_gust=gust, drag=drag, gravity=(0.0, 0.0, gravity),
        world_motion_fraction=fraction, use_tether=tether, max_distance=max_distance)
    x = core.bake(model, drive).positions
    assert np.all(np.isfinite(x))
    assert np.all(np.linalg.norm(x - drive.reference, axis=-1) < 10.0)
