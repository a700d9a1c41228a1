"""The few API differences between Blender 4.2 LTS and 5.x (reference/blender-api.md §1, §5).

4.4 introduced slotted (layered) actions; 5.0 removed ``Action.fcurves`` and moved pose-bone
selection from ``Bone.select`` to ``PoseBone.select``. Everything version-dependent goes
through here so the rest of the add-on reads the same on every version.
"""

import bpy

LAYERED_ACTIONS = bpy.app.version >= (4, 4, 0)


def pose_bone_selected(pose_bone) -> bool:
    if hasattr(pose_bone, "select"):
        return bool(pose_bone.select)
    return bool(pose_bone.bone.select)


def set_pose_bone_selected(pose_bone, state: bool) -> None:
    if hasattr(pose_bone, "select"):
        pose_bone.select = state
    else:
        pose_bone.bone.select = state


def new_fcurve_container(action, id_block, name: str | None = None):
    """``(slot, container)``; ``container.fcurves`` is where F-curves go.

    On 4.4+ that is the channelbag of a new slot for ``id_block`` (named ``name``, else after
    it) in the action's only layer/strip; on 4.2 it is the action itself and there is no slot.
    """
    if not LAYERED_ACTIONS:
        return None, action
    slot = action.slots.new(id_type=id_block.id_type, name=name or id_block.name)
    layer = action.layers[0] if action.layers else action.layers.new("Layer")
    strip = layer.strips[0] if layer.strips else layer.strips.new(type='KEYFRAME')
    return slot, strip.channelbag(slot, ensure=True)


def fcurve_container(action, slot):
    """Where the F-curves of ``slot`` in an existing ``action`` go: its channelbag in the
    action's first strip on 4.4+ (made when missing), the action itself on 4.2."""
    if slot is None or not LAYERED_ACTIONS:
        return action
    for layer in action.layers:
        for strip in layer.strips:
            return strip.channelbag(slot, ensure=True)
    return action


_GROUP_ARGUMENT: dict[str, str] = {}


def _group_argument(fcurves) -> str:
    """Name of ``fcurves.new``'s group parameter on this version ('' if it has none); cached
    because looking it up through bl_rna for every F-curve costs more than creating it."""
    key = fcurves.bl_rna.identifier
    if key not in _GROUP_ARGUMENT:
        params = fcurves.bl_rna.functions["new"].parameters
        found = [name for name in ("group_name", "action_group") if name in params]
        _GROUP_ARGUMENT[key] = found[0] if found else ""
    return _GROUP_ARGUMENT[key]


def new_fcurve(container, data_path: str, index: int, group: str):
    """``fcurves.new`` with the bone-name group, whatever this version calls the argument."""
    fcurves = container.fcurves
    argument = _group_argument(fcurves)
    if argument:  # 5.0 channelbag: group_name; 4.2 Action.fcurves: action_group
        return fcurves.new(data_path, index=index, **{argument: group})
    fcurve = fcurves.new(data_path, index=index)  # 4.4/4.5 channelbag: group set afterwards
    fcurve.group = container.groups.get(group) or container.groups.new(group)
    return fcurve


def slot_fcurves(action, slot):
    """The F-curves ``slot`` of ``action`` plays (what an object using that slot sees); every
    F-curve of the action on 4.2 or when there is no slot."""
    if slot is None or not LAYERED_ACTIONS:
        return action_fcurves(action)
    curves = []
    for layer in action.layers:
        for strip in layer.strips:
            bag = strip.channelbag(slot)
            if bag is not None:
                curves.extend(bag.fcurves)
    return curves


def action_fcurves(action):
    """Every F-curve of an action, from every slot (a flat list)."""
    if not LAYERED_ACTIONS:
        return list(action.fcurves)
    curves = []
    for layer in action.layers:
        for strip in layer.strips:
            for bag in getattr(strip, "channelbags", ()):
                curves.extend(bag.fcurves)
    return curves


def assign_strip_slot(strip, slot) -> None:
    """Make an NLA strip play ``slot`` of its action (4.4+); a no-op on 4.2."""
    if slot is not None and hasattr(strip, "action_slot"):
        strip.action_slot = slot


def active_slot(anim_data):
    return getattr(anim_data, "action_slot", None)


def restore_active_slot(anim_data, action, identifier: str) -> None:
    """After ``anim_data.action = action``, pick the slot the user had (4.4+)."""
    if not hasattr(anim_data, "action_slot") or action is None:
        return
    slot = action.slots.get(identifier) if identifier else None
    if slot is None and len(action.slots) == 1:
        slot = action.slots[0]
    if slot is not None:
        anim_data.action_slot = slot
