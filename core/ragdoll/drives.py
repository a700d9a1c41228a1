"""Target constraints of seed 004 beside the motors: the velocity drive and the distance limit.

* Velocity drive (seed 004, hips on the balance beam): the body's linear velocity is blended
  toward the velocity that reaches its animation target, v ← v + T' (v_target - v). The seed
  does this once per game frame with fraction T; here it is done every substep with
  T' = 1 - (1 - T)^(h / REFERENCE_FRAME), so T means "fraction per 1/30 s" whatever the substep
  and the scene frame rate. The velocity reaching the target is the target's own velocity plus
  the gap closed within REFERENCE_FRAME.
* Distance limit (seed 004, wrists; Müller 2020 eq. 25 upper distance limit with the target as
  a static body): the body origin (bone head) stays within d of its target head, rotation free.
  The limit shrinks with the target's speed, d' = d · max(0, 1 - speed / distance_limit_speed)
  (seed 004, BD-1's head), and at zero it locks the position. It is a projection of the body's
  centre (translation only, like PuppetMaster's pins), so after it runs the limit holds exactly.
"""

from __future__ import annotations

import numpy as np

from .. import transcendental
from .bodies import einsum, where

REFERENCE_FRAME = 1.0 / 30.0  # s: the frame the velocity-drive fraction refers to


def drive_fraction(T: np.ndarray, h: float) -> np.ndarray:
    """Per-substep blend fraction of a per-REFERENCE_FRAME fraction T (exact compounding)."""
    return 1.0 - transcendental.power(1.0 - np.clip(T, 0.0, 1.0), h / REFERENCE_FRAME)


def velocity_drive(v: np.ndarray, x: np.ndarray, target_centre: np.ndarray,
                   target_velocity: np.ndarray, fraction: np.ndarray) -> None:
    """v ← v + fraction (v_target - v) with v_target = target velocity + gap / REFERENCE_FRAME."""
    wanted = target_velocity + (target_centre - x) / REFERENCE_FRAME
    v += fraction[:, None] * (wanted - v)


def effective_limit(distance_limit: np.ndarray, limit_speed: np.ndarray,
                    target_speed: np.ndarray) -> np.ndarray:
    """d · max(0, 1 - speed / limit_speed); inf limit_speed never shrinks."""
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = where(np.isinf(limit_speed), 1.0,
                          np.clip(1.0 - target_speed / np.maximum(limit_speed, 1e-300), 0.0, 1.0))
        return where(shrink > 0.0, distance_limit * shrink, 0.0)


def project_distance(x: np.ndarray, head: np.ndarray, target_head: np.ndarray,
                     limit: np.ndarray, active: np.ndarray) -> None:
    """Translate bodies so |head - target_head| <= limit (x: centres, moved in place)."""
    gap = head - target_head
    dist = np.sqrt(einsum("nk,nk->n", gap, gap))
    excess = where(active & (dist > limit), dist - limit, 0.0)
    if np.any(excess > 0):
        x -= gap * (excess / np.maximum(dist, 1e-300))[:, None]
