"""Read a character's spring bones from its .vrm / .glb / .gltf file (no bpy).

Two formats carry them (reference: the VRMC_springBone 1.0 specification and VRM 0.x's
``secondaryAnimation``):

- **VRM 1.0** ``extensions.VRMC_springBone``: ``springs[].joints[]`` (node, hitRadius,
  stiffness, gravityPower, gravityDir, dragForce), ``colliders[]`` (sphere or capsule, plus
  ``VRMC_springBone_extended_collider``'s plane and inside shapes), ``colliderGroups[]`` and an
  optional ``center`` node. The last joint of a spring is only the tail of the one before it.
- **VRM 0.x** ``extensions.VRM.secondaryAnimation``: ``boneGroups[]`` whose ``bones`` are chain
  roots (every descendant is a joint, a leaf gets a 7 cm virtual tail) with one set of settings
  (``stiffiness``, as the format spells it), and ``colliderGroups[]`` of spheres on a node, in
  Unity's left-handed axes (x mirrored against glTF).

Everything is returned in Blender's axes (glTF's +Y up becomes +Z, as Blender's glTF importer
converts it): directions, and collider points in world space at the file's rest pose, computed
from the node hierarchy, so they do not depend on how an importer orients bones.
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...core.errors import SetupError

VIRTUAL_TAIL = 0.07  # metres: VRM 0.x's tail for the last joint of a chain
_GLB_MAGIC, _JSON_CHUNK = 0x46546C67, 0x4E4F534A


@dataclass(frozen=True)
class JointSettings:
    stiffness: float
    gravity_power: float
    gravity_dir: tuple[float, float, float]  # Blender axes, as in the file (not normalised)
    drag_force: float
    hit_radius: float


@dataclass(frozen=True)
class Spring:
    name: str
    joints: tuple[str, ...]  # node names of the simulated joints, root first
    settings: tuple[JointSettings, ...]  # one per joint
    tail: str | None  # VRM 1.0: the last node, the last joint's tail; None: VRM 0.x's virtual tail
    collider_groups: tuple[int, ...]
    center: str | None
    tail_point: tuple[float, float, float] | None = None  # the tail node's world rest place


@dataclass(frozen=True)
class Collider:
    node: str
    shape: str  # "SPHERE", "CAPSULE" or "PLANE"
    head: tuple[float, float, float]  # world, Blender axes, rest pose: centre / capsule start
    tail: tuple[float, float, float]  # capsule end (== head otherwise)
    normal: tuple[float, float, float]  # plane normal, world
    radius: float
    inside: bool


@dataclass(frozen=True)
class SpringFile:
    version: str  # "1.0" or "0.x"
    springs: tuple[Spring, ...]
    colliders: tuple[Collider, ...]
    collider_groups: tuple[tuple[int, ...], ...]
    skipped: tuple[str, ...]  # what could not be carried over, in words


def read_gltf_json(path: Path) -> dict:
    """The glTF JSON of a .vrm/.glb (binary glTF: header, then the JSON chunk) or a .gltf."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SetupError(f"Cannot read '{path}': {error.strerror or error}") from error
    try:
        if len(data) >= 20 and struct.unpack_from("<I", data, 0)[0] == _GLB_MAGIC:
            length, kind = struct.unpack_from("<II", data, 12)
            if kind != _JSON_CHUNK:
                raise SetupError(f"'{path.name}': the first chunk of the binary glTF is not JSON")
            return json.loads(data[20:20 + length])
        return json.loads(data)
    except (ValueError, struct.error) as error:
        raise SetupError(f"'{path.name}' is not a glTF, GLB or VRM file ({error})") from error


def _to_blender(v) -> np.ndarray:
    """glTF (+Y up, +Z forward) to Blender (+Z up, -Y forward)."""
    x, y, z = (float(c) for c in v)
    return np.array((x, -z, y))


def to_gltf(v) -> np.ndarray:
    """Blender (+Z up) to glTF (+Y up): the inverse of ``_to_blender``."""
    x, y, z = (float(c) for c in v)
    return np.array((x, z, -y))


def _node_matrix(node: dict) -> np.ndarray:
    if "matrix" in node:
        return np.array(node["matrix"], dtype=np.float64).reshape(4, 4).T  # column-major
    x, y, z, w = node.get("rotation", (0.0, 0.0, 0.0, 1.0))
    rotation = np.array(
        [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    m = np.eye(4)
    m[:3, :3] = rotation * np.asarray(node.get("scale", (1.0, 1.0, 1.0)), dtype=np.float64)
    m[:3, 3] = node.get("translation", (0.0, 0.0, 0.0))
    return m


def world_matrices(nodes: list) -> list[np.ndarray]:
    """Each glTF node's world matrix at the file's rest pose (glTF axes)."""
    parent = {}
    for i, node in enumerate(nodes):
        for child in node.get("children", []):
            parent[child] = i
    world: dict[int, np.ndarray] = {}

    def of(i: int) -> np.ndarray:
        if i not in world:
            local = _node_matrix(nodes[i])
            world[i] = of(parent[i]) @ local if i in parent else local
        return world[i]

    return [of(i) for i in range(len(nodes))]


def _name(nodes: list, index) -> str:
    if not isinstance(index, int) or not 0 <= index < len(nodes):
        raise SetupError(f"the spring-bone data names node {index!r}, which is not in the file")
    return str(nodes[index].get("name") or f"node_{index}")


def _point(world: np.ndarray, local) -> tuple[float, float, float]:
    p = world @ np.append(np.asarray(local, dtype=np.float64), 1.0)
    return tuple(_to_blender(p[:3]))


def _settings_1(joint: dict) -> JointSettings:
    return JointSettings(
        stiffness=float(joint.get("stiffness", 1.0)),
        gravity_power=float(joint.get("gravityPower", 0.0)),
        gravity_dir=tuple(_to_blender(joint.get("gravityDir", (0.0, -1.0, 0.0)))),
        drag_force=float(joint.get("dragForce", 0.5)),
        hit_radius=float(joint.get("hitRadius", 0.0)))


def _read_1(gltf: dict) -> SpringFile:
    nodes, world = gltf.get("nodes", []), world_matrices(gltf.get("nodes", []))
    ext = gltf["extensions"]["VRMC_springBone"]
    skipped = []
    colliders = []
    for i, c in enumerate(ext.get("colliders", [])):
        node = c.get("node")
        m = world[node] if isinstance(node, int) and 0 <= node < len(world) else None
        name = _name(nodes, node)
        shape = c.get("shape", {})
        extended = c.get("extensions", {}).get("VRMC_springBone_extended_collider", {}).get(
            "shape")
        if extended:
            shape = extended
        if "sphere" in shape or "capsule" in shape:
            kind = "sphere" if "sphere" in shape else "capsule"
            data = shape[kind]
            head = _point(m, data.get("offset", (0.0, 0.0, 0.0)))
            tail = _point(m, data.get("tail", data.get("offset", (0.0, 0.0, 0.0))))
            colliders.append(Collider(node=name, shape=kind.upper(), head=head, tail=tail,
                                      normal=(0.0, 0.0, 1.0), radius=float(data.get("radius", 0)),
                                      inside=bool(data.get("inside", False))))
        elif "plane" in shape:
            data = shape["plane"]
            head = _point(m, data.get("offset", (0.0, 0.0, 0.0)))
            normal = np.linalg.inv(m[:3, :3]).T @ np.asarray(data.get("normal", (0, 0, 1)), float)
            normal = _to_blender(normal / max(np.linalg.norm(normal), 1e-12))
            colliders.append(Collider(node=name, shape="PLANE", head=head, tail=head,
                                      normal=tuple(normal), radius=0.0, inside=False))
        else:
            skipped.append(f"collider {i} on '{name}' (unknown shape {sorted(shape)})")
            colliders.append(None)
    springs = []
    for i, s in enumerate(ext.get("springs", [])):
        joints = s.get("joints", [])
        name = s.get("name") or f"spring {i}"
        if len(joints) < 2:
            skipped.append(f"spring '{name}' (fewer than two joints: nothing to move)")
            continue
        springs.append(Spring(
            name=name, joints=tuple(_name(nodes, j.get("node")) for j in joints[:-1]),
            settings=tuple(_settings_1(j) for j in joints[:-1]),
            tail=_name(nodes, joints[-1].get("node")),
            tail_point=_point(world[joints[-1]["node"]], (0.0, 0.0, 0.0)),
            collider_groups=tuple(int(g) for g in s.get("colliderGroups", [])),
            center=_name(nodes, s["center"]) if "center" in s else None))
    groups = tuple(tuple(int(c) for c in g.get("colliders", []))
                   for g in ext.get("colliderGroups", []))
    return SpringFile(version="1.0", springs=tuple(springs), colliders=tuple(colliders),
                      collider_groups=groups, skipped=tuple(skipped))


def _unity_to_gltf(v: dict) -> tuple[float, float, float]:
    """VRM 0.x vectors are in Unity's left-handed axes: x is mirrored against glTF."""
    return (-float(v.get("x", 0.0)), float(v.get("y", 0.0)), float(v.get("z", 0.0)))


def _read_0(gltf: dict) -> SpringFile:
    nodes, world = gltf.get("nodes", []), world_matrices(gltf.get("nodes", []))
    secondary = gltf["extensions"]["VRM"].get("secondaryAnimation", {})
    skipped = []
    colliders, groups = [], []
    for group in secondary.get("colliderGroups", []):
        node = group.get("node")
        name = _name(nodes, node)
        indices = []
        for c in group.get("colliders", []):
            point = _point(world[node], _unity_to_gltf(c.get("offset", {})))
            indices.append(len(colliders))
            colliders.append(Collider(node=name, shape="SPHERE", head=point, tail=point,
                                      normal=(0.0, 0.0, 1.0), radius=float(c.get("radius", 0.0)),
                                      inside=False))
        groups.append(tuple(indices))
    springs = []
    for g, group in enumerate(secondary.get("boneGroups", [])):
        settings = JointSettings(
            stiffness=float(group.get("stiffiness", group.get("stiffness", 1.0))),
            gravity_power=float(group.get("gravityPower", 0.0)),
            gravity_dir=tuple(_to_blender(_unity_to_gltf(group.get("gravityDir", {"y": -1})))),
            drag_force=float(group.get("dragForce", 0.5)),
            hit_radius=float(group.get("hitRadius", 0.0)))
        center = group.get("center", -1)
        for root in group.get("bones", []):
            chain, node = [], root
            while True:  # every descendant is a joint; Waft chains do not branch
                chain.append(_name(nodes, node))
                children = nodes[node].get("children", [])
                if len(children) > 1:
                    skipped.append(f"the branches of '{chain[-1]}' after its first child "
                                   f"('{_name(nodes, children[0])}'): a Waft chain does not "
                                   "branch")
                if not children:
                    break
                node = children[0]
            springs.append(Spring(
                name=f"{group.get('comment') or f'group {g}'}: {chain[0]}", joints=tuple(chain),
                settings=(settings,) * len(chain), tail=None,
                collider_groups=tuple(int(i) for i in group.get("colliderGroups", [])),
                center=_name(nodes, center) if isinstance(center, int) and center >= 0
                else None))
    return SpringFile(version="0.x", springs=tuple(springs), colliders=tuple(colliders),
                      collider_groups=tuple(groups), skipped=tuple(skipped))


def read_springs(gltf: dict, *, source: str = "the file") -> SpringFile:
    """The spring bones of a glTF JSON (VRM 1.0 first, then VRM 0.x)."""
    ext = gltf.get("extensions", {})
    if "VRMC_springBone" in ext:
        return _read_1(gltf)
    if "secondaryAnimation" in ext.get("VRM", {}):
        return _read_0(gltf)
    raise SetupError(f"{source} has no VRM spring bones (neither VRMC_springBone nor VRM 0.x "
                     "secondaryAnimation)")


def most_common(values):
    """The value most joints use (ties: the first seen), for the setup-wide settings."""
    return Counter(values).most_common(1)[0][0]
