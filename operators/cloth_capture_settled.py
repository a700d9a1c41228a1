"""``waft.cloth_capture_settled``: save the active cage's simulated state at the current frame as
its settled pose (restored at the start and after cuts and resets)."""

import bpy

from ..addon.bake_api import solver_settings
from ..addon.cloth.settled import capture_settled_pose
from ..core.errors import WaftError
from .scope import ActiveCage


class WAFT_OT_cloth_capture_settled(ActiveCage, bpy.types.Operator):
    """Simulate the cloth from the start frame to the current frame and save how it hangs there;
    with Settled Pose on, bakes start and restart after cuts from it instead of from the
    skinned cage"""

    bl_idname = "waft.cloth_capture_settled"
    bl_label = "Capture Settled Pose"
    bl_options = {'REGISTER', 'UNDO'}

    def execute(self, context):
        scene = context.scene
        try:
            captured = capture_settled_pose(scene, context.active_object,
                                            settings=solver_settings(scene))
        except WaftError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        self.report({'INFO'}, f"Captured the settled pose of '{captured.cage}' at frame "
                              f"{captured.frame} ({captured.frames} frames simulated; up to "
                              f"{captured.largest_offset:.3g} from the skinned cage)")
        return {'FINISHED'}
