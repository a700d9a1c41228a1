"""VRM-compatible mode against the VRMC_springBone 1.0 reference algorithm.

The numbered vectors were worked out by hand from the specification's pseudocode (one joint
under gravity, the stiffness return, two joints whose child follows its parent's new rotation,
each collider kind); the three-vrm example fixtures are then run through the vectorised solver
and through a literal one-joint-at-a-time transcription of the pseudocode on glTF nodes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from waft.core.colliders import ColliderKind, ColliderSet
from waft.core.errors import SetupError
from waft.core.strands.vrm_spring import VrmChains, VrmJointParams, simulate_vrm_springs

# MIT, pixiv Inc.: see the folder's LICENSE and SOURCE.md.
FIXTURES = Path(__file__).resolve().parents[1] / "data" / "three_vrm_springbone_fixtures"


def translation(x, y, z) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = (x, y, z)
    return m


def rotation(angle: float, axis: str = "z") -> np.ndarray:
    """A 4 x 4 turn by `angle` about the world axis "x", "y" or "z"."""
    i, j = {"x": (1, 2), "y": (2, 0), "z": (0, 1)}[axis]
    m = np.eye(4)
    c, s = math.cos(angle), math.sin(angle)
    m[[i, i, j, j], [i, j, i, j]] = (c, -s, s, c)
    return m


def rotation_z(angle: float) -> np.ndarray:
    return rotation(angle, "z")


def params(joints: int, frames: int = 1, *, stiffness=0.0, gravity_power=0.0,
           gravity_dir=(0.0, -1.0, 0.0), drag_force=1.0, hit_radius=0.0) -> VrmJointParams:
    def column(value):
        return np.broadcast_to(np.asarray(value, dtype=np.float64), (frames, 1, joints)).copy()
    direction = np.broadcast_to(np.asarray(gravity_dir, dtype=np.float64),
                                (frames, 1, joints, 3)).copy()
    return VrmJointParams(stiffness=column(stiffness), gravity_power=column(gravity_power),
                          gravity_dir=direction, drag_force=column(drag_force),
                          hit_radius=column(hit_radius))


def one_chain(locals_, children) -> VrmChains:
    return VrmChains(local_matrix=np.array(locals_)[None], child_position=np.array(children)[None],
                     count=np.array([len(children)]), names=("test",))


def still_parent(frames: int) -> np.ndarray:
    return np.broadcast_to(np.eye(4), (frames, 1, 4, 4)).copy()


def test_one_joint_under_gravity_matches_the_hand_derived_tails():
    # Head at the origin, tail 1 m along +X; gravity power 1 down at 60 fps, drag 0.4.
    result = simulate_vrm_springs(
        chains=one_chain([np.eye(4)], [(1.0, 0.0, 0.0)]), parent_matrix=still_parent(4),
        params=params(1, gravity_power=1.0, drag_force=0.4), fps=60.0)
    expected = [(1.0, 0.0), (0.99986114, -0.01666435), (0.99906218, -0.04329861),
                (0.99712041, -0.07583462)]
    np.testing.assert_allclose(result.tail[:, 0, 0, :2], expected, atol=1e-4)
    np.testing.assert_allclose(result.tail[:, 0, 0, 2], 0.0, atol=1e-12)


def test_stiffness_returns_the_tail_toward_the_rotated_rest_direction():
    # The parent turns 90° about Z after frame 0, so the rest direction becomes -X; with drag 1
    # there is no inertia and each frame moves the tail dt * stiffness = 0.1 toward it.
    parent = still_parent(3)
    parent[1:, 0] = rotation_z(math.pi / 2)
    result = simulate_vrm_springs(
        chains=one_chain([np.eye(4)], [(0.0, 1.0, 0.0)]), parent_matrix=parent,
        params=params(1, stiffness=3.0), fps=30.0)
    np.testing.assert_allclose(result.tail[:, 0, 0, :2],
                               [(0.0, 1.0), (-0.09950372, 0.99503719), (-0.19658633, 0.98048652)],
                               atol=1e-4)
    # The joint's own +Y (its bone axis here) points at the tail.
    np.testing.assert_allclose(result.world_matrix[2, 0, 0, :3, 1], result.tail[2, 0, 0],
                               atol=1e-12)


def test_second_joint_feels_its_parents_new_rotation_in_the_same_frame():
    # An L-shaped chain: joint 0 up to (0, 1, 0), joint 1 there pointing +X. A sideways gravity
    # on joint 0 only (power 6 at 60 fps = 0.1 m) swings it; joint 1's stiffness then pulls along
    # joint 0's *new* X axis.
    p = params(2, stiffness=(0.0, 6.0), gravity_power=(6.0, 0.0), gravity_dir=(1.0, 0.0, 0.0))
    result = simulate_vrm_springs(
        chains=one_chain([np.eye(4), translation(0.0, 1.0, 0.0)],
                         [(0.0, 1.0, 0.0), (1.0, 0.0, 0.0)]),
        parent_matrix=still_parent(2), params=p, fps=60.0)
    np.testing.assert_allclose(result.tail[1, 0, 0, :2], (0.09950372, 0.99503719), atol=1e-4)
    np.testing.assert_allclose(result.tail[1, 0, 1, :2], (1.09949128, 0.99004969), atol=1e-4)
    head1 = result.world_matrix[1, 0, 1, :3, 3]
    np.testing.assert_allclose(head1, result.tail[1, 0, 0], atol=1e-12)


def _pushed_by(kind, matrix, *, size, radius_a=0.0, radius_b=0.0, hit_radius, inside=False,
               push=6.0):
    """One joint up +Y (length 1); gravity along +X moves it 0.1 m in one frame (60 fps) before
    the collider acts; drag 1 and stiffness 0 leave nothing else."""
    colliders = ColliderSet.create(names=["c"], kind=[kind], size=[size], radius_a=[radius_a],
                                   radius_b=[radius_b])
    result = simulate_vrm_springs(
        chains=one_chain([np.eye(4)], [(0.0, 1.0, 0.0)]), parent_matrix=still_parent(2),
        params=params(1, gravity_power=push, gravity_dir=(1.0, 0.0, 0.0), hit_radius=hit_radius),
        fps=60.0, colliders=colliders, collider_matrix=np.broadcast_to(matrix, (2, 1, 4, 4)),
        inside=np.array([inside]))
    return result.tail[1, 0, 0]


def test_sphere_collider_pushes_out_then_restores_the_length():
    tail = _pushed_by(ColliderKind.ELLIPSOID, translation(0.3, 1.0, 0.0), size=0.2,
                      hit_radius=0.05)
    np.testing.assert_allclose(tail[:2], (0.05032442, 0.99873292), atol=1e-4)


def test_capsule_collider_uses_the_closest_point_on_its_segment():
    # Segment (0.3, 0.8) – (0.3, 1.4), radius 0.2: Waft capsules run along local Z.
    m = np.eye(4)
    m[:3, :3] = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    m[:3, 3] = (0.3, 1.1, 0.0)
    tail = _pushed_by(ColliderKind.CAPSULE, m, size=0.3, radius_a=0.2, radius_b=0.2,
                      hit_radius=0.05)
    np.testing.assert_allclose(tail[:2], (0.05018606, 0.99873989), atol=1e-4)


def test_plane_collider_is_vrms_extended_plane():
    # Plane x = 0.05 facing -X (Waft planes face local +Z), hit radius 0.02.
    m = np.eye(4)
    m[:3, :3] = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    m[:3, 3] = (0.05, 0.0, 0.0)
    tail = _pushed_by(ColliderKind.PLANE, m, size=1.0, hit_radius=0.02)
    np.testing.assert_allclose(tail[:2], (0.03013593, 0.99954581), atol=1e-4)


def test_inside_sphere_keeps_the_tail_within_its_radius():
    # Inside sphere at (0.3, 0.5), radius 0.45, hit radius 0.05; the tail starts outside it.
    tail = _pushed_by(ColliderKind.ELLIPSOID, translation(0.3, 0.5, 0.0), size=0.45,
                      hit_radius=0.05, inside=True, push=0.0)
    np.testing.assert_allclose(tail[:2], (0.11105493, 0.99381427), atol=1e-4)


def test_centre_space_motion_is_not_inertia():
    # The whole character (parent and centre) slides at constant speed: in world space the tail
    # would lag behind; in the centre's space it stays at rest, exactly.
    frames = 5
    parent = np.stack([translation(0.5 * f, 0.0, 0.0) for f in range(frames)])[:, None]
    chain = one_chain([np.eye(4)], [(0.0, -1.0, 0.0)])
    p = params(1, stiffness=1.0, drag_force=0.4)
    centred = simulate_vrm_springs(chains=chain, parent_matrix=parent, params=p, fps=30.0,
                                   center_matrix=parent.copy())
    np.testing.assert_allclose(centred.tail[:, 0, 0] - parent[:, 0, :3, 3],
                               np.broadcast_to((0.0, -1.0, 0.0), (frames, 3)), atol=1e-12)
    free = simulate_vrm_springs(chains=chain, parent_matrix=parent, params=p, fps=30.0)
    assert free.tail[2, 0, 0, 0] - parent[2, 0, 0, 3] < -0.1  # left behind


def test_bad_parameters_name_the_spring_and_joint():
    p = params(1, drag_force=1.5)
    with pytest.raises(SetupError, match="'test', joint 0: drag_force 1.5"):
        simulate_vrm_springs(chains=one_chain([np.eye(4)], [(0.0, 1.0, 0.0)]),
                             parent_matrix=still_parent(2), params=p, fps=30.0)
    with pytest.raises(SetupError, match="zero-length"):
        simulate_vrm_springs(chains=one_chain([np.eye(4)], [(0.0, 0.0, 0.0)]),
                             parent_matrix=still_parent(2), params=params(1), fps=30.0)


# --- the three-vrm example fixtures --------------------------------------------------------


def _quat_matrix(x, y, z, w) -> np.ndarray:
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _node_matrix(node) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = _quat_matrix(*node.get("rotation", (0, 0, 0, 1))) * np.asarray(
        node.get("scale", (1, 1, 1)))
    m[:3, 3] = node.get("translation", (0, 0, 0))
    return m


def _fixture(name: str):
    gltf = json.loads((FIXTURES / name).read_text())
    spring_ext = gltf["extensions"]["VRMC_springBone"]
    nodes = gltf["nodes"]
    joints = spring_ext["springs"][0]["joints"]
    collider = spring_ext["colliders"][0]
    shape = collider.get("extensions", {}).get("VRMC_springBone_extended_collider", {}).get(
        "shape") or collider["shape"]
    return nodes, joints, collider["node"], shape


def _literal_reference(nodes, joints, shape, collider_world, root_world, fps):
    """The pseudocode transcribed one joint at a time on glTF node matrices (three-vrm's order):
    tails in world space, joints root to tip, each collider pushes then re-constrains."""
    dt = 1.0 / fps
    local = [_node_matrix(nodes[j["node"]]) for j in joints]
    child_local = [local[i + 1][:3, 3] for i in range(len(joints) - 1)]
    axis = [c / np.linalg.norm(c) for c in child_local]
    n = len(joints) - 1
    current = prev = None
    out = []
    for f, root in enumerate(root_world):
        parent = root
        tails = []
        for i in range(n):
            initial = parent @ local[i]
            head = initial[:3, 3]
            rest_tail = (initial @ np.append(child_local[i], 1.0))[:3]
            length = np.linalg.norm(rest_tail - head)
            if f == 0:
                nxt = rest_tail
            else:
                j = joints[i]
                r = initial[:3, :3] @ axis[i]
                r = r / np.linalg.norm(r)
                g = np.asarray(j["gravityDir"], dtype=float)
                nxt = (current[i] + (current[i] - prev[i]) * (1 - j["dragForce"])
                       + r * j["stiffness"] * dt + g * j["gravityPower"] * dt)
                nxt = head + (nxt - head) / np.linalg.norm(nxt - head) * length
                m = collider_world[f]
                c = m[:3, 3]
                if "plane" in shape:
                    normal = m[:3, :3] @ np.asarray(shape["plane"]["normal"], dtype=float)
                    normal /= np.linalg.norm(normal)
                    distance = float((nxt - c) @ normal) - j["hitRadius"]
                    direction = normal
                else:
                    delta = nxt - c
                    radius = shape["sphere"]["radius"]
                    if shape["sphere"].get("inside"):
                        distance = radius - j["hitRadius"] - np.linalg.norm(delta)
                        direction = -delta / np.linalg.norm(delta)
                    else:
                        distance = np.linalg.norm(delta) - radius - j["hitRadius"]
                        direction = delta / np.linalg.norm(delta)
                if distance < 0:
                    nxt = nxt - direction * distance
                    nxt = head + (nxt - head) / np.linalg.norm(nxt - head) * length
            to = np.linalg.solve(initial, np.append(nxt, 1.0))[:3]
            to /= np.linalg.norm(to)
            a, b = axis[i], to
            v, c = np.cross(a, b), float(a @ b)
            vx = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
            swing = np.eye(4)
            swing[:3, :3] = np.eye(3) + vx + vx @ vx / (1 + c)
            parent = initial @ swing
            tails.append(nxt)
        prev = current if f else np.array(tails)
        current = np.array(tails)
        out.append(current)
    return np.array(out)


def _run_fixture(name: str, frames: int, fps: float, root_world, collider_world):
    nodes, joints, collider_node, shape = _fixture(name)
    n = len(joints) - 1
    local = np.array([_node_matrix(nodes[j["node"]]) for j in joints[:n]])
    child = np.array([_node_matrix(nodes[j["node"]])[:3, 3] for j in joints[1:]])
    chains = VrmChains(local_matrix=local[None], child_position=child[None], count=np.array([n]))

    def per_joint(key):
        return np.array([[[j[key] for j in joints[:n]]]], dtype=np.float64)

    p = VrmJointParams(stiffness=per_joint("stiffness"), gravity_power=per_joint("gravityPower"),
                       gravity_dir=np.array([[[j["gravityDir"] for j in joints[:n]]]], dtype=float),
                       drag_force=per_joint("dragForce"), hit_radius=per_joint("hitRadius"))
    if "plane" in shape:
        # Waft planes face local +Z; the fixture's normal is +Z already.
        colliders = ColliderSet.create(names=["plane"], kind=[ColliderKind.PLANE], size=[1.0])
        inside = False
    else:
        colliders = ColliderSet.create(names=["sphere"], kind=[ColliderKind.ELLIPSOID],
                                       size=[shape["sphere"]["radius"]])
        inside = bool(shape["sphere"].get("inside", False))
    # VRM sphere radii are not scaled by the collider node (three-vrm); a Waft sphere is, so
    # the node's scale stays out of the Waft collider's matrix.
    unscaled = collider_world.copy()
    unscaled[:, :3, :3] /= np.linalg.norm(unscaled[:, :3, :3], axis=1, keepdims=True)
    result = simulate_vrm_springs(chains=chains, parent_matrix=root_world[:, None], params=p,
                                  fps=fps, colliders=colliders,
                                  collider_matrix=unscaled[:, None],
                                  inside=np.array([inside]))
    reference = _literal_reference(nodes, joints, shape, collider_world, root_world, fps)
    return result, reference, collider_node


def _swinging_root(frames: int, fps: float) -> np.ndarray:
    t = np.arange(frames) / fps
    return np.stack([translation(0.6 * math.sin(2 * math.pi * 0.8 * ti), 0.0,
                                 0.3 * math.sin(2 * math.pi * 0.5 * ti)) for ti in t])


@pytest.mark.parametrize("name", ["sphere-collider.gltf", "plane-collider.gltf",
                                  "inside-collider.gltf"])
def test_three_vrm_fixtures_follow_the_reference_algorithm(name):
    frames, fps = 120, 60.0
    nodes, _joints, collider_node, _shape = _fixture(name)
    root = _swinging_root(frames, fps)
    collider = np.broadcast_to(_node_matrix(nodes[collider_node]), (frames, 4, 4)).copy()
    result, reference, _ = _run_fixture(name, frames, fps, root, collider)
    np.testing.assert_allclose(result.tail[:, 0], reference, atol=1e-9)
    # Segment lengths are the rest lengths (0.5 m: the first node is scaled by 0.25).
    heads = np.concatenate((result.head[:, 0, None], result.tail[:, 0, :-1]), axis=1)
    np.testing.assert_allclose(np.linalg.norm(result.tail[:, 0] - heads, axis=-1), 0.5, atol=1e-9)
    assert np.all(np.isfinite(result.world_matrix))


def test_three_vrm_plane_fixture_holds_the_chain_on_the_planes_side():
    # The fixture's plane is x = -0.25 facing +X, hit radius 0.25: the root moves to x = -0.3,
    # where a free chain hangs; VRM pushes every tail to x >= 0 but for what restoring the
    # length gives back (a few mm).
    frames, fps = 120, 60.0
    nodes, _j, collider_node, _s = _fixture("plane-collider.gltf")
    root = np.stack([translation(-0.3 * min(1.0, f / 30), 0.0, 0.0) for f in range(frames)])
    collider = np.broadcast_to(_node_matrix(nodes[collider_node]), (frames, 4, 4)).copy()
    held, _, _ = _run_fixture("plane-collider.gltf", frames, fps, root, collider)
    far = np.broadcast_to(translation(100.0, 0.0, 0.0), (frames, 4, 4)).copy()
    free, _, _ = _run_fixture("sphere-collider.gltf", frames, fps, root, far)
    assert held.tail[:, 0, :, 0].min() > -0.01
    assert free.tail[-1, 0, :, 0].max() < -0.25


def test_three_vrm_inside_fixture_holds_the_chain_back_in_its_sphere():
    # The root moves 0.3 m sideways and down while the inside sphere (radius 1.25, hit radius
    # 0.25) stays. A free chain's tip hangs 1.32 m from the centre; the inside collider pulls it
    # back toward the 1 m the tails may reach. Only back toward: VRM restores the bone length
    # after each push, and for a tip hanging almost radially that gives most of it back, so the
    # held tip still ends near 1.11 m (the algorithm's behaviour, which this mode reproduces).
    frames, fps = 120, 60.0
    nodes, _j, collider_node, _s = _fixture("inside-collider.gltf")
    root = np.stack([translation(0.3 * min(1.0, f / 30), -0.3 * min(1.0, f / 30), 0.0)
                     for f in range(frames)])
    collider_matrix = _node_matrix(nodes[collider_node])
    collider = np.broadcast_to(collider_matrix, (frames, 4, 4)).copy()
    far = np.broadcast_to(translation(100.0, 0.0, 0.0), (frames, 4, 4)).copy()
    free, _, _ = _run_fixture("sphere-collider.gltf", frames, fps, root, far)
    held, _, _ = _run_fixture("inside-collider.gltf", frames, fps, root, collider)
    centre = collider_matrix[:3, 3]
    free_tip = np.linalg.norm(free.tail[:, 0, -1] - centre, axis=-1).max()
    held_tip = np.linalg.norm(held.tail[:, 0, -1] - centre, axis=-1).max()
    assert free_tip > 1.3
    assert held_tip < free_tip - 0.15
