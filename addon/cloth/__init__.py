"""Cloth-bone system: a low-res quad cage simulated by ``core.cloth`` drives an armature's bones
(seed 001, Alan Wake's jacket; seed 003, StrayCloth). See docs/cloth.md."""

from . import panels, properties


def register() -> None:
    properties.register()
    panels.register()


def unregister() -> None:
    panels.unregister()
    properties.unregister()
