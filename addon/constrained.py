"""Bones whose baked rotation keys something else would override, and what the bake does about it.

Blender evaluates constraints (and drivers) after the NLA: a baked bone under Copy Rotation,
Damped Track, IK, Child Of… (a Rigify tail, DEF bones copying ORG bones) plays back where the
constraint puts it, not where Waft simulated it, up to tens of centimetres away. The bake never
lets that happen silently. Per Scene › Waft › *Constrained Bones*:

- ``WARN``: bake, and report every such bone by object, bone and constraint.
- ``TURN_OFF``: the result action also keys each overriding constraint's influence to 0, so the
  baked motion is what plays; the influence the user had is held on the system's rest track
  (``rest_channels.py``) under the result, so muting the result track or *Clear Bake* gives the
  constraints back exactly as they were. The user's rig itself is not edited.

Drivers on rotation channels and bones that do not inherit their parent's rotation cannot be
turned off this way: they are always reported.
"""

from __future__ import annotations

import re

import bpy

from . import compat
from .nla import add_result_track, held_values, slot_marker, write_held_track
from .sampling import is_rest_track, is_result_track

WARN, TURN_OFF = "WARN", "TURN_OFF"
POLICY_ITEMS = (
    (WARN, "Warn", "Bake, and warn about every baked bone a constraint or driver overrides"),
    (TURN_OFF, "Turn Off for Result",
     "Key the overriding constraints' influence to 0 in Waft's result (muting or clearing the "
     "result gives them back)"),
)

# Constraints that move or scale a bone but never set its rotation.
_KEEPS_ROTATION = {"COPY_LOCATION", "LIMIT_LOCATION", "LIMIT_DISTANCE", "COPY_SCALE",
                   "LIMIT_SCALE", "MAINTAIN_VOLUME", "FLOOR"}
_BONE_PATH = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]\.(rotation_\w+)$')


def _acts(constraint, influence: float) -> bool:
    return not constraint.mute and influence > 0.0 and getattr(constraint, "is_valid", True)


def _rotates(constraint) -> bool:
    if constraint.type == "SHRINKWRAP":
        return bool(getattr(constraint, "use_track_normal", False))
    if constraint.type == "TRANSFORM":
        return getattr(constraint, "map_to", "ROTATION") == "ROTATION"
    return constraint.type not in _KEEPS_ROTATION


def _ik_chains(ob, influence) -> dict[str, list[tuple[str, object]]]:
    """Bone name → (owner bone, IK / Spline IK constraint) of every chain through that bone."""
    chains: dict[str, list[tuple[str, object]]] = {}
    for owner in ob.pose.bones:
        for c in owner.constraints:
            if c.type not in ("IK", "SPLINE_IK") or not _acts(c, influence(owner.name, c)):
                continue
            bone = owner if c.type == "SPLINE_IK" or getattr(c, "use_tail", True) else owner.parent
            count = c.chain_count
            while bone is not None and (count == 0 or count > 0):
                chains.setdefault(bone.name, []).append((owner.name, c))
                bone = bone.parent
                if count:
                    count -= 1
                    if count == 0:
                        break
    return chains


def overriding_constraints(ob, bone_names, held=None) -> dict[str, list[tuple[str, object]]]:
    """Baked bone → [(owner bone, constraint)] that would override its rotation keys.

    A constraint acts when it is on with an influence above 0: the user's influence, which a
    previous result may hold at 0 on the pose (``held``: from ``held_before_bake``)."""
    held = {} if held is None else held

    def influence(owner: str, c) -> float:
        return held.get((ob.name, _influence_path(owner, c)), c.influence)

    chains = _ik_chains(ob, influence)
    found: dict[str, list[tuple[str, object]]] = {}
    for name in bone_names:
        pose_bone = ob.pose.bones.get(name)
        if pose_bone is None:
            continue
        own = [(name, c) for c in pose_bone.constraints
               if c.type not in ("IK", "SPLINE_IK") and _acts(c, influence(name, c))
               and _rotates(c)]
        if own or name in chains:
            found[name] = own + chains.get(name, [])
    return found


def unfixable(ob, bone_names) -> dict[str, list[str]]:
    """Baked bone → reasons the result cannot show as simulated that no influence key fixes."""
    reasons: dict[str, list[str]] = {}
    drivers = ob.animation_data.drivers if ob.animation_data is not None else ()
    for fc in drivers:
        match = _BONE_PATH.match(fc.data_path)
        if match and not fc.mute and match.group(1).replace('\\"', '"') in bone_names:
            reasons.setdefault(match.group(1), []).append(
                f"a driver on {match.group(2)}[{fc.array_index}]")
    for name in bone_names:
        bone = ob.data.bones.get(name)
        if bone is not None and bone.parent is not None and not bone.use_inherit_rotation:
            reasons.setdefault(name, []).append("Inherit Rotation is off")
    return reasons


def baked_bones(action, slot=None) -> list[str]:
    """Bones whose rotation ``slot`` of ``action`` keys (a Waft result)."""
    names = []
    for fc in compat.slot_fcurves(action, slot):
        match = _BONE_PATH.match(fc.data_path)
        if match:
            name = match.group(1).replace('\\"', '"')
            if name not in names:
                names.append(name)
    return names


def _influence_path(owner: str, constraint) -> str:
    return (f'pose.bones["{bpy.utils.escape_identifier(owner)}"].constraints'
            f'["{bpy.utils.escape_identifier(constraint.name)}"].influence')


def _result_strips(ob):
    anim_data = ob.animation_data
    if anim_data is None:
        return []
    return [(track, strip) for track in anim_data.nla_tracks if is_result_track(track.name)
            for strip in track.strips if strip.action is not None]


RESOLVED = "waft_constraints_resolved"  # ID property of a result action already resolved


def held_before_bake(objects) -> dict:
    """Influences held on every rest track before the bake rewrites them: the pose value may
    be the last played result's 0, the held value is the user's."""
    held = {}
    for ob in objects:
        anim_data = getattr(ob, "animation_data", None)
        if anim_data is None:
            continue
        for track in anim_data.nla_tracks:
            if is_rest_track(track.name):
                held.update({(ob.name, path): value for (path, _), value
                             in held_values(ob, track.name).items()
                             if path.endswith(".influence")})
    return held


def _add_constant(ob, action, slot, path: str, value: float, group: str, frame: float):
    container = compat.fcurve_container(action, slot)
    fcurve = compat.new_fcurve(container, path, 0, group)
    fcurve.keyframe_points.add(1)
    fcurve.keyframe_points[0].co = (frame, value)
    fcurve.keyframe_points[0].interpolation = 'CONSTANT'
    fcurve.update()


def resolve(scene, objects, held: dict) -> list[str]:
    """After the write: warn about, or turn off for the result, every overriding constraint of
    the bones each Waft result action keys. Returns the warnings (object, bone, cause)."""
    policy = scene.waft.constrained_bones
    warnings = []
    for ob in objects:
        if ob.type != "ARMATURE":
            continue
        for track, strip in _result_strips(ob):
            marker = slot_marker(RESOLVED, getattr(strip, "action_slot", None))
            if strip.action.get(marker):
                continue  # not baked now: resolved when it was
            strip.action[marker] = True
            bones = baked_bones(strip.action, getattr(strip, "action_slot", None))
            found = overriding_constraints(ob, bones, held)
            for name, causes in unfixable(ob, set(bones)).items():
                warnings.append(f"Armature '{ob.name}', bone '{name}': {', '.join(causes)}; "
                                f"its baked keys do not play as simulated")
            if not found:
                continue
            if policy == TURN_OFF:
                _turn_off(ob, track, strip, found, held)
                continue
            for name, pairs in found.items():
                causes = ", ".join(f"{c.type.replace('_', ' ').title()} '{c.name}'"
                                   + (f" on '{owner}'" if owner != name else "")
                                   for owner, c in pairs)
                warnings.append(
                    f"Armature '{ob.name}', bone '{name}': {causes} overrides the baked keys; "
                    f"set Scene › Waft › Constrained Bones to Turn Off for Result, or bake the "
                    f"bones that drive it")
    return warnings


def _turn_off(ob, track, strip, found, held) -> None:
    frame = float(strip.frame_start)
    slot = getattr(strip, "action_slot", None)
    rest_name = f"{track.name}: rest"
    keep = []
    done = set()
    for pairs in found.values():
        for owner, c in pairs:
            path = _influence_path(owner, c)
            if path in done:
                continue
            done.add(path)
            _add_constant(ob, strip.action, slot, path, 0.0, owner, frame)
            keep.append((path, 0, held.get((ob.name, path), c.influence), owner))
    anim_data = ob.animation_data
    rest = anim_data.nla_tracks.get(rest_name)
    rest_strip = rest.strips[0] if rest is not None and len(rest.strips) else None
    if rest_strip is not None and rest_strip.action is not None:
        for path, _, value, owner in keep:
            _add_constant(ob, rest_strip.action, getattr(rest_strip, "action_slot", None), path,
                          value, owner, frame)
        return
    # A new rest track goes on top (the only place RNA adds tracks), so the result track is
    # made again above it: the held influences must play under the result's zeros.
    action, result_slot = strip.action, slot
    write_held_track(ob, keep, frame, action.name + "|rest", rest_name)
    name = track.name
    anim_data.nla_tracks.remove(track)
    add_result_track(anim_data, name, action, result_slot, frame)


def warning_lines(warnings: list[str], limit: int = 5) -> list[str]:
    """The first ``limit`` warnings and how many more there are (for an operator's report)."""
    lines = list(warnings[:limit])
    if len(warnings) > limit:
        lines.append(f"…and {len(warnings) - limit} more overridden bone(s)")
    return lines
