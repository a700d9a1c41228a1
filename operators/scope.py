"""Which setups an operator acts on: every setup in the scene, or the active object."""

import bpy

from ..addon.compat import pose_bone_selected

SCOPE_ITEMS = (
    ("ALL", "All Setups", "Every Waft setup in the scene"),
    ("ACTIVE", "Active", "Only the setups of the active object (armature, cage or guide curves)"),
)


def scope_property():
    return bpy.props.EnumProperty(name="Scope", items=SCOPE_ITEMS, default="ALL")


def scope_objects(context, scope: str):
    """None (= every setup) for ALL, else a one-element list with the active object."""
    if scope == "ALL":
        return None
    return [context.active_object] if context.active_object is not None else []


class ActiveArmature:
    """Operator mixin: runs on the active object when it is an armature."""

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.type == 'ARMATURE'


def selected_pose_bones(ob) -> list:
    """The armature's selected pose bones, in bone order."""
    return [pb for pb in ob.pose.bones if pose_bone_selected(pb)]


class ActiveCage:
    """Operator mixin: runs on the active object when it is an enabled Waft cloth cage."""

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.type == 'MESH' and ob.waft_cloth.enabled
