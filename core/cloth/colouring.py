"""Graph colouring of two-particle constraints, so each colour is one vectorised update.

Gauss-Seidel XPBD (Macklin et al. 2016) updates constraints one after another; constraints that
share no particle can be updated at the same time without changing the result. A colour is such
a set, and the solver runs one NumPy expression per colour (gather both ends, correct, scatter:
no particle appears twice in a colour, so the fancy-index scatter never loses an update).

The colouring is built by repeated maximal independent sets (Luby 1986) with a deterministic
priority: in each round the constraints that outrank every still-open constraint at both of
their particles join the colour, their neighbours are closed, and the round repeats until
nothing is open; then the next colour starts. Every step is a vectorised pass over all
constraints; on a quad grid this gives 4 colours for stretch and shear (a greedy sequential
colouring would give the same) and the loops run over colours and rounds, never constraints.
"""

from __future__ import annotations

import numpy as np


def colour_pairs(a: np.ndarray, b: np.ndarray, n_vertices: int) -> np.ndarray:
    """Colour (E,) for constraints joining particles `a[e]` and `b[e]`; same colour = disjoint.

    Priority is the constraint index (lower first), so the result is deterministic and callers
    control it by ordering the constraints.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    E = a.size
    colour = np.full(E, -1, dtype=np.int64)
    priority = -np.arange(E, dtype=np.int64)  # higher wins; lower index first
    current = 0
    while True:
        uncoloured = colour < 0
        if not uncoloured.any():
            return colour
        candidate = uncoloured.copy()
        taken = np.zeros(n_vertices, dtype=bool)
        while candidate.any():
            best = np.full(n_vertices, np.iinfo(np.int64).min)
            np.maximum.at(best, a[candidate], priority[candidate])
            np.maximum.at(best, b[candidate], priority[candidate])
            win = candidate & (best[a] == priority) & (best[b] == priority)
            colour[win] = current
            taken[a[win]] = True
            taken[b[win]] = True
            candidate &= ~win & ~taken[a] & ~taken[b]
        current += 1


def colour_groups(colour: np.ndarray) -> list[np.ndarray]:
    """Constraint indices per colour, in colour order."""
    if colour.size == 0:
        return []
    order = np.argsort(colour, kind="stable")
    counts = np.bincount(colour)
    return [part for part in np.split(order, np.cumsum(counts)[:-1]) if part.size]
