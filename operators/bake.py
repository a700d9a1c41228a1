"""``waft.bake``: bake every Waft setup (or the active one) over the scene frame range.

``execute`` runs the whole bake synchronously: that is the headless path, because modal
operators and timers never run without a window (reference/blender-api.md §5). ``invoke`` (UI)
steps ``bake_scene_steps`` from a timer so Blender stays responsive, shows progress, and ESC or
right-click cancels before anything is written.
"""

import time

import bpy

from ..addon import bake_api, constrained
from ..core.errors import WaftError
from .scope import scope_objects, scope_property

# Work done per timer tick before Blender gets the event loop back (redraw, Esc): 20 updates a
# second. One step per tick made a 4-bone tail that bakes in 71 ms wait 111 ticks of 10 ms.
TICK_BUDGET_S = 0.05
# The timer's interval: 0 fires it on every pass of Blender's event loop, right after the redraw
# and the events a tick leaves for it (wm_window_timers_process: a zero-step timer is always due,
# so the loop never sleeps while the bake has work). A 10 ms timer fires on its own 10 ms grid:
# the first tick came 10 ms after the click (a quarter of a 39 ms tail bake), and a tick shorter
# than the step (one step per tick) waited for the next grid point. (A tick of the full budget
# ends past the grid point: the next one is due at once either way.)
TIMER_STEP_S = 0.0


def report_done(operator, report) -> None:
    """The bake's summary, then every overridden-bone warning (``addon/constrained.py``)."""
    operator.report({'INFO'}, report.summary())
    for line in constrained.warning_lines(report.warnings):
        operator.report({'WARNING'}, line)


class WAFT_OT_bake(bpy.types.Operator):
    """Simulate the Waft setups and write the result to a new action on the Waft NLA track"""

    bl_idname = "waft.bake"
    bl_label = "Bake Waft"
    bl_options = {'REGISTER', 'UNDO'}

    scope: scope_property()

    _timer = None
    _steps = None

    def _kwargs(self, context) -> dict:
        return {"objects": scope_objects(context, self.scope)}

    def execute(self, context):
        try:
            report = bake_api.bake_scene(context.scene, **self._kwargs(context))
        except WaftError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        report_done(self, report)
        return {'FINISHED'}

    def invoke(self, context, event):
        if context.window is None or bpy.app.background:
            return self.execute(context)
        try:
            self._steps = bake_api.bake_scene_steps(context.scene, **self._kwargs(context))
        except WaftError as error:
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        return self._start_modal(context)

    def _start_modal(self, context):
        """Progress bar, the tick timer (``TIMER_STEP_S``) and the modal handler."""
        wm = context.window_manager
        wm.progress_begin(0, 100)
        self._timer = wm.event_timer_add(TIMER_STEP_S, window=context.window)
        wm.modal_handler_add(self)
        return {'RUNNING_MODAL'}

    def modal(self, context, event):
        if event.type in {'ESC', 'RIGHTMOUSE'}:
            self._steps.close()  # restores frame and track mute; nothing was written yet
            self._finish(context)
            self.report({'WARNING'}, "Waft bake cancelled; nothing was changed")
            return {'CANCELLED'}
        if event.type != 'TIMER':
            return {'PASS_THROUGH'}
        deadline = time.perf_counter() + TICK_BUDGET_S
        try:
            progress = next(self._steps)
            while time.perf_counter() < deadline:
                progress = next(self._steps)
        except StopIteration as stop:
            self._finish(context)
            report_done(self, stop.value)
            return {'FINISHED'}
        except WaftError as error:
            self._finish(context)
            self.report({'ERROR'}, str(error))
            return {'CANCELLED'}
        context.window_manager.progress_update(int(100 * progress.fraction))
        context.workspace.status_text_set(
            f"Waft: {progress.phase} {progress.done}/{progress.total} (Esc to cancel)")
        return {'RUNNING_MODAL'}

    def _finish(self, context) -> None:
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        context.workspace.status_text_set(None)
