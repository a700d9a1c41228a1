"""Reproducible cloth cases shared by the benchmarks and tests (C2 imports `make_grid_case`).

`grid_rest` builds a rows x cols cage hanging in the x-z plane (top row pinned, row 0 at the
top, quads wound so the face normal is +y); `make_grid_case` adds a drive that swings the pinned
row sideways, the setup Blender's Cloth modifier is compared against in
tests/benchmarks/bench_cloth_core.py.
"""

from __future__ import annotations

import numpy as np

from ..timestep import SolverSettings
from .drive import ClothDrive
from .model import ClothModel, ClothRest, build_cloth_model
from .params import ClothParams


def grid_positions(rows: int, cols: int, *, width: float = 1.0, height: float = 1.0,
                   origin=(0.0, 0.0, 0.0)) -> np.ndarray:
    """(rows * cols, 3) vertices, row-major, row 0 at the top (z = origin z), x to the right."""
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    x = origin[0] + c.reshape(-1) * (width / max(cols - 1, 1))
    z = origin[2] - r.reshape(-1) * (height / max(rows - 1, 1))
    y = np.full(x.shape, float(origin[1]))
    return np.stack([x, y, z], axis=1)


def grid_quads(rows: int, cols: int) -> np.ndarray:
    """(rows - 1) * (cols - 1) quads, winding (r,c) (r,c+1) (r+1,c+1) (r+1,c): normal +y."""
    r, c = np.meshgrid(np.arange(rows - 1), np.arange(cols - 1), indexing="ij")
    v = (r * cols + c).reshape(-1)
    return np.stack([v, v + 1, v + cols + 1, v + cols], axis=1)


def grid_rest(rows: int, cols: int, *, setup: str = "Grid", width: float = 1.0,
              height: float = 1.0, origin=(0.0, 0.0, 0.0), pinned_rows: int = 1,
              max_distance: float = np.inf, layer: int | None = None) -> ClothRest:
    """A hanging grid cage with its top `pinned_rows` rows pinned."""
    positions = grid_positions(rows, cols, width=width, height=height, origin=origin)
    pinned = np.zeros(rows * cols, dtype=bool)
    pinned[: pinned_rows * cols] = True
    return ClothRest(setup=setup, rest_positions=positions, quads=grid_quads(rows, cols),
                     pinned=pinned, max_distance=np.full(rows * cols, max_distance),
                     layer=None if layer is None else np.full(rows * cols, layer))


def make_grid_case(rows: int, cols: int, *, frames: int = 48, fps: float = 24.0,
                   substep: float = 1 / 240, **params) -> tuple[ClothModel, ClothDrive,
                                                                    SolverSettings]:
    """A 1 m x 1 m grid whose pinned top row swings 0.3 m sideways at 1 Hz, world space.

    World-space simulation (world_motion_fraction 1), no wind, no colliders: what Blender's Cloth
    modifier computes for a pinned grid. `params` override ClothParams defaults.
    """
    rest = grid_rest(rows, cols)
    model = build_cloth_model(cloths=[rest])
    t = np.arange(frames) / fps
    offset = np.zeros((frames, 1, 3))
    offset[:, 0, 0] = 0.3 * np.sin(2 * np.pi * t)
    reference = rest.rest_positions[None] + offset
    settings = dict(world_motion_fraction=1.0)
    settings.update(params)
    drive = ClothDrive(fps=fps, reference=reference,
                       space=np.broadcast_to(np.eye(4), (frames, 1, 4, 4)),
                       collider_matrix=np.zeros((frames, 0, 4, 4)),
                       params=ClothParams.defaults(1, **settings))
    return model, drive, SolverSettings(substep=substep)
