"""``waft.fit_colliders``: capsule colliders fitted to the selected bones from the skin.

Each selected bone gets a capsule empty parented to it, fitted (``core.collider_fit``) to the
bind-pose vertices of the meshes the armature deforms that this bone moves most. Fitting again
updates the bone's capsule instead of adding another.
"""

import math

import bpy
from mathutils import Matrix

from ..addon.collider_fit import owned_points, skinned_meshes
from ..core.collider_fit import MIN_WEIGHT, fit_capsule

NAME = "WaftCollider.{bone}"


def _capsule_empty(context, rig, bone_name: str):
    name = NAME.format(bone=bone_name)
    empty = bpy.data.objects.get(name)
    if empty is None or empty.type != 'EMPTY' or empty.parent != rig:
        empty = bpy.data.objects.new(name, None)
        context.collection.objects.link(empty)
    empty.empty_display_type = 'PLAIN_AXES'
    empty.parent = rig
    empty.parent_type = 'BONE'
    empty.parent_bone = bone_name
    return empty


class WAFT_OT_fit_colliders(bpy.types.Operator):
    """Fit capsule colliders to the selected bones from the body mesh they deform"""

    bl_idname = "waft.fit_colliders"
    bl_label = "Fit Colliders to Bones"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return context.mode == 'POSE' and context.active_object is not None \
            and context.active_object.type == 'ARMATURE'

    def execute(self, context):
        rig = context.active_object
        bones = [pb.name for pb in context.selected_pose_bones or () if pb.id_data == rig]
        if not bones:
            self.report({'ERROR'}, f"Armature '{rig.name}': select the bones to fit colliders to")
            return {'CANCELLED'}
        if not skinned_meshes(rig):
            self.report({'ERROR'}, f"Armature '{rig.name}' deforms no mesh (no Armature "
                                   "modifier uses it): nothing to fit colliders to")
            return {'CANCELLED'}
        points = owned_points(rig, bones)
        fitted, bare = [], []
        for name in bones:
            capsule = fit_capsule(points[name])
            if capsule is None:
                bare.append(name)
                continue
            empty = _capsule_empty(context, rig, name)
            x, z = capsule.offset
            # Local Z of the empty (the capsule's segment) along the bone's Y.
            local = Matrix.Translation((x, capsule.centre, z)) @ Matrix.Rotation(
                -math.pi / 2, 4, 'X')
            empty.matrix_world = rig.matrix_world @ rig.pose.bones[name].matrix @ local
            empty.empty_display_size = max(capsule.half_length, 1e-4)
            settings = empty.waft_collider
            settings.enabled = True
            settings.shape = "CAPSULE"
            settings.radius_a = settings.radius_b = capsule.radius
            fitted.append(name)
        if not fitted:
            self.report({'ERROR'}, f"Armature '{rig.name}': no skin vertex belongs to "
                                   f"{', '.join(bare)} (weight {MIN_WEIGHT:g} or more)")
            return {'CANCELLED'}
        message = f"Fitted {len(fitted)} capsule collider(s) on '{rig.name}'"
        if bare:
            message += f"; no skin on {', '.join(bare)}"
        self.report({'WARNING'} if bare else {'INFO'}, message)
        return {'FINISHED'}
