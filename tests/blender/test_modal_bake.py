"""The UI path of ``waft.bake``: the modal loop stepped by timer events, and ESC.

Headless Blender never calls ``invoke``/``modal`` (reference/blender-api.md §5), so these tests
drive the operator's ``modal`` method directly with stand-in events and a stand-in operator
instance, on real scenes: what is checked is the operator's own logic, that a finished modal
bake writes exactly what ``execute`` writes and that a cancelled one changes nothing.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import bpy
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import waft_rigs as rigs  # noqa: E402


class FakeWindowManager:
    def __init__(self) -> None:
        self.progress: list[int] = []

    def progress_update(self, value: int) -> None:
        self.progress.append(value)

    def progress_end(self) -> None:
        self.progress.append(-1)

    def event_timer_remove(self, timer) -> None:
        pass


def modal_operator(waft, scene):
    """(operator class, stand-in self, stand-in context) with the bake generator started."""
    cls = sys.modules[waft.__name__ + ".operators.bake"].WAFT_OT_bake
    bake_api = sys.modules[waft.__name__ + ".addon.bake_api"]
    reports: list[tuple[set, str]] = []
    status: list = []
    op = SimpleNamespace(
        _steps=bake_api.bake_scene_steps(scene, sample_chunk=3), _timer=None,
        report=lambda kind, message: reports.append((kind, message)), reports=reports)
    op._finish = lambda context: cls._finish(op, context)
    context = SimpleNamespace(
        window_manager=FakeWindowManager(),
        workspace=SimpleNamespace(status_text_set=status.append), scene=scene)
    return cls, op, context, status


def run_modal(cls, op, context, events) -> list:
    results = []
    for kind in events:
        result = cls.modal(op, context, SimpleNamespace(type=kind))
        results.append(result)
        if result & {'FINISHED', 'CANCELLED'}:
            break
    return results


def rotation_keys(ob) -> np.ndarray:
    action = ob.animation_data.nla_tracks["Waft"].strips[0].action
    return np.array([[k.co[1] for k in fc.keyframe_points] for fc in rigs.action_fcurves(action)])


def test_modal_bake_reports_progress_and_writes_what_execute_writes(scene, waft, monkeypatch):
    ob = rigs.chain_rig(scene, count=3, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 12
    cls, op, context, status = modal_operator(waft, scene)
    # One step per tick, to see every chunk's progress (the real budget is 50 ms per tick).
    monkeypatch.setattr(sys.modules[cls.__module__], "TICK_BUDGET_S", 0.0)
    results = run_modal(cls, op, context, ['TIMER'] * 200)
    assert results[-1] == {'FINISHED'}
    assert len(results) > 4  # sampled in chunks of 3 frames, then solved, then written
    progress = context.window_manager.progress
    assert progress[-1] == -1  # progress_end once finished
    assert progress[:-1] and all(0 <= value <= 100 for value in progress[:-1])
    assert any("Esc to cancel" in (text or "") for text in status) and status[-1] is None
    assert op.reports[-1][0] == {'INFO'}
    modal_keys = rotation_keys(ob)

    assert bpy.ops.waft.bake() == {'FINISHED'}  # execute: the headless path
    assert np.array_equal(modal_keys, rotation_keys(ob))


def test_a_small_bake_finishes_in_a_tick_or_two(scene, waft):
    """A tail's whole bake takes well under the 50 ms budget: it must not wait a timer tick
    per chunk (111 ticks of 10 ms for a 4-bone tail before)."""
    ob = rigs.chain_rig(scene, count=4, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 100
    cls, op, context, _ = modal_operator(waft, scene)
    results = run_modal(cls, op, context, ['TIMER'] * 200)
    assert results[-1] == {'FINISHED'}
    assert len(results) <= 12  # bounded by the bake's own time / 50 ms, not by its chunks
    assert ob.animation_data.nla_tracks.get("Waft") is not None


def test_escape_cancels_and_changes_nothing(scene, waft, monkeypatch):
    ob = rigs.chain_rig(scene, count=3, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 30
    scene.frame_set(7)
    before = rigs.fingerprint(scene)
    cls, op, context, status = modal_operator(waft, scene)
    monkeypatch.setattr(sys.modules[cls.__module__], "TICK_BUDGET_S", 0.0)  # Esc mid-bake
    results = run_modal(cls, op, context, ['TIMER', 'TIMER', 'MOUSEMOVE', 'ESC'])
    assert results[2] == {'PASS_THROUGH'}
    assert results[-1] == {'CANCELLED'}
    assert op.reports[-1][0] == {'WARNING'} and "nothing was changed" in op.reports[-1][1]
    assert rigs.fingerprint(scene) == before
    assert scene.frame_current == 7
    assert ob.animation_data is None or ob.animation_data.nla_tracks.get("Waft") is None


class TimerLoop(FakeWindowManager):
    """Blender's event loop as it serves the operator's window timer (wm_window_timers_process
    in wm_window.cc), on a clock that the operator's ticks advance by the time they really take:
    the timer fires once its next time has passed, which then moves to its start plus the first
    whole number of steps past the time it has run (a zero step: its start, always due);
    otherwise the loop sleeps until then, 5 ms at most per pass (an idle tick)."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        self.step = None

    def progress_begin(self, low, high) -> None:
        pass

    def modal_handler_add(self, operator) -> None:
        pass

    def event_timer_add(self, time_step, window=None):
        self.step, self.start, self.last = float(time_step), self.now, self.now
        self.next, self.duration = self.now + float(time_step), 0.0
        return object()

    def run(self, cls, op, context) -> tuple[set, int, int]:
        """Serve the timer until the bake ends: (result, ticks, idle ticks after the first)."""
        ticks = idle = 0
        while True:
            if self.now <= self.next:  # not due: the loop sleeps
                self.now += min(self.next - self.now, 0.005) + 1e-7
                idle += ticks > 0
                continue
            self.duration += self.now - self.last
            self.last = self.now
            self.next = self.start + (self.step * math.ceil(self.duration / self.step)
                                      if self.step else 0.0)
            began = time.perf_counter()
            result = cls.modal(op, context, SimpleNamespace(type='TIMER'))
            self.now += time.perf_counter() - began
            ticks += 1
            if result & {'FINISHED', 'CANCELLED'}:
                return result, ticks, idle


@pytest.mark.parametrize("one_step_per_tick", [False, True])
def test_a_tail_bakes_from_its_first_tick_to_its_last_without_idle_ticks(
        scene, waft, monkeypatch, one_step_per_tick):
    """The 4-bone, 100-frame tail through the Bake button's timer: each tick is served as soon
    as Blender's loop has redrawn and handled the events, never after a sleep while the bake
    has work left. With a 10 ms timer a tick shorter than the step waited for the next grid
    point (the ~110 steps of the one-step-per-tick run below: 534 idle passes); a tick of the
    full 50 ms budget ends past it, so there only the first tick waited (10 ms after the
    click, before the first step)."""
    ob = rigs.chain_rig(scene, count=4, direction=(1.0, 0.0, 0.0))
    scene.frame_start, scene.frame_end = 1, 100
    cls, op, _, _ = modal_operator(waft, scene)
    if one_step_per_tick:  # every step its own tick: a slow machine's bake, many ticks
        monkeypatch.setattr(sys.modules[cls.__module__], "TICK_BUDGET_S", 0.0)
    loop = TimerLoop()
    context = SimpleNamespace(window_manager=loop, window=object(), scene=scene,
                              workspace=SimpleNamespace(status_text_set=lambda text: None))
    assert cls._start_modal(op, context) == {'RUNNING_MODAL'}
    result, ticks, idle = loop.run(cls, op, context)
    assert result == {'FINISHED'}
    assert idle == 0, f"{idle} idle ticks among {ticks}"
    assert ticks > 20 if one_step_per_tick else ticks <= 12
    assert ob.animation_data.nla_tracks.get("Waft") is not None
