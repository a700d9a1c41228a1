"""Waft: bake secondary motion (bone chains) with a pure-NumPy solver.

This module is the extension entry point and only registers things. It imports nothing from
``bpy`` at module level so ``waft.core`` (the solver) stays importable where Blender is absent;
``addon`` and ``operators`` are imported inside ``register()``.
"""

_cli_handle = None


class glTF2ExportUserExtension:  # noqa: N801 - the name Blender's glTF exporter looks for
    """Waft's hooks in Blender's glTF exporter (VRM spring bones out, addon/gltf_hooks.py)."""

    def __init__(self):
        from .addon.gltf_hooks import GltfExportExtension

        self._hooks = GltfExportExtension()

    def gather_gltf_extensions_hook(self, gltf, export_settings) -> None:
        self._hooks.gather_gltf_extensions_hook(gltf, export_settings)


def register() -> None:
    global _cli_handle
    import bpy

    from . import addon, operators
    from .addon import cli

    addon.register()
    operators.register()
    # `blender -c waft bake …`; register_cli_command exists from Blender 4.2 on, guard anyway.
    if hasattr(bpy.utils, "register_cli_command"):
        _cli_handle = bpy.utils.register_cli_command("waft", cli.main)


def unregister() -> None:
    global _cli_handle
    import bpy

    from . import addon, operators

    if _cli_handle is not None and hasattr(bpy.utils, "unregister_cli_command"):
        bpy.utils.unregister_cli_command(_cli_handle)
    _cli_handle = None
    operators.unregister()
    addon.unregister()
