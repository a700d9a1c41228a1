"""Waft's part in Blender's glTF exporter (its user-extension hooks, found through the
``glTF2ExportUserExtension`` class of the extension's top-level module).

``gather_gltf_extensions_hook`` runs once the exporter has written every node: Waft chain setups
of the exported armatures become ``VRMC_springBone`` data (``strands/vrm_export.py``), when the
scene's *VRM Spring Bones* export option is on (the default; the glTF export dialog shows it).
"""

from __future__ import annotations

import bpy

from .strands.vrm_export import EXTENSION, exported_rigs, spring_bone_data


def _node_dict(node) -> dict:
    out = {"name": node.name}
    for key in ("children", "translation", "rotation", "scale", "matrix"):
        value = getattr(node, key, None)
        if value:  # the exporter leaves unset fields None (or empty)
            out[key] = list(value)
    return out


def _log(export_settings, text: str) -> None:
    log = export_settings.get("log")
    if log is not None and hasattr(log, "warning"):
        log.warning(text)
    else:
        print(f"Waft glTF export: {text}")


def add_spring_bones(gltf, export_settings) -> None:
    """Add ``VRMC_springBone`` (and the tail leaf nodes it needs) to the exporter's glTF."""
    from io_scene_gltf2.io.com import gltf2_io
    from io_scene_gltf2.io.com.gltf2_io_extensions import Extension

    scene = bpy.context.scene
    if not scene.waft.export_vrm_springs or not gltf.nodes:
        return
    nodes = [_node_dict(n) for n in gltf.nodes]
    data = spring_bone_data(scene, exported_rigs(scene, nodes), nodes)
    if data is None:
        return
    for parent, name, translation in data.new_nodes:
        leaf = gltf2_io.Node(camera=None, children=None, extensions=None, extras=None,
                             matrix=None, mesh=None, name=name, rotation=None, scale=None,
                             skin=None, translation=translation, weights=None)
        gltf.nodes.append(leaf)
        parent_node = gltf.nodes[parent]
        parent_node.children = [*(parent_node.children or []), len(gltf.nodes) - 1]
    extension = data.extension()
    for collider in extension.get("colliders", []):
        for name, value in list(collider.get("extensions", {}).items()):
            collider["extensions"][name] = Extension(name=name, extension=value, required=False)
    if gltf.extensions is None:
        gltf.extensions = {}
    gltf.extensions[EXTENSION] = Extension(name=EXTENSION, extension=extension, required=False)
    for note in data.skipped:
        _log(export_settings, f"VRM spring bones: not carried over: {note}")


class GltfExportExtension:
    """The hooks Blender's glTF exporter calls (one instance per export)."""

    def gather_gltf_extensions_hook(self, gltf, export_settings) -> None:
        add_spring_bones(gltf, export_settings)


class WAFT_PT_gltf_export(bpy.types.Panel):
    """Waft's option in the glTF export dialog"""

    bl_space_type = 'FILE_BROWSER'
    bl_region_type = 'TOOL_PROPS'
    bl_label = "Waft"
    bl_parent_id = "FILE_PT_operator"
    bl_options = {'DEFAULT_CLOSED'}

    @classmethod
    def poll(cls, context):
        operator = getattr(context.space_data, "active_operator", None)
        return operator is not None and operator.bl_idname == "EXPORT_SCENE_OT_gltf"

    def draw(self, context):
        self.layout.prop(context.scene.waft, "export_vrm_springs")


register, unregister = bpy.utils.register_classes_factory((WAFT_PT_gltf_export,))
