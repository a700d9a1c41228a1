"""Render strands from guide strands (issue 3, seeds 000 and 002): NumPy only.

- ``scalp``: scatter render-strand roots over a scalp mesh by area × density, evaluate roots on a
  deformed scalp, bind points to the nearest triangle of a surface.
- ``interpolate``: bind render strands to guides (barycentric over the triangle of the three
  nearest guide roots, or nearest-guide offset as in seed 002), clumping and per-strand
  randomness; interpolate every strand of every frame in one vectorised pass.
- ``bspline``: uniform cubic B-spline resampling (seed 000), points per strand as the LOD.
"""

from .bspline import bspline_matrix, resample_bspline
from .collide import collide_strands, collide_strands_meshes
from .interpolate import METHODS, StrandBinding, bind_strands, interpolate_strands, render_strands
from .scalp import (
    RootSamples,
    closest_on_mesh,
    evaluate_roots,
    scatter_roots,
    triangle_areas,
    validate_mesh,
)

__all__ = [
    "METHODS",
    "RootSamples",
    "StrandBinding",
    "bind_strands",
    "bspline_matrix",
    "collide_strands",
    "collide_strands_meshes",
    "closest_on_mesh",
    "evaluate_roots",
    "interpolate_strands",
    "render_strands",
    "resample_bspline",
    "scatter_roots",
    "triangle_areas",
    "validate_mesh",
]
