"""Cloth-bone system: a low-res quad cage simulated by ``core.cloth`` drives an armature's bones
(Alan Wake's jacket; StrayCloth). See docs/cloth.md.

``addon.register()`` registers ``properties`` then ``panels`` (addon/__init__.py ``PARTS``), so the
NumPy-only modules here (``pose``, ``topology``, ``assemble``) import without defining any Blender
class.
"""
