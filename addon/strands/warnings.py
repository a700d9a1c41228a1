"""Warnings about a bone-chain setup, shown in its panels before a bake, each with a one-click
fix (``operators/fix_warning.py``):

- **constraints** that would override the baked keys (``constrained.overriding_constraints``:
  Copy Rotation, Damped Track, IK… on a simulated bone): fix = *Constrained Bones › Turn Off for
  Result* (non-destructive: muting or clearing the result gives them back);
- a **collider inside the chain** at the current pose: a simulated tail's collision sphere
  overlaps a shape collider (signed distance from ``core.colliders``, as the solver measures
  it), so the first substep throws the chain out: fix = shrink the collider about its origin
  (a plane: move it back along its normal) until every tail is clear by ``CLEARANCE``;
- **root-bone motion**: the travel is keyed on a parentless bone, *World Motion* is below 1
  and no *Space Bone* is set, so World Motion is measured on the armature object, which does
  not move: fix = make that bone the Space Bone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from mathutils import Vector

from ...core.colliders import ColliderKind, shape_normal
from ...core.errors import SetupError
from .. import constrained
from ..compat import action_fcurves
from ..reading import collider_set, read_collider, setup_collider_objects
from .reading import _chain_colliders, chain_bone_runs

CLEARANCE = 1e-3  # Blender units: a fixed collider leaves the tails this far outside
TRAVEL = 0.5  # Blender units of keyed root-bone travel that make the Space Bone matter
_LOCATION = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]\.location$')
FIX_CONSTRAINTS, FIX_COLLIDER, FIX_SPACE_BONE = "CONSTRAINTS", "COLLIDER", "SPACE_BONE"


@dataclass(frozen=True)
class SetupWarning:
    text: str
    fix: str  # FIX_*
    label: str  # the fix button's text
    target: str = ""  # the collider or bone the fix acts on


def _tails(ob, run) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """World tails (n, 3), radii (n,) and names of the simulated (unpinned) bones of a run."""
    world = np.array(ob.matrix_world, dtype=np.float64)
    default = float(ob.waft.radius)
    names = [pb.name for pb in run if not pb.waft.pinned]
    points = np.array([world[:3, :3] @ np.array(ob.pose.bones[n].tail) + world[:3, 3]
                       for n in names]).reshape(-1, 3)
    radii = np.array([float(ob.pose.bones[n].waft.radius) if ob.pose.bones[n].waft.use_overrides
                      else default for n in names])
    return points, radii, names


def penetration(collider, points: np.ndarray, radii: np.ndarray, *, scale: float = 1.0
                ) -> np.ndarray:
    """How far (n,) each sphere (points, radii) is inside ``collider`` (a ``ColliderRead``),
    its size and radii times ``scale``; ≤ 0 outside."""
    shapes = collider_set([collider])
    if scale != 1.0:
        shapes = type(shapes).create(
            names=[collider.name], kind=[collider.kind], size=[collider.size * scale],
            radius_a=[collider.radius_a * scale], radius_b=[collider.radius_b * scale],
            friction=[collider.friction])
    M = np.array(collider.object.matrix_world, dtype=np.float64)
    _, sd = shape_normal(collider.kind, points, M, np.linalg.inv(M), shapes, 0)
    return radii - sd


def collider_inside(collider_name: str, *, inside: str, where: str, thrown: str
                    ) -> SetupWarning:
    """The warning that a collider is ``inside`` (the chain, a cage) at this frame, ``where``
    saying how deep, with its one-click fix (Shrink to Clear)."""
    return SetupWarning(
        text=f"Collider '{collider_name}' is inside {inside} at this frame ({where}): the first "
             f"substep throws {thrown} out",
        fix=FIX_COLLIDER, label=f"Shrink '{collider_name}' to Clear", target=collider_name)


def _colliding(scene, ob) -> list[SetupWarning]:
    out, seen = [], set()
    for run in chain_bone_runs(ob):
        own = _chain_colliders(ob, run[0])
        colliders = own if own is not None else setup_collider_objects(scene, ob)
        points, radii, names = _tails(ob, run)
        if not len(points):
            continue
        for collider_ob in colliders:
            if collider_ob.type != 'EMPTY' or collider_ob.name in seen:
                continue
            depth = penetration(read_collider(collider_ob), points, radii)
            if depth.max() > 0.0:
                seen.add(collider_ob.name)
                worst = names[int(np.argmax(depth))]
                out.append(collider_inside(
                    collider_ob.name, inside="the chain", thrown="the chain",
                    where=f"bone '{worst}' {1000 * depth.max():.0f} mm in"))
    return out


def _root_motion(ob) -> list[SetupWarning]:
    settings = ob.waft
    anim = ob.animation_data
    if settings.space_bone or settings.world_motion_fraction >= 1.0 or anim is None \
            or anim.action is None:
        return []
    travel: dict[str, float] = {}
    for fc in action_fcurves(anim.action):
        match = _LOCATION.match(fc.data_path)
        if match is None or len(fc.keyframe_points) < 2:
            continue
        name = match.group(1).replace('\\"', '"')
        pose_bone = ob.pose.bones.get(name)
        if pose_bone is None or pose_bone.parent is not None:
            continue
        values = np.empty(len(fc.keyframe_points) * 2)
        fc.keyframe_points.foreach_get("co", values)
        span = float(np.ptp(values[1::2]))
        travel[name] = max(travel.get(name, 0.0), span)
    if not travel:
        return []
    bone, distance = max(travel.items(), key=lambda item: item[1])
    if distance < TRAVEL:
        return []
    return [SetupWarning(
        text=f"Bone '{bone}' carries the character {distance:.1f} m, but World Motion is "
             f"measured on the armature object: the chains feel all of its travel",
        fix=FIX_SPACE_BONE, label=f"Use '{bone}' as Space Bone", target=bone)]


def constraint_warnings(scene, ob, names, overridden: str) -> list[SetupWarning]:
    """The warning about constraints on the baked bones ``names`` that would override
    ``overridden`` (what the bake writes), while *Constrained Bones* is *Warn* (bone chains
    and ragdolls alike)."""
    if scene.waft.constrained_bones != constrained.WARN:
        return []
    found = constrained.overriding_constraints(ob, names)
    if not found:
        return []
    bone, causes = next(iter(found.items()))
    owner, constraint = causes[0]
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return [SetupWarning(
        text=f"Bone '{bone}'{more}: constraint '{constraint.name}' on '{owner}' overrides "
             f"{overridden}",
        fix=FIX_CONSTRAINTS, label="Turn Off for Result")]


def _constraints(scene, ob) -> list[SetupWarning]:
    return constraint_warnings(scene, ob, [pb.name for pb in ob.pose.bones if pb.waft.simulate],
                               "the baked keys")


def chain_warnings(scene, ob) -> list[SetupWarning]:
    """The warnings of armature ``ob``'s bone chains (none when it is not a setup, or when the
    bake would refuse it: the bake then says why)."""
    if ob is None or ob.type != 'ARMATURE' or not ob.waft.enabled:
        return []
    try:
        return _constraints(scene, ob) + _colliding(scene, ob) + _root_motion(ob)
    except SetupError:
        return []


def clear_collider(scene, ob, collider_ob) -> float:
    """Shrink ``collider_ob`` about its origin (a plane: move it back along its normal) until
    every simulated tail of ``ob``'s chains is ``CLEARANCE`` outside it (``shrink_to_clear``).
    """
    points, radii = [], []
    for run in chain_bone_runs(ob):
        p, r, _ = _tails(ob, run)
        points.append(p)
        radii.append(r)
    return shrink_to_clear(collider_ob, np.concatenate(points), np.concatenate(radii),
                           "a chain bone's tail")


def shrink_to_clear(collider_ob, points: np.ndarray, radii: np.ndarray, what: str) -> float:
    """Shrink ``collider_ob`` about its origin (a plane: move it back along its normal) until
    every sphere (``points``, ``radii``, world) is ``CLEARANCE`` outside it. Returns the scale
    applied (a plane: the distance moved). Raises ``SetupError`` when no shrink clears them
    (``what`` at the collider's very origin)."""
    collider = read_collider(collider_ob)
    radii = radii + CLEARANCE
    if collider.kind == ColliderKind.PLANE:
        M = np.array(collider_ob.matrix_world, dtype=np.float64)
        normal = M[:3, 2] / np.linalg.norm(M[:3, 2])
        distance = float(penetration(collider, points, radii).max())
        if distance > 0.0:
            moved = collider_ob.matrix_world.copy()
            moved.translation = moved.translation - Vector(normal * distance)
            collider_ob.matrix_world = moved
        return distance
    if penetration(collider, points, radii, scale=1e-6).max() > 0.0:
        raise SetupError(f"Collider '{collider_ob.name}': {what} is at its centre; move the "
                         f"collider")
    lo, hi = 0.0, 1.0  # bisection on the scale: clear at lo, not at hi
    if penetration(collider, points, radii).max() <= 0.0:
        return 1.0
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if penetration(collider, points, radii, scale=mid).max() > 0.0:
            hi = mid
        else:
            lo = mid
    collider_ob.empty_display_size *= lo
    collider_ob.waft_collider.radius_a *= lo
    collider_ob.waft_collider.radius_b *= lo
    return lo
