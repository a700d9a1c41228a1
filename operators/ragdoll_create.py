"""``waft.ragdoll_create``: make the selected pose bones (or every humanoid bone) ragdoll bodies.

Bones between a chosen bone and its nearest chosen ancestor are added so the bodies form one
tree; humanoid names get their capsule radius and joint limits (addon/ragdoll/humanoid.py).
"""

import bpy
import numpy as np

from ..addon import constrained
from ..addon.compat import pose_bone_selected
from ..addon.ragdoll.create import (
    apply_defaults,
    character_forward,
    character_height,
    fill_tree,
    fit_limits_to_animation,
    hinge_of,
    humanoid_bones,
    rigify_parents,
    role_shares,
    welded_segment,
)
from ..addon.ragdoll.takes import RIG_ACTIONS, SCOPE_ITEMS, TABLE, fit_takes, is_animated
from ..addon.ragdoll.warnings import fit_radius_to_ground
from ..core.errors import SetupError
from .scope import ActiveArmature


class WAFT_OT_ragdoll_create(ActiveArmature, bpy.types.Operator):
    """Make the selected pose bones rigid bodies of a Waft ragdoll, with humanoid defaults"""

    bl_idname = "waft.ragdoll_create"
    bl_label = "Create Waft Ragdoll"
    bl_options = {'REGISTER', 'UNDO'}

    source: bpy.props.EnumProperty(
        name="Bones",
        items=(("SELECTED", "Selected", "The selected pose bones"),
               ("HUMANOID", "Humanoid", "Every bone with a humanoid name (hips, spine, chest, "
                "neck, head, shoulders, arms, hands, legs, feet); the deforming ones when "
                "there are (a Rigify rig's DEF bones)"),
               ("COLLECTION", "Bone Collection",
                "Every bone of a bone collection (a rig's deform layer, whatever its bones are "
                "called); humanoid names still get humanoid capsules and limits")),
        default="SELECTED")
    bone_collection: bpy.props.StringProperty(
        name="Bone Collection", description="The bone collection whose bones become bodies")
    replace: bpy.props.BoolProperty(
        name="Replace", default=True,
        description="Bones not chosen stop being bodies")
    fit_limits: bpy.props.EnumProperty(
        name="Fit Limits To", items=SCOPE_ITEMS, default=RIG_ACTIONS,
        description="The animations each joint's limits are widened to, so the character's "
                    "own animation never meets a limit")
    # The option before Fit Limits To (a bool), kept so scripts that pass it still run: False
    # is Fit Limits To None, True leaves Fit Limits To as it is.
    fit_to_animation: bpy.props.BoolProperty(
        name="Fit Limits to Animation", default=True, options={'HIDDEN', 'SKIP_SAVE'},
        description="Older form of Fit Limits To: off keeps the humanoid table's limits")

    def draw(self, context):
        layout = self.layout
        layout.prop(self, "source")
        if self.source == "COLLECTION":
            layout.prop_search(self, "bone_collection", context.active_object.data,
                               "collections_all")
        layout.prop(self, "replace")
        layout.prop(self, "fit_limits")

    def execute(self, context):
        ob = context.active_object
        if self.source == "COLLECTION":
            collection = ob.data.collections_all.get(self.bone_collection)
            if collection is None:
                self.report({'ERROR'}, f"Armature '{ob.name}': no bone collection "
                                       f"'{self.bone_collection}'")
                return {'CANCELLED'}
            chosen = {bone.name for bone in collection.bones}
        elif self.source == "HUMANOID":
            chosen = humanoid_bones([pb.name for pb in ob.pose.bones],
                                    {b.name: b.use_deform for b in ob.data.bones})
        else:
            chosen = {pb.name for pb in ob.pose.bones if pose_bone_selected(pb)}
        if not chosen:
            self.report({'ERROR'}, f"Armature '{ob.name}': no bones chosen (select pose bones, "
                                   f"or use Humanoid)")
            return {'CANCELLED'}
        parents = {pb.name: pb.parent.name if pb.parent else None for pb in ob.pose.bones}
        hung = rigify_parents(parents, chosen)  # bone -> the bone (body) it hangs from
        try:
            names = fill_tree(hung, chosen)
        except SetupError as error:
            self.report({'ERROR'}, f"Armature '{ob.name}': {error}")
            return {'CANCELLED'}
        world = np.array(ob.matrix_world)
        points = np.array([tuple(b.head_local) + (1.0,) for b in ob.data.bones]
                          + [tuple(b.tail_local) + (1.0,) for b in ob.data.bones])
        height = character_height((points @ world.T)[:, :3])
        if self.replace:
            for pb in ob.pose.bones:
                pb.waft_ragdoll.body = False
        shares = role_shares(names)
        unit = context.scene.unit_settings.scale_length
        forward = character_forward(ob, names)
        for name in names:
            apply_defaults(ob.pose.bones[name], height, shares.get(name, 1.0), unit,
                           hinge=hinge_of(ob, name, hung, forward),
                           weld=welded_segment(ob, name, hung))
        ob.waft_ragdoll.enabled = True
        # The table's radii are fractions of the height; a foot bone runs 1-2 cm above the sole
        # (Rigify 1.7, the Godot glTF 1.3 cm) under a 4.5 cm capsule, which started 3 cm inside
        # the ground and was pushed out on the bake's first substep: a jump.
        grounded = fit_radius_to_ground(context.scene, ob, rest=True, names=set(names))
        fitted = 0
        scope = self.fit_limits if self.fit_to_animation else TABLE
        takes = fit_takes(context.scene, ob, scope) if is_animated(ob, scope) else []
        if takes:
            fitted = fit_limits_to_animation(context.scene, ob, names, hung, takes)
        self.report({'INFO'}, f"Ragdoll '{ob.name}': {len(names)} bodies, root '{names[0]}'"
                              + (f"; {fitted} joint limits widened to {len(takes)} "
                                 f"animations" if fitted else "")
                              + (f"; {grounded} radii fitted to the ground" if grounded
                                 else ""))
        overridden = constrained.overriding_constraints(ob, names)
        if overridden and context.scene.waft.constrained_bones != constrained.TURN_OFF:
            # Rigify's DEF bones copy the tweak bones: the baked ragdoll would not show.
            context.scene.waft.constrained_bones = constrained.TURN_OFF
            self.report({'WARNING'}, f"Ragdoll '{ob.name}': {len(overridden)} bodies follow "
                                     f"constraints (e.g. '{next(iter(overridden))}'); Scene › "
                                     f"Waft › Constrained Bones is now Turn Off for Result")
        return {'FINISHED'}
