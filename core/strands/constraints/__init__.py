"""Constraint families, one module each, every solve a vectorised function over slices.

All of them follow XPBD (Macklin, Mueller, Chentanez 2016) with one iteration per substep and the
Lagrange multiplier reset every substep ("Small Steps", Macklin et al. 2019), so each projection
is a closed form of the current positions. Particles with inverse mass 0 never move.
"""

from .distance import (
    DistanceScratch,
    PairCoefficients,
    distance_coefficients,
    project_pair,
    solve_distance_pairs,
)
from .ftl import FtlCoefficients, FtlScratch, solve_ftl, solve_ftl_within
from .kinematic import set_kinematic
from .max_distance import solve_max_distance
from .shape import solve_shape
from .tether import solve_tether

__all__ = [
    "DistanceScratch",
    "FtlCoefficients",
    "FtlScratch",
    "PairCoefficients",
    "solve_ftl",
    "solve_ftl_within",
    "project_pair",
    "distance_coefficients",
    "set_kinematic",
    "solve_distance_pairs",
    "solve_max_distance",
    "solve_shape",
    "solve_tether",
]
