"""Viewport overlay: every enabled Waft collider drawn as the surface the solvers collide with
(``core/collider_outline.py``; a body mesh by its triangle edges), so a capsule that collides
far bigger than its empty looks, or a plane facing the wrong way, is seen before a bake. Toggle:
*Scene › Waft Bake › Show Collider Shapes* (``Scene.waft.show_collider_shapes``).

*Show Simulation Shapes* (``Scene.waft.show_simulation_shapes``) adds what the bake simulates
with (``overlay_shapes.py``): chain particles' collision spheres, ragdoll bodies and swing-limit
cones, cloth max-distance spheres and pinned vertices. With the live preview on, the hair
Curves guides it simulates, the render strands made from them or from bone chains, and the
simulated cloth cages are drawn as lines (``preview.shown_guides``, ``preview.shown_strands``,
``preview.shown_cages``).

The lines are computed from the same reading as the bake (``reading.read_collider``) and the
evaluated world matrix; a collider the bake would reject is simply not drawn (its error comes at
bake time, where it names the collider).
"""

from __future__ import annotations

import bpy
import numpy as np

from ..core.collider_outline import collider_outline
from ..core.errors import SetupError
from .overlay_shapes import forget_reads, mesh_collider_segments, simulation_lines
from .reading import read_collider

COLOUR = (1.0, 0.55, 0.1, 0.9)  # orange, the colour of "physics" in Blender's own overlays
SELECTED_COLOUR = (1.0, 0.85, 0.3, 1.0)
GUIDE_COLOUR = (0.95, 0.8, 0.35, 1.0)  # the live preview's hair guides (a hair colour)
STRAND_COLOUR = (0.8, 0.65, 0.4, 0.35)  # its render strands: many, so faint
CAGE_COLOUR = (0.3, 0.85, 1.0, 0.9)  # the previewed cloth cage: cyan, what moves
LAYER_COLOURS = {
    "particles": (0.3, 0.85, 1.0, 0.8),  # cyan: what moves
    "bodies": (0.3, 0.85, 1.0, 0.8),
    "limits": (0.45, 1.0, 0.45, 0.7),  # green: how far a joint may swing
    "target": (1.0, 0.2, 0.2, 0.8),  # red: the animation the ragdoll is pulled toward
    "max_distance": (0.55, 0.6, 1.0, 0.35),  # faint blue: many spheres, a bound not a body
    "pinned": (1.0, 0.25, 0.3, 1.0),  # red: held by the animation
}

_handle = None


def collider_segments(scene, view_layer=None) -> tuple[np.ndarray, np.ndarray]:
    """((N, 2, 3) float32 world line segments, (N,) bool selected) of every enabled, visible
    Waft collider of ``scene``: what the overlay draws."""
    segments, selected = [], []
    for ob in scene.objects:
        if not ob.waft_collider.enabled or ob.type != 'EMPTY':
            continue
        if view_layer is not None and not ob.visible_get(view_layer=view_layer):
            continue
        try:
            collider = read_collider(ob)
        except SetupError:
            continue  # named by the bake, which refuses it
        lines = collider_outline(collider.kind, np.array(ob.matrix_world), size=collider.size,
                                 radius_a=collider.radius_a, radius_b=collider.radius_b)
        segments.append(lines)
        selected.append(np.full(len(lines), ob.select_get(view_layer=view_layer)
                                if view_layer is not None else False))
    meshes, meshes_selected = mesh_collider_segments(scene, view_layer)
    segments.append(meshes)
    selected.append(meshes_selected)
    return (np.concatenate(segments).astype(np.float32).reshape(-1, 2, 3),
            np.concatenate(selected).astype(bool))


def previewed_guide_segments(scene) -> np.ndarray:
    """(N, 2, 3) float32 world segments of the hair guides the live preview shows at the
    current frame (the groom itself is never written while it runs)."""
    from .preview import shown_guides

    parts = []
    for _name, points, matrix in shown_guides(scene):
        world = points.astype(np.float64) @ matrix[:3, :3].T + matrix[:3, 3]  # (G, P, 3)
        parts.append(np.stack([world[:, :-1], world[:, 1:]], axis=2).reshape(-1, 2, 3))
    if not parts:
        return np.zeros((0, 2, 3), dtype=np.float32)
    return np.concatenate(parts).astype(np.float32)


def previewed_cage_segments(scene) -> np.ndarray:
    """(N, 2, 3) float32 world segments: the edges of the cloth cages the live preview shows
    at the current frame, where the bake's *Cage Output* puts them."""
    from .preview import shown_cages

    parts = [cage.segments() for _name, cage in shown_cages(scene)]
    if not parts:
        return np.zeros((0, 2, 3), dtype=np.float32)
    return np.concatenate(parts)


_strand_lines: dict = {}  # {id of the ShownStrands drawn last: (it, its segments)}
_gpu_batches: dict = {}  # {colour: (segments, their GPU batch)}, for the render strands


def previewed_strand_segments(scene) -> np.ndarray:
    """(N, 2, 3) float32 world segments of the render strands the live preview shows at the
    current frame: each strand's consecutive points, as the bake writes them. Made once per
    shown frame (the viewport redraws far more often than the frame changes)."""
    from .preview import shown_strands

    parts = []
    for _name, strands in shown_strands(scene):
        segments = _strand_lines.get(id(strands))
        if segments is None or segments[0] is not strands:
            points = strands.positions()
            segments = (strands, np.stack([points[:, :-1], points[:, 1:]], axis=2)
                        .reshape(-1, 2, 3))
            if len(_strand_lines) > 8:
                _strand_lines.clear()
            _strand_lines[id(strands)] = segments
        parts.append(segments[1])
    if not parts:
        return np.zeros((0, 2, 3), dtype=np.float32)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _draw() -> None:
    import gpu
    from gpu_extras.batch import batch_for_shader

    context = bpy.context
    scene = context.scene
    if scene is None:
        return
    batches = []  # (segments, colour)
    if scene.waft.show_collider_shapes:
        segments, selected = collider_segments(scene, context.view_layer)
        batches += [(segments[~selected], COLOUR), (segments[selected], SELECTED_COLOUR)]
    if scene.waft.show_simulation_shapes:
        lines = simulation_lines(scene, context.view_layer)
        batches += [(lines[name], colour) for name, colour in LAYER_COLOURS.items()]
    batches += [(previewed_strand_segments(scene), STRAND_COLOUR),
                (previewed_guide_segments(scene), GUIDE_COLOUR),
                (previewed_cage_segments(scene), CAGE_COLOUR)]
    batches = [(segments, colour) for segments, colour in batches if len(segments)]
    if not batches:
        return
    shader = gpu.shader.from_builtin('UNIFORM_COLOR')
    gpu.state.blend_set('ALPHA')
    gpu.state.line_width_set(1.5)
    for segments, colour in batches:
        # The render strands' lines change once per frame, not per redraw: their GPU batch is
        # kept with them (hundreds of thousands of lines).
        cached = _gpu_batches.get(colour)
        if cached is not None and cached[0] is segments:
            batch = cached[1]
        else:
            batch = batch_for_shader(shader, 'LINES', {"pos": segments.reshape(-1, 3)})
            if colour == STRAND_COLOUR:
                _gpu_batches[colour] = (segments, batch)
        shader.uniform_float("color", colour)
        batch.draw(shader)
    gpu.state.line_width_set(1.0)
    gpu.state.blend_set('NONE')


@bpy.app.handlers.persistent
def _on_depsgraph_update(*_args) -> None:
    forget_reads()


def register() -> None:
    global _handle
    if _handle is None:
        _handle = bpy.types.SpaceView3D.draw_handler_add(_draw, (), 'WINDOW', 'POST_VIEW')
    bpy.app.handlers.depsgraph_update_post.append(_on_depsgraph_update)
    bpy.app.handlers.load_post.append(_on_depsgraph_update)


def unregister() -> None:
    global _handle
    if _handle is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_handle, 'WINDOW')
        _handle = None
    for handlers in (bpy.app.handlers.depsgraph_update_post, bpy.app.handlers.load_post):
        if _on_depsgraph_update in handlers:
            handlers.remove(_on_depsgraph_update)
    forget_reads()
