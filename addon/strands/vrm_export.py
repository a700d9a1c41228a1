"""Waft chain setups as VRM 1.0 spring bones (``VRMC_springBone``) in an exported glTF.

Called from the glTF exporter's user-extension hook (``addon/gltf_hooks.py``) with the nodes
the exporter wrote: each bone is a node of the same name under its armature's node, at the rest
pose, so every place is computed from the file's own node matrices (world rest place of a
collider or tail in Blender, to glTF axes, into the node's local space): whatever axes the
exporter gives the joints, a VRM runtime finds the shapes where Waft had them.

Settings (docs/vrm.md has the table):
- Setups on the VRM Spring Bone solver carry their settings as they are (stiffness, gravity
  power and direction, drag force, Radius as the hit radius, the bone overrides, the Space Bone
  as the centre): the VRM solver is that algorithm, so the runtime plays what Waft baked.
- Setups on Waft's solver get the closest VRM values at 60 fps (VRM steps once per frame):
  VRM's stiffness moves the tail ``stiffness·Δt`` toward the rest direction each frame, which
  closes ``stiffness·Δt/L`` of the angle, so Shape Stiffness s (fraction closed per 1/60 s, with
  its root-to-tip Shape Decay) gives ``stiffness = s·L·60``; Damping d and Drag a (per second)
  lose ``1 − exp(−(d + a)/60)`` of the motion per frame (VRM's drag force); gravity: the sag
  where the stiffness pull balances it matches when ``gravityPower = |g|·Gravity/60``. Bending,
  tethers, max distance, wind, voxel friction and collisions between strands have no VRM
  counterpart and are left out (listed in the exporter's log).
- Colliders: every Waft collider a chain collides with that is parented to a bone of the
  armature: spheres, capsules (a tapered capsule with its larger radius), planes (as the
  ``VRMC_springBone_extended_collider`` plane with a far-away sphere as the fallback the
  extension asks for). Boxes have no VRM shape. One collider group per distinct set of
  colliders a chain uses.
- VRM joints are nodes: the last bone's tail becomes the tail joint, a child bone that starts
  there, or else a new leaf node ``<bone>_end`` (as VRM exporters add).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ...core.colliders import ColliderKind
from ...core.errors import SetupError
from ..reading import collider_kind, enabled_colliders, setup_collider_objects
from .reading import chain_bone_runs
from .vrm_file import to_gltf, world_matrices

EXTENSION = "VRMC_springBone"
EXTENDED_COLLIDER = "VRMC_springBone_extended_collider"
REFERENCE_FPS = 60.0  # VRM runtimes step once per frame; Waft's settings map at this rate
PLANE_FALLBACK_RADIUS = 100.0  # metres: the sphere standing in for a plane where it is unknown


@dataclass
class SpringBoneData:
    """What the exporter adds: the extension's JSON, leaf nodes and what was left out."""

    colliders: list = field(default_factory=list)
    collider_groups: list = field(default_factory=list)
    springs: list = field(default_factory=list)
    new_nodes: list = field(default_factory=list)  # (parent index, name, translation)
    skipped: list = field(default_factory=list)
    uses_extended: bool = False

    def extension(self) -> dict:
        out = {"specVersion": "1.0", "springs": self.springs}
        if self.colliders:
            out["colliders"] = self.colliders
            out["colliderGroups"] = self.collider_groups
        return out


def _matrix(m) -> np.ndarray:
    return np.array([list(row) for row in m], dtype=np.float64)


def _scale(m: np.ndarray) -> float:
    return float(np.mean(np.linalg.norm(m[:3, :3], axis=0)))


def _local_point(world: np.ndarray, point_blender) -> list[float]:
    p = np.linalg.inv(world) @ np.append(to_gltf(point_blender), 1.0)
    return [float(v) for v in p[:3]]


def _bone_nodes(rig, nodes: list[dict]) -> dict[str, int]:
    """Bone name → node index: the nodes under the armature's node (by object name), else any
    node of that name (an exporter that drops the armature node)."""
    by_name = {}
    roots = [i for i, n in enumerate(nodes) if n.get("name") == rig.name]
    stack = list(roots)
    while stack:
        i = stack.pop()
        for child in nodes[i].get("children", []):
            by_name.setdefault(nodes[child].get("name"), child)
            stack.append(child)
    if not roots:
        for i, n in enumerate(nodes):
            by_name.setdefault(n.get("name"), i)
    return {b.name: by_name[b.name] for b in rig.data.bones if b.name in by_name}


class _Writer:
    def __init__(self, rig, scene, nodes: list[dict], data: SpringBoneData):
        self.rig, self.scene, self.data = rig, scene, data
        self.nodes = nodes
        self.world = world_matrices(nodes)
        self.bone_node = _bone_nodes(rig, nodes)
        self.rig_world = _matrix(rig.matrix_world)
        self.scale = _scale(self.rig_world)
        self.collider_index: dict[str, int] = {}
        self.group_index: dict[tuple, int] = {}

    # Joints --------------------------------------------------------------------------------
    def _joint_settings(self, pose_bone, b: int) -> dict:
        setup, own = self.rig.waft, pose_bone.waft
        source = own if own.use_overrides else setup
        if setup.solver == 'VRM':
            direction = np.asarray(setup.vrm_gravity_dir, dtype=np.float64)
            norm = np.linalg.norm(direction)
            direction = to_gltf(direction / norm) if norm > 0 else np.array((0.0, -1.0, 0.0))
            return {"stiffness": float(source.vrm_stiffness),
                    "gravityPower": float(source.vrm_gravity_power),
                    "gravityDir": [float(v) for v in direction],
                    "dragForce": float(source.vrm_drag_force),
                    "hitRadius": float(source.radius) / self.scale}
        shape = float(source.shape_stiffness) ** (1.0 + float(setup.shape_decay) * b)
        length = pose_bone.bone.length * self.scale
        gravity = np.asarray(self.scene.gravity, dtype=np.float64)
        if not self.scene.use_gravity:
            gravity = np.zeros(3)
        g = float(np.linalg.norm(gravity))
        direction = to_gltf(gravity / g) if g > 0 else np.array((0.0, -1.0, 0.0))
        per_second = float(source.damping) + float(setup.drag)
        return {"stiffness": 0.0 if own.pinned else shape * length * REFERENCE_FPS,
                "gravityPower": g * float(setup.gravity_factor) / REFERENCE_FPS,
                "gravityDir": [float(v) for v in direction],
                "dragForce": 1.0 - math.exp(-per_second / REFERENCE_FPS),
                "hitRadius": float(source.radius) / self.scale}

    def _tail_node(self, last) -> int:
        """The tail joint of the chain ending in pose bone ``last``: a child bone whose head is
        its tail, else a new leaf node at its tail."""
        bone = last.bone
        for child in bone.children:
            if (child.head_local - bone.tail_local).length <= 1e-5 * max(bone.length, 1.0) \
                    and child.name in self.bone_node:
                return self.bone_node[child.name]
        parent = self.bone_node[bone.name]
        tail_world = self.rig_world @ np.append(np.asarray(bone.tail_local), 1.0)
        translation = _local_point(self.world[parent], tail_world[:3])
        index = len(self.nodes)
        name = f"{bone.name}_end"
        self.nodes.append({"name": name, "translation": translation})
        self.nodes[parent].setdefault("children", []).append(index)
        self.world.append(self.world[parent] @ _translation(translation))
        self.data.new_nodes.append((parent, name, translation))
        return index

    def spring(self, run) -> None:
        rig = self.rig
        missing = [pb.name for pb in run if pb.name not in self.bone_node]
        if missing:
            self.data.skipped.append(f"'{rig.name}': chain of '{run[0].name}' (bone "
                                     f"'{missing[0]}' is not in the exported file)")
            return
        for pb in run:
            if pb.waft.pinned:
                self.data.skipped.append(f"'{rig.name}', bone '{pb.name}': Pinned (VRM has no "
                                         "pinned joints; exported with no stiffness)")
        joints = [{"node": self.bone_node[pb.name], **self._joint_settings(pb, b)}
                  for b, pb in enumerate(run)]
        joints.append({"node": self._tail_node(run[-1])})
        spring = {"name": f"{rig.name}: {run[0].name}", "joints": joints}
        groups = self._groups(run[0])
        if groups is not None:
            spring["colliderGroups"] = [groups]
        space = rig.waft.space_bone
        if space and space in self.bone_node:
            spring["center"] = self.bone_node[space]
        self.data.springs.append(spring)

    # Colliders -----------------------------------------------------------------------------
    def _groups(self, first):
        """The collider group index of the chain starting at ``first`` (None: collides with
        nothing exportable)."""
        collection = first.waft.collider_collection
        try:
            objects = (enabled_colliders(None, collection) if collection is not None
                       else setup_collider_objects(self.scene, self.rig))
        except SetupError as error:
            self.data.skipped.append(str(error))
            return None
        indices = tuple(sorted({i for i in (self._collider(ob) for ob in objects)
                                if i is not None}))
        if not indices:
            return None
        if indices not in self.group_index:
            self.group_index[indices] = len(self.data.collider_groups)
            name = collection.name if collection is not None else f"{self.rig.name} colliders"
            self.data.collider_groups.append({"name": name, "colliders": list(indices)})
        return self.group_index[indices]

    def _collider(self, ob) -> int | None:
        if ob.name in self.collider_index:
            return self.collider_index[ob.name]
        rig = self.rig
        if ob.type == 'MESH':
            self.data.skipped.append(f"collider '{ob.name}' (a body mesh: VRM spring bones "
                                     "collide with spheres, capsules and planes only)")
            self.collider_index[ob.name] = None
            return None
        if ob.parent is not rig or ob.parent_type != 'BONE' \
                or ob.parent_bone not in self.bone_node:
            self.data.skipped.append(f"collider '{ob.name}' (not parented to a bone of "
                                     f"'{rig.name}': VRM colliders live on joints)")
            self.collider_index[ob.name] = None
            return None
        kind = collider_kind(ob)
        bone = rig.data.bones[ob.parent_bone]
        rest = self.rig_world @ _matrix(bone.matrix_local) @ _translation((0.0, bone.length, 0.0))
        shape_world = rest @ _matrix(ob.matrix_parent_inverse) @ _matrix(ob.matrix_basis)
        node = self.bone_node[ob.parent_bone]
        node_world = self.world[node]
        node_scale = _scale(node_world)
        size = float(ob.empty_display_size)
        settings = ob.waft_collider
        if kind == ColliderKind.ELLIPSOID:
            shape = {"sphere": {"offset": _local_point(node_world, shape_world[:3, 3]),
                                "radius": size * _scale(shape_world) / node_scale}}
        elif kind == ColliderKind.CAPSULE:
            ends = [shape_world @ np.array((0.0, 0.0, z, 1.0)) for z in (-size, size)]
            radius = max(settings.radius_a, settings.radius_b)
            if settings.radius_a != settings.radius_b:
                self.data.skipped.append(f"collider '{ob.name}': tapered (exported with its "
                                         "larger radius; VRM capsules have one)")
            shape = {"capsule": {"offset": _local_point(node_world, ends[0][:3]),
                                 "tail": _local_point(node_world, ends[1][:3]),
                                 "radius": radius * _radial_scale(shape_world) / node_scale}}
        elif kind == ColliderKind.PLANE:
            point = shape_world[:3, 3]
            normal = shape_world[:3, 2] / np.linalg.norm(shape_world[:3, 2])
            local_normal = node_world[:3, :3].T @ to_gltf(normal)
            local_normal /= np.linalg.norm(local_normal)
            fallback = point - normal * PLANE_FALLBACK_RADIUS * node_scale
            shape = {"sphere": {"offset": _local_point(node_world, fallback),
                                "radius": PLANE_FALLBACK_RADIUS}}
            self.data.uses_extended = True
            index = self._add_collider(ob, node, shape, extended={
                "specVersion": "1.0",
                "shape": {"plane": {"offset": _local_point(node_world, point),
                                    "normal": [float(v) for v in local_normal]}}})
            return index
        else:
            self.data.skipped.append(f"collider '{ob.name}' (a box: VRM has no box collider)")
            self.collider_index[ob.name] = None
            return None
        return self._add_collider(ob, node, shape)

    def _add_collider(self, ob, node: int, shape: dict, extended: dict | None = None) -> int:
        collider = {"node": node, "shape": shape}
        if extended is not None:
            collider["extensions"] = {EXTENDED_COLLIDER: extended}
        index = len(self.data.colliders)
        self.data.colliders.append(collider)
        self.collider_index[ob.name] = index
        return index


def _radial_scale(m: np.ndarray) -> float:
    """A capsule's world radius per unit of its radii (core.colliders.capsule_normal)."""
    return 0.5 * float(np.linalg.norm(m[:3, 0]) + np.linalg.norm(m[:3, 1]))


def _translation(t) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = t
    return m


def exported_rigs(scene, nodes: list[dict]) -> list:
    """Armatures with a Waft chain setup whose node the exporter wrote."""
    names = {n.get("name") for n in nodes}
    return [ob for ob in scene.objects
            if ob.type == 'ARMATURE' and ob.waft.enabled and ob.name in names
            and any(pb.waft.simulate for pb in ob.pose.bones)]


def spring_bone_data(scene, rigs, nodes: list[dict]) -> SpringBoneData | None:
    """VRMC_springBone for the chains of ``rigs`` on the exported ``nodes`` (glTF JSON node
    dicts; leaf nodes are appended to it and listed in ``new_nodes``)."""
    data = SpringBoneData()
    for rig in rigs:
        try:
            runs = chain_bone_runs(rig)
        except SetupError as error:
            data.skipped.append(str(error))
            continue
        writer = _Writer(rig, scene, nodes, data)
        for run in runs:
            writer.spring(run)
    return data if data.springs else None
