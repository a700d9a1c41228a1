"""Warnings about a ragdoll setup, shown in its panel before a bake, each with a one-click fix
(``operators/fix_warning.py``; the bone chains' are ``strands/warnings.py``):

- **constraints** that would override the baked keys (a Rigify rig's DEF bones copy their
  tweak bones): fix = *Constrained Bones › Turn Off for Result*, as for bone chains;
- **the animation outside a joint's limits** at this frame: the limits hold the body away from
  its own animation, so the bake pops it back inside on its first substep and the motor then
  fights the limit all shot: fix = *Fit Limits to Animation* (the animations *Create Waft
  Ragdoll* fits to, its *Fit Limits To* choices, ``takes.fit_takes``: by default every action
  of the rig, with the margin ``create.fit_limits_to_animation`` uses);
- **capsules inside the ground** at this frame: a body whose capsule reaches below Ground
  Height is pushed out on the bake's first substep, a jump (a Rigify foot's humanoid radius,
  4.8 cm round a bone whose tail is 1.7 cm above the sole, jumped 30 mm), and a driven body is
  held off its animation by that much all shot: fix = *Fit Radius to Ground* (each such body's
  radius becomes its bone's height above the ground, ``fit_radius_to_ground``). *Create Waft
  Ragdoll* already does this for the bodies it makes, at the current frame and in the rest
  pose, so a humanoid it creates starts clear of the ground.

Only the current frame is read (the panel redraws often); the fix reads the whole range.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.errors import SetupError
from ...core.ragdoll.limits import fit_limits
from ..preview import suspended
from ..sampling import is_result_track, tracks_muted
from ..strands.warnings import SetupWarning, constraint_warnings
from .create import bone_orientation, rest_relative, segment_head
from .reading import body_bones, joint_parent

FIX_FIT_LIMITS = "FIT_LIMITS"
FIX_GROUND_RADIUS = "GROUND_RADIUS"
OUTSIDE_DEG = 1.0  # a joint this far outside its limits is worth a warning
INSIDE_GROUND = 0.002  # m: a capsule this deep in the ground is worth a warning


def jointed_bodies(ob) -> dict[str, str]:
    """{body: the body it is jointed to} for every body of ``ob`` with a joint: not the root,
    not a bone welded to the body it hangs from (it has no joint); a bone hanging from a
    welded one is jointed to the body carrying it (``create.segment_head``), as the bake
    solves it."""
    bones = body_bones(ob)
    names = {pb.name for pb in bones}
    hung = {pb.name: joint_parent(pb, names) for pb in bones}
    welded = {pb.name for pb in bones if pb.waft_ragdoll.weld and hung[pb.name] is not None}
    return {name: segment_head(parent, hung, welded) for name, parent in hung.items()
            if parent is not None and name not in welded}


def _outside_limits(ob) -> list[SetupWarning]:
    hung = jointed_bodies(ob)
    if not hung:
        return []
    children, parents = list(hung), list(hung.values())
    bones = ob.pose.bones
    q = bone_orientation(np.array([np.array(bones[n].matrix) for n in children + parents]))
    k = len(children)
    swing = np.array([tuple(bones[n].waft_ragdoll.swing_limit) for n in children])
    twist = np.array([tuple(bones[n].waft_ragdoll.twist_limit) for n in children])
    center = np.array([tuple(bones[n].waft_ragdoll.swing_center) for n in children])
    new_swing, new_twist, new_center = fit_limits(
        q_child=q[None, :k], q_parent=q[None, k:],
        rest_relative=rest_relative(ob, children, parents), swing_limit=swing,
        twist_limit=twist, margin=0.0, swing_center=center)
    # how far each joint is outside: the largest widening its limits would need (either end
    # of each swing axis's range, or of the twist range)
    ends = np.abs(np.concatenate((new_center - new_swing - (center - swing),
                                  new_center + new_swing - (center + swing)), axis=1))
    ends = np.where(np.isfinite(ends), ends, 0.0)
    grow = np.maximum(ends.max(axis=1), np.abs(new_twist - twist).max(axis=1))
    outside = np.flatnonzero(grow > math.radians(OUTSIDE_DEG))
    if not len(outside):
        return []
    worst = int(outside[np.argmax(grow[outside])])
    more = f" and {len(outside) - 1} more" if len(outside) > 1 else ""
    return [SetupWarning(
        text=f"Bone '{children[worst]}'{more}: the animation is "
             f"{math.degrees(grow[worst]):.0f}° outside its joint limits at this frame; the "
             f"bake pushes it back inside",
        fix=FIX_FIT_LIMITS, label="Fit Limits to Animation")]


def ground_depths(scene, ob, *, rest: bool = False) -> dict[str, tuple[float, float]]:
    """{body: (depth, clearance)} of the bodies of ``ob`` whose capsule reaches more than
    INSIDE_GROUND below its ground at this frame (``rest``: with the bones in the armature's
    rest pose instead): the depth of the capsule, and the height of the bone's lower end above
    the ground (scene units; the radius that just touches it). Empty when the ragdoll has no
    ground."""
    settings = ob.waft_ragdoll
    if not settings.use_ground:
        return {}
    unit = scene.unit_settings.scale_length or 1.0
    world = np.array(ob.matrix_world)
    scale = float(np.cbrt(abs(np.linalg.det(world[:3, :3])))) or 1.0
    found = {}
    for pb in body_bones(ob):
        head, tail = ((pb.bone.head_local, pb.bone.tail_local) if rest else (pb.head, pb.tail))
        ends = world @ np.array([(*head, 1.0), (*tail, 1.0)]).T
        clearance = float(ends[2].min()) - float(settings.ground_height)
        radius = pb.waft_ragdoll.radius
        if radius <= 0.0:  # the bone's envelope radius, as the bake reads it
            radius = 0.5 * (pb.bone.head_radius + pb.bone.tail_radius) * scale
        depth = radius - clearance
        if depth * unit > INSIDE_GROUND:
            found[pb.name] = (depth, clearance)
    return found


def fit_radius_to_ground(scene, ob, *, rest: bool = False, names=None) -> int:
    """Give each body inside the ground at this frame the radius that just touches it (its
    bone's height above the ground), in the animation's pose (never the preview's, nor a
    ragdoll already baked over it, as *Fit Limits to Animation*); bones that are themselves
    below it are left (no radius clears it). ``rest``: the armature's rest pose counts too
    (the smaller radius of the two), as *Create Waft Ragdoll* sizes the feet; ``names``: only
    those bodies (default: every body). Returns how many radii changed."""
    kept = scene.frame_current, scene.frame_subframe
    with suspended():
        try:
            with tracks_muted((ob,), is_result_track):
                scene.frame_set(kept[0], subframe=kept[1])
                found = [ground_depths(scene, ob)]
        finally:
            scene.frame_set(kept[0], subframe=kept[1])
    if rest:
        found.append(ground_depths(scene, ob, rest=True))
    clearances: dict[str, float] = {}
    for depths in found:
        for name, (_, clearance) in depths.items():
            if clearance > 0.0 and (names is None or name in names):
                clearances[name] = min(clearance, clearances.get(name, clearance))
    for name, clearance in clearances.items():
        ob.pose.bones[name].waft_ragdoll.radius = clearance
    return len(clearances)


def _inside_ground(scene, ob) -> list[SetupWarning]:
    found = ground_depths(scene, ob)
    if not found:
        return []
    worst = max(found, key=lambda name: found[name][0])
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    depth = found[worst][0] * (scene.unit_settings.scale_length or 1.0) * 1000.0
    return [SetupWarning(
        text=f"Bone '{worst}'{more}: its capsule is {depth:.0f} mm inside the ground at this "
             f"frame; the bake pushes it out on the first frame (a jump)",
        fix=FIX_GROUND_RADIUS, label="Fit Radius to Ground")]


def _constraints(scene, ob) -> list[SetupWarning]:
    return constraint_warnings(scene, ob, [pb.name for pb in body_bones(ob)],
                               "the baked ragdoll")


def ragdoll_warnings(scene, ob) -> list[SetupWarning]:
    """The warnings of armature ``ob``'s ragdoll (none when it is not one, or when the bake
    would refuse it: the bake then says why)."""
    if ob is None or ob.type != 'ARMATURE' or not ob.waft_ragdoll.enabled:
        return []
    try:
        return _constraints(scene, ob) + _outside_limits(ob) + _inside_ground(scene, ob)
    except SetupError:
        return []
