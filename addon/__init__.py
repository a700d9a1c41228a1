"""Blender glue: property groups, panels, scene readers/samplers/writers and the bake API.

``register()`` is called from the root ``__init__``; the bake modules import bpy lazily through
their own imports, so importing this package needs bpy but registers nothing by itself.
"""

from . import cloth, hair, panels, properties, ragdoll


def register() -> None:
    properties.register()
    panels.register()
    hair.register()
    ragdoll.register()
    cloth.register()


def unregister() -> None:
    cloth.unregister()
    hair.unregister()
    ragdoll.unregister()
    panels.unregister()
    properties.unregister()
