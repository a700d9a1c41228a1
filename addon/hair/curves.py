"""The render-strand Curves object and its packed geometry-nodes bake.

blender-api.md §3 (d3): a temporary ``frame_change_pre`` handler writes each frame's strand
points into the Curves data while ``object.geometry_node_bake_single`` steps through the frames;
a geometry-nodes modifier (Group Input → Bake → Group Output) stores them, PACKED into the
.blend (Blender 4.3+), so the strands play and render after save and reopen without Waft. The
handler is removed right after the bake. Blender 4.2 has no packed bakes: the bake goes to disk
next to the saved .blend (``//waft_bake/<object>``), or to a temporary folder when the file was
never saved (then it does not survive a reopen: save before baking on 4.2).

Alembic export (``wm.alembic_export``) works because the object carries a modifier: without
one the exporter writes a single static sample (blender-api.md §3, the static-export trap).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable

import bpy
import numpy as np

from . import rebuild_nodes

MODIFIER = "Waft Strands"
NODE_GROUP = "Waft Strands Bake"


def bake_node_group():
    """Group Input → Bake → Group Output (shared by every object baked point by point; the
    Bake node with its Scene Time item is ``rebuild_nodes.frame_bake``)."""
    group = bpy.data.node_groups.get(NODE_GROUP)
    if group is not None and group.bl_idname == 'GeometryNodeTree' and any(
            node.bl_idname == 'GeometryNodeInputSceneTime' for node in group.nodes):
        return group
    group = bpy.data.node_groups.new(NODE_GROUP, 'GeometryNodeTree')
    group.interface.new_socket("Geometry", in_out='INPUT', socket_type='NodeSocketGeometry')
    group.interface.new_socket("Geometry", in_out='OUTPUT', socket_type='NodeSocketGeometry')
    source = group.nodes.new('NodeGroupInput')
    sink = group.nodes.new('NodeGroupOutput')
    source.location, sink.location = (-300, 0), (300, 0)
    group.links.new(rebuild_nodes.frame_bake(rebuild_nodes.Tree(group), source.outputs[0]),
                    sink.inputs[0])
    return group


def new_curves_data(name: str, *, strands: int, points: int, positions: np.ndarray,
                    radius: np.ndarray):
    """Hair Curves data: ``strands`` curves of ``points`` points, a per-point radius."""
    data = bpy.data.hair_curves.new(name)
    data.add_curves([points] * strands)
    data.position_data.foreach_set("vector", positions.astype(np.float32).ravel())
    attribute = data.attributes.get("radius") or data.attributes.new("radius", 'FLOAT', 'POINT')
    attribute.data.foreach_set("value", np.tile(radius.astype(np.float32), strands))
    if hasattr(data, "set_types"):  # 4.5+; 4.2 keeps Catmull-Rom, which passes the points too
        data.set_types(type='POLY')
    return data


def new_binding_data(name: str, *, roots: np.ndarray, tips: np.ndarray,
                     attributes: dict[str, tuple[str, np.ndarray]]):
    """Hair Curves data for a compact bake: one two-point curve (root, tip at rest) per strand
    and its binding as curve attributes ``{name: (type, values)}``; the rebuild tree resamples
    each curve to the LOD and places its points every frame."""
    data = bpy.data.hair_curves.new(name)
    data.add_curves([2] * len(roots))
    data.position_data.foreach_set(
        "vector", np.stack([roots, tips], axis=1).astype(np.float32).ravel())
    for key, (kind, values) in attributes.items():
        attribute = data.attributes.new(key, kind, 'CURVE')
        field = "vector" if kind == 'FLOAT_VECTOR' else "value"
        dtype = np.int32 if kind == 'INT' else np.float32
        attribute.data.foreach_set(field, np.ascontiguousarray(values, dtype=dtype).ravel())
    if hasattr(data, "set_types"):
        data.set_types(type='POLY')
    return data


def strand_object(scene, name: str, existing, data):
    """Put ``data`` on the existing output object (keeping its materials) or a new one."""
    ob = existing
    if ob is None or ob.type != 'CURVES':
        ob = bpy.data.objects.new(name, data)
        scene.collection.objects.link(ob)
        return ob
    old = ob.data
    for material in old.materials:
        data.materials.append(material)
    ob.data = data
    if old.users == 0:
        bpy.data.hair_curves.remove(old)
    return ob


def _bake_directory(ob) -> str:
    if bpy.data.filepath:
        return f"//waft_bake/{bpy.path.clean_name(ob.name)}"
    return os.path.join(tempfile.mkdtemp(prefix="waft_bake_"), bpy.path.clean_name(ob.name))


def packed_bakes() -> bool:
    """Blender 4.3+ packs bakes into the .blend (``NodesModifier.bake_target``)."""
    return hasattr(bpy.types.NodesModifier, "bake_target") or \
        "bake_target" in bpy.types.NodesModifier.bl_rna.properties


def remove_bake(ob) -> bool:
    """Remove Waft's bake modifier (and with it the packed bake); True if there was one."""
    found = [m for m in ob.modifiers if m.name == MODIFIER]
    for modifier in found:
        ob.modifiers.remove(modifier)
    return bool(found)


def _bake_modifier(ob, group, *, frame_start: int, frame_end: int, first: bool = False):
    """A fresh Waft bake modifier running ``group``, its bake set to the frame range."""
    remove_bake(ob)
    md = ob.modifiers.new(MODIFIER, 'NODES')
    md.node_group = group
    if first and len(ob.modifiers) > 1 and hasattr(ob.modifiers, "move"):
        ob.modifiers.move(len(ob.modifiers) - 1, 0)
        md = ob.modifiers[0]
    if packed_bakes():
        md.bake_target = 'PACKED'
    else:
        md.bake_directory = _bake_directory(ob)
    return md


def _run_bake(scene, ob, md, *, frame_start: int, frame_end: int,
              write_frame: Callable[[int], None]) -> None:
    """Step the frames with ``write_frame(frame)`` as a temporary frame-change handler while
    ``object.geometry_node_bake_single`` stores what the modifier's Bake node receives."""
    bpy.context.view_layer.update()  # the modifier lists its bakes once evaluated
    bake = md.bakes[0]
    bake.bake_mode = 'ANIMATION'
    bake.use_custom_simulation_frame_range = True
    bake.frame_start, bake.frame_end = frame_start, frame_end

    def handler(scene_, _depsgraph=None) -> None:
        write_frame(min(max(scene_.frame_current, frame_start), frame_end))

    frame = scene.frame_current, scene.frame_subframe
    bpy.app.handlers.frame_change_pre.append(handler)
    try:
        result = bpy.ops.object.geometry_node_bake_single(
            session_uid=ob.session_uid, modifier_name=md.name, bake_id=bake.bake_id)
    finally:
        bpy.app.handlers.frame_change_pre.remove(handler)
        scene.frame_set(frame[0], subframe=frame[1])
    if 'FINISHED' not in result:
        raise RuntimeError(f"Baking the strands of '{ob.name}' failed: {result}")


def bake_animation(scene, ob, *, frame_start: int, frame_end: int,
                   positions_at: Callable[[int], np.ndarray], rest: np.ndarray | None = None,
                   first: bool = False) -> None:
    """Bake ``positions_at(frame)`` (flat float32 point positions) into a packed GN bake.

    ``rest``: positions left in the Curves data afterwards (default: the first frame's);
    ``first``: put the bake modifier first in the stack (guides feeding the user's modifiers).
    """
    md = _bake_modifier(ob, bake_node_group(), frame_start=frame_start, frame_end=frame_end,
                        first=first)
    data = ob.data

    def write_frame(frame: int) -> None:
        data.position_data.foreach_set("vector", positions_at(frame))
        data.update_tag()

    try:
        _run_bake(scene, ob, md, frame_start=frame_start, frame_end=frame_end,
                  write_frame=write_frame)
    finally:
        # Leave the rest data (the first frame's, or the user's groom) as the bake's input.
        data.position_data.foreach_set(
            "vector", positions_at(frame_start) if rest is None else rest)
        data.update_tag()


def bake_carrier(scene, ob, *, frame_start: int, frame_end: int, sizes: list[int],
                 carrier_at: Callable[[int], np.ndarray], scalp) -> None:
    """Bake a compact carrier per frame (``core/hair/playback.py``): the strand object's data
    is swapped for a small Curves of ``sizes`` points while the bake runs, so the Bake node
    stores ``carrier_at(frame)``; afterwards the rebuild tree turns the object's own data (one
    two-point curve per strand, with its binding) into the strands of each frame."""
    md = _bake_modifier(ob, rebuild_nodes.rebuild_node_group(), frame_start=frame_start,
                        frame_end=frame_end)
    md[rebuild_nodes.node_group_input(md.node_group, rebuild_nodes.SCALP)] = scalp
    strands = ob.data
    carrier = bpy.data.hair_curves.new(f"{strands.name} carrier")
    carrier.add_curves(sizes)
    for material in strands.materials:  # same slots: swapping data never drops object materials
        carrier.materials.append(material)

    def write_frame(frame: int) -> None:
        carrier.position_data.foreach_set("vector", carrier_at(frame).ravel())
        carrier.update_tag()

    write_frame(frame_start)
    ob.data = carrier
    try:
        _run_bake(scene, ob, md, frame_start=frame_start, frame_end=frame_end,
                  write_frame=write_frame)
    finally:
        ob.data = strands
        bpy.data.hair_curves.remove(carrier)


def export_alembic(scene, ob, filepath: str, *, frame_start: int, frame_end: int) -> str:
    """Export only ``ob`` (its evaluated, baked strands) to an Alembic file; returns the path."""
    path = bpy.path.abspath(filepath)
    if not path.lower().endswith(".abc"):
        path += ".abc"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    view_layer = bpy.context.view_layer
    selected = [o for o in view_layer.objects if o.select_get()]
    active = view_layer.objects.active
    try:
        for other in selected:
            other.select_set(False)
        ob.select_set(True)
        view_layer.objects.active = ob
        bpy.ops.wm.alembic_export(filepath=path, start=frame_start, end=frame_end,
                                  selected=True, export_hair=True, export_particles=False,
                                  evaluation_mode='RENDER')
    finally:
        ob.select_set(False)
        for other in selected:
            other.select_set(True)
        view_layer.objects.active = active
    return path
