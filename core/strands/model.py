"""The immutable strand model: topology, rest data and masses of every chain in the scene.

Every setup of the scene is batched into one model: chains are padded to a common particle count
`P` so chain-wise work is a slice `x[:, a:b]`. Padding particles have `inv_mass == 0`,
`active == False` and segments into padding have `rest_length == 0`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..colliders import ColliderSet
from ..errors import SetupError

MIN_SEGMENT_LENGTH = 1e-6  # metres; shorter segments have no direction


@dataclass(frozen=True)
class ChainRest:
    """One chain in its rest (first) pose, world metres. Particle 0 is the root."""

    setup: str
    name: str
    rest_positions: np.ndarray  # (n + 1, 3)
    kinematic: np.ndarray  # (n + 1,) bool; particle 0 must be True
    inv_mass: np.ndarray | None = None  # (n + 1,) 1/kg; default 1 (mass 1 kg), 0 if kinematic


@dataclass(frozen=True)
class StrandModel:
    """Topology and rest data; never mutated after `build_strand_model`."""

    rest_length: np.ndarray  # (S, P-1)
    bend_rest_length: np.ndarray  # (S, P-2)
    tether_length: np.ndarray  # (S, P)
    inv_mass: np.ndarray  # (S, P)
    active: np.ndarray  # (S, P) bool
    count: np.ndarray  # (S,) int
    strand_setup: np.ndarray  # (S,) int
    setup_names: tuple[str, ...]
    strand_names: tuple[str, ...]
    colliders: ColliderSet = field(default_factory=ColliderSet.empty)
    collider_mask: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))
    # (S, max(P-3, 0)) rest distance k <-> k+3 (local shape's torsion pairs); 0 into padding.
    skip3_rest_length: np.ndarray | None = None

    def __post_init__(self):
        if self.skip3_rest_length is None:  # a model built by hand: no torsion pairs
            S, P = self.inv_mass.shape
            object.__setattr__(self, "skip3_rest_length", np.zeros((S, max(P - 3, 0))))

    @property
    def strands(self) -> int:
        return int(self.inv_mass.shape[0])

    @property
    def particles(self) -> int:
        return int(self.inv_mass.shape[1])

    def setup_of(self, strand: int) -> str:
        return self.setup_names[int(self.strand_setup[strand])]


def _where(chain: ChainRest) -> str:
    return f"setup '{chain.setup}', chain '{chain.name}'"


def build_strand_model(
    *,
    chains: Sequence[ChainRest],
    colliders: ColliderSet | None = None,
    collider_mask: np.ndarray | None = None,
) -> StrandModel:
    """Validate the chains, pad them to a common `P` and compute the rest data.

    Raises `SetupError` naming the setup and chain for fewer than 2 particles, non-finite
    positions or masses, a non-kinematic root, and segments shorter than 1e-6 m (with the
    segment index).
    """
    if colliders is None:
        colliders = ColliderSet.empty()
    colliders.validate()
    if len(chains) == 0:
        raise SetupError("no chains to simulate")
    checked = []
    for chain in chains:
        positions = np.asarray(chain.rest_positions, dtype=np.float64)
        if positions.ndim != 2 or positions.shape[1] != 3:
            raise SetupError(f"{_where(chain)}: rest positions must be (n + 1, 3), got "
                             f"{positions.shape}")
        count = positions.shape[0]
        if count < 2:
            raise SetupError(f"{_where(chain)}: a chain needs at least 2 particles (1 bone), "
                             f"got {count}")
        if not np.all(np.isfinite(positions)):
            bad = int(np.argwhere(~np.isfinite(positions))[0][0])
            raise SetupError(f"{_where(chain)}: rest position of particle {bad} is not finite")
        kinematic = np.asarray(chain.kinematic, dtype=bool).reshape(-1)
        if kinematic.shape != (count,):
            raise SetupError(f"{_where(chain)}: kinematic has {kinematic.size} flags for {count} "
                             "particles")
        if not kinematic[0]:
            raise SetupError(f"{_where(chain)}: the root particle must be kinematic")
        if chain.inv_mass is None:
            inv_mass = np.ones(count)
        else:
            inv_mass = np.asarray(chain.inv_mass, dtype=np.float64).reshape(-1)
            if inv_mass.shape != (count,):
                raise SetupError(f"{_where(chain)}: inv_mass has {inv_mass.size} values for "
                                 f"{count} particles")
            if not np.all(np.isfinite(inv_mass)) or np.any(inv_mass < 0):
                raise SetupError(f"{_where(chain)}: inv_mass must be finite and >= 0")
        inv_mass = np.where(kinematic, 0.0, inv_mass)
        segments = np.linalg.norm(np.diff(positions, axis=0), axis=1)
        short = np.flatnonzero(segments < MIN_SEGMENT_LENGTH)
        if short.size:
            k = int(short[0])
            raise SetupError(f"{_where(chain)}: segment {k} (particles {k}-{k + 1}) has length "
                             f"{segments[k]:.3g} m; zero-length bones cannot be simulated")
        checked.append((chain, positions, kinematic, inv_mass, segments))

    S = len(checked)
    P = max(item[1].shape[0] for item in checked)
    rest_length = np.zeros((S, P - 1))
    bend_rest_length = np.zeros((S, max(P - 2, 0)))
    skip3_rest_length = np.zeros((S, max(P - 3, 0)))
    tether_length = np.zeros((S, P))
    inv_mass_all = np.zeros((S, P))
    active = np.zeros((S, P), dtype=bool)
    count = np.zeros(S, dtype=np.int64)
    strand_setup = np.zeros(S, dtype=np.int64)
    setup_names: list[str] = []
    strand_names: list[str] = []
    for s, (chain, positions, _kinematic, inv_mass, segments) in enumerate(checked):
        n = positions.shape[0]
        if chain.setup not in setup_names:
            setup_names.append(chain.setup)
        strand_setup[s] = setup_names.index(chain.setup)
        strand_names.append(chain.name)
        count[s] = n
        active[s, :n] = True
        inv_mass_all[s, :n] = inv_mass
        rest_length[s, : n - 1] = segments
        if n >= 3:
            bend_rest_length[s, : n - 2] = np.linalg.norm(positions[2:] - positions[:-2], axis=1)
        if n >= 4:
            skip3_rest_length[s, : n - 3] = np.linalg.norm(positions[3:] - positions[:-3],
                                                           axis=1)
        tether_length[s, 1:n] = np.cumsum(segments)

    K = colliders.count
    if collider_mask is None:
        mask = np.ones((K, S), dtype=bool)
    else:
        mask = np.asarray(collider_mask, dtype=bool)
        if mask.shape != (K, S):
            raise SetupError(f"collider_mask has shape {mask.shape}, expected {(K, S)}")
    for array in (rest_length, bend_rest_length, skip3_rest_length, tether_length, inv_mass_all,
                  active, count, strand_setup, mask):
        array.setflags(write=False)
    return StrandModel(
        rest_length=rest_length,
        bend_rest_length=bend_rest_length,
        tether_length=tether_length,
        inv_mass=inv_mass_all,
        active=active,
        count=count,
        strand_setup=strand_setup,
        setup_names=tuple(setup_names),
        strand_names=tuple(strand_names),
        colliders=colliders,
        collider_mask=mask,
        skip3_rest_length=skip3_rest_length,
    )
