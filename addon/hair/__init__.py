"""Hair render strands (Alice: Madness Returns and Changyou's strand hair): a Curves object of
render strands driven by the solved guides, packed into a geometry-nodes bake that plays without
Waft. See docs/hair-render.md.

``addon.register()`` (its ``PARTS``) adds ``Object.waft_hair`` and the panels; the bake reaches
the render strands of guide armatures through ``addon/systems.py`` ``STRAND_OUTPUTS``
(``hair.output``) and hair Curves guide objects through ``SYSTEMS`` (``hair.system``).
"""
