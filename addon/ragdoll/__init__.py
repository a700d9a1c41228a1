"""Ragdoll system (issue 5, Jedi: Fallen Order): rigid bodies on an armature's bones that follow its
animation with motors, limits and a root lock, baked to keyframes. See docs/ragdoll.md.

``addon.register()`` (its ``PARTS``) adds ``Object.waft_ragdoll`` / ``PoseBone.waft_ragdoll``
and the panels; the bake reaches the system through ``addon/systems.py`` (``ragdoll.system``).
"""
