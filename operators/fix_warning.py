"""``waft.fix_warning``: the one-click fix of a bone-chain, ragdoll or cloth-cage setup warning
(``addon/strands/warnings.py``, ``addon/ragdoll/warnings.py``, ``addon/cloth/warnings.py``),
undoable."""

import bpy

from ..addon.cloth import warnings as cloth_warnings
from ..addon.cloth.reading import is_cage
from ..addon.ragdoll import warnings as ragdoll_warnings
from ..addon.ragdoll.create import fit_limits_to_animation
from ..addon.ragdoll.takes import RIG_ACTIONS, SCOPE_ITEMS, TABLE, fit_takes
from ..addon.reading import collider_kind
from ..addon.strands import warnings
from ..core.colliders import ColliderKind
from ..core.errors import WaftError


class WAFT_OT_fix_warning(bpy.types.Operator):
    """Fix what the warning says (undo gives the setup back)"""

    bl_idname = "waft.fix_warning"
    bl_label = "Fix Waft Warning"
    bl_options = {'REGISTER', 'UNDO'}

    fix: bpy.props.EnumProperty(
        name="Fix", items=(
            (warnings.FIX_CONSTRAINTS, "Turn Off for Result",
             "Key the overriding constraints' influence to 0 in Waft's result"),
            (warnings.FIX_COLLIDER, "Shrink Collider",
             "Shrink the collider about its origin (a plane: move it back) until the chain or "
             "the cage is clear of it"),
            (warnings.FIX_SPACE_BONE, "Use as Space Bone",
             "Measure World Motion in the space of the bone that carries the character"),
            (ragdoll_warnings.FIX_FIT_LIMITS, "Fit Limits to Animation",
             "Widen the ragdoll's joint limits so its animations stay inside them, as Create "
             "Waft Ragdoll does (Fit Limits To)"),
            (ragdoll_warnings.FIX_GROUND_RADIUS, "Fit Radius to Ground",
             "Give each ragdoll body inside the ground at this frame the radius that just "
             "touches it")),
        options={'SKIP_SAVE'})
    armature: bpy.props.StringProperty(name="Armature", options={'SKIP_SAVE'},
                                       description="The armature, or the cloth cage")
    target: bpy.props.StringProperty(name="Target", options={'SKIP_SAVE'})
    fit_limits: bpy.props.EnumProperty(
        name="Fit Limits To", items=[item for item in SCOPE_ITEMS if item[0] != TABLE],
        default=RIG_ACTIONS, options={'SKIP_SAVE'},
        description="The animations Fit Limits to Animation widens the joint limits to (the "
                    "choices of Create Waft Ragdoll)")

    def execute(self, context):
        scene = context.scene
        ob = scene.objects.get(self.armature)
        if ob is None or not (ob.type == 'ARMATURE' or is_cage(ob)):
            self.report({'ERROR'}, f"Armature '{self.armature}' is not in the scene")
            return {'CANCELLED'}
        try:
            if self.fix == warnings.FIX_CONSTRAINTS:
                scene.waft.constrained_bones = 'TURN_OFF'
                self.report({'INFO'}, "Constrained Bones: Turn Off for Result")
            elif self.fix == ragdoll_warnings.FIX_FIT_LIMITS:
                hung = ragdoll_warnings.jointed_bodies(ob)
                names = [pb.name for pb in ob.pose.bones if pb.waft_ragdoll.body]
                takes = fit_takes(scene, ob, self.fit_limits)
                grown = fit_limits_to_animation(scene, ob, names, hung, takes)
                self.report({'INFO'}, f"Ragdoll '{ob.name}': {grown} joint limits widened to "
                                      f"{len(takes)} animations")
            elif self.fix == ragdoll_warnings.FIX_GROUND_RADIUS:
                fitted = ragdoll_warnings.fit_radius_to_ground(scene, ob)
                self.report({'INFO'}, f"Ragdoll '{ob.name}': {fitted} radii fitted to the "
                                      f"ground")
            elif self.fix == warnings.FIX_SPACE_BONE:
                if self.target not in ob.pose.bones:
                    raise WaftError(f"Armature '{ob.name}' has no bone '{self.target}'")
                ob.waft.space_bone = self.target
                self.report({'INFO'}, f"'{ob.name}': Space Bone '{self.target}'")
            else:
                collider = scene.objects.get(self.target)
                if collider is None:
                    raise WaftError(f"Collider '{self.target}' is not in the scene")
                plane = collider_kind(collider) == ColliderKind.PLANE
                clear = cloth_warnings.clear_collider if is_cage(ob) else warnings.clear_collider
                applied = clear(scene, ob, collider)
                self.report({'INFO'}, f"Collider '{collider.name}' "
                            + (f"moved back {applied:.3f}" if plane
                               else f"scaled by {applied:.3f}"))
        except WaftError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        return {'FINISHED'}
