"""Turn a character's VRM spring bones (``vrm_file``) into a Waft setup on its armature.

Each spring becomes a chain of simulated bones on the VRM Spring Bone solver with the spring's
settings (the ones most joints share on the armature, the others as bone overrides); each
collider becomes a Waft collider empty parented to its bone; each spring collides with exactly
its own collider groups (the chain's Chain Colliders collection). Everything is checked before
anything changes, so a file that does not fit the armature changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bpy
import numpy as np
from mathutils import Matrix, Vector

from ...core.errors import SetupError
from .vrm_file import VIRTUAL_TAIL, Collider, SpringFile, most_common

MIN_TAIL = 1e-5  # Blender units: a tail closer to the head than this is no direction


@dataclass
class ImportReport:
    springs: int = 0
    bones: int = 0
    colliders: int = 0
    overrides: int = 0
    skipped: list = field(default_factory=list)

    def summary(self, rig_name: str, version: str) -> str:
        text = (f"VRM {version} spring bones on '{rig_name}': {self.springs} chains "
                f"({self.bones} bones), {self.colliders} colliders")
        if self.skipped:
            text += f"; not carried over: {'; '.join(self.skipped)}"
        return text


def _check_bones(rig, springs: SpringFile) -> None:
    bones = rig.data.bones
    # A tail node that is not a bone (a leaf node an exporter added) is placed from the file.
    missing = sorted({name for s in springs.springs for name in s.joints + (
        (s.tail,) if s.tail and s.tail_point is None else ()) if bones.get(name) is None})
    if missing:
        shown = ", ".join(f"'{n}'" for n in missing[:6])
        raise SetupError(f"Armature '{rig.name}' has no bone named {shown}"
                         f"{' …' if len(missing) > 6 else ''}: is this the character the file "
                         "belongs to?")
    for spring in springs.springs:
        for parent, child in zip(spring.joints, spring.joints[1:], strict=False):
            if bones[child].parent is None or bones[child].parent.name != parent:
                raise SetupError(f"Armature '{rig.name}', bone '{child}': the spring "
                                 f"'{spring.name}' needs it to be a child of '{parent}' (nodes "
                                 "between joints are not supported)")
    seen = {}
    for spring in springs.springs:
        for name in spring.joints:
            if name in seen:
                raise SetupError(f"Armature '{rig.name}', bone '{name}': in two springs "
                                 f"('{seen[name]}' and '{spring.name}')")
            seen[name] = spring.name


def _tail_targets(rig, springs: SpringFile) -> dict[str, Vector]:
    """Armature-space tails the last joint of each spring must have: VRM 1.0's tail node's head,
    or VRM 0.x's 7 cm virtual tail along the parent-to-joint direction."""
    bones = rig.data.bones
    targets = {}
    for spring in springs.springs:
        last = bones[spring.joints[-1]]
        if spring.tail is not None and bones.get(spring.tail) is not None:
            target = bones[spring.tail].head_local.copy()
        elif spring.tail is not None:  # the file's rest place (armature space, as colliders)
            target = Vector(spring.tail_point)
        else:
            parent = last.parent
            direction = (last.head_local - parent.head_local) if parent is not None else Vector()
            if direction.length < MIN_TAIL:
                direction = last.tail_local - last.head_local
            target = last.head_local + direction.normalized() * VIRTUAL_TAIL
        if (target - last.head_local).length < MIN_TAIL:
            raise SetupError(f"Armature '{rig.name}', bone '{last.name}': the spring's tail is on "
                             "the bone's head (zero length)")
        targets[last.name] = target
    return targets


def _object_scale(rig) -> float:
    """World units per armature unit. Importers put the file's metres in armature units, so
    lengths read from the file are armature units; world settings (Radius) scale by this."""
    return float(np.mean(np.linalg.norm(np.array(rig.matrix_world)[:3, :3], axis=0)))


def _retarget_tails(rig, targets: dict[str, Vector], report: ImportReport) -> None:
    """Move each last joint's tail onto its VRM tail (Edit Mode); bones whose tail would drag a
    connected child along keep theirs."""
    needed = {name: t for name, t in targets.items()
              if (rig.data.bones[name].tail_local - t).length > 1e-6}
    if not needed:
        return
    view_layer = bpy.context.view_layer
    active, mode = view_layer.objects.active, rig.mode
    view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode='EDIT')
    try:
        edit = rig.data.edit_bones
        for name, target in needed.items():
            bone = edit[name]
            if any(child.use_connect for child in bone.children):
                report.skipped.append(f"the tail of '{name}' (a connected child would move)")
                continue
            bone.tail = target
    finally:
        bpy.ops.object.mode_set(mode='OBJECT' if mode == 'EDIT' else mode)
        view_layer.objects.active = active


def _collection(name: str, parent) -> bpy.types.Collection:
    collection = bpy.data.collections.new(name)
    parent.children.link(collection)
    return collection


def _rest_parent_matrix(rig, bone_name: str) -> Matrix:
    """World matrix of a bone-parented child's parent space at the rest pose (the bone's tail,
    its rest axes)."""
    bone = rig.data.bones[bone_name]
    return rig.matrix_world @ bone.matrix_local @ Matrix.Translation((0.0, bone.length, 0.0))


def _collider_empty(rig, collider: Collider, name: str):
    """A Waft collider empty with the file's shape at its rest place (armature units, as the
    file's metres were imported), parented to its bone; it scales with the armature."""
    head, tail = Vector(collider.head), Vector(collider.tail)
    radius = collider.radius
    empty = bpy.data.objects.new(name, None)
    settings = empty.waft_collider
    settings.enabled = True
    axis = tail - head
    if collider.shape == "PLANE":
        z = Vector(collider.normal)
        centre, size = head, 0.2
        empty.empty_display_type = 'SINGLE_ARROW'
        settings.shape = "PLANE"
    elif collider.shape == "CAPSULE" and axis.length > 1e-6:
        z = axis.normalized()
        centre, size = (head + tail) * 0.5, axis.length * 0.5
        empty.empty_display_type = 'PLAIN_AXES'
        settings.shape = "CAPSULE"
        settings.radius_a = settings.radius_b = radius
    else:
        z = Vector((0.0, 0.0, 1.0))
        centre, size = head, radius
        empty.empty_display_type = 'SPHERE'
        settings.shape = "SPHERE"
    empty.empty_display_size = max(size, 1e-4)
    orientation = z.to_track_quat('Z', 'Y').to_matrix().to_4x4()
    world = rig.matrix_world @ Matrix.Translation(centre) @ orientation
    if rig.data.bones.get(collider.node) is not None:
        empty.parent = rig
        empty.parent_type = 'BONE'
        empty.parent_bone = collider.node
        empty.matrix_parent_inverse = Matrix.Identity(4)
        empty.matrix_basis = _rest_parent_matrix(rig, collider.node).inverted() @ world
    else:
        empty.matrix_world = world
    return empty


def apply_springs(context, rig, springs: SpringFile, *, source: str) -> ImportReport:
    """Make ``rig`` a VRM Spring Bone setup from ``springs``; raises SetupError (nothing
    changed) when the file does not fit the armature."""
    if not springs.springs:
        raise SetupError(f"{source} has springs, but none with a joint to move")
    _check_bones(rig, springs)
    targets = _tail_targets(rig, springs)
    report = ImportReport(skipped=list(springs.skipped))
    scale = _object_scale(rig)

    # Settings: the values most joints share on the setup, the rest as bone overrides.
    joints = [(name, s) for spring in springs.springs
              for name, s in zip(spring.joints, spring.settings, strict=True)]
    setup = {key: most_common([getattr(s, key) for _n, s in joints])
             for key in ("stiffness", "gravity_power", "drag_force", "hit_radius", "gravity_dir")}
    if len({s.gravity_dir for _n, s in joints}) > 1:
        report.skipped.append("per-joint gravity directions (the setup uses the most common)")
    centres = [s.center for s in springs.springs]
    centre = most_common(centres)
    if len(set(centres)) > 1:
        report.skipped.append("different centres per spring (the setup uses the most common)")
    if centre is not None and rig.data.bones.get(centre) is None:
        report.skipped.append(f"the centre node '{centre}' (not a bone of '{rig.name}')")
        centre = None

    _retarget_tails(rig, targets, report)
    settings = rig.waft
    settings.enabled = True
    settings.solver = 'VRM'
    settings.vrm_stiffness = setup["stiffness"]
    settings.vrm_gravity_power = setup["gravity_power"]
    settings.vrm_drag_force = setup["drag_force"]
    settings.vrm_gravity_dir = setup["gravity_dir"]
    settings.radius = setup["hit_radius"] * scale
    settings.space_bone = centre or ""
    for name, joint in joints:
        bone = rig.pose.bones[name].waft
        bone.simulate = True
        bone.pinned = False
        differs = any(getattr(joint, k) != setup[k]
                      for k in ("stiffness", "gravity_power", "drag_force", "hit_radius"))
        bone.use_overrides = differs
        if differs:
            bone.vrm_stiffness = joint.stiffness
            bone.vrm_gravity_power = joint.gravity_power
            bone.vrm_drag_force = joint.drag_force
            bone.radius = joint.hit_radius * scale
            report.overrides += 1
    report.springs = len(springs.springs)
    report.bones = len(joints)

    # Colliders: one empty per collider the springs use, a collection per collider group, and
    # each chain's Chain Colliders = the union of its groups.
    parent = context.scene.collection
    everything = _collection(f"{rig.name} VRM Colliders", parent)
    used = sorted({c for s in springs.springs for g in s.collider_groups
                   if 0 <= g < len(springs.collider_groups) for c in springs.collider_groups[g]})
    empties = {}
    for index in used:
        collider = springs.colliders[index] if index < len(springs.colliders) else None
        if collider is None:
            continue
        if collider.inside:
            report.skipped.append(f"the inside collider {index} on '{collider.node}' (Waft "
                                  "colliders push out only)")
            continue
        empty = _collider_empty(rig, collider, f"VRM Collider {collider.node} {index}")
        everything.objects.link(empty)
        empties[index] = empty
    report.colliders = len(empties)
    settings.collider_collection = everything if empties else None
    by_groups = {}
    for spring in springs.springs:
        key = tuple(sorted({c for g in spring.collider_groups
                            if 0 <= g < len(springs.collider_groups)
                            for c in springs.collider_groups[g] if c in empties}))
        if key not in by_groups:
            label = "none" if not key else ", ".join(str(k) for k in key)
            collection = _collection(f"{rig.name} VRM Chain Colliders ({label})", everything)
            for index in key:
                collection.objects.link(empties[index])
            by_groups[key] = collection
        rig.pose.bones[spring.joints[0]].waft.collider_collection = by_groups[key]
    return report
