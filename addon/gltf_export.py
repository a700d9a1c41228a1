"""One-click glTF export with the physics in the clips (``waft.export_gltf``).

Blender's glTF exporter in Actions mode writes one animation per action it finds on an object:
the active action and each single-strip NLA track. After a bake that is the user's action, Waft's
result action and its rest action: three clips, none of them the motion the viewport plays.
Export therefore (1) makes the merged copy of each armature's current bake (merging.py), (2) for
the time of the export only, plays every merged copy of the armature on its own track with
everything else muted and no active action, selects the armatures and their meshes, and (3)
puts every one of those things back exactly (in ``finally``: a failed export changes nothing).
The exporter then writes one clip per merged copy, named after it (``Walk (Waft)``), sampled
from the copy's baked frame range.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass

import bpy

from ..core.errors import SetupError
from . import compat
from .merging import copy_slot, merge_results, merged_copies
from .preview import suspended


@dataclass(frozen=True)
class ExportReport:
    filepath: str
    clips: tuple[str, ...]
    objects: tuple[str, ...]

    def summary(self) -> str:
        return (f"Exported {len(self.clips)} clip{'s' if len(self.clips) != 1 else ''} "
                f"({', '.join(self.clips)}) of {', '.join(self.objects)} to "
                f"{os.path.basename(self.filepath)}")


def export_armatures(context, explicit=None) -> list:
    """The armatures to export: ``explicit``, else the selected ones with a Waft result or a
    merged copy, else every such armature in the scene."""
    def has_physics(ob):
        return ob.type == 'ARMATURE' and (merged_copies(ob) or _has_result(ob))

    if explicit is not None:
        return [ob for ob in explicit if ob.type == 'ARMATURE']
    selected = [ob for ob in context.selected_objects if has_physics(ob)]
    return selected or [ob for ob in context.scene.objects if has_physics(ob)]


def _has_result(ob) -> bool:
    from .writing import results_left

    return ob.animation_data is not None and results_left(ob.animation_data)


def _meshes_of(ob) -> list:
    return [child for child in ob.children_recursive if child.type == 'MESH']


@contextmanager
def clips_only(context, armatures: list, clips: dict):
    """While inside: each armature of ``armatures`` plays only its ``clips[name]`` (one NLA
    track each, no active action, every other strip muted), and exactly the armatures and
    their meshes are selected. Restored on the way out, whatever happened."""
    view_layer = context.view_layer
    # Only objects in the view layer can be selected (an excluded collection's cannot).
    selection = [ob for ob in view_layer.objects if ob.select_get()]
    active = view_layer.objects.active
    saved = []
    try:
        for ob in armatures:
            anim_data = ob.animation_data or ob.animation_data_create()
            slot = compat.active_slot(anim_data)
            saved.append((ob, anim_data.action, slot.identifier if slot is not None else "",
                          [(s, s.mute) for t in anim_data.nla_tracks for s in t.strips], []))
            anim_data.action = None
            for track in anim_data.nla_tracks:
                for strip in track.strips:
                    strip.mute = True
            for clip in clips[ob.name]:
                track = anim_data.nla_tracks.new()
                track.name = clip.name
                strip = track.strips.new(clip.name, int(clip.frame_range[0]), clip)
                compat.assign_strip_slot(strip, copy_slot(clip, ob))
                saved[-1][4].append(track)
        for ob in selection:
            ob.select_set(False)
        for ob in armatures:
            for member in [ob, *_meshes_of(ob)]:
                if view_layer.objects.get(member.name) is member:
                    member.select_set(True)
        yield
    finally:
        for ob, action, identifier, mutes, tracks in reversed(saved):
            anim_data = ob.animation_data
            for track in tracks:
                anim_data.nla_tracks.remove(track)
            for strip, mute in mutes:
                strip.mute = mute
            anim_data.action = action
            compat.restore_active_slot(anim_data, action, identifier)
        for ob in view_layer.objects:
            ob.select_set(ob in selection)
        view_layer.objects.active = active


def export_gltf(context, filepath: str, *, objects=None, export_format: str = 'GLB'
                ) -> ExportReport:
    """Merge each armature's bake and export the merged copies as glTF clips (module doc)."""
    armatures = export_armatures(context, objects)
    if not armatures:
        raise SetupError("Nothing to export: no armature has a Waft bake or a merged copy "
                         "(bake first)")
    if not hasattr(bpy.ops.export_scene, "gltf"):
        raise SetupError("The glTF 2.0 exporter is not enabled (Preferences › Add-ons › "
                         "glTF 2.0 format)")
    loop = context.scene.waft.use_loop
    clips = {}
    for ob in armatures:
        merge_results(ob, loop=loop)
        clips[ob.name] = merged_copies(ob)
        if not clips[ob.name]:
            raise SetupError(f"Armature '{ob.name}': no Waft result to export (bake first)")
    frame = context.scene.frame_current
    try:
        with suspended(), clips_only(context, armatures, clips):
            result = bpy.ops.export_scene.gltf(
                filepath=filepath, export_format=export_format, use_selection=True,
                export_animations=True, export_animation_mode='ACTIONS',
                export_anim_single_armature=False, export_force_sampling=True)
    except (RuntimeError, OSError) as error:  # the exporter's own failure (e.g. unwritable)
        raise SetupError(f"glTF export to '{filepath}' failed: {error}") from error
    finally:
        context.scene.frame_set(frame)
    if 'FINISHED' not in result:
        raise SetupError(f"The glTF exporter did not finish writing '{filepath}'")
    return ExportReport(filepath=filepath,
                        clips=tuple(c.name for ob in armatures for c in clips[ob.name]),
                        objects=tuple(ob.name for ob in armatures))
