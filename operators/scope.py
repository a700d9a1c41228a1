"""Which setups an operator acts on: every setup in the scene, or the active object."""

import bpy

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
