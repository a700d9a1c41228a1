"""Warnings about a ragdoll setup, shown in its panel before a bake, each with a one-click fix
(``operators/fix_warning.py``; the bone chains' are ``strands/warnings.py``):

- **constraints** that would override the baked keys (a Rigify rig's DEF bones copy their
  tweak bones): fix = *Constrained Bones › Turn Off for Result*, as for bone chains;
- **the animation outside a joint's limits** at this frame: the limits hold the body away from
  its own animation, so the bake pops it back inside on its first substep and the motor then
  fights the limit all shot: fix = *Fit Limits to Animation* (the scene's frame range, with the
  margin *Create Waft Ragdoll* uses, ``create.fit_limits_to_animation``).

Only the current frame is read (the panel redraws often); the fix reads the whole range.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.errors import SetupError
from ...core.ragdoll.limits import fit_limits
from ..strands.warnings import SetupWarning, constraint_warnings
from .create import bone_orientation, rest_relative
from .reading import body_bones, joint_parent

FIX_FIT_LIMITS = "FIT_LIMITS"
OUTSIDE_DEG = 1.0  # a joint this far outside its limits is worth a warning


def jointed_bodies(ob) -> dict[str, str]:
    """{body: the body it hangs from} for every body of ``ob`` but the root."""
    bones = body_bones(ob)
    names = {pb.name for pb in bones}
    hung = {pb.name: joint_parent(pb, names) for pb in bones}
    return {name: parent for name, parent in hung.items() if parent is not None}


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


def _constraints(scene, ob) -> list[SetupWarning]:
    return constraint_warnings(scene, ob, [pb.name for pb in body_bones(ob)],
                               "the baked ragdoll")


def ragdoll_warnings(scene, ob) -> list[SetupWarning]:
    """The warnings of armature ``ob``'s ragdoll (none when it is not one, or when the bake
    would refuse it: the bake then says why)."""
    if ob is None or ob.type != 'ARMATURE' or not ob.waft_ragdoll.enabled:
        return []
    try:
        return _constraints(scene, ob) + _outside_limits(ob)
    except SetupError:
        return []
