"""The live preview plays hair Curves guides too, drawn in the viewport (the groom is never
written while it runs): played forward, each frame's guide points are, bit for bit, the points
the bake stores for that frame; the groom is unchanged; the overlay draws them in world space."""

from __future__ import annotations

import sys
from pathlib import Path

import bpy
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import hair_rigs  # noqa: E402

G, P = 12, 6


def _local_points(ob) -> np.ndarray:
    """The evaluated (baked) points in the Curves object's own space, float32."""
    data = ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    co = np.empty(len(data.points) * 3, dtype=np.float32)
    data.position_data.foreach_get("vector", co)
    return co.reshape(G, P, 3)


def test_played_hair_preview_is_the_bake_bit_for_bit(scene, bake_api, waft_module_name,
                                                     tmp_path):
    scene.frame_start, scene.frame_end = 1, 12
    ob, _scalp, _head = hair_rigs.curves_head(scene, guides=G, points=P)
    hair_rigs.save_first_on_42(tmp_path)
    ob.waft.shape_stiffness = 0.02
    groom = hair_rigs.original_points(ob).copy()
    preview = sys.modules[f"{waft_module_name}.addon.preview"]
    overlay = sys.modules[f"{waft_module_name}.addon.overlay"]
    frames = range(1, 13)
    scene.waft.use_preview = True
    shown, drawn = {}, {}
    for frame in frames:
        scene.frame_set(frame)
        [(name, points, matrix)] = preview.shown_guides(scene)
        assert name == ob.name
        shown[frame] = points.copy()
        drawn[frame] = overlay.previewed_guide_segments(scene)
    state = preview.state(scene)
    assert state.message == "" and sorted(state.cache) == list(frames), state.status()
    np.testing.assert_array_equal(hair_rigs.original_points(ob), groom)  # never written
    scene.waft.use_preview = False
    assert preview.shown_guides(scene) == []
    bake_api.bake_scene(scene)
    moved = 0.0
    for frame in frames:
        scene.frame_set(frame)
        baked = _local_points(ob)
        np.testing.assert_array_equal(shown[frame], baked, err_msg=f"frame {frame}")
        world = hair_rigs.evaluated_points(ob).reshape(G, P, 3)
        # The overlay's lines join consecutive points of each guide, in world space.
        np.testing.assert_allclose(drawn[frame][:, 0].reshape(G, P - 1, 3), world[:, :-1],
                                   atol=1e-5)
        moved = max(moved, float(np.abs(baked - shown[1]).max()))
    assert moved > 0.02  # the guides swing with the turning head
