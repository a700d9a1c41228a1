"""Cloth-bone system: a low-res quad cage simulated by ``core.cloth`` drives an armature's bones
(seed 001, Alan Wake's jacket; seed 003, StrayCloth). See docs/cloth.md.

Properties and panels are imported when registering, so the NumPy-only modules here (``pose``,
``topology``, ``assemble``) can be imported without defining any Blender class.
"""


def register() -> None:
    from . import panels, properties

    properties.register()
    panels.register()


def unregister() -> None:
    from . import panels, properties

    panels.unregister()
    properties.unregister()
