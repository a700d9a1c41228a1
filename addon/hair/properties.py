"""``Object.waft_hair``: render-strand settings of a guide armature or a hair Curves object.

On a guide armature (bone chains = guides) ``render_strands`` turns the output on; on a hair
Curves object ``enabled`` makes its curves the guides (``hair.system``). Binding settings
(count, density, method, seed, points) are read on the bake's first frame: the render strands
are generated once and then follow the guides. Clump and Randomness are sampled every frame
(animate them, e.g. wet hair clumping).
"""

import bpy
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ..properties import groups_registration, object_type_poll

METHOD_ITEMS = (
    ("BARYCENTRIC", "Barycentric",
     "Blend the three guides around each strand (triangles of guide roots); smooth, no bundles"),
    ("NEAREST", "Nearest Guide",
     "Follow the nearest guide with a fixed offset (Changyou's strand hair); visible locks, "
     "cheapest"),
)


STORAGE_ITEMS = (
    ("GUIDES", "Guides (Small File)",
     "Store the guides, scalp matrix and colliders per frame; geometry nodes rebuild the "
     "strands at playback (plays and renders without Waft; within a micrometre of Every Point)"),
    ("POINTS", "Every Point",
     "Store every point of every strand on every frame (exactly the preview's strands; files "
     "grow with strands × points × frames)"),
)


_mesh_poll = object_type_poll('MESH')
_curves_poll = object_type_poll('CURVES')


class WaftHairSettings(bpy.types.PropertyGroup):
    """Render strands grown on a scalp and driven by the baked guides."""

    enabled: BoolProperty(
        name="Waft Hair Guides", default=False,
        description="Simulate this hair Curves object's curves as guides when baking "
                    "(roots follow its Surface mesh)")
    render_strands: BoolProperty(
        name="Render Strands", default=False,
        description="Write a hair Curves object of render strands that follow the baked guides")
    scalp: PointerProperty(
        name="Scalp", type=bpy.types.Object, poll=_mesh_poll,
        description="Mesh the render strands grow from; roots follow its evaluated (skinned or "
                    "parented) surface every frame")
    count: IntProperty(
        name="Strands", default=10000, min=1, soft_max=100000, max=2000000,
        description="Number of render strands, placed by face area × density")
    density_group: StringProperty(
        name="Density", default="",
        description="Vertex group of the scalp scaling the strand density (empty = uniform)")
    method: EnumProperty(
        name="Interpolation", items=METHOD_ITEMS, default="BARYCENTRIC",
        description="How render strands follow the guides")
    clump: FloatProperty(
        name="Clump", default=0.2, min=0.0, max=1.0, subtype='FACTOR',
        description="Strands gather toward their nearest guide from root (0) to tip (this "
                    "fraction)")
    randomness: FloatProperty(
        name="Randomness", default=0.03, min=0.0, soft_max=0.3,
        description="Per-strand random tip offset as a fraction of the strand length (grows "
                    "from root to tip)")
    seed: IntProperty(
        name="Seed", default=0, min=0,
        description="Seed of root placement and randomness; the same seed gives the same hair")
    points: IntProperty(
        name="Points per Strand", default=12, min=2, soft_max=32, max=256,
        description="Level of detail: points of each render strand, sampled on the uniform "
                    "cubic B-spline through the guide particles (Alice: Madness Returns)")
    root_radius: FloatProperty(
        name="Root Radius", default=0.0008, min=0.0, soft_max=0.01, precision=5,
        unit='LENGTH', description="Strand radius at the root (the radius attribute)")
    tip_radius: FloatProperty(
        name="Tip Radius", default=0.0002, min=0.0, soft_max=0.01, precision=5,
        unit='LENGTH', description="Strand radius at the tip")
    output: PointerProperty(
        name="Output", type=bpy.types.Object, poll=_curves_poll,
        description="Curves object the render strands are written to (created as "
                    "'<setup> Strands' when empty)")
    body_meshes: BoolProperty(
        name="Collide with Body Meshes", default=True,
        description="Push the render strands out of the body-mesh colliders too, after the "
                    "shapes (slower: every strand point near a body tests the triangles near "
                    "it; the guides collide with the meshes either way)")
    storage: EnumProperty(
        name="Storage", items=STORAGE_ITEMS, default="GUIDES",
        description="What the render-strand bake stores in the .blend")
    alembic_path: StringProperty(
        name="Alembic", default="", subtype='FILE_PATH',
        description="Also export the render strands to this Alembic file after baking "
                    "(empty = no export)")


CLASSES = (WaftHairSettings,)

POINTERS = ((bpy.types.Object, "waft_hair", WaftHairSettings),)

register, unregister = groups_registration(CLASSES, POINTERS)
