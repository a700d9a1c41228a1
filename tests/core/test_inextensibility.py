"""Rigid chains (stretch_compliance 0) keep their bone lengths: FTL sweep + DFTL (Mueller 2012)."""

from __future__ import annotations

import numpy as np
import pytest

from waft import core

TOLERANCE = 1e-3  # 0.1 % of the rest length, at every frame
ADDON_DEFAULTS = dict(damping=1.0, drag=0.5, shape_stiffness=0.1, bend_compliance=0.01,
                      use_tether=True)


def _stretch(x: np.ndarray, rest: np.ndarray) -> np.ndarray:
    """Relative stretch |l / l0 - 1| of every segment at every frame; x (F, P, 3)."""
    lengths = np.linalg.norm(np.diff(x, axis=1), axis=-1)
    rest_lengths = np.linalg.norm(np.diff(rest, axis=0), axis=-1)
    return np.abs(lengths / rest_lengths - 1.0)


@pytest.mark.parametrize("fps", [24.0, 25.0, 60.0])  # 25: frames between substeps
def test_whipped_root_keeps_every_length(rig, fps):
    rest = rig.vertical_chain(bones=8, length=0.05)
    whip = lambda t: np.stack([0.3 * np.sin(2 * np.pi * 2 * t), 0 * t, 0 * t], -1)  # noqa: E731
    model, drive = rig.build([rest], frames=int(2 * fps), fps=fps, root_motion=whip,
                             **ADDON_DEFAULTS)
    x = core.bake(model, drive).positions[:, 0]
    assert np.max(_stretch(x, rest)) < TOLERANCE
    assert np.max(np.abs(x[:, -1, 0] - x[:, 0, 0])) > 0.05  # the tip really lags behind


def test_whip_with_compliance_still_stretches(rig):
    """The same whip with a (tiny) compliance runs XPBD instead: it is not exact, which is
    what makes the rigid path worth having (and shows the test above can fail)."""
    rest = rig.vertical_chain(bones=8, length=0.05)
    whip = lambda t: np.stack([0.3 * np.sin(2 * np.pi * 2 * t), 0 * t, 0 * t], -1)  # noqa: E731
    model, drive = rig.build([rest], frames=48, root_motion=whip, stretch_compliance=1e-9,
                             **ADDON_DEFAULTS)
    x = core.bake(model, drive).positions[:, 0]
    assert np.max(_stretch(x, rest)) > 5 * TOLERANCE


def test_fast_turn_of_the_space_keeps_every_length(rig):
    """The character spins at 720 deg/s with the chain 0.2 m off the axis, partly carried."""
    fps, frames = 24.0, 36
    rest = rig.vertical_chain(bones=6, length=0.08, top=(0.2, 0.0, 1.0))
    t = np.arange(frames) / fps
    angle = np.radians(720.0) * t
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros((frames, 3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 1, 0], R[:, 1, 1], R[:, 2, 2] = c, -s, s, c, 1.0
    space = np.tile(np.eye(4), (frames, 1, 1, 1))
    space[:, 0, :3, :3] = R
    reference = np.einsum("fij,pj->fpi", R, rest)[:, None]
    for fraction in (1.0, 0.3):
        model, drive = rig.build([rest], frames=frames, fps=fps, reference=reference,
                                 space=space, world_motion_fraction=fraction, **ADDON_DEFAULTS)
        x = core.bake(model, drive).positions[:, 0]
        assert np.max(_stretch(x, rest)) < TOLERANCE
        # Centrifugal swing: the tip leaves its groomed place.
        assert np.max(np.linalg.norm(x[:, -1] - reference[:, 0, -1], axis=-1)) > 0.02


def test_sudden_root_jump_keeps_every_length(rig):
    rest = rig.vertical_chain(bones=8, length=0.05)
    jump = lambda t: np.stack([0.5 * (t >= 0.5), 0.2 * (t >= 0.5), 0 * t], -1)  # noqa: E731
    model, drive = rig.build([rest], frames=36, root_motion=jump, **ADDON_DEFAULTS)
    x = core.bake(model, drive).positions[:, 0]
    assert np.max(_stretch(x, rest)) < TOLERANCE
    assert np.linalg.norm(x[13, -1] - drive.reference[13, 0, -1]) > 0.1  # the tip trails


def test_pinned_middle_node_stays_exact_and_lengths_hold(rig):
    rest = rig.vertical_chain(bones=6, length=0.08)
    kin = np.array([True, False, False, True, False, False, False])
    whip = lambda t: np.stack([0.3 * np.sin(2 * np.pi * 2 * t), 0.1 * t, 0 * t], -1)  # noqa: E731
    model, drive = rig.build([rest], frames=48, fps=25.0, root_motion=whip, kinematic=[kin],
                             **ADDON_DEFAULTS)
    x = core.bake(model, drive).positions[:, 0]
    assert np.array_equal(x[:, kin], drive.reference[:, 0, kin])
    # Every segment the root-to-tip sweep can place is exact; the one segment ending on the pin
    # (2 -> 3) has both ends fixed by the sweep and the animation, so it is left to XPBD.
    stretch = _stretch(x, rest)
    assert np.max(stretch[:, [0, 1, 3, 4, 5]]) < TOLERANCE
    assert np.max(stretch[:, 2]) < 0.05
    # ... also inside a substep, where step() is driven by hand.
    h = 1 / 240
    state, substep = core.strands.solver.start(model, drive, core.SolverSettings(substep=h),
                                       t_start=0.1, t_end=0.1 + h)
    core.step(model, state, substep, h)
    got = state.positions(model)[0]
    assert np.array_equal(got[kin], np.moveaxis(substep.reference[:, 0, :7], 0, -1)[kin])


def test_collider_wins_over_length_and_lengths_recover(rig):
    """A rigid chain dragged over a sphere: never inside it (the collider runs last and wins);
    segment lengths are exact again once contact ends."""
    rest = rig.vertical_chain(bones=8, length=0.05)
    sweep = lambda t: np.stack([0.4 * np.sin(np.pi * t), 0 * t, 0 * t], -1)  # noqa: E731
    frames = 48
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    M[:, 0, :3, :3] *= 0.08
    M[:, 0, :3, 3] = (0.12, 0.0, 0.75)
    colliders = core.ColliderSet.create(names=["Ball"], kind=[0], size=[1.0], friction=[0.3])
    model, drive = rig.build([rest], frames=frames, root_motion=sweep, colliders=colliders,
                             collider_matrix=M, radius=0.01, **ADDON_DEFAULTS)
    x = core.bake(model, drive).positions[:, 0]
    gap = np.linalg.norm(x - M[:, 0, None, :3, 3], axis=-1)
    assert np.all(gap[:, 1:] >= 0.08 + 0.01 - 1e-9)
    touching = np.any(gap[:, 1:] < 0.08 + 0.01 + 1e-3, axis=1)
    assert touching.any() and not touching.all()
    stretch = _stretch(x, rest)
    assert np.max(stretch[~touching]) < TOLERANCE
    assert np.max(stretch) < 0.1  # contact re-stretches (by the last substep's push only)


def test_ftl_damping_defaults_and_validation(rig):
    rest = rig.vertical_chain(bones=3, length=0.1)
    model, drive = rig.build([rest], frames=4)
    params = drive.params
    default = core.strands.params.DEFAULT_FTL_DAMPING
    assert float(np.asarray(params.ftl_damping).ravel()[0]) == default
    # A StrandParams built without the new field (old callers) still bakes.
    legacy = params.replace(ftl_damping=None)
    core.bake(model, core.Drive(fps=drive.fps, reference=drive.reference,
                                kinematic=drive.kinematic, space=drive.space,
                                collider_matrix=drive.collider_matrix, params=legacy))
    bad = params.replace(ftl_damping=np.full((1, 1), 1.5))
    with pytest.raises(core.SetupError, match="ftl_damping"):
        core.bake(model, core.Drive(fps=drive.fps, reference=drive.reference,
                                    kinematic=drive.kinematic, space=drive.space,
                                    collider_matrix=drive.collider_matrix, params=bad))


@pytest.mark.parametrize("moving", [False, True])
def test_hair_lying_on_a_head_keeps_its_length(rig, moving):
    """Thirty 2 cm segments of hair laid over a 10 cm head (root on the crown), the head still
    or swinging 15 cm at 1 Hz: at every frame no particle is inside the head and no segment is
    more than 0.5 % long. The contact push used to stretch it (1.1 % swinging, 0.5 % still)
    until the next substep's sweep."""
    fps, frames, R, r, seg = 24.0, 73, 0.1, 0.005, 0.02
    centre = np.array([0.0, 0.0, 1.5])
    angle = np.arange(31) * seg / (R + r)
    rest = np.stack([(R + r) * np.sin(angle), 0.0 * angle, 1.5 + (R + r) * np.cos(angle)], -1)

    def swing(t):
        amplitude = 0.15 if moving else 0.0
        return np.stack([amplitude * np.sin(2 * np.pi * t), 0 * t, 0 * t], -1)

    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    M[:, 0, :3, :3] *= R
    M[:, 0, :3, 3] = centre + swing(np.arange(frames) / fps)
    colliders = core.ColliderSet.create(names=["Head"], kind=[0], size=[1.0], friction=[0.3])
    model, drive = rig.build([rest], frames=frames, fps=fps, root_motion=swing,
                             colliders=colliders, collider_matrix=M, radius=r, **ADDON_DEFAULTS)
    x = core.bake(model, drive).positions[:, 0]
    gap = np.linalg.norm(x - M[:, 0, None, :3, 3], axis=-1)
    assert np.all(gap >= R + r - 1e-9)
    stretch = np.linalg.norm(np.diff(x, axis=1), axis=-1) / np.linalg.norm(
        np.diff(rest, axis=0), axis=-1) - 1.0
    assert stretch.max() <= 0.005


def test_a_teleported_chain_keeps_its_shape(rig):
    """The root, swinging, jumps 2 m at t = 1 s (a cut keyed with constant interpolation, read
    on the 240 Hz sample grid as the add-on does): the chain is carried over the jump with its
    root and goes on as if nothing happened. Without the carry the jump left a 0.84 m whip."""
    rate, fps, frames = 240.0, 24.0, 49
    chain = rig.vertical_chain(bones=6, length=0.1)

    def bake(jump: float) -> np.ndarray:
        def motion(t):
            x = 0.3 * np.sin(2 * np.pi * t) + np.where(t >= 1.0 - 1e-9, jump, 0.0)
            return np.stack([x, 0 * t, 0 * t], -1)

        model, drive = rig.build([chain], frames=(frames - 1) * 10 + 1, fps=rate,
                                 root_motion=motion, **ADDON_DEFAULTS)
        drive = core.Drive(fps=rate, reference=drive.reference, kinematic=drive.kinematic,
                           space=drive.space, collider_matrix=drive.collider_matrix,
                           params=drive.params, output_fps=fps, output_frames=frames)
        x = core.bake(model, drive).positions[:, 0]
        return x - x[:, :1]  # the shape, relative to the root

    cut, uncut = bake(2.0), bake(0.0)
    difference = np.linalg.norm(cut - uncut, axis=-1).max(axis=1)
    assert difference[:24].max() == 0.0  # identical before the cut
    assert difference[24:30].max() < 0.03  # carried over the cut with its shape
    # No whip: particles move relative to the root no faster than without the cut. (The two
    # runs part slowly afterwards: an undamped-enough driven chain is chaotic, and since the
    # exact-length projection no longer damps numerically, a centimetre apart at the cut grows.)
    def speed(shape):
        return np.linalg.norm(np.diff(shape, axis=0), axis=-1).max(axis=1) * fps

    assert speed(cut)[24:].max() < 1.5 * speed(uncut)[20:].max()


@pytest.mark.parametrize("rate", [120.0, 240.0])
def test_a_teleport_keyed_over_one_frame_is_a_cut(rig, rate):
    """The same 2 m jump keyed Linear from frame 23 to frame 24: read at 5 or 10 samples a
    frame, each sample interval moves 0.4 or 0.2 m, under the 1 m threshold, and the jump was
    no cut: it whipped the chain 0.9 m. The threshold is per frame, as the Cut Threshold
    tooltip says: a root moving more than 1 m in a frame is a cut at any sample rate."""
    fps, frames = 24.0, 49
    per_frame = int(rate / fps)
    chain = rig.vertical_chain(bones=6, length=0.1)

    def bake(jump: float) -> np.ndarray:
        def motion(t):
            ramp = np.clip((t - 23.0 / fps) * fps, 0.0, 1.0)  # over frame 23 -> 24
            x = 0.3 * np.sin(2 * np.pi * t) + jump * ramp
            return np.stack([x, 0 * t, 0 * t], -1)

        model, drive = rig.build([chain], frames=(frames - 1) * per_frame + 1, fps=rate,
                                 root_motion=motion, **ADDON_DEFAULTS)
        drive = core.Drive(fps=rate, reference=drive.reference, kinematic=drive.kinematic,
                           space=drive.space, collider_matrix=drive.collider_matrix,
                           params=drive.params, output_fps=fps, output_frames=frames)
        x = core.bake(model, drive).positions[:, 0]
        return x - x[:, :1]

    cut, uncut = bake(2.0), bake(0.0)
    difference = np.linalg.norm(cut - uncut, axis=-1).max(axis=1)
    assert difference[:23].max() == 0.0
    # Carried over the jump's frame with its root (0.65-0.82 m apart before): what is left is
    # the swing the chain sat out during that frame (the root moves 8 cm a frame).
    assert difference[23:30].max() < 0.2
