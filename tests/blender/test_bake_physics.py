"""Physics through the whole pipeline: rig built with bpy → bake_scene → keyframes played back.

Every number is read back from Blender (``frame_set`` + pose-bone world matrices), so these
tests fail if reading, sampling, the solver, the bone-frame conversion or the writer is wrong.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402

G = 9.81


def test_single_bone_pendulum_period_matches_the_exact_period(scene, bake_api):
    """Point-mass pendulum, L = 1 m, θ0 = 5°: T = 2π√(L/g)·1.00048 within 1 %."""
    amplitude = 5.0
    theta = math.radians(amplitude)
    direction = (math.sin(theta), 0.0, -math.cos(theta))
    ob = rigs.chain_rig(scene, count=1, length=1.0, direction=direction)
    rigs.calm(ob)
    scene.gravity = (0.0, 0.0, -G)
    scene.render.fps = 120
    scene.frame_start, scene.frame_end = 1, 601  # 5 s
    report = bake_api.bake_scene(scene, substep_rate=240)
    assert report.frames == 601

    frames = list(range(1, 602))
    points = rigs.world_points(scene, ob, ["Hair.000"], frames)
    swing = points[:, 1, 0] - points[:, 0, 0]  # tail x relative to the pivot
    assert swing[0] == np.float64(swing[0]) and swing[0] > 0.08  # starts ~5° out
    crossings = rigs.zero_crossing_times((np.array(frames) - 1) / 120.0, swing)
    assert len(crossings) >= 4
    period = 2.0 * (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    expected = rigs.pendulum_period(1.0, G, amplitude)
    assert abs(expected / (2 * math.pi * math.sqrt(1.0 / G)) - 1.00048) < 1e-5
    assert abs(period / expected - 1.0) < 0.01, (period, expected)


def _swinging_chain(scene, *, count=8, length=0.1, name="Rig", **chain):
    """A chain starting horizontal whose root swings ±0.3 m along X over 2 s (linear keys)."""
    ob = rigs.chain_rig(scene, name, count=count, length=length, direction=(1.0, 0.0, 0.0),
                        **chain)
    rigs.calm(ob, damping=0.5)
    scene.render.fps = 24
    scene.frame_start, scene.frame_end = 1, 49
    rigs.key_root_location(ob, [1, 7, 13, 19, 25, 31, 37, 43, 49],
                           lambda f: (0.3 * (-1) ** (f // 6), 0.0, 0.0))
    return ob


def test_hanging_chain_keeps_every_segment_length(scene, bake_api):
    """A hanging chain whose root an animator swings ±0.3 m (eased keys, 1 Hz): every simulated
    segment within 0.5 % of its bone, and Blender plays back the chain the solver computed."""
    ob = rigs.chain_rig(scene, count=8, length=0.1, direction=(0.0, 0.0, -1.0))
    rigs.calm(ob, damping=0.5)
    scene.render.fps = 24
    scene.frame_start, scene.frame_end = 1, 49
    rigs.key_root_location(ob, [1, 13, 25, 37, 49], lambda f: (0.3 * (-1) ** (f // 12), 0, 0),
                           interpolation="BEZIER")
    names = rigs.bone_names("Hair", 8)
    report = bake_api.bake_scene(scene)
    simulated = report.chain_positions["Rig: Hair.000"]  # (F, 9, 3)
    segments = np.linalg.norm(np.diff(simulated, axis=1), axis=-1)
    played = rigs.world_points(scene, ob, names, range(1, 50))
    # The chain really swings: the tip lags the root by centimetres ...
    assert np.max(np.abs(played[:, -1, 0] - played[:, 0, 0])) > 0.05
    assert np.max(np.abs(segments / 0.1 - 1.0)) < 0.005
    # ... and every baked bone tail sits where the solver put its particle.
    assert np.max(np.linalg.norm(played - simulated, axis=-1)) < 0.005 * 0.8


def test_roots_follow_their_animated_parent(scene, bake_api):
    """A chain offset from its animated parent: the baked head stays on the parent every frame."""
    ob = _swinging_chain(scene, offset=(0.05, 0.0, -0.05))
    names = rigs.bone_names("Hair", 8)
    before = rigs.world_points(scene, ob, names, range(1, 50))[:, 0]
    report = bake_api.bake_scene(scene)
    after = rigs.world_points(scene, ob, names, range(1, 50))[:, 0]
    assert np.ptp(before[:, 0]) > 0.5  # the parent really moves ±0.3 m
    assert np.max(np.abs(after - before)) < 1e-5
    assert np.max(np.abs(report.chain_positions["Rig: Hair.000"][:, 0] - before)) < 1e-5


def test_no_tail_ends_inside_a_sphere_collider(scene, bake_api):
    ob = rigs.chain_rig(scene, count=6, length=0.1, direction=(1.0, 0.0, 0.0))
    rigs.calm(ob, damping=1.0, radius=0.01)
    scene.render.fps = 24
    scene.frame_start, scene.frame_end = 1, 48
    # The chain falls from horizontal onto a ball below its middle.
    center, radius = np.array((0.35, 0.0, 1.75)), 0.12
    rigs.sphere_collider(scene, "Ball", center, radius)
    names = rigs.bone_names("Hair", 6)
    report = bake_api.bake_scene(scene)
    simulated = np.linalg.norm(report.chain_positions["Rig: Hair.000"] - center, axis=-1)
    assert simulated.min() > radius + 0.01 - 1e-4  # outside the ball by the particle radius
    assert np.any(simulated < radius + 0.01 + 1e-3)  # ... and the ball was really hit
    tails = rigs.world_points(scene, ob, names, range(1, 49))[:, 1:]
    assert np.linalg.norm(tails - center, axis=-1).min() > radius  # played back: outside too


def _bake_at_fps(scene, bake_api, fps: int) -> np.ndarray:
    """2 s of the same motion in seconds at ``fps``; tails at t = 0, 1/6, 2/6 … 2 s."""
    ob = rigs.chain_rig(scene, count=5, length=0.1, direction=(1.0, 0.0, -0.3))
    rigs.calm(ob, damping=1.0, drag=0.5, shape_stiffness=0.05)
    scene.render.fps = fps
    scene.frame_start, scene.frame_end = 1, 1 + 2 * fps
    key_times = np.arange(0.0, 2.01, 0.5)
    rigs.key_root_location(ob, [int(round(1 + t * fps)) for t in key_times],
                           lambda f: (0.3 * math.sin(math.pi * (f - 1) / fps), 0.0, 0.0))
    bake_api.bake_scene(scene, substep_rate=240)
    frames = [int(round(1 + k * fps / 6)) for k in range(13)]
    return rigs.world_points(scene, ob, rigs.bone_names("Hair", 5), frames)


def test_bakes_at_24_30_and_60_fps_agree_within_a_millimetre(scene, bake_api):
    results = {}
    for fps in (24, 30, 60):
        rigs.reset_scene(scene)
        results[fps] = _bake_at_fps(scene, bake_api, fps)
    assert np.ptp(results[24][:, -1, 0]) > 0.1  # the tip really moved
    for fps in (30, 60):
        assert np.max(np.abs(results[fps] - results[24])) < 1e-3, fps


def _baked_keys(ob) -> list[np.ndarray]:
    action = ob.animation_data.nla_tracks["Waft"].strips[0].action
    keys = []
    for fcurve in sorted(rigs.action_fcurves(action), key=lambda c: (c.data_path, c.array_index)):
        co = np.empty(2 * len(fcurve.keyframe_points), np.float32)
        fcurve.keyframe_points.foreach_get("co", co)
        keys.append(co)
    return keys


def test_two_bakes_are_bit_identical(scene, bake_api):
    ob = _swinging_chain(scene)
    ob.waft.wind_speed = 3.0  # seeded turbulence and gusts must be deterministic too
    bake_api.bake_scene(scene)
    first = _baked_keys(ob)
    bake_api.bake_scene(scene)
    second = _baked_keys(ob)
    assert len(first) == 8 * 4
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))
    assert any(np.ptp(a[1::2]) > 0.01 for a in first)  # the keys are not all constant


def test_euler_axis_angle_and_quaternion_bones_bake_the_same_motion(scene, bake_api):
    played = {}
    for mode in ("QUATERNION", "XYZ", "ZXY", "AXIS_ANGLE"):
        rigs.reset_scene(scene)
        ob = _swinging_chain(scene, rotation_mode=mode)
        bake_api.bake_scene(scene)
        played[mode] = rigs.world_points(scene, ob, rigs.bone_names("Hair", 8), range(1, 50))
        paths = {c.data_path.rsplit(".", 1)[1] for c in
                 rigs.action_fcurves(ob.animation_data.nla_tracks["Waft"].strips[0].action)}
        expected = {"QUATERNION": "rotation_quaternion", "AXIS_ANGLE": "rotation_axis_angle"}
        assert paths == {expected.get(mode, "rotation_euler")}
    assert np.ptp(played["QUATERNION"][:, -1, 2]) > 0.3
    for mode in ("XYZ", "ZXY", "AXIS_ANGLE"):
        assert np.max(np.abs(played[mode] - played["QUATERNION"])) < 1e-4, mode


def test_chain_under_a_constrained_parent_is_sampled_from_the_evaluated_pose(scene, bake_api):
    """The parent bone is turned only by a Damped Track constraint toward an animated empty."""
    ob = rigs.chain_rig(scene, count=4, length=0.1, direction=(0.0, 0.0, -1.0),
                        offset=(0.0, 0.0, -0.1))
    rigs.calm(ob, damping=2.0)
    scene.frame_start, scene.frame_end = 1, 30
    target = rigs.sphere_collider(scene, "Target", (1.0, 0.0, 2.0), 0.05)
    target.waft_collider.enabled = False
    for frame, x in ((1, 1.0), (30, -1.0)):
        target.location = (x, 0.0, 2.0)
        target.keyframe_insert("location", frame=frame)
    constraint = ob.pose.bones[rigs.ROOT].constraints.new('DAMPED_TRACK')
    constraint.target = target
    constraint.track_axis = 'TRACK_NEGATIVE_Y'
    names = rigs.bone_names("Hair", 4)
    heads = rigs.world_points(scene, ob, names, range(1, 31))[:, 0]
    assert np.ptp(heads[:, 0]) > 0.1  # the constraint really moves the chain's root
    report = bake_api.bake_scene(scene)
    simulated = report.chain_positions["Rig: Hair.000"]
    assert np.max(np.abs(simulated[:, 0] - heads)) < 1e-5
    played = rigs.world_points(scene, ob, names, range(1, 31))
    # Each baked bone points along its simulated segment (directions: immune to solver stretch).
    cosine = np.sum(_unit(np.diff(played, axis=1)) * _unit(np.diff(simulated, axis=1)), axis=-1)
    assert np.min(cosine) > math.cos(math.radians(0.5))


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _chain_in_units(scene, bake_api, units_per_metre: float) -> np.ndarray:
    """The same physical chain built in a scene whose Blender unit is 1/units_per_metre m."""
    scene.unit_settings.scale_length = 1.0 / units_per_metre
    scene.gravity = (0.0, 0.0, -G * units_per_metre)  # scene gravity is in Blender units/s²
    ob = rigs.chain_rig(scene, count=4, length=0.1, direction=(1.0, 0.0, -0.2))
    ob.scale = (units_per_metre,) * 3  # a character imported at ×100, as glTF often is
    rigs.calm(ob, damping=1.0, radius=0.01 * units_per_metre, shape_stiffness=0.05)
    scene.frame_start, scene.frame_end = 1, 24
    rigs.sphere_collider(scene, "Ball", np.array((0.2, 0.0, 1.85)) * units_per_metre,
                         0.06 * units_per_metre)
    bake_api.bake_scene(scene)
    points = rigs.world_points(scene, ob, rigs.bone_names("Hair", 4), range(1, 25))
    return points / units_per_metre


def test_a_centimetre_scene_behaves_like_a_metre_scene(scene, bake_api):
    metres = _chain_in_units(scene, bake_api, 1.0)
    rigs.reset_scene(scene)
    centimetres = _chain_in_units(scene, bake_api, 100.0)
    assert np.ptp(metres[:, -1, 2]) > 0.05  # it moved
    assert np.max(np.abs(centimetres - metres)) < 1e-4


def _fast_figure_eight_at_fps(scene, bake_api, fps: int, *, sample_rate: float | None = None
                              ) -> np.ndarray:
    """A chain whose root is keyed on a 1.5 Hz figure-eight peaking at 5 g (keys every 1/12 s
    in seconds, Bezier), baked at ``fps``; the tails at every whole second (0, 1, 2 s)."""
    ob = rigs.chain_rig(scene, count=4, length=0.1, direction=(0.0, 0.0, -1.0))
    rigs.calm(ob, damping=1.0)
    if sample_rate is not None:  # else the default
        scene.waft.sample_rate = sample_rate
    rigs.key_figure_eight(ob.pose.bones[rigs.ROOT], fps, peak_g=5.0, scene=scene)
    bake_api.bake_scene(scene, substep_rate=240)
    return rigs.world_points(scene, ob, rigs.bone_names("Hair", 4), [1, 1 + fps, 1 + 2 * fps])


def test_fast_motion_bakes_alike_at_24_25_30_50_and_60_fps(scene, bake_api):
    """Sub-frame sampling at the default rate: the animation is read at the same instants at
    every frame rate (once per frame with linear interpolation in between, the tips parted by
    tens of centimetres)."""
    def bake(fps, **kwargs):
        return _fast_figure_eight_at_fps(scene, bake_api, fps, **kwargs)

    results = rigs.bake_at_rates(scene, bake)
    assert np.ptp(results[24][:, -1]) > 0.05  # the tip moves
    for fps in (25, 30, 50, 60):
        assert rigs.largest_distance(results[fps], results[24]) < 1e-3, fps
    once_per_frame = rigs.bake_at_rates(scene, bake, (24, 60), sample_rate=0.0)
    assert rigs.largest_distance(once_per_frame[60], once_per_frame[24]) > 1e-2
