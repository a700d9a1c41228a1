"""Evaluate only what the bake reads while it samples the scene.

Sampling sets the frame (and sub-frames) hundreds of times, and Blender evaluates every visible
object each time: a 250k-vertex skinned body that no Waft setup reads cost 11 ms per frame set,
so a 4-bone tail baked ten times slower in a real character scene than alone. While the bake's
systems sample and solve, ``unneeded_hidden`` disables in viewports (``Object.hide_viewport``)
the objects that are costly to evaluate (armatures, and geometry with modifiers, shape keys or
particles) and that no Waft setup reads, and gives every one its own state back afterwards
(also when the bake fails or is cancelled, and around a save meanwhile).

This cannot change what is sampled: Blender's dependency graph still evaluates a disabled
object that an evaluated one depends on (a constraint target, an Armature modifier's rig, a
parent, a driver's target: measured, a bone copying a vertex group of a disabled skinned mesh
follows it exactly), so only the objects Waft itself reads must stay enabled
(``needed_objects``): every object a system claims, every collider, every object a Waft setting
points to (scalp, pin body, cloth armature; not the outputs it writes), a hair Curves' surface,
and their parents. Jiggle
Physics' bake hides every object that is not an armature, an empty or a collider for the same
reason.
"""

from __future__ import annotations

import contextlib

import bpy

from . import systems

WAFT_GROUPS = ("waft", "waft_collider", "waft_hair", "waft_cloth", "waft_ragdoll", "waft_rod")
GEOMETRY = {'MESH', 'CURVE', 'SURFACE', 'FONT', 'META', 'CURVES', 'POINTCLOUD', 'VOLUME',
            'GPENCIL', 'GREASEPENCIL'}

_hidden: list = []  # the objects disabled by the running bake, for the save handlers


_REFERENCES: dict[str, tuple] = {}  # {group type: ((property, is a collection), …)}
# Pointers to what a bake writes, never reads: the render strands' Curves object (rebuilt by
# geometry nodes from its bake on every frame set: 25 ms each in the head-turn sample, 6.8 s
# of a 12 s re-bake) and the cloth's cage output.
WRITTEN = {"output", "cage_output"}


def _references(group) -> tuple:
    """The pointer and collection properties of a property group's type (looked up once:
    walking ``bl_rna.properties`` each time was most of the cost)."""
    key = group.bl_rna.identifier
    found = _REFERENCES.get(key)
    if found is None:
        found = _REFERENCES[key] = tuple(
            (prop.identifier, prop.type == 'COLLECTION') for prop in group.bl_rna.properties
            if prop.type in {'POINTER', 'COLLECTION'} and prop.identifier != "rna_type"
            and prop.identifier not in WRITTEN)
    return found


def _pointed_objects(group, out: set, depth: int = 0) -> None:
    """Objects (and the objects of collections) that a Waft property group points to,
    nested groups and their collections included."""
    if depth > 3:
        return
    for name, is_collection in _references(group):
        value = getattr(group, name, None)
        if is_collection:
            for item in value if value is not None else ():
                if isinstance(item, bpy.types.PropertyGroup):
                    _pointed_objects(item, out, depth + 1)
        elif isinstance(value, bpy.types.Object):
            out.add(value)
        elif isinstance(value, bpy.types.Collection):
            out.update(value.all_objects)
        elif isinstance(value, bpy.types.PropertyGroup):
            _pointed_objects(value, out, depth + 1)


def needed_objects(scene) -> set:
    """The objects Waft reads while it samples ``scene`` (see module doc)."""
    modules = systems.system_modules()
    roots = {ob for ob in scene.objects
             if ob.waft_collider.enabled or any(m.claims(ob) for m in modules)}
    needed = set(roots)
    for ob in roots:
        for name in WAFT_GROUPS:
            group = getattr(ob, name, None)
            if group is not None:
                _pointed_objects(group, needed)
        if ob.type == 'CURVES' and ob.data.surface is not None:
            needed.add(ob.data.surface)
    for ob in list(needed):
        parent = ob.parent
        while parent is not None:
            needed.add(parent)
            parent = parent.parent
    return needed


def costly(ob) -> bool:
    """Evaluating ``ob`` takes time at every frame set (an armature's pose; a deformed or
    generated geometry)."""
    if ob.type == 'ARMATURE':
        return True
    if ob.type not in GEOMETRY:
        return False
    data = ob.data
    return bool(len(ob.modifiers) or getattr(data, "shape_keys", None) is not None
                or getattr(ob, "particle_systems", ()))


@contextlib.contextmanager
def unneeded_hidden(scene):
    """Disable in viewports, for the block, the costly objects of ``scene`` Waft does not read;
    each gets its own ``hide_viewport`` back after it."""
    needed = needed_objects(scene)
    hidden = [ob for ob in scene.objects if ob not in needed and not ob.hide_viewport
              and ob.library is None and costly(ob)]  # (a linked object cannot be changed)
    for ob in hidden:
        ob.hide_viewport = True
    _hidden.extend(hidden)
    try:
        yield hidden
    finally:
        for ob in hidden:
            with contextlib.suppress(ReferenceError):  # deleted meanwhile (a script)
                ob.hide_viewport = False
            _hidden.remove(ob)


@bpy.app.handlers.persistent
def _on_save_pre(*_args) -> None:
    # A save during a modal bake keeps the user's visibility, not the bake's.
    for ob in _hidden:
        with contextlib.suppress(ReferenceError):
            ob.hide_viewport = False


@bpy.app.handlers.persistent
def _on_save_post(*_args) -> None:
    for ob in _hidden:
        with contextlib.suppress(ReferenceError):
            ob.hide_viewport = True


def register() -> None:
    bpy.app.handlers.save_pre.append(_on_save_pre)
    bpy.app.handlers.save_post.append(_on_save_post)


def unregister() -> None:
    for handlers, function in ((bpy.app.handlers.save_pre, _on_save_pre),
                               (bpy.app.handlers.save_post, _on_save_post)):
        if function in handlers:
            handlers.remove(function)
    _hidden.clear()
