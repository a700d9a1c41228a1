"""Helpers for the core tests: `waft` importable from the checkout, and small rig builders.

The repository-level conftest normally registers the checkout as package `waft`; this one only
does it (as a bare namespace, never running the bpy-facing root `__init__`) when that has not
happened, so `pytest tests/core` also works on its own.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if "waft" not in sys.modules:
    _module = types.ModuleType("waft")
    _module.__path__ = [str(REPO_ROOT)]
    _module.__spec__ = importlib.util.spec_from_loader("waft", loader=None, is_package=True)
    sys.modules["waft"] = _module

from waft import core  # noqa: E402

G = 9.81


class Rig:
    """Build a model + drive for a few chains with sensible test defaults (physics switched off
    unless asked for: no shape pull, no damping, no drag, no wind)."""

    @staticmethod
    def vertical_chain(*, bones: int, length: float, top=(0.0, 0.0, 1.0)) -> np.ndarray:
        top = np.asarray(top, dtype=np.float64)
        points = np.repeat(top[None], bones + 1, axis=0)
        points[:, 2] -= length * np.arange(bones + 1)
        return points

    @staticmethod
    def build(
        chains: list[np.ndarray],
        *,
        frames: int,
        fps: float = 24.0,
        root_motion=None,
        reference: np.ndarray | None = None,
        kinematic: list[np.ndarray] | None = None,
        inv_mass: list[np.ndarray] | None = None,
        colliders: core.ColliderSet | None = None,
        collider_matrix: np.ndarray | None = None,
        space: np.ndarray | None = None,
        setup: str = "Rig",
        **params,
    ):
        """`root_motion(t) -> (F, 3)` offsets applied rigidly to each chain's reference."""
        rests = []
        for s, rest in enumerate(chains):
            kin = np.zeros(len(rest), dtype=bool) if kinematic is None else kinematic[s]
            kin = np.asarray(kin, dtype=bool).copy()
            kin[0] = True
            rests.append(core.ChainRest(
                setup=setup, name=f"{setup}: Chain.{s}", rest_positions=np.asarray(rest),
                kinematic=kin, inv_mass=None if inv_mass is None else inv_mass[s]))
        model = core.build_strand_model(chains=rests, colliders=colliders)
        S, P = model.strands, model.particles
        if reference is None:
            padded = np.zeros((S, P, 3))
            for s, rest in enumerate(chains):
                padded[s, : len(rest)] = rest
                padded[s, len(rest):] = rest[-1]
            reference = np.repeat(padded[None], frames, axis=0)
            if root_motion is not None:
                t = np.arange(frames) / fps
                reference = reference + np.asarray(root_motion(t))[:, None, None, :]
        kin = np.zeros((S, P), dtype=bool)
        for s, r in enumerate(rests):
            kin[s, : len(r.kinematic)] = r.kinematic
        defaults = {
            "damping": 0.0,
            "shape_stiffness": 0.0,
            "drag": 0.0,
            "wind_turbulence": 0.0,
            "wind_gust": 0.0,
            "radius": 0.0,
            "bend_compliance": np.inf,
            "use_tether": False,
        }
        defaults.update(params)
        K = model.colliders.count
        if collider_matrix is None:
            collider_matrix = np.zeros((frames, K, 4, 4))
        if space is None:
            space = np.broadcast_to(np.eye(4), (frames, S, 4, 4))
        drive = core.Drive(
            fps=fps,
            reference=reference,
            kinematic=kin,
            space=space,
            collider_matrix=collider_matrix,
            params=core.StrandParams.defaults(S, P, **defaults),
        )
        return model, drive


@pytest.fixture
def rig() -> type[Rig]:
    return Rig


def matrices(frames: int, *, translation=(0.0, 0.0, 0.0), scale=(1.0, 1.0, 1.0),
             rotation: np.ndarray | None = None) -> np.ndarray:
    """(F, 1, 4, 4) world matrices; `translation` may be (F, 3)."""
    M = np.tile(np.eye(4), (frames, 1, 1, 1))
    R = np.eye(3) if rotation is None else np.asarray(rotation)
    M[:, 0, :3, :3] = R @ np.diag(scale)
    M[:, 0, :3, 3] = np.broadcast_to(np.asarray(translation, dtype=np.float64), (frames, 3))
    return M


@pytest.fixture
def collider_matrices():
    return matrices


def turned_about_x(angle: float, centre: np.ndarray) -> np.ndarray:
    """An ellipsoid collider's matrix: semi-axis 1.2 along X (the turning axis), 1 across it,
    turned `angle` about X, at `centre`; built exactly (axis-angle), not blended (the
    turning-collider tests' truth against `lerp_affine`)."""
    c, s = np.cos(angle), np.sin(angle)
    M = np.eye(4)
    M[:3, :3] = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]) @ np.diag([1.2, 1.0, 1.0])
    M[:3, 3] = centre
    return M


@pytest.fixture
def turned_ellipsoid():
    return turned_about_x


def nearest_triangle_distance(points: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray,
                              chunk: int = 500) -> np.ndarray:
    """The distance from each of `points` (n, 3) to the nearest of the triangles (a, b, c) (T, 3
    each) by Ericson's closest point against every triangle that its bounding sphere (about the
    corners' mean) does not rule out: a triangle whose sphere is farther from the point than
    another triangle's sphere reaches is farther than that one (a micron of slack for
    rounding), so the minimum is the exhaustive one. The mesh tests' brute-force truth: no
    grid, no reach, nothing shared with the colliders' own queries."""
    from waft.core.triangles import closest_on_triangles

    centre = (a + b + c) / 3.0
    reach = np.max([np.linalg.norm(q - centre, axis=1) for q in (a, b, c)], axis=0) + 1e-6
    best = np.empty(len(points))
    for start in range(0, len(points), chunk):
        p = points[start:start + chunk]
        to_centre = np.linalg.norm(p[:, None] - centre[None], axis=2)
        farthest = (to_centre + reach).min(axis=1)  # some triangle lies wholly within this
        pair, tri = np.nonzero(to_centre - reach <= farthest[:, None])
        closest, _, _ = closest_on_triangles(p[pair], a[tri], b[tri], c[tri])
        nearest = np.full(len(p), np.inf)
        np.minimum.at(nearest, pair, np.linalg.norm(p[pair] - closest, axis=1))
        best[start:start + chunk] = nearest
    return best


@pytest.fixture
def nearest_triangle():
    return nearest_triangle_distance
