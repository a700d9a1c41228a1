"""One operator per module; ``register()`` registers them all."""

import bpy

from . import add_collider, apply_preset, assign_bones, bake, clear_bake

CLASSES = (
    bake.WAFT_OT_bake,
    clear_bake.WAFT_OT_clear_bake,
    add_collider.WAFT_OT_add_collider,
    assign_bones.WAFT_OT_assign_bones,
    apply_preset.WAFT_OT_apply_preset,
)


register, unregister = bpy.utils.register_classes_factory(CLASSES)
