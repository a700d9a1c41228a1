"""Blender glue: property groups, panels, scene readers/samplers/writers and the bake API.

``register()`` is called from the root ``__init__``; the bake modules import bpy lazily through
their own imports, so importing this package needs bpy but registers nothing by itself.
"""

from importlib import import_module

# Every system's property groups, then its panels (panels draw the groups); unregistered in
# reverse. The system packages only name their parts here, so importing one (e.g. the NumPy-only
# helpers of addon.cloth) defines no Blender class.
PARTS = (
    "translations", "properties", "panels", "overlay", "preview", "sampling_scope", "gltf_hooks",
    "strands.properties", "strands.panels",
    "hair.properties", "hair.panels",
    "ragdoll.properties", "ragdoll.migrate", "ragdoll.panels", "ragdoll.targets",
    "cloth.properties", "cloth.panels",
)


def register() -> None:
    for name in PARTS:
        import_module(f".{name}", __name__).register()


def unregister() -> None:
    for name in reversed(PARTS):
        import_module(f".{name}", __name__).unregister()
