"""One operator per module; ``register()`` registers them all."""

import bpy

from . import add_collider, apply_preset, assign_bones, bake, clear_bake, hair_strands
from .capture_settled import WAFT_OT_capture_settled
from .cloth_add import WAFT_OT_cloth_add
from .cloth_bake_cage import WAFT_OT_cloth_bake_cage
from .cloth_fabric import WAFT_OT_cloth_apply_fabric
from .cloth_rod import WAFT_OT_rod_assign
from .edit_original import WAFT_OT_edit_original
from .export_gltf import WAFT_OT_export_gltf
from .fit_colliders import WAFT_OT_fit_colliders
from .fix_warning import WAFT_OT_fix_warning
from .import_vrm_springs import WAFT_OT_import_vrm_springs
from .ragdoll_apply_preset import WAFT_OT_ragdoll_apply_preset
from .ragdoll_create import WAFT_OT_ragdoll_create
from .ragdoll_set_mode import WAFT_OT_ragdoll_set_mode
from .reduce_keys import WAFT_OT_reduce_keys

CLASSES = (
    hair_strands.WAFT_OT_hair_add_render_strands, hair_strands.WAFT_OT_hair_export_alembic,
    bake.WAFT_OT_bake,
    clear_bake.WAFT_OT_clear_bake,
    WAFT_OT_edit_original,
    add_collider.WAFT_OT_add_collider, WAFT_OT_fit_colliders,
    assign_bones.WAFT_OT_assign_bones,
    apply_preset.WAFT_OT_apply_preset,
    WAFT_OT_ragdoll_create, WAFT_OT_ragdoll_set_mode, WAFT_OT_ragdoll_apply_preset,
    WAFT_OT_cloth_add, WAFT_OT_cloth_apply_fabric, WAFT_OT_cloth_bake_cage,
    WAFT_OT_capture_settled, WAFT_OT_rod_assign, WAFT_OT_import_vrm_springs,
    WAFT_OT_export_gltf, WAFT_OT_reduce_keys, WAFT_OT_fix_warning,
)


register, unregister = bpy.utils.register_classes_factory(CLASSES)
