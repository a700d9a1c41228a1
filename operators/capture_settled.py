"""``waft.capture_settled``: save the active setup's simulated state at the current frame as its
settled pose (cloth cages, bone-chain armatures, hair guide Curves), restored at the start and
after animation cuts."""

import bpy

from ..addon.bake_api import solver_settings
from ..addon.cloth.settled import capture_settled_pose as capture_cloth
from ..addon.hair.system import claims as is_hair_guides
from ..addon.strands.settled import capture_settled_pose as capture_strands
from ..core.errors import WaftError


def _capture_for(ob):
    """The capture function for ``ob``, None when it is no Waft setup that has a settled pose."""
    if ob is None:
        return None
    if ob.type == 'MESH' and ob.waft_cloth.enabled:
        return capture_cloth
    if (ob.type == 'ARMATURE' and ob.waft.enabled) or is_hair_guides(ob):
        return capture_strands
    return None


class WAFT_OT_capture_settled(bpy.types.Operator):
    """Save how the active cage, chains or hair guides hang at the current frame"""

    bl_description = (
        "Simulate the active cloth cage, bone chains or hair guides from the start frame to "
        "the current frame and save how they hang there; with Settled Pose on, bakes start, "
        "and restart after cuts, from it instead of from the animation"
    )

    bl_idname = "waft.capture_settled"
    bl_label = "Capture Settled Pose"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return _capture_for(context.active_object) is not None

    def execute(self, context):
        scene, ob = context.scene, context.active_object
        try:
            captured = _capture_for(ob)(scene, ob, settings=solver_settings(scene))
        except WaftError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        self.report({'INFO'}, f"Captured the settled pose of '{captured.name}' at frame "
                              f"{captured.frame} ({captured.frames} frames simulated; up to "
                              f"{captured.largest_offset:.3g} from the animation)")
        return {'FINISHED'}
