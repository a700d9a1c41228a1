"""The bake loop: fixed substeps, position-based integration, XPBD constraints, colliders.

Method: position Verlet in its velocity-less form with XPBD constraints, one constraint pass per
substep and small fixed substeps ("Small Steps in Physics Simulation", Macklin et al. 2019):

    x_new = x + (x - x_prev) * exp(-(damping + drag) * h) + (gravity + drag * wind) * h^2

with the global shape pull and the kinematic copy fused into that update, then (see `step`) shock
propagation, bending (midpoint offsets, three Gauss-Seidel colours), XPBD stretch of compliant
segments (even/odd colours), local shape, exact lengths of rigid segments (the mass-weighted SHAKE
projection along the start-of-substep directions, then the FTL sweep for rounding), tether, max
distance and colliders, and voxel friction last. With damping 0 nothing in this loop damps: SHAKE
makes Verlet with rigid segments symplectic (RATTLE in position form). The substep `h` is fixed
whatever the scene frame rate; frame `i` is output at time `i / fps` by linear interpolation between
the two bracketing substep states (exact when fps divides 1/h), its lengths re-placed and put out
of the colliders at `i / fps` (`_Bake._blend_outside`). Everything is float64 NumPy with no
threading and no global random state, so the same input gives bit-identical output.

Performance: every per-frame quantity (parameter broadcasting, step factors, rate-normalised
strengths) is computed once per frame (once per bake when nothing is animated); a substep is a
fixed sequence of in-place ufuncs on preallocated buffers and precomputed strided views.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from .. import transcendental
from ..affine import inverse_affine, lerp_affine
from ..colliders import (
    SLIDE_EPS,
    ColliderKind,
    apply_friction,
    is_similarity,
    push_out,
    shape_normal,
    surface_motion,
)
from ..errors import DivergenceError
from ..forces import strand_phase, tangent_response, wind_at
from ..job import FrameJob, distance_detail, first_diverged, run_job
from ..mesh_colliders import MeshField
from ..shake import ShakeCoefficients, ShakeScratch, solve_shake
from ..space import apply_carry, carry_operators
from ..streaming import FedBake, owned, write_rows
from ..sweep_limits import clamp_in_sweep, into_ball_and_half_space
from ..timestep import SolverSettings, frame_interval, interpolate
from ..triangles import row_dot
from .around_edges import turn_until_clear
from .constraints import (
    FtlCoefficients,
    FtlScratch,
    distance_coefficients,
    set_kinematic,
    solve_distance_pairs,
    solve_ftl,
    solve_ftl_within,
    solve_max_distance,
    solve_tether,
)
from .constraints.bending import (
    BendCoefficients,
    BendScratch,
    bend_centres,
    rest_offsets,
    solve_bending,
)
from .constraints.direct import CONVERGED as DIRECT_CONVERGED
from .constraints.direct import MAX_ENTRIES, DirectCoefficients, direct_size, solve_direct
from .constraints.distance import DistanceScratch, PairCoefficients
from .constraints.local_shape import (
    LocalShapeCoefficients,
    LocalShapeScratch,
    local_shape_coefficients,
    solve_local_shape,
)
from .constraints.shock import root_motion
from .constraints.spheres import (
    MIN_PARTICLES,
    SphereBlocks,
    block_bounds,
    box_distance2,
    push_out_candidates,
    push_out_spheres,
    resolve_creases,
    sphere_groups,
    transpose_bounds,
)
from .constraints.voxel import VoxelCoefficients, solve_voxel_friction
from .drive import CheckedDrive, Drive, validate_drive
from .float_step import SOURCE_BLOCK, FloatCoefficients, FloatState, step_floats
from .model import StrandModel
from .params import rate_normalised, shape_strength
from .settled import settled_chain_positions

_TIME_EPS = 1e-9  # seconds; frame times closer than this to the substep grid are "on" it
_NONE = np.zeros(0, dtype=np.int64)  # no particle moved
# m: a chain root moving further than this between two samples, or between two output frames
# (`_Bake._frame_cuts`), is an animation cut (as the cloth's default cut threshold): the chain is
# carried over it rigidly (_Bake._carry_over_cut).
CUT_DISTANCE = 1.0
DIVERGENCE_FACTOR = 100.0  # a particle further than 100 chain lengths from its reference ...
DIVERGENCE_MIN_BOUND = 10.0  # ... and at least 10 m away has diverged
# Stiff bending (some step factor >= bending.STIFF_FACTOR, compliance below ~3e-5 m/N at
# 240 Hz) alternates this many extra times with the exact lengths per substep, its multipliers
# carried over the passes (so the passes converge to its compliance, not past it): with one pass
# of each a rigid 8-segment chain held out level drooped 13 % of its length, with 3 extra 3 %.
RIGID_BEND_PASSES = 3


@dataclass
class State:
    """Positions now and one substep ago, component-major: (3, S, P_solve).

    `P_solve >= P` adds padding so that every constraint colour is a single strided view (see
    `solver_particles`). `positions(model)` gives the usual (S, P, 3) view.
    """

    x: np.ndarray
    x_prev: np.ndarray

    @classmethod
    def at_rest(cls, model: StrandModel, positions: np.ndarray) -> State:
        """Zero-velocity state at `positions` (S, P, 3)."""
        S, P = model.strands, model.particles
        x = np.empty((3, S, solver_particles(P)))
        x[:, :, :P] = np.moveaxis(np.asarray(positions, dtype=np.float64), -1, 0)
        x[:, :, P:] = x[:, :, P - 1 : P]
        return cls(x=x, x_prev=x.copy())

    def positions(self, model: StrandModel) -> np.ndarray:
        """(S, P, 3) view of the current positions (writable)."""
        return np.moveaxis(self.x[:, :, : model.particles], 0, -1)

    def previous(self, model: StrandModel) -> np.ndarray:
        """(S, P, 3) view of the positions one substep ago (writable)."""
        return np.moveaxis(self.x_prev[:, :, : model.particles], 0, -1)


@dataclass(frozen=True)
class BakeResult:
    positions: np.ndarray  # (F_out, S, P, 3) world metres at each output frame's time
    substeps: int  # substeps simulated, pre-roll included


def solver_particles(P: int) -> int:
    """Padded particle count `4m + 2 >= P` used inside the solver.

    With it, stretch pairs split into even/odd colours and skip-one bending pairs (k, k+2) into
    colours floor(k/2) % 2 that are each one reshape view of the positions.
    """
    m = max(0, math.ceil((P - 2) / 4))
    return 4 * m + 2


def component_major_reference(frames: int, strands: int, particles: int) -> np.ndarray:
    """An empty (F, S, P, 3) reference for a `Drive`, a view of the solver's own layout
    (F, 3, S, Ps) (`solver_particles`): a bake takes the memory as its own instead of copying
    the reference into that layout (346 MB at 512 bones x 25,000 samples). Its padding columns
    belong to the solver, which fills them."""
    soa = np.empty((frames, 3, strands, solver_particles(particles)))
    return np.moveaxis(soa[..., :particles], 1, -1)


def _component_major(reference: np.ndarray, Ps: int) -> np.ndarray | None:
    """The (F, 3, S, Ps) array `reference` is a view of, when it is one made by
    `component_major_reference`; else None."""
    soa = reference.base
    if not (isinstance(soa, np.ndarray) and soa.flags.c_contiguous and soa.ndim == 4
            and soa.shape == (reference.shape[0], 3, reference.shape[1], Ps)
            and soa.dtype == reference.dtype == np.float64 and soa.flags.writeable):
        return None
    view = np.moveaxis(soa[..., :reference.shape[2]], 1, -1)
    same = (view.shape == reference.shape and view.strides == reference.strides
            and view.__array_interface__["data"][0] == reference.__array_interface__["data"][0])
    return soa if same else None


def _pad(array: np.ndarray, width: int, value) -> np.ndarray:
    """Pad the last axis of (S, n) to `width` with `value`."""
    out = np.full(array.shape[:-1] + (width,), value, dtype=np.result_type(array, type(value)))
    out[..., : array.shape[-1]] = array
    return out


def _view(base: np.ndarray, start: int, stop: int, shape: tuple[int, ...]) -> np.ndarray:
    view = base[:, :, start:stop].reshape(shape)
    if not np.shares_memory(view, base):  # pragma: no cover - guards the layout assumption
        raise AssertionError("constraint colour view is a copy")
    return view


class _Views:
    """Strided views of one (3, S, Ps) position buffer, one (a, b) pair per stretch colour."""

    def __init__(self, x: np.ndarray):
        _, S, Ps = x.shape
        m = (Ps - 2) // 4
        even = _view(x, 0, Ps, (3, S, Ps // 2, 2))
        self.stretch = [(even[..., 0], even[..., 1])]
        if m:
            odd = _view(x, 1, Ps - 1, (3, S, 2 * m, 2))
            self.stretch.append((odd[..., 0], odd[..., 1]))


class Workspace:
    """Preallocated scratch buffers and padded model data for one (model, substep)."""

    def __init__(self, model: StrandModel, h: float, *, iterations: int = 1):
        S, P = model.strands, model.particles
        Ps = solver_particles(P)
        self.iterations = int(iterations)
        self.S, self.P, self.Ps, self.h = S, P, Ps, float(h)
        self.m = m = (Ps - 2) // 4
        self.active = _pad(model.active, Ps, False)
        self.inv_mass = _pad(model.inv_mass, Ps, 0.0)
        self.rest = _pad(model.rest_length, Ps - 1, 0.0)
        # Flat (S * Ps,): the rest length from each particle's parent (0 for the roots).
        self.parent_rest = np.concatenate([np.zeros((S, 1)), self.rest], axis=1).reshape(-1)
        self.bend_rest = _pad(model.bend_rest_length, Ps - 2, 0.0) if Ps > 2 else np.zeros((S, 0))
        # |x_i - (x_{i-1} + x_{i+1}) / 2| at rest for centres 1..Ps-2 (bending).
        self.bend_offset = (rest_offsets(self.rest, self.bend_rest) if Ps > 2
                            else np.zeros((S, 0)))
        self.skip3_rest = _pad(model.skip3_rest_length, max(Ps - 3, 0), 0.0)
        self.tether = _pad(model.tether_length, Ps, 0.0)
        # Arc-length fraction of each particle along its strand (0 at the root, 1 at the tip),
        # for the global shape range (TressFX globalConstraintsRange).
        total = model.tether_length[np.arange(S), np.asarray(model.count) - 1]
        self.arc_fraction = self.tether / np.maximum(total, 1e-12)[:, None]
        self.strand_setup = np.asarray(model.strand_setup)
        shape = (3, S, Ps)
        self.v = np.empty(shape)
        self.tmp = np.empty(shape)
        self.tmp_b = np.empty(shape)
        self.acc = np.empty(shape)
        self.source = np.empty(shape)
        self.contact_before = np.empty(shape)  # x before `_lengths_after_contact`
        self.collide_before = np.empty(shape)  # x before its positions-only collider pass
        self.meshes_before = np.empty(shape)  # and before that pass's body meshes
        self.directions = np.empty(shape)  # SHAKE's segment directions after the local shape
        self.len = np.empty((S, Ps))
        self.pen = np.empty((S, Ps))
        self.tmp_tail = np.empty((3, S, Ps - 1))
        self.tmp_tail2 = np.empty((3, S, Ps - 1))
        self.len_tail = np.empty((S, Ps - 1))
        self.reference = np.empty(shape)
        self.stretch_scratch = [DistanceScratch((3, S, Ps // 2))]
        if m:
            self.stretch_scratch.append(DistanceScratch((3, S, 2 * m)))
        self.bend_scratch = BendScratch(S * Ps)
        self.ftl_scratch = FtlScratch(S, Ps)
        self.local_shape_scratch = LocalShapeScratch(S, Ps)
        # Static per-collider data read every substep: (k, kind, friction, size, all strands),
        # colliders that touch no strand left out.
        colliders = model.colliders
        self.colliders = [
            (k, int(colliders.kind[k]), float(colliders.friction[k]), float(colliders.size[k]),
             bool(model.collider_mask[k].all()))
            for k in range(colliders.count) if model.collider_mask[k].any()
        ]
        self._views: tuple[np.ndarray, _Views] | None = None
        self._shake: dict[int, ShakeScratch] = {}
        # (coefficients, chain index, particle index, radius, (M, N) mask or None) of the
        # particles body meshes push, for the coefficients they were gathered with.
        self.mesh_targets: tuple | None = None

    def shake_scratch(self, n: int) -> ShakeScratch:
        """Buffers for the SHAKE projection of the first `n` segments."""
        scratch = self._shake.get(n)
        if scratch is None:
            scratch = self._shake[n] = ShakeScratch(self.S, n)
        return scratch

    def views(self, x: np.ndarray) -> _Views:
        """Colour views of `x`, rebuilt only when a different buffer is passed."""
        if self._views is None or self._views[0] is not x:
            self._views = (x, _Views(x))
        return self._views[1]


@dataclass
class FrameCoefficients:
    """Everything a substep needs from the settings of one frame, already per substep."""

    decay: np.ndarray  # (S, Ps) exp(-(damping + drag) h), 0 where not movable
    gravity_h2: np.ndarray  # (3, S, Ps) gravity * h^2 (+ drag * mean wind * h^2 without noise)
    drag_h2: np.ndarray | None  # (S, Ps) (1 - pull) * drag * h^2 when wind noise is per substep
    wind: dict | None  # per-strand wind settings when noise/gusts are on
    # Verlet, global shape and kinematic copy fused (see `step`):
    # x_new = verlet_a * x - verlet_b * x_prev + base_h2 + pull * reference.
    pull: np.ndarray  # (S, Ps) shape fraction per substep; 1 where not movable (copies reference)
    verlet_a: np.ndarray  # (S, Ps) (1 - pull) (1 + decay)
    verlet_b: np.ndarray  # (S, Ps) (1 - pull) decay
    base_h2: np.ndarray  # (3, S, Ps) (1 - pull) * gravity_h2
    stretch: list[PairCoefficients] | None  # XPBD per colour for compliant segments, else None
    bend: BendCoefficients | None  # midpoint-offset bending, None when off
    ftl: FtlCoefficients | None  # exact-length sweep of rigid segments, None when none
    # Mass-weighted exact lengths (SHAKE) of rigid segments before the sweep, None when none.
    shake: ShakeCoefficients | None
    tether_limit: np.ndarray | None  # (S, Ps-1) inf where off
    max_distance: np.ndarray | None  # (S, Ps) inf where off
    collision_radius: np.ndarray  # (S, Ps), -inf where the particle must not move
    world_motion_fraction: np.ndarray  # (S,)
    needs_carry: bool
    roots_only: bool
    kinematic: np.ndarray  # (S, Ps) bool
    # Strand hair (None when off): local shape (TressFX), the per-substep fraction (S,) of the
    # root's rigid motion carried down the strand (velocity shock propagation), voxel friction.
    local_shape: LocalShapeCoefficients | None = None
    shock: np.ndarray | None = None
    voxel: VoxelCoefficients | None = None
    wind_response: np.ndarray | None = None  # (S,) tangent response, None when 0
    # Block broad phase for sphere colliders on large states (None: whole-array pass).
    sphere_blocks: SphereBlocks | None = None
    # Exact lengths and stiff bending in one direct solve (None: Gauss-Seidel passes).
    direct: DirectCoefficients | None = None


def frame_coefficients(ws: Workspace, kinematic: np.ndarray, params: dict[str, np.ndarray],
                       frame: int) -> FrameCoefficients:
    """Per-substep factors from the (validated, broadcast) params at `frame`."""
    S, Ps, h, m = ws.S, ws.Ps, ws.h, ws.m
    kin = _pad(kinematic, Ps, True)
    movable = ~kin & (ws.inv_mass > 0)
    w = np.where(movable, ws.inv_mass, 0.0)

    def particle(name: str, fill: float) -> np.ndarray:
        return _pad(np.asarray(params[name][frame], dtype=np.float64), Ps, fill)

    damping = particle("damping", 0.0)
    drag = particle("drag", 0.0)
    decay = np.where(movable, transcendental.exp(-(damping + drag) * h), 0.0)
    gravity = np.asarray(params["gravity"][frame], dtype=np.float64)  # (S, 3)
    wind_velocity = np.asarray(params["wind_velocity"][frame], dtype=np.float64)
    turbulence = np.asarray(params["wind_turbulence"][frame], dtype=np.float64)
    gust = np.asarray(params["wind_gust"][frame], dtype=np.float64)
    has_wind = bool(np.any(wind_velocity != 0) & np.any(drag[movable] > 0))
    variation = np.asarray(params["wind_direction_variation"][frame], dtype=np.float64)
    response = np.asarray(params["wind_tangent_response"][frame], dtype=np.float64)
    spread = np.asarray(params["wind_strand_variation"][frame], dtype=np.float64)
    # Any time- or shape-dependent wind runs per substep; a steady, isotropic wind folds into
    # the constant acceleration.
    noisy = has_wind and bool(np.any((turbulence > 0) | (gust > 0) | (variation > 0)
                                     | (response > 0)))
    accel = gravity[:, None, :] + (0.0 if noisy else drag[..., None] * wind_velocity[:, None, :])
    gravity_h2 = np.where(movable[..., None], accel * h * h, 0.0)
    gravity_h2 = np.ascontiguousarray(np.moveaxis(gravity_h2, -1, 0))

    stiffness = np.asarray(params["shape_stiffness"][frame], dtype=np.float64)
    decay_c = np.asarray(params["shape_decay"][frame], dtype=np.float64)
    strength = _pad(shape_strength(stiffness, decay_c), Ps, 0.0)
    # Global shape only on the first `shape_range` of each strand (TressFX range; seed 002's
    # underwater hair keeps only the scalp part of its shape).
    shape_range = np.asarray(params["shape_range"][frame], dtype=np.float64)
    strength = np.where(ws.arc_fraction <= shape_range[:, None] + 1e-9, strength, 0.0)
    pull = np.where(movable, rate_normalised(strength, h), 1.0)
    keep = 1.0 - pull

    wind = None
    drag_h2 = None
    if noisy:
        drag_h2 = np.where(movable, keep * drag * h * h, 0.0)
        wind = {
            "wind_velocity": wind_velocity,
            "turbulence": turbulence,
            "gust": gust,
            "seed": np.asarray(params["wind_seed"][frame]),
            "direction_variation": variation if np.any(variation > 0) else None,
            "phase": (strand_phase(seed=np.asarray(params["wind_seed"][frame]), variation=spread)
                      if np.any(spread > 0) else None),
        }

    # Stretch: segment k (particles k, k+1) reads the compliance of its outer particle k+1.
    # Rigid segments (compliance 0) into a movable particle are solved exactly by the FTL sweep
    # (Mueller et al. 2012); only compliant ones keep XPBD.
    compliance = particle("stretch_compliance", 0.0)[:, 1:]
    ftl_mask = np.zeros((S, Ps), dtype=bool)
    ftl_mask[:, 1:] = (compliance == 0.0) & movable[:, 1:] & (ws.rest > 0)
    xpbd_compliance = np.where(ftl_mask[:, 1:], np.inf, compliance)
    coef_a, coef_b = distance_coefficients(w_a=w[:, :-1], w_b=w[:, 1:], rest=ws.rest,
                                           compliance=xpbd_compliance, h=h)
    stretch = [PairCoefficients(coef_a[:, 0::2], coef_b[:, 0::2], ws.rest[:, 0::2])]
    if m:
        stretch.append(PairCoefficients(coef_a[:, 1::2], coef_b[:, 1::2], ws.rest[:, 1::2]))
    if not any(c.any() for c in stretch):
        stretch = None
    # SHAKE takes the segments the sweep takes (rigid, into a movable particle), each run of
    # them hanging from one pinned particle, so its system is never singular. A segment into a
    # pin (a chain held at both ends) stays with XPBD: between two pins a taut chain is
    # collinear, and a projection along its own direction cannot move it sideways.
    # A particle the global shape pulls by `pull` per substep is that much held: it takes that
    # much less of SHAKE's correction (shape 1 = follows the animation = kinematic).
    w_shake = w * (1.0 - pull)
    shake_mask = ftl_mask[:, 1:] & (w_shake[:, 1:] > 0)
    ftl = None
    shake = (ShakeCoefficients(active=shake_mask, rest=ws.rest, w=w_shake)
             if shake_mask.any() else None)
    if ftl_mask.any():
        # After SHAKE the sweep only removes a rounding-level residual, so its DFTL velocity
        # correction is as small; it matters on a strand SHAKE rejected, which gets classic DFTL.
        ftl_damping = np.asarray(params["ftl_damping"][frame], dtype=np.float64)
        ftl = FtlCoefficients(ftl_mask, ws.rest, ftl_damping, ws.P)

    # Bending: each particle's offset from its neighbours' midpoint (constraints/bending.py);
    # the triple centred on particle i reads the compliance of its outer particle i + 1.
    bend = direct = None
    if Ps > 2:
        bend_compliance = particle("bend_compliance", np.inf)[:, 2:]
        if np.any(np.isfinite(bend_compliance) & movable[:, 2:]):
            bend = BendCoefficients(w=w, active=ws.active, rest_offset=ws.bend_offset,
                                    compliance=bend_compliance, h=h)
            if not bend:
                bend = None
            elif bend.stiff and shake is not None and direct_size(S, Ps) <= MAX_ENTRIES:
                direct = _direct_coefficients(ws, w_shake, shake_mask, bend_compliance)

    # Tether: a strand whose every segment is swept by FTL already keeps each node within the
    # chain length of its root (triangle inequality), so the tether is skipped for it.
    use_tether = np.asarray(params["use_tether"][frame], dtype=bool)
    fully_rigid = np.all(ftl_mask[:, 1:] | ~movable[:, 1:] | (ws.rest <= 0), axis=1)
    tether_limit = None
    on = (use_tether & ~fully_rigid)[:, None] & movable[:, 1:]
    if np.any(on):
        tether_limit = np.where(on, ws.tether[:, 1:], np.inf)

    max_distance = np.where(movable, particle("max_distance", np.inf), np.inf)
    if not np.any(np.isfinite(max_distance)):
        max_distance = None

    radius = particle("radius", 0.0)
    fraction = np.asarray(params["world_motion_fraction"][frame], dtype=np.float64)
    kin_real = kin & ws.active

    local = rate_normalised(particle("local_stiffness", 0.0), h)
    local_shape = local_shape_coefficients(fraction=np.where(movable, local, 0.0), w=w,
                                           rest={2: ws.bend_rest, 3: ws.skip3_rest})
    shock_in = np.asarray(params["shock_propagation"][frame], dtype=np.float64)
    shock = rate_normalised(shock_in, h) if np.any(shock_in > 0) else None
    friction_in = np.asarray(params["voxel_friction"][frame], dtype=np.float64)
    voxel = None
    if np.any(friction_in > 0):
        factor = np.broadcast_to(rate_normalised(friction_in, h)[:, None], (S, Ps))
        voxel = VoxelCoefficients(movable=movable, inv_mass=ws.inv_mass, factor=factor,
                                  strand_group=ws.strand_setup,
                                  resolution=params["voxel_resolution"][frame])
        if not voxel.any():
            voxel = None
    collision_radius = np.where(movable, radius, -np.inf)
    sphere_blocks = None
    if S * ws.P >= MIN_PARTICLES and any(e and kind == ColliderKind.ELLIPSOID
                                         for _, kind, _, _, e in ws.colliders):
        sphere_blocks = SphereBlocks(collision_radius, ws.P)
        if not sphere_blocks.any():
            sphere_blocks = None
    return FrameCoefficients(
        decay=decay, gravity_h2=gravity_h2, drag_h2=drag_h2, wind=wind,
        pull=pull, verlet_a=keep * (1.0 + decay), verlet_b=keep * decay,
        base_h2=np.ascontiguousarray(keep * gravity_h2),
        stretch=stretch, bend=bend, ftl=ftl, shake=shake,
        tether_limit=tether_limit,
        max_distance=max_distance,
        collision_radius=collision_radius, world_motion_fraction=fraction,
        needs_carry=bool(np.any(fraction < 1.0)), roots_only=not np.any(kin_real[:, 1:]),
        kinematic=kin_real, local_shape=local_shape, shock=shock, voxel=voxel,
        wind_response=response if (noisy and np.any(response > 0)) else None,
        sphere_blocks=sphere_blocks, direct=direct,
    )


def _direct_coefficients(ws: Workspace, w: np.ndarray, exact: np.ndarray,
                         compliance: np.ndarray) -> DirectCoefficients | None:
    """The direct solve's rows: SHAKE's segments and masses (`w` with the shape pull's hold,
    `exact` (S, Ps - 1)), the bending centres of `BendCoefficients` with these masses."""
    _, alpha, usable = bend_centres(w=w, active=ws.active, compliance=compliance, h=ws.h)
    direct = DirectCoefficients(w=w, length_active=exact, rest=ws.rest, bend_active=usable,
                                bend_rest=ws.bend_offset, bend_alpha=np.where(usable, alpha, 0.0))
    return direct if direct.P > 2 else None


@dataclass
class SubstepDrive:
    """The drive at one substep (end time `t`), everything `step` reads."""

    t: float  # time at the end of the substep, seconds from frame 0
    # (3, S, Ps) reference positions at t; None only when `step` does not read it (the bake's
    # batches: roots-only pins, no max distance, no shock), the kinematic copy being in `source`.
    reference: np.ndarray | None
    collider_matrix: np.ndarray  # (K, 4, 4) at t
    collider_inverse: np.ndarray | None  # (K, 4, 4) or None when no shape needs it
    collider_similarity: np.ndarray  # (K,) bool: sphere fast path allowed
    carry: tuple[np.ndarray, np.ndarray] | None  # space motion over the substep (A, b)
    coefficients: FrameCoefficients
    # base_h2 + pull * reference: the constant term of the fused Verlet/shape/kinematic update.
    source: np.ndarray | None = None
    # (A, B, alpha) with source = A + alpha * B, formed by `step` (the bake's batches); when
    # given, `source` stays None.
    source_terms: tuple[np.ndarray, np.ndarray, float] | None = None
    # (3, S, Ps) reference at the start of the substep, for velocity shock propagation (None:
    # not known, e.g. the first substep or a hand-driven step; the shock is then skipped).
    previous_reference: np.ndarray | None = None
    # The shock's root motion (A, b) over this substep when already computed (the bake does a
    # frame's substeps at once); None: `step` derives it from `previous_reference`.
    shock_motion: tuple[np.ndarray, np.ndarray] | None = None
    # (K, 4, 4) colliders at the start of the substep (None: not moving / not known): friction
    # acts on the motion relative to the collider's surface.
    collider_start: np.ndarray | None = None
    # Body-mesh colliders: the bake's field and its (M, S) bool mask of chains per mesh.
    meshes: tuple[MeshField, np.ndarray] | None = None
    # Every collider's `surface_motion` over the substep, once computed (`surface`).
    _surfaces: list | None = field(default=None, init=False, repr=False, compare=False)
    # `_collider_plan`'s answer for this substep: (workspace, plan).
    _plan: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.source is None and self.source_terms is None:
            c = self.coefficients
            self.source = c.base_h2 + c.pull * self.reference

    def surface(self, k: int) -> np.ndarray | None:
        """Collider k's `surface_motion` over this substep (None: it did not move), for every
        collider at once on first use: every collider pass of the substep (the first, the
        contact rounds and the passes after them, about six) reads the same ones, and a small
        rig paid an affine inverse per collider per pass (a fifth of the ponytail sample's
        solve)."""
        if self._surfaces is None:
            start, end = self.collider_start, self.collider_matrix
            # A collider that did not move over the substep has no surface motion; the inverse
            # is taken only when one did (a tail on a still hip sphere with friction spent 40 %
            # of its solve inverting a matrix that was never used). Python's float == is
            # `surface_motion`'s own test.
            if start is None or all(a.tolist() == b.tolist()
                                    for a, b in zip(start, end, strict=True)):
                self._surfaces = [None] * len(end)
            else:
                inverse = (inverse_affine(end) if self.collider_inverse is None
                           else self.collider_inverse)
                self._surfaces = [surface_motion(a, b, b_inv)
                                  for a, b, b_inv in zip(start, end, inverse, strict=True)]
        return self._surfaces[k]


def _solve_colours(views, coefficients, scratches) -> None:
    """XPBD distance pairs colour by colour (Gauss-Seidel between colours, one view each)."""
    for (a, b), colour, scratch in zip(views, coefficients, scratches, strict=True):
        solve_distance_pairs(a, b, colour, scratch)


def step(model: StrandModel, state: State, drive_at_t: SubstepDrive, h: float, *,
         workspace: Workspace | None = None) -> None:
    """Advance `state` by one substep of length `h` in place (a plain function of its inputs).

    Order: carry, Verlet + global shape + kinematic copy (one fused update), bending, XPBD
    stretch of compliant segments, exact lengths of rigid segments (SHAKE, then the FTL sweep
    whose DFTL correction only acts where SHAKE rejected a strand), tether, max distance,
    colliders; after a contact, rounds of SHAKE, limits and colliders with their velocities
    (`_contact_rounds`), then the sweep and the colliders again (positions only,
    `_lengths_after_contact`) so lengths and contacts agree at the end of the substep.
    Colliders come last and win: a particle is never left inside a collider. Chains with stiff
    bending take the direct solve of lengths and bending (`constraints/direct.py`) in place of
    the bending passes, of SHAKE in the rounds (which then also follow a limit's move) and of
    the sweep in the positions-only passes.
    """
    ws = workspace if workspace is not None else Workspace(model, h)
    c = drive_at_t.coefficients
    x, x_prev = state.x, state.x_prev

    # World-motion fraction: carry x and x_prev with (1 - f) of the space motion (seed 001).
    if drive_at_t.carry is not None:
        A, b = drive_at_t.carry
        apply_carry(x, A, b, ws.tmp)
        apply_carry(x_prev, A, b, ws.tmp)

    # Position Verlet with per-second damping and drag (velocity-less form), then the global
    # shape pull x += k (reference - x) (TressFX global shape, seed 000) and the kinematic copy
    # (k = 1), fused into x_new = (1-k)(1+decay) x - (1-k) decay x_prev + (1-k) a h^2 + k ref.
    source = drive_at_t.source
    if source is None:
        A, B, alpha = drive_at_t.source_terms
        source = ws.source
        np.multiply(B, alpha, out=source)
        source += A
    if c.wind is not None:
        wind = wind_at(x=np.moveaxis(x, 0, -1), t=drive_at_t.t - h,
                       wind_velocity=c.wind["wind_velocity"], turbulence=c.wind["turbulence"],
                       gust=c.wind["gust"], seed=c.wind["seed"],
                       direction_variation=c.wind["direction_variation"], phase=c.wind["phase"])
        if c.wind_response is not None:
            wind = tangent_response(wind, np.moveaxis(x, 0, -1), c.wind_response)
        np.multiply(np.moveaxis(wind, -1, 0), c.drag_h2, out=ws.acc)
        ws.acc += source
        source = ws.acc
    v = ws.v
    np.multiply(x, c.verlet_a, out=v)
    np.multiply(x_prev, c.verlet_b, out=x_prev)
    np.subtract(v, x_prev, out=v)
    np.copyto(x_prev, x)
    np.add(v, source, out=x)

    reference = drive_at_t.reference
    shock = drive_at_t.shock_motion
    if shock is None and c.shock is not None and drive_at_t.previous_reference is not None:
        shock = root_motion(drive_at_t.previous_reference, reference, c.shock)
    if c.shock is not None and shock is not None:
        # Velocity shock propagation (TressFX): carry x and x_prev with part of the root
        # segment's rigid motion over this substep, then put the kinematic nodes back.
        A, b = shock
        if reference is None:
            # Roots only (the bake's batches): the fused update has just put every root exactly
            # on its reference (pull 1, no Verlet terms), so keep them from here.
            roots = x[:, :, 0].copy()
        apply_carry(x, A, b, ws.tmp)
        apply_carry(x_prev, A, b, ws.tmp)
        if reference is None:
            x[:, :, 0] = roots
        else:
            set_kinematic(x, reference, roots_only=c.roots_only, kinematic=c.kinematic)
    for _ in range(ws.iterations):
        # Bending before stretch: the XPBD stretch pass is all a segment into a pinned particle
        # gets when SHAKE rejects its strand, so it must come after anything that moves it.
        # Lengths and stiff bending solved together (SHAKE below then finds the lengths exact).
        solved = c.direct is not None and _solve_direct(c.direct, x, x_prev)
        if c.bend is not None and not solved:
            if c.bend.firm and not c.bend.stiff:
                # Firm bending converges on its compliance first (see bending.FIRM_PASSES).
                solve_bending(x, c.bend, ws.bend_scratch, sweep=c.bend.firm_sweep)
            else:
                solve_bending(x, c.bend, ws.bend_scratch)
            if c.bend.stiff:
                # Stiff bending (see RIGID_BEND_PASSES): alternate with the exact lengths.
                for _ in range(RIGID_BEND_PASSES):
                    _exact_lengths(ws, x, x_prev, c)
                    solve_bending(x, c.bend, ws.bend_scratch, first=False)
        if c.stretch is not None:
            views = ws.views(x)
            _solve_colours(views.stretch, c.stretch, ws.stretch_scratch)
        directions = x_prev
        if c.local_shape is not None:
            solve_local_shape(x, c.local_shape, ws.local_shape_scratch)
            # After the shape's pulls the exact lengths project along the current segments of
            # its strands (the orthogonal projection in the mass metric, which takes energy
            # out but never puts any in), not along the start-of-substep ones: the pulls act
            # along chords, nearly along the segments, and SHAKE's start directions returned
            # them as velocity. An undamped chain released level gained up to 69 % of its fall
            # (local stiffness 0.5, 480 Hz) and 2-6 % at 0.05-0.2; now nothing (it loses
            # 35-60 % over 3 s instead, 9-33 % without the shape).
            directions = ws.directions
            np.copyto(directions, x_prev)
            pulled = c.local_shape.strands
            directions[:, pulled] = x[:, pulled]
        particle_major = None  # a (>= P, 3, S) copy of x, when the FTL sweep leaves one
        _exact_lengths(ws, x, x_prev, c, directions)
        if c.ftl is not None:
            if not c.roots_only:
                # The sweep passes pinned nodes with factor 1 (exact up to rounding): restore.
                set_kinematic(x, reference, roots_only=False, kinematic=c.kinematic)
            else:
                particle_major = _sweep_copy(ws, c)
        limits_from = x.copy() if c.direct is not None and c.ftl is not None and (
            c.tether_limit is not None or c.max_distance is not None) else None
        if c.tether_limit is not None:
            solve_tether(x, c.tether_limit, ws.tmp_tail, ws.tmp_tail2, ws.len_tail)
            particle_major = None
        if c.max_distance is not None:
            solve_max_distance(x, reference, c.max_distance, ws.tmp, ws.tmp_b, ws.len)
            particle_major = None
        contacts = {}
        if limits_from is not None:
            # The direct solve's strands keep their limits' moves as contact rows and not as
            # positions: a rigid rod reaching its max distance at speed had its tip clamped by
            # up to 12 mm in one substep, a bend no Newton step from there could take as a
            # small correction, and the chain fell back to the Gauss-Seidel passes bent (a
            # strand rooted on a head rose by 72-106 % of its fall). From the straight rod the
            # rounds' first solve turns it onto the limit as a whole.
            _contacts(limits_from, x, c.direct.P, contacts)
            rigid = c.direct.rigid
            x[:, rigid] = limits_from[:, rigid]
        before = x.copy() if c.direct is not None else None
        moved = _collide(model, ws, x, x_prev, drive_at_t, c, particle_major)
        if moved and before is not None:
            _contacts(before, x, c.direct.P, contacts)
        # Nothing to agree on when no collider moved a particle since the sweep (tether and
        # max distance may have: their moves are swept again too, as they always were). A max
        # distance is solved with the lengths in the rounds and the positions-only passes
        # whether or not there is a collider: the clamp above has the last word over the
        # lengths until then (a strand held by its max distance against gravity or a shaken
        # head ended every frame 3-25 % long).
        limited = c.max_distance is not None
        if c.ftl is not None and (ws.colliders or drive_at_t.meshes is not None
                                  or c.direct is not None or limited) and (
                moved or c.tether_limit is not None or limited) and (
                c.shake is None
                or _contact_rounds(model, ws, x, x_prev, drive_at_t, c, contacts) or limited):
            _lengths_after_contact(model, ws, x, x_prev, drive_at_t, c, reference, contacts)
    if c.voxel is not None:
        # Inter-hair friction (seed 002): velocities only, after every positional constraint.
        solve_voxel_friction(x, x_prev, c.voxel)


def _solve_direct(direct: DirectCoefficients, x: np.ndarray, x_prev: np.ndarray) -> bool:
    """The substep's direct solve of lengths and stiff bending: along the start-of-substep
    gradients (`x_prev` holds the start here), or where a strand's step was rejected along the
    current ones; False when that failed too (the Gauss-Seidel passes then take the chain)."""
    direct.begin()
    return solve_direct(x, direct, x_prev) or solve_direct(x, direct, None)


def _exact_lengths(ws: Workspace, x: np.ndarray, x_prev: np.ndarray, c: FrameCoefficients,
                   directions: np.ndarray | None = None) -> None:
    """Rigid segments: the mass-weighted SHAKE projection along the start-of-substep directions
    (`x_prev` holds the start of the substep here; `directions` instead where given), then the
    FTL sweep, which only removes its rounding-level residual (or does the whole job for a
    strand SHAKE rejected)."""
    if c.shake is not None:
        solve_shake(x, x_prev if directions is None else directions, c.shake,
                    ws.shake_scratch(c.shake.n))
    if c.ftl is not None:
        solve_ftl(x, x_prev, c.ftl, ws.ftl_scratch)


# Rounds of SHAKE, limits and colliders after the first contacts (_contact_rounds). Measured on
# passive chains (no bending, no damping, 4-19 segments) released level over a sphere, capsule
# or box, 55 random scenes at 240 Hz, the energy's largest rise over an earlier value as a share
# of the potential energy released: with 0 / 1 / 2 / 3 rounds at most 11.5 / 8.1 / 5.7 / 2.2 %,
# 90th percentile 6.3 / 2.6 / 1.5 / 0.9 %, over 1 % in 38 / 21 / 11 / 5 scenes (4 rounds: no
# better; a free chain released level, no collider: at most 5.1 %, the whip's own integration
# error). A round ends the rounds early when its colliders move nothing. The hair benchmark
# (1,000 x 32 guides, every strand on a collider, about 2.5 rounds per substep) takes about
# 1.6x as long as with none, and its stretch falls from 0.18 % to 0.06 %.
# Tried and left out: holding the pushed particles in these rounds as the direct solve's contact
# rows do (in SHAKE's masses, w (I - n n^T) at a held particle, so the system stays tridiagonal;
# with or without letting go of the contacts that pull). On the 40 drops above it ended the
# rounds after one and the median rise fell from 0.34 to 0.28 %, but a strand lying on a curved
# surface gained steadily: the main pass lets the particles sink in at exact lengths, which
# spreads them along the surface, and a held round draws them back along it as velocity (the
# 12-segment strand on a still 32 x 64 mesh head, frictionless and undamped, rose by 16 % of
# its fall instead of 0.3 %; on the analytic sphere 0.9-1.05 % instead of 0.3-0.4 %).
CONTACT_ROUNDS = 3
# With a max distance, up to this many: SHAKE and the max distance's clamp converge
# geometrically (each round took about a quarter off a particle's clamp on a chain hanging from
# its limit), and what 3 rounds left, the positions-only pass put right without a velocity,
# substep after substep: an undamped chain without bending resting on a head from its max
# distance rose by 1.0-2.0 % of its fall at 240-480 Hz (6 rounds 0.5-0.9 %, 12 under 0.2 %),
# for 1.5 times the time of such setups. Without a max distance the rounds stay at 3.
LIMIT_CONTACT_ROUNDS = 12
# With the direct solve (stiff bending), rounds of it, the limits and the colliders, until they
# agree (a round that moves nothing ends them); every particle a collider pushed in the substep
# is held by a contact row of the solve (`_contacts`). Measured on the 12 undamped scenes of
# tests/core/test_energy.py's `_chain_over_a_collider` with rigid bending, the largest energy
# rise as a share of the release, worst / median: Gauss-Seidel bending (before) 74 / 31 %;
# direct with 4 / 6 / 12 rounds and no contact rows 18.8 / 16.3 / 13.3 % worst, 1.8 / 1.1 /
# 0.5 % median: each round the solve pulled the pushed particle back by all but its share of
# the rod's inertia (a geometric creep, 2.5 % a round; 50 / 100 / 200 rounds 1.8 / 0.4 /
# 0.4 % worst at 3 / 5 / 6 times the time). With the contact rows 0.4 % worst, 0.00 % median,
# one or two rounds a substep, and the 12 scenes solve in 9.6 s instead of 28 s.
DIRECT_CONTACT_ROUNDS = 12
# A round's SHAKE whose largest multiplier step (a particle's move as a share of its segment,
# core/shake.py) is at most this leaves lengths exact to about 7 x its square (1 Newton step,
# measured on strands on a head shaken at 3-5 g: at most 6e-5 of a segment at this step, 3e-3 at
# 0.03): the rounds may then end on a round whose colliders moved nothing. Above it, or when
# SHAKE rejected a strand, `_lengths_after_contact` restores the lengths after the rounds.
SHAKE_EXACT_STEP = 3e-3
# The direct solve's alike, in metres: a last Newton step that moved no particle further than
# this leaves lengths exact to about its square over a segment (1e-6 m on a 1 cm segment).
DIRECT_EXACT_MOVE = 1e-4


def _contacts(before: np.ndarray, after: np.ndarray, P: int, held: dict) -> dict:
    """`held` {strand: [(particle, nx, ny, nz, n . x)]} updated with the particles the
    colliders moved from `before` to `after` (3, S, Ps): each is held along its push direction
    n where it was put, by a row of the direct solve (`constraints/direct.py`), for the rest
    of the substep."""
    moved = after[:, :, :P] - before[:, :, :P]
    size = np.sqrt(np.einsum("ksp,ksp->sp", moved, moved))
    for s, p in zip(*np.nonzero(size > 0.0), strict=True):
        n = moved[:, s, p] / size[s, p]
        row = (int(p), *n.tolist(), float(n @ after[:, s, p]))
        rows = [r for r in held.get(int(s), []) if r[0] != row[0]]
        held[int(s)] = [*rows, row]
    return held


def _contact_rounds(model: StrandModel, ws: Workspace, x: np.ndarray, x_prev: np.ndarray,
                    sd: SubstepDrive, c: FrameCoefficients, contacts: dict) -> bool:
    """Lengths, limits and contacts solved together, with velocities: a collider's push
    stretches the segments at the pushed particle, and SHAKE (mass-weighted, along the
    start-of-substep segments, core/shake.py) takes the stretch back as a velocity change, the
    tether, max distance and colliders after it (firm bending before it, a pass of its own),
    CONTACT_ROUNDS times (LIMIT_CONTACT_ROUNDS with a max distance): a projected Gauss-Seidel
    over all of them (Jakobsen 2001; Macklin et al. 2016), each a projection in the particles'
    mass metric with its velocity implied, as the first pass's are. The positions-only passes
    (`_lengths_after_contact`) then have only a residual left.

    Why: with the positions-only passes alone, a chain lying over a collider gained energy from
    the lengths the sweep restores after each push: FTL moves the child toward its parent (an
    infinitely heavy parent, Mueller et al. 2012), which lifts whatever hangs beyond the
    collider, and a lift without a velocity change is potential energy from nowhere (passive
    chains over a sphere, capsule or box rose again by up to 11.5 % of the potential energy they
    had released; see CONTACT_ROUNDS). Whether a collider still moved a particle in the last
    round. With stiff bending the direct solve of lengths and bending takes SHAKE's place,
    DIRECT_CONTACT_ROUNDS times at most, and holds the particles the colliders, the tether and
    the max distance moved (`contacts`, updated here) by contact rows."""
    moved = True
    direct = c.direct
    # With the direct solve a limit's move also counts: a chain with rigid bending meets its
    # max distance with no collider in the scene. With SHAKE a max distance's clamp does: the
    # rounds are then a projected Gauss-Seidel of the mass-weighted lengths and the limit, with
    # their velocities, and the positions-only passes after them find only a residual. Left to
    # those passes alone, their lifts (each child's length restored toward its parent, x_prev
    # moved along) gave a passive chain hanging from its max distance 1.2-5.2 % of the energy
    # it had released (0.1-0.7 % with the rounds).
    limits = direct is not None and (c.tether_limit is not None or c.max_distance is not None)
    rounds = (DIRECT_CONTACT_ROUNDS if direct is not None
              else LIMIT_CONTACT_ROUNDS if c.max_distance is not None else CONTACT_ROUNDS)
    shaken = False  # whether a round's SHAKE took x_prev's directions yet
    exact = True  # whether the last round's lengths were solved to SHAKE_EXACT_STEP
    for _ in range(rounds):
        # Along the current gradients: a collider's push may have turned a segment far from
        # where it started the substep.
        stepped = direct is not None and solve_direct(x, direct, None, iterations=1,
                                                      contacts=contacts)
        if not stepped:
            if c.bend is not None and c.bend.firm:
                # Firm bending takes part in the rounds (see bending.FIRM_FACTOR).
                solve_bending(x, c.bend, ws.bend_scratch, first=False)
            # Nothing in the rounds writes x_prev (the colliders' friction and the limits
            # read it or leave it), so SHAKE's directions from it are the first round's.
            largest = solve_shake(x, x_prev, c.shake, ws.shake_scratch(c.shake.n),
                                  same_directions=shaken)
            shaken = True
            exact = largest <= SHAKE_EXACT_STEP
        elif direct.largest_move <= DIRECT_CONVERGED:
            # The last round's pushes already hold the chains' lengths and bending: nothing
            # would move again.
            moved = False
            exact = True
            break
        else:
            # An accepted step of the direct solve: its lengths are exact when it was small
            # (one Newton step; the contact rows may keep it from converging).
            exact = direct.largest_move <= DIRECT_EXACT_MOVE
        if limits:
            before = x.copy()
        if c.tether_limit is not None:
            solve_tether(x, c.tether_limit, ws.tmp_tail, ws.tmp_tail2, ws.len_tail)
        clamped = False
        if c.max_distance is not None:
            clamped = solve_max_distance(x, sd.reference, c.max_distance, ws.tmp, ws.tmp_b,
                                         ws.len)
        pushed_from = x.copy() if direct is not None else None
        moved = _collide(model, ws, x, x_prev, sd, c, None)
        if moved and pushed_from is not None:
            _contacts(pushed_from, x, direct.P, contacts)
        if limits:
            moved = moved or not np.array_equal(x, before)
            _contacts(before, pushed_from, direct.P, contacts)  # held as the colliders' are
        elif clamped:
            moved = True
        if not moved:
            break
    if direct is not None and exact and not moved:
        # Measured, not inferred from the step (see _direct_lengths_exact).
        exact = _direct_lengths_exact(x, direct)
    # Lengths the last round's SHAKE did not make exact (a strand it rejected, or a step too
    # large for one Newton step to converge) still need the positions-only passes, though no
    # collider moved anything in that round.
    return moved or not exact


# The direct solve's lengths count as exact within this share of their rest lengths
# (`_direct_lengths_exact`): a tenth of the 0.5 % the suite holds every substep end to.
DIRECT_LENGTH_TOLERANCE = 1e-3


def _direct_lengths_exact(x: np.ndarray, direct: DirectCoefficients) -> bool:
    """Whether every exact-length segment of the direct solve's strands is within
    DIRECT_LENGTH_TOLERANCE of its rest length, measured on `x`.

    A small last step does not show it: with the contact rows (the particles the colliders and
    the limits moved, held along their push) the rigid chain's lengths, compliance-0 bending
    and contacts can ask for more than the chain can give, and the regularised Newton steps
    then converge on a compromise that leaves lengths off (a rigid-bending strand held by a
    10 cm max distance on a head moving at 3 g ended two substeps 1.4 % and 0.6 % off with a
    last step of 5e-10 m). Measured, such a substep goes on to the passes where the lengths
    win and the bending yields (`_lengths_after_contact`)."""
    P = direct.P
    d = x[:, :, 1:P] - x[:, :, :P - 1]
    square = d * d
    length = np.sqrt(square[0] + square[1] + square[2])
    rest = direct.rest
    off = np.abs(length - rest) > DIRECT_LENGTH_TOLERANCE * rest
    off &= rest > 0.0
    return not bool(off[direct.rigid].any())


# FTL + collider passes after the contacts (_lengths_after_contact). Measured: 30 segments of
# hair on a swinging 10 cm head stretch 1.13 % with none, 0.08 % with one, 0.01 % with two. Two
# cases need the second pass: a root on the scalp inside the head's particle shell, whose first
# segment bending pulls into the head every substep (one pass left the benchmark's first
# segments up to 1.1 % long, median 0.56 %; two 0.17 %, median 0.07 %), and tips wedged in the
# crease between two overlapping bodies, where alternating projections creep
# (tests/core/test_crease.py). The hair benchmark (1,000 x 32 guides, 8 spheres, 360 deg/s),
# one / two / three passes: 2.1 / 1.1 / 0.7 % at its last frame for 1 / 1.2 / 1.5 times the
# time; the crease test 1.6 / 0.65 / 0.28 %. With the spheres' creases resolved exactly
# (`spheres.resolve_creases`) the benchmark's last frame is 0.95 / 0.26 / 0.07 %, the crease
# test 0.21 % with two (0.18 % and 0.13 % with the crease point kept at length from the
# parent). A pass whose colliders move nothing ends them.
CONTACT_LENGTH_PASSES = 2


def _lengths_after_contact(model: StrandModel, ws: Workspace, x: np.ndarray, x_prev: np.ndarray,
                           sd: SubstepDrive, c: FrameCoefficients, reference,
                           contacts: dict) -> None:
    """Let exact lengths and contacts agree at the end of the substep: a collider pushes a
    particle out along its normal, away from its parent (hair on a head was stretched by that
    push until the next substep's sweep), so the FTL sweep runs again (positions only: no
    velocity correction), then the tether and max distance, and the colliders after them
    (their friction bounded by the extra
    normal push, Coulomb as in the first pass), CONTACT_LENGTH_PASSES times. A chain lying on a
    sphere converges to vertices on the surface joined by exact chords.

    The corrections are positions only, velocity too: ``x_prev`` moves with them, so they
    create no velocity. Taken as velocity (x - x_prev) / h they were an outside push each
    substep: a passive strand falling over a head gained 70 % of its fall's energy within a
    quarter second (FTL pulls a particle into the head, the collider pushes it out, again)."""
    before = ws.contact_before
    np.copyto(before, x)
    direct = c.direct
    passes = CONTACT_LENGTH_PASSES
    # The colliders' pushes as half-spaces for the next sweep within the max distances.
    planes = None
    k = 0
    while k < passes:
        k += 1
        particle_major = None  # the sweep's particle-major copy of x, when it still is one
        # With the direct solve, its positions-only pass: the sweep would bend a rigid chain
        # back where the colliders pushed it.
        stepped = direct is not None and solve_direct(x, direct, None, iterations=1,
                                                      contacts=contacts)
        if not stepped:
            if c.max_distance is not None:
                # Lengths and max distances together (core/sweep_limits.py): the clamp after
                # the sweep would stretch the segments it pulls.
                solve_ftl_within(x, c.ftl, reference, c.max_distance, c.kinematic, planes)
            else:
                solve_ftl(x, None, c.ftl, ws.ftl_scratch)
                if c.roots_only and c.tether_limit is None:
                    particle_major = _sweep_copy(ws, c)
        if not c.roots_only:
            set_kinematic(x, reference, roots_only=False, kinematic=c.kinematic)
        # The limits again after the sweep, in the substep's order (a swept chain left its
        # max distance by 0.06 mm of 30 whenever a collider was in the scene).
        if c.tether_limit is not None:
            solve_tether(x, c.tether_limit, ws.tmp_tail, ws.tmp_tail2, ws.len_tail)
        clamped = False
        if c.max_distance is not None:
            clamped = solve_max_distance(x, reference, c.max_distance, ws.tmp, ws.tmp_b, ws.len)
        if not stepped:
            np.copyto(ws.collide_before, x)
        pushed = _collide(model, ws, x, x_prev, sd, c, particle_major,
                          meshes_from=None if stepped else ws.meshes_before)
        if pushed and not stepped:
            if c.max_distance is not None:
                if k < passes:
                    planes = _push_planes(ws, x, planes)
                _onto_limit_crease(ws, x, reference, c.max_distance)
            limits = (None if c.max_distance is None and c.tether_limit is None
                      else (reference, c.max_distance, c.tether_limit))
            if k < passes:
                _slide_to_length(x, ws, c.ftl, _mesh_surfaces(ws, sd, c), limits,
                                 spheres=_sphere_surfaces(ws, sd, c), edges=(model, sd, c))
            else:
                _slide_and_push(model, ws, x, x_prev, sd, c, limits)
        if stepped and not pushed and (clamped or direct.largest_move > DIRECT_EXACT_MOVE
                                       or not _direct_lengths_exact(x, direct)):
            # The direct step left the lengths inexact (a step too large to converge, or one
            # that converged on a compromise, see _direct_lengths_exact), or the max
            # distance's clamp moved a particle after it (a rigid strand at 8 g ended a
            # substep 2.3 % short): not agreed yet. (After the sweep within the limits the
            # clamp finds nothing.)
            pushed = True
        if not pushed:
            break  # the sweep's lengths and the contacts agree: another pass changes nothing
        if direct is not None and k == passes:
            # The direct solve's lengths and stiff bending still disagree with the contacts:
            # a rigid chain pressed onto a collider cannot both stay straight and outside it.
            # The hard constraints win and the bending yields: the sweep's passes (lengths,
            # limits, colliders) end the substep, as for chains without stiff bending. A
            # rigid-bending strand on a head shaken at 3 g ended substeps 3.5 % long after the
            # direct passes (0.4 % short .. 3.5 % long).
            direct = None
            passes += CONTACT_LENGTH_PASSES
    np.subtract(x, before, out=before)
    x_prev += before


def _push_planes(ws: Workspace, x: np.ndarray, planes: tuple | None) -> tuple:
    """The tangent planes of the positions-only collider pass's pushes (from
    `ws.collide_before` to `x`) as half-spaces (normal (3, S, Ps), offset (S, Ps); offset -inf
    where none), added to `planes` (a particle pushed again takes its latest)."""
    if planes is None:
        planes = (np.zeros_like(x), np.full(x.shape[1:], -np.inf))
    normal, offset = planes
    push = x - ws.collide_before
    size = np.sqrt(np.einsum("ksp,ksp->sp", push, push))
    pushed = size > 0.0
    n = push[:, pushed] / size[pushed]
    normal[:, pushed] = n
    offset[pushed] = np.einsum("kn,kn->n", n, x[:, pushed])
    return planes


def _onto_limit_crease(ws: Workspace, x: np.ndarray, reference: np.ndarray,
                       max_distance: np.ndarray) -> None:
    """The particles the positions-only collider pass pushed (from `ws.collide_before` to `x`)
    out of their max-distance balls, put on the nearest point inside the ball on the outer
    side of the push's tangent plane (`sweep_limits.into_ball_and_half_space`: where the plane
    cuts the ball's sphere, the circle's point nearest): the contact and the limit solved as
    one projection onto their intersection, as `spheres.resolve_creases` does for two spheres.
    The plane stands for the surface to second order (a capsule of radius R: a move of d
    along it ends d^2 / 2R inside), so the colliders after it find almost nothing to push.
    Clamped into the ball instead, the particle went back into the collider; pushed last, it
    stayed outside its ball (a strand resting on a shoulder capsule at its 15 cm max distance:
    11 um beyond at a substep end, tests/core/test_slide_audit.py)."""
    push = x - ws.collide_before
    size = np.sqrt(np.einsum("ksp,ksp->sp", push, push))
    d = x - reference
    out = np.einsum("ksp,ksp->sp", d, d) > np.square(max_distance)
    out &= size > 0.0
    if not out.any():
        return
    n = push[:, out] / size[out]
    point = x[:, out]
    x[:, out] = into_ball_and_half_space(point, reference[:, out], max_distance[out], n,
                                         np.einsum("kn,kn->n", n, point))


# Rounds of colliders and positions-only lengths that put a start pose out of the colliders
# (`_Bake._start_outside`). Each round ends on the colliders: the head-turn sample's 48 guides,
# several drawn 4-5 cm into the head, were out after one (the second found nothing to push).
START_OUTSIDE_ROUNDS = 4


# Slides and collider passes after the last positions-only pass (`_slide_and_push`).
SLIDE_ROUNDS = 4


def _slide_and_push(model: StrandModel, ws: Workspace, x: np.ndarray, x_prev: np.ndarray,
                    sd: SubstepDrive, c: FrameCoefficients, limits) -> None:
    """The last pass's slide to length, its followers and the colliders again, until the
    colliders no longer leave a segment off (at most SLIDE_ROUNDS): the colliders have the last
    word."""
    spheres = _sphere_surfaces(ws, sd, c)
    meshes = _mesh_surfaces(ws, sd, c)
    for _ in range(SLIDE_ROUNDS):
        if not _slide_to_length(x, ws, c.ftl, meshes, limits, follow=True, spheres=spheres,
                                edges=(model, sd, c)):
            return
        np.copyto(ws.collide_before, x)
        if not _collide(model, ws, x, x_prev, sd, c, None, meshes_from=ws.meshes_before):
            return
        if c.max_distance is not None:
            _onto_limit_crease(ws, x, limits[0], c.max_distance)


def _sphere_surfaces(ws: Workspace, sd: SubstepDrive, c: FrameCoefficients) -> tuple | None:
    """The fast-path spheres' centres (3, K), radii (K,) and the particles' collision radii
    (flat), for the slide's normals (`_slide_wave`); None without such spheres. Once per
    substep (`_collider_plan`)."""
    plan = _collider_plan(ws, sd)
    if plan.surfaces is _UNSET:
        rows = [(sd.collider_matrix[k], size) for k, kind, _, size, everywhere in ws.colliders
                if everywhere and kind == ColliderKind.ELLIPSOID and sd.collider_similarity[k]]
        if not rows:
            plan.surfaces = None
        else:
            centres = np.array([M[:3, 3] for M, _ in rows]).T
            radii = np.array([size * math.sqrt(float(M[:3, 0].dot(M[:3, 0])))
                              for M, size in rows])
            plan.surfaces = (centres, radii, c.collision_radius.reshape(-1))
    return plan.surfaces


def _mesh_surfaces(ws: Workspace, sd: SubstepDrive, c: FrameCoefficients) -> tuple | None:
    """The body meshes' field, their (M, S) strand mask, the substep's end time and the
    particles' collision radii (flat), for the slide on their surfaces (`_slide_on_meshes`);
    None without body meshes."""
    if sd.meshes is None:
        return None
    field, mask = sd.meshes
    return field, mask, sd.t, c.collision_radius.reshape(-1)


# A segment a positions-only collider pass left further than this share of its rest length
# from it has its pushed particle slid to length (`_slide_to_length`); the passes leave the
# others within about a tenth of this (the hair benchmark's last frame: 0.06 %).
SLIDE_TOLERANCE = 1e-3


def _slide_to_length(x: np.ndarray, ws: Workspace, ftl, meshes: tuple | None, limits=None, *,
                     follow: bool = False, spheres: tuple | None = None,
                     edges: tuple | None = None) -> bool:
    """Each swept particle the collider pass moved (from `ws.collide_before` to `x`) whose
    segment from its parent it left more than SLIDE_TOLERANCE off its rest length L: put at
    L from the parent on the collider's tangent plane where the push put it, the point of
    that plane's circle at L from the parent nearest to the pushed position. Whether it moved
    one.

    The length and the contact solved together, as the follow-the-leader sweep solves the
    length alone (the parent infinitely heavy, Mueller et al. 2012): the point the passes'
    alternating projections (sweep to length, push out along the normal) converge to, reached
    in one step. Those converge by about the squared cosine of the angle between the two
    constraints' normals a pass (von Neumann's alternating projections), so not at all where
    the segment points into the surface: a hair tip falling onto the chest head-on ended
    substeps 10-11 % short (the hair benchmark's frames 8 and 10: 1.8 % and 8.4 %). Positions
    only, as the passes: the caller moves x_prev along. The push's direction stands for the
    surface normal, or on a sphere the sphere's own (the push's direction carries the
    friction's tangential part); a body mesh's push is slid on, then on the mesh's surface
    (`_slide_on_meshes`: its contact surface curves away from the plane); elsewhere the
    friction tilts it by up to atan(friction), so
    the slide may end a little inside the surface, and the caller's last pass pushes again
    (`_slide_and_push`). `meshes`: `_mesh_surfaces` (None without body meshes). `limits`:
    (reference, max distance, tether limit) when either limit is on; the slide then stays
    within them (`_slide_within_limits`). `edges`: (model, substep drive, coefficients): a
    particle whose plane its parent cannot reach is turned around the collider's edge
    (`_around_edges`).

    In the FTL order, root to tip: each particle is measured from its parent's final place, in
    waves (a particle whose parent slides in the same wave waits for the next one, and the
    pushed children of the particles a wave moved are measured again after it). Slid at once,
    both from where the push left them, a particle and its parent ended a hair benchmark
    substep 9.2 % off. `follow` (the last pass, which no sweep follows): the children no
    collider pushed follow the particles a wave moved (the FTL step), down to the tip or the
    first segment still at its length; without, the slid particle left its child's segment
    8.9 % off."""
    before = ws.collide_before
    moved = x[0] != before[0]
    moved |= x[1] != before[1]
    moved |= x[2] != before[2]
    moved &= ftl.mask
    on_mesh = None
    if meshes is not None:
        # The particles a body mesh pushed: slid on its surface (`_slide_on_meshes`).
        mesh = ws.meshes_before
        on_mesh = (x[0] != mesh[0]) | (x[1] != mesh[1])
        on_mesh |= x[2] != mesh[2]
        on_mesh &= moved
        on_mesh = on_mesh.reshape(-1)
    pushed = moved.reshape(-1)
    ids = pushed.nonzero()[0]
    if not ids.size:
        return False
    swept = ftl.mask.reshape(-1)
    xf = x.reshape(3, -1)
    slid_any = False
    while ids.size:
        ids = _off_length(xf, ids, ws.parent_rest)
        if not ids.size:
            break
        waiting = _NONE
        if ids.size > 1:
            chained = np.zeros(ids.size, dtype=bool)
            np.equal(ids[1:] - 1, ids[:-1], out=chained[1:])
            if chained.any():
                waiting = ids[chained]
                ids = ids[~chained]
        ids = _slide_wave(xf, ws, ids, before, x, limits, spheres, meshes, on_mesh, edges)
        slid_any |= bool(ids.size)
        children = ids + 1
        children = children[children < pushed.size]
        if follow:
            children = _follow_down(xf, children, pushed, swept, ws.parent_rest, limits)[0]
        children = children[pushed.take(children)]
        ids = np.union1d(children, waiting) if waiting.size else children
    if follow and on_mesh is not None:
        # The children no collider pushed of the particles a body mesh pushed and the waves
        # did not slide (their own segment at length) follow them too: a particle wedged
        # between a body mesh and a sphere, which have no common crease step (the spheres'
        # `resolve_creases`), creeps out of the wedge by the alternating pushes of every
        # round, stretching its child's segment (the slide audit's mesh bodies: a tip 0.71 %
        # long at a substep end, its parent pushed 25 um further each round).
        children = on_mesh.nonzero()[0] + 1
        children = children[children < pushed.size]
        slid_any |= _follow_down(xf, children, pushed, swept, ws.parent_rest, limits)[1]
    return slid_any


def _follow_down(xf: np.ndarray, children: np.ndarray, pushed: np.ndarray, swept: np.ndarray,
                 parent_rest: np.ndarray, limits=None) -> tuple[np.ndarray, bool]:
    """The FTL step down from `children` (flat ids): those no collider pushed (`pushed`) and
    swept, whose segment is off, follow their parents (within their max distances, `limits`
    as `_slide_to_length`'s), their children after them, down to the tip or the first
    segment still at its length. The pushed children met on the way (`children`' own and
    their descendants'), and whether one followed."""
    followed = False
    while children.size:
        free = children[~pushed.take(children) & swept.take(children)]
        if not free.size:
            break
        free = _off_length(xf, free, parent_rest)
        if not free.size:
            break
        _follow(xf, free, parent_rest, limits)
        followed = True
        grand = free + 1
        children = np.union1d(children[pushed.take(children)], grand[grand < pushed.size])
    return children, followed


def _off_length(xf: np.ndarray, ids: np.ndarray, parent_rest: np.ndarray) -> np.ndarray:
    """The flat particle ids among `ids` whose segment from their parent is more than
    SLIDE_TOLERANCE off its rest length."""
    d = xf.take(ids, axis=1) - xf.take(ids - 1, axis=1)
    square = d * d
    length2 = square[0] + square[1]
    length2 += square[2]
    rest = parent_rest.take(ids)
    rest2 = rest * rest
    far = (1.0 + SLIDE_TOLERANCE) ** 2
    near = (1.0 - SLIDE_TOLERANCE) ** 2
    return ids[((length2 > far * rest2) | (length2 < near * rest2)).nonzero()[0]]


def _follow(xf: np.ndarray, ids: np.ndarray, parent_rest: np.ndarray, limits=None) -> None:
    """Put the particles `ids` (flat, none the parent of another) at their rest length from
    their parents along their segments (the FTL step, Mueller et al. 2012); with `limits`
    (reference, max distance, tether; `_slide_to_length`'s) and a max distance, at the point
    of that sphere inside their ball nearest it (`sweep_limits.clamp_in_sweep`, as the sweep
    within the limits places them): followed along the segment alone, a strand's tip on a 4 g
    torso with friction 0.3 left its 15 cm max distance by 0.18 mm at a substep end."""
    parent = xf.take(ids - 1, axis=1)
    d = xf.take(ids, axis=1) - parent
    # (A zero segment stays as it is, as the sweep keeps its undefined direction.)
    length = np.maximum(np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), 1e-300)
    rest = parent_rest.take(ids)
    placed = parent + d * (rest / length)
    if limits is not None and limits[1] is not None:
        placed = clamp_in_sweep(placed, parent, limits[0].reshape(3, -1).take(ids, axis=1),
                                limits[1].reshape(-1).take(ids), rest)
    for k in range(3):
        xf[k][ids] = placed[k]


def _slide_wave(xf: np.ndarray, ws: Workspace, ids: np.ndarray, before: np.ndarray,
                x: np.ndarray, limits, spheres: tuple | None, meshes: tuple | None = None,
                on_mesh: np.ndarray | None = None, edges: tuple | None = None) -> np.ndarray:
    """Slide the particles `ids` (flat, none the parent of another) to length on their
    collider's tangent plane (see `_slide_to_length`); the ids it moved. `before`: x before
    the collider pass, whose push gives the normal where `spheres` (`_sphere_surfaces`) do not
    have the particle on a sphere's surface. `edges`: (model, substep drive, coefficients),
    for `_around_edges` (None: the particles out of their plane's reach stay)."""
    child = xf.take(ids, axis=1)
    d = child - xf.take(ids - 1, axis=1)
    rest = ws.parent_rest.take(ids)
    n = child - before.reshape(3, -1).take(ids, axis=1)
    if spheres is not None:
        # On a sphere's surface (offset by the particle's radius) its normal: the push's
        # direction carries the friction's tangential part, up to atan(friction) off it, and
        # a slide on that tilted plane ends inside the sphere by about that share of its
        # length (the hair benchmark's 0.3: 3.7 % short after one push, 3.1 / 1.0 % after two
        # / three rounds of slide and push).
        centres, radii, radius = spheres
        e = child[:, :, None] - centres[:, None, :]
        dist = np.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
        gap = np.abs(dist - radii - radius.take(ids)[:, None])
        k = gap.argmin(axis=1)
        rows = np.arange(ids.size)
        on = gap[rows, k] <= SLIDE_TOLERANCE * rest
        n = np.where(on, e[:, rows, k], n)
    mesh = _NONE
    if on_mesh is not None:
        # Pushed by a body mesh: the plane of the mesh's own push (after the spheres').
        mesh = on_mesh.take(ids).nonzero()[0]
        if mesh.size:
            n[:, mesh] = child[:, mesh] - ws.meshes_before.reshape(3, -1).take(ids[mesh], axis=1)
    n /= np.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
    a = d[0] * n[0] + d[1] * n[1] + d[2] * n[2]  # the parent's depth below the plane
    t = d - a * n  # from the parent's foot on the plane to the pushed particle
    tl = np.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
    # Where the parent stands L or more above the plane, the contact lets go: the particle
    # follows its parent (FTL) and ends on or above the plane.
    free = ids[a <= -rest]
    if free.size:
        _follow(xf, free, ws.parent_rest, limits)
    cone = None  # where slid on a face's own plane: the friction cone's edge, tl = friction a
    # Where the plane is out of reach, the parent L or more below it (a child dragged under a
    # box's face while its parent rides up the next one, or on the far side of a sphere
    # smaller than a segment), the child is turned about its parent around the collider's
    # edge until it clears it (`_around_edges`); the sweep and the push alone left such
    # segments 18-40 % long. Only where the surface's own normal puts the plane out of reach
    # too: the friction tilts the push's direction by up to atan(friction). Where the face's
    # own plane is in reach and the tilted one is not (a chain dragged under a box's edge
    # with friction 0.3 ended frames up to 21 % long), the child slides to length on the
    # face's own plane where the segment at length lies outside that face's friction cone
    # (rho > friction a: the length's pull on the child has a tangential part rho and a normal
    # part a, Coulomb's static bound, as in Mueller et al. 2020 sec. 3.5, on the contact's own
    # normal); inside it the wedge holds the child where the push put it and the length is
    # left to the next substep's SHAKE, with velocity. Slid frictionless there too, the
    # passive drop of tests/core/test_energy.py seed 5 (a tip under a box, friction 0.5, its
    # parent 5.4-5.8 cm above the bottom face, 6.2 cm segments, held in the cone for many
    # substeps, then let go 8 mm in one) rose by 12.1 % of its fall instead of 0.3 %; turned
    # around the edge, 4.5 %; slid to the cone's edge when length was inside it (the wedge
    # holding a segment still long) 0.34 %, but the child then stuck there while the chain
    # pulled its parent on (a box of the tests/core/test_chains_audit.py edge cases 0.06 ->
    # 2.2 % long at 60 fps); with Mueller's substep form (static only while the motion since
    # the start of the substep is within friction x the length's normal correction) 7.5 %.
    # Where the segment runs along the normal (no direction to slide in), or the pushing
    # collider is a body mesh, the particle stays where the push put it.
    if edges is not None:
        beyond = a >= rest
        if on_mesh is not None:
            beyond &= ~on_mesh.take(ids)
        beyond = beyond.nonzero()[0]
        if beyond.size:
            normal, on, friction = _surface_normals(ws, child[:, beyond], ids[beyond],
                                                    rest[beyond], edges)
            face = on & (row_dot(d[:, beyond], normal) < rest[beyond])
            if face.any():
                f = beyond[face]
                n[:, f] = normal[:, face]
                a[f] = row_dot(d[:, f], n[:, f])
                t[:, f] = d[:, f] - a[f] * n[:, f]
                tl[f] = np.sqrt(row_dot(t[:, f], t[:, f]))
                cone = np.zeros(ids.size)
                cone[f] = friction[face] * np.maximum(a[f], 0.0)
            beyond = beyond[~face]
        if beyond.size:
            free = np.union1d(free, _around_edges(xf, ws, ids[beyond], edges, limits))
    ok = (np.abs(a) < rest) & (tl > 1e-9 * rest)
    if cone is not None:
        # On a face's own plane only where the segment at length is outside the cone.
        ok &= rest * rest - a * a > cone * cone
    ok = ok.nonzero()[0]
    if not ok.size:
        return free
    ids, child, t, tl, a, rest = ids[ok], child[:, ok], t[:, ok], tl[ok], a[ok], rest[ok]
    rho = np.sqrt(rest * rest - a * a)
    slid = child + t * ((rho - tl) / tl)
    n = n[:, ok]
    foot = child - t
    if mesh.size:
        on = on_mesh.take(ids).nonzero()[0]
        if on.size:
            _slide_on_meshes(slid, foot, rho, n, on, ids, xf, rest, meshes, ws.Ps, spheres)
    if limits is not None:
        # (The normals of the particles slid: before, those of every off particle were passed,
        # misaligned with them wherever a plane was out of reach.)
        keep = _slide_within_limits(slid, foot, rho, n, ids, x, *limits)
        if not keep.all():
            ids, slid = ids[keep], slid[:, keep]
    for k in range(3):
        xf[k][ids] = slid[k]
    return np.union1d(ids, free) if free.size else ids


def _surface_normals(ws: Workspace, points: np.ndarray, ids: np.ndarray, rest: np.ndarray,
                     edges: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The outward normals (3, n) of the analytic colliders whose surfaces (offset by the
    particles' radii) the particles `ids` (flat) at `points` lie on, within SLIDE_TOLERANCE of
    their segments' `rest` lengths, whether one does, and that collider's friction."""
    model, sd, c = edges
    radius = c.collision_radius.reshape(-1).take(ids)
    strand = ids // ws.Ps
    normal = np.zeros_like(points)
    nearest = SLIDE_TOLERANCE * rest
    on = np.zeros(ids.size, dtype=bool)
    coulomb = np.zeros(ids.size)
    for k, kind, friction, _, everywhere, M, _, _, _, _, similar in _collider_plan(ws, sd).rows:
        Minv = sd.collider_inverse[k] if sd.collider_inverse is not None else None
        n, distance = shape_normal(kind, points.T, M, Minv, model.colliders, k,
                                   similarity=similar)
        gap = np.abs(distance - radius)
        if not everywhere:
            gap[~model.collider_mask[k].take(strand)] = np.inf
        closer = gap <= nearest
        nearest = np.where(closer, gap, nearest)
        normal[:, closer] = n[closer].T
        coulomb[closer] = friction
        on |= closer
    return normal, on, coulomb


def _around_edges(xf: np.ndarray, ws: Workspace, ids: np.ndarray, edges: tuple, limits=None
                  ) -> np.ndarray:
    """The particles `ids` (flat, none the parent of another) whose push's plane their parent
    cannot reach at rest length: each put at rest length from its parent along its segment (the
    FTL step) where that point is clear of every analytic collider of its strand, else turned
    about its parent around the collider holding that point deepest until it clears it
    (`around_edges.turn_until_clear`; the body meshes' pass after it pushes as it always does).
    Within a max distance (`limits` as `_slide_to_length`'s): a particle the turn would take
    out of its ball stays. The ids it moved."""
    model, sd, c = edges
    parent = xf.take(ids - 1, axis=1)
    child = xf.take(ids, axis=1)
    rest = ws.parent_rest.take(ids)
    radius = c.collision_radius.reshape(-1).take(ids)
    strand = ids // ws.Ps
    d = child - parent
    swept = parent + d * (rest / np.maximum(np.sqrt(row_dot(d, d)), 1e-300))
    deepest = np.zeros(ids.size)
    holder = np.full(ids.size, -1)
    rows = _collider_plan(ws, sd).rows
    for r, (k, kind, _, _, everywhere, M, _, _, _, _, similar) in enumerate(rows):
        Minv = sd.collider_inverse[k] if sd.collider_inverse is not None else None
        _, distance = shape_normal(kind, swept.T, M, Minv, model.colliders, k,
                                   similarity=similar)
        depth = radius - distance
        if not everywhere:
            depth[~model.collider_mask[k].take(strand)] = -np.inf
        deeper = depth > deepest
        deepest[deeper] = depth[deeper]
        holder[deeper] = r
    placed = swept
    moved = np.ones(ids.size, dtype=bool)
    for r in np.unique(holder[holder >= 0]).tolist():
        k, kind, _, _, _, M, _, _, _, _, similar = rows[r]
        Minv = sd.collider_inverse[k] if sd.collider_inverse is not None else None
        held = (holder == r).nonzero()[0]
        outward, _ = shape_normal(kind, parent[:, held].T, M, Minv, model.colliders, k,
                                  similarity=similar)
        reach = radius[held]

        def depth_of(points, k=k, kind=kind, M=M, Minv=Minv, similar=similar, reach=reach):
            return reach - shape_normal(kind, points.T, M, Minv, model.colliders, k,
                                        similarity=similar)[1]

        turned, ok = turn_until_clear(parent[:, held], child[:, held], rest[held], depth_of,
                                      np.ascontiguousarray(outward.T))
        placed[:, held] = turned
        moved[held] = ok
    if limits is not None and limits[1] is not None:
        # (The turn stays on the rest-length sphere; a max distance it would leave wins.)
        e = placed - limits[0].reshape(3, -1).take(ids, axis=1)
        moved &= row_dot(e, e) <= np.square(limits[1].reshape(-1).take(ids))
    ids, placed = ids[moved], placed[:, moved]
    for k in range(3):
        xf[k][ids] = placed[k]
    return ids


def _mesh_contacts(points: np.ndarray, ids: np.ndarray, meshes: tuple, Ps: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The body-mesh contact of each of `points` (3, n), particles `ids` (flat): whether one
    was found (within the near reach, `MeshField.near_contacts`), its outward normal (3, n) and
    signed distance (n,): of the meshes its strand collides with, the one whose surface it is
    nearest to touching (distance nearest its collision radius)."""
    field, mask, t, radius = meshes
    strand = ids // Ps
    r = radius.take(ids)
    best = np.full(ids.size, np.inf)
    normal = np.zeros((3, ids.size))
    distance = np.zeros(ids.size)
    rows = np.ascontiguousarray(points.T)
    for m in range(mask.shape[0]):
        sel = mask[m].take(strand).nonzero()[0]
        if not sel.size:
            continue
        c = field.near_contacts(m, rows.take(sel, axis=0), t)
        if not len(c.index):
            continue
        i = sel.take(c.index)
        gap = np.abs(c.distance - r.take(i))
        nearer = gap < best.take(i)
        i = i[nearer]
        best[i] = gap[nearer]
        normal[:, i] = c.normal[nearer].T
        distance[i] = c.distance[nearer]
    return np.isfinite(best), normal, distance


def _slide_on_meshes(slid: np.ndarray, foot: np.ndarray, rho: np.ndarray, n: np.ndarray,
                     on: np.ndarray, ids: np.ndarray, xf: np.ndarray, rest: np.ndarray,
                     meshes: tuple, Ps: int, spheres: tuple | None = None) -> None:
    """Bring the columns `on` of the slide's points `slid` (3, m), slid on the tangent plane
    of a body mesh's push, back onto the mesh's contact surface and to length: each is put at
    its collision radius from the surface point nearest it (the closest-point query again)
    and slid on that point's tangent plane to the circle at L from its parent (in place, with
    the circle's `foot`, radius `rho` and normal `n` for the limits).

    The contact surface (the mesh offset by the radius) is curved where the push's normal
    turns: around an edge or a corner it is a cylinder or a sphere of the collision radius
    itself. A slide of s on the plane of the push leaves the point up to sqrt(r^2 + s^2) - r
    above it (the ball of radius r inside the offset body at the contact): measured on the
    slide audit's body meshes (100 guides, 5 mm radius), up to 1.75 mm above, 312 of 11,727
    slides more than 1 um, where a resting contact sits at r, a lift with nothing to pay for
    it. After the projection the second slide is short (the circle moves by the lift), and
    so is what it leaves: at most 0.3 um above the surface on the same audit. A point that
    ends inside a sphere (`spheres`, `_sphere_surfaces`) goes onto the crease
    (`_mesh_sphere_crease`), which can leave it up to 47-54 um above the mesh (the crease is
    solved against the sphere and the length, not the mesh again: a strict xfail in
    tests/core/test_mesh_slide.py)."""
    parent = xf.take(ids[on] - 1, axis=1)
    q = slid[:, on]
    L = rest[on]
    found, normal, distance = _mesh_contacts(q, ids[on], meshes, Ps)
    r = meshes[3].take(ids[on])
    q = q + normal * (r - distance)  # onto the offset surface (a point not found stays)
    d = q - parent
    a = d[0] * normal[0] + d[1] * normal[1] + d[2] * normal[2]
    t = d - a * normal
    tl = np.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
    # As the plane slide: a circle out of reach or a segment along the normal keeps the first
    # slide (the caller's last collider pass pushes it out where it ended inside).
    ok = found & (np.abs(a) < L) & (tl > 1e-9 * L)
    if not ok.any():
        return
    on, q, t, tl, a, L, normal = on[ok], q[:, ok], t[:, ok], tl[ok], a[ok], L[ok], normal[:, ok]
    circle = np.sqrt(L * L - a * a)
    slid[:, on] = q + t * ((circle - tl) / tl)
    foot[:, on] = q - t
    rho[on] = circle
    n[:, on] = normal
    if spheres is not None:
        _mesh_sphere_crease(slid, on, parent[:, ok], L, normal, a, ids, spheres)


def _mesh_sphere_crease(slid: np.ndarray, on: np.ndarray, parent: np.ndarray, L: np.ndarray,
                        normal: np.ndarray, depth: np.ndarray, ids: np.ndarray,
                        spheres: tuple) -> None:
    """Put the columns `on` of `slid` (3, m), slid to length L from `parent` on a body mesh's
    tangent plane (unit `normal`, the parent `depth` below it), that ended inside a sphere's
    particle shell (`spheres`: `_sphere_surfaces`) on the crease: the point at L from the
    parent on the line where the mesh's plane meets the sphere's tangent plane (at the
    point's projection onto the shell) nearest it. Where the line is out of reach the point
    stays. The mesh and the sphere share no crease step (the spheres' `resolve_creases`):
    their alternating pushes and slides left a tip wedged between the chest mesh and a
    shoulder sphere 2 mm inside the sphere and its segment 8.9 % short (the slide audit's
    scene at 1,000 guides)."""
    centres, radii, radius = spheres
    p = slid[:, on]
    e = p[:, :, None] - centres[:, None, :]
    dist = np.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    reach = radii[None, :] + radius.take(ids[on])[:, None]
    gap = dist - reach
    k = gap.argmin(axis=1)
    rows = np.arange(on.size)
    inside = (gap[rows, k] < 0.0).nonzero()[0]
    if not inside.size:
        return
    k = k[inside]
    d = dist[inside, k]
    n2 = e[:, inside, k] / d
    n1 = normal[:, inside]
    q = parent[:, inside]
    # The two planes relative to the parent: n1 . (x - q) = h1, n2 . (x - q) = h2.
    h1 = depth[inside]
    h2 = reach[inside, k] - (n2[0] * (q[0] - centres[0, k]) + n2[1] * (q[1] - centres[1, k])
                             + n2[2] * (q[2] - centres[2, k]))
    c = n1[0] * n2[0] + n1[1] * n2[1] + n1[2] * n2[2]
    det = 1.0 - c * c
    # The line's point nearest the parent, x0 = q + alpha n1 + beta n2, and its direction.
    safe = np.where(det > 1e-6, det, 1.0)
    alpha = (h1 - c * h2) / safe
    beta = (h2 - c * h1) / safe
    x0 = q + alpha * n1 + beta * n2
    u = np.cross(n1, n2, axis=0) / np.sqrt(safe)
    along2 = L[inside] ** 2 - (alpha * alpha + beta * beta + 2.0 * alpha * beta * c)
    ok = ((det > 1e-6) & (along2 >= 0.0)).nonzero()[0]
    if not ok.size:
        return
    x0, u, along = x0[:, ok], u[:, ok], np.sqrt(along2[ok])
    w = p[:, inside[ok]] - x0
    ahead = u[0] * w[0] + u[1] * w[1] + u[2] * w[2] >= 0.0
    slid[:, on[inside[ok]]] = x0 + u * np.where(ahead, along, -along)


def _slide_within_limits(slid: np.ndarray, foot: np.ndarray, rho: np.ndarray, n: np.ndarray,
                         ids: np.ndarray, x: np.ndarray, reference, max_distance,
                         tether) -> np.ndarray:
    """Keep the slide's points (`slid`, (3, m), in place) within the max distance and the
    tether: each point lies on the circle of radius `rho` about `foot` in the tangent plane of
    normal `n`; where it left a limit's ball, it moves along that circle to the nearest point
    of the arc inside the ball (the circle meets the ball's disc on the plane in one arc: the
    length, the contact and the limit solved together, as the sweep within the limits,
    `core/sweep_limits.py`, solves length and limit). Whether each point may slide: not where
    the arc is empty (the ball misses the circle) or a point still ends outside a limit after
    both (the particle then stays where the push put it, as without the slide)."""
    keep = np.ones(ids.size, dtype=bool)
    balls = []
    if max_distance is not None:
        balls.append((reference.reshape(3, -1).take(ids, axis=1),
                      max_distance.reshape(-1).take(ids)))
    if tether is not None:
        Ps = x.shape[2]
        j = ids % Ps
        balls.append((x.reshape(3, -1).take(ids - j, axis=1),
                      tether.reshape(-1).take((ids - j) // Ps * (Ps - 1) + j - 1)))
    for centre, limit in balls:
        _onto_arc(slid, foot, rho, n, centre, limit, keep)
    for centre, limit in balls:
        d = slid - centre
        keep &= d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= limit * limit * (1.0 + 1e-12)
    return keep


def _onto_arc(slid: np.ndarray, foot: np.ndarray, rho: np.ndarray, n: np.ndarray,
              centre: np.ndarray, limit: np.ndarray, keep: np.ndarray) -> None:
    """Move the points of `slid` outside the ball (`centre`, `limit`) to the nearest point
    inside it on their circle (see `_slide_within_limits`); clear `keep` where none is."""
    d = slid - centre
    out = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > limit * limit).nonzero()[0]
    if not out.size:
        return
    f, r, nn = foot[:, out], rho[out], n[:, out]
    e = centre[:, out] - f
    h = e[0] * nn[0] + e[1] * nn[1] + e[2] * nn[2]
    e -= h * nn  # from the circle's centre to the ball's centre, in the plane
    dist = np.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    # |f + r u - centre|^2 = r^2 + dist^2 + h^2 - 2 r (u . e) <= limit^2: the arc where
    # cos(u, e) >= c, the nearest point to the slide's direction at cos = c.
    lim = limit[out]
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = (r * r + dist * dist + h * h - lim * lim) / (2.0 * r * dist)
    u = slid[:, out] - f
    u /= r
    eh = e / np.where(dist > 0.0, dist, 1.0)
    along = u[0] * eh[0] + u[1] * eh[1] + u[2] * eh[2]
    w = u - along * eh
    wl = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    fine = (dist > r * 1e-12) & (cos <= 1.0) & (wl > 1e-12)
    keep[out[~fine]] = False
    cos = np.where(fine, np.maximum(cos, -1.0), 0.0)
    w /= np.where(fine, wl, 1.0)
    turned = f + r * (cos * eh + np.sqrt(1.0 - cos * cos) * w)
    slid[:, out] = np.where(fine, turned, slid[:, out])


def _sweep_copy(ws: Workspace, c: FrameCoefficients) -> np.ndarray | None:
    """The FTL sweep's particle-major rows (>= P, 3, S), a copy of the state it just wrote,
    for the sphere broad phase's block bounds (a transposed copy of the state less, ~115 us at
    1,000 x 32); None when the sweep does not leave one: it stops before the last particle, or
    it ran on Python floats (a few strands), which leaves its rows as they were."""
    if c.ftl.last >= ws.P and c.ftl.scalar is None:
        return ws.ftl_scratch.xb
    return None


def _particle_major(a: np.ndarray) -> np.ndarray:
    """The (S, Ps, 3) view of a (3, S, Ps) array: `np.moveaxis(a, 0, -1)`, which costs a
    small rig's collider pass several microseconds of axis checks a call (six passes a
    substep, a friction call each)."""
    return a.transpose(1, 2, 0)


class _ColliderPlan:
    """What every collider pass of a substep reads of its colliders, made once per substep
    (`_collider_plan`): the hair benchmark's substep runs about six passes (the first, three
    contact rounds, two positions-only passes) over the same eight spheres, and each pass
    rebuilt these rows, the broad phase's sphere list and centres, the spheres' groups and the
    slide's sphere surfaces from the drive (measured on the benchmark: 2,216 -> 2,123
    Python-level calls a substep, 144 -> 131 NumPy calls a collider pass, 1,023 -> 958 us a
    deep-contact pass). The same values, so the same bits."""

    __slots__ = ("rows", "spheres", "centres", "groups", "surfaces")

    def __init__(self, ws: Workspace, sd: SubstepDrive):
        # Per collider of ws.colliders: (k, kind, friction, size, everywhere, M, fast,
        # centre, radius, surface, similar); fast: the sphere fast path (centre and radius
        # set), surface: its motion over the substep where it has friction (`sd.surface`).
        rows = []
        for k, kind, friction, size, everywhere in ws.colliders:
            M = sd.collider_matrix[k]
            similar = bool(sd.collider_similarity[k])
            # A moving collider: friction relative to its surface.
            surface = sd.surface(k) if friction > 0.0 else None
            fast = everywhere and kind == ColliderKind.ELLIPSOID and similar
            centre = radius = None
            if fast:
                # sqrt(dot) is what np.linalg.norm computes for a vector, without its overhead.
                axis = M[:3, 0]
                radius = size * math.sqrt(float(axis.dot(axis)))
                centre = M[:3, 3]
            rows.append((k, kind, friction, size, everywhere, M, fast, centre, radius,
                         surface, similar))
        self.rows = rows
        self.spheres = [row[0] for row in rows if row[6]]
        self.centres = sd.collider_matrix[self.spheres, :3, 3]
        self.groups: dict = {}  # `_sphere_run`'s groups per run of spheres
        self.surfaces = _UNSET  # `_sphere_surfaces`' answer, once asked


_UNSET = object()


def _collider_plan(ws: Workspace, sd: SubstepDrive) -> _ColliderPlan:
    """`sd`'s `_ColliderPlan` for the workspace `ws`, made on first use."""
    cached = sd._plan
    if cached is None or cached[0] is not ws:
        cached = sd._plan = (ws, _ColliderPlan(ws, sd))
    return cached[1]


def _collide(model: StrandModel, ws: Workspace, x: np.ndarray, x_prev: np.ndarray,
             sd: SubstepDrive, c: FrameCoefficients,
             particle_major: np.ndarray | None = None,
             meshes_from: np.ndarray | None = None) -> bool:
    """Colliders in order; whether one moved a particle. `particle_major`: a (>= P, 3, S) copy
    of `x` when one is at hand (the FTL sweep's buffer), for the sphere broad phase's block
    bounds. `meshes_from`: filled with `x` before the body meshes' pass, when given and there
    is one."""
    colliders = model.colliders
    blocks = c.sphere_blocks
    if blocks is not None and not (x.flags.c_contiguous and x_prev.flags.c_contiguous):
        blocks = None  # the candidates are written back through flat views
    near_d2: dict[int, np.ndarray] | None = None  # block distances per sphere, while valid
    # Per block: how far the spheres applied since the bounds may have moved a particle of it
    # (None while no sphere has moved any).
    slack: np.ndarray | None = None
    moved = False
    # Fast-path spheres in the order applied, with the particles each moved (resolve_creases).
    applied: list[tuple[np.ndarray, float, np.ndarray]] = []
    scalar = blocks is None and x[0].size <= SCALAR_TOUCH_PARTICLES
    floats: _Floats | None = None  # a small rig's positions on floats, between its spheres
    # Broad-phase spheres not applied yet (k, centre, radius, friction, surface), in order.
    run: list[tuple] = []
    plan = _collider_plan(ws, sd)
    for k, kind, friction, _, everywhere, M, fast, centre, radius, surface, similar in plan.rows:
        if fast:
            pushed: list[np.ndarray] = []
            if scalar:
                if floats is None:
                    floats = _Floats(x, c.collision_radius)
                moved |= _push_out_of_sphere_scalar(x, x_prev, centre, radius,
                                                    c.collision_radius, friction, surface,
                                                    pushed, floats)
                applied.append((centre, radius, pushed[0] if pushed else _NONE))
                continue
            if blocks is None:
                moved |= push_out_of_sphere(x, x_prev, centre, radius, c.collision_radius,
                                            friction, ws, surface, pushed)
                applied.append((centre, radius, pushed[0] if pushed else _NONE))
                continue
            run.append((k, centre, radius, friction, surface))
            continue
        if run:
            near_d2, slack, hit = _sphere_run(ws, x, x_prev, sd, blocks, run, near_d2, slack,
                                              particle_major, applied)
            moved |= hit
            run = []
        near_d2 = None  # this shape moves particles by amounts we do not track
        particle_major = None
        if floats is not None:  # this shape reads the array: the spheres' moves first
            floats.write(x)
            floats = None
        Minv = sd.collider_inverse[k] if sd.collider_inverse is not None else None
        if everywhere:
            xa, xpa = _particle_major(x), _particle_major(x_prev)
            n, dist = shape_normal(kind, xa, M, Minv, colliders, k, similarity=similar)
            moved |= push_out(xa, xpa, n, dist, c.collision_radius, friction, surface)
        else:
            # Fancy indexing only for colliders restricted to some strands.
            idx = np.flatnonzero(model.collider_mask[k])
            xs = _particle_major(x[:, idx]).copy()
            xps = _particle_major(x_prev[:, idx])
            n, dist = shape_normal(kind, xs, M, Minv, colliders, k, similarity=similar)
            moved |= push_out(xs, xps, n, dist, c.collision_radius[idx], friction, surface)
            x[:, idx] = xs.transpose(2, 0, 1)
    if run:
        near_d2, slack, hit = _sphere_run(ws, x, x_prev, sd, blocks, run, near_d2, slack,
                                          particle_major, applied)
        moved |= hit
    if floats is not None:
        floats.write(x)
    if len(applied) > 1 and any(len(ids) for _, _, ids in applied[1:]):
        if blocks is not None:
            radius_flat, largest = blocks.radius, blocks.max_radius
        else:
            radius_flat = c.collision_radius.reshape(-1)
            largest = float(radius_flat.max())
        moved |= resolve_creases(x, radius_flat, largest, applied, ws.parent_rest)
    if sd.meshes is not None:
        if meshes_from is not None:
            np.copyto(meshes_from, x)
        moved |= _collide_meshes(ws, x, x_prev, sd, c)
    return moved


def _sphere_run(ws: Workspace, x: np.ndarray, x_prev: np.ndarray, sd: SubstepDrive,
                blocks: SphereBlocks, run: list[tuple], near_d2: dict | None,
                slack: np.ndarray | None, particle_major: np.ndarray | None,
                applied: list) -> tuple[dict, np.ndarray | None, bool]:
    """Apply the broad-phase spheres `run` ((k, centre, radius, friction, surface) in order):
    in `spheres.sphere_groups` of spheres that commute, each group's candidates in one
    narrow-phase call (the hair benchmark's eight body spheres: four calls a pass instead of
    eight, same bits). Appends each sphere's (centre, radius, moved ids) to `applied` in the
    run's order; returns the block distances, the blocks' slack and whether a particle moved."""
    if near_d2 is None:
        near_d2 = _sphere_distances(ws, x, sd, blocks, particle_major)
        slack = None
    moved = False
    pushed: list[list] = [[] for _ in run]
    if len(run) > 1:
        # The same run of spheres comes back in every pass of the substep: its groups once.
        known = _collider_plan(ws, sd).groups
        key = (tuple(row[0] for row in run), blocks.max_radius)
        groups = known.get(key)
        if groups is None:
            groups = known[key] = sphere_groups(
                [(centre, radius, friction, surface is None)
                 for _, centre, radius, friction, surface in run], blocks.max_radius)
    else:
        groups = [[0]]
    for group in groups:
        parts, owners = [], []
        for i in group:
            k, centre, radius, _, _ = run[i]
            reach = radius + blocks.max_radius
            if not reach > 0.0:
                continue
            # (1-D masks: .nonzero()[0] is np.flatnonzero without its eight Python-level
            # calls, a quarter of the bake's calls when every sphere pass used it.)
            if slack is None:
                near = (near_d2[k] < reach * reach).nonzero()[0]
            else:
                reach_b = slack + reach
                np.multiply(reach_b, reach_b, out=reach_b)
                near = (near_d2[k] < reach_b).nonzero()[0]
            if len(near):
                parts.append((near, centre, radius))
                owners.append(pushed[i])
        if not parts:
            continue
        _, _, _, friction, surface = run[group[0]]
        if len(parts) == 1:
            (near, centre, radius), = parts
            pen, touched = push_out_candidates(x, x_prev, blocks, near, centre, radius, friction,
                                               surface, owners[0])
        else:
            pen, touched = push_out_spheres(x, x_prev, blocks, parts, friction, None, owners)
        if touched is not None:
            moved = True
            if slack is None:
                slack = np.zeros(len(near_d2[run[group[0]][0]]))
            # Fancy += adds once per distinct block: every touched block gets it once (the
            # group's largest penetration: a bound for each of its spheres).
            slack[touched] += pen * (1.0 + friction)
    for (_, centre, radius, _, _), ids in zip(run, pushed, strict=True):
        applied.append((centre, radius, ids[0] if ids else _NONE))
    return near_d2, slack, moved


def _collide_meshes(ws: Workspace, x: np.ndarray, x_prev: np.ndarray, sd: SubstepDrive,
                    c: FrameCoefficients) -> bool:
    """Body-mesh colliders after the shapes: the movable particles of the chains that collide
    with a mesh, gathered once per set of frame coefficients. Whether one moved a particle."""
    field, mask = sd.meshes
    targets = ws.mesh_targets
    if targets is None or targets[0] is not c:
        movable = np.isfinite(c.collision_radius) & mask.any(axis=0)[:, None]
        s_idx, p_idx = np.nonzero(movable)
        per_mesh = mask[:, s_idx]
        targets = (c, s_idx, p_idx, c.collision_radius[s_idx, p_idx],
                   None if per_mesh.all() else per_mesh)
        ws.mesh_targets = targets
        if len(s_idx):
            field.widen(float(targets[3].max()))
    _, s_idx, p_idx, radius, per_mesh = targets
    if len(s_idx) == 0:
        return False
    points = np.ascontiguousarray(x[:, s_idx, p_idx].T)
    pushed = field.push_out(points, x_prev[:, s_idx, p_idx].T, radius, sd.t - ws.h, sd.t,
                            per_mesh)
    x[:, s_idx, p_idx] = points.T
    return len(pushed) > 0


def _sphere_distances(ws: Workspace, x: np.ndarray, sd: SubstepDrive, blocks: SphereBlocks,
                      particle_major: np.ndarray | None) -> dict[int, np.ndarray]:
    """Squared distance from every fast-path sphere's centre to every block's bounding box,
    for the current positions (one batched test for all spheres)."""
    if particle_major is not None:
        block_bounds(blocks, particle_major)
    else:
        transpose_bounds(blocks, x)
    plan = _collider_plan(ws, sd)
    d2 = box_distance2(blocks, plan.centres)
    return dict(zip(plan.spheres, d2, strict=True))


# Up to this many particles a sphere is pushed on Python floats (`_push_out_of_sphere_scalar`):
# a tail or a ponytail resting on a sphere paid about twenty ufunc calls a pass for a handful of
# particles, six passes a substep (the first, the contact rounds and the passes after them):
# three quarters of the glTF Fox tail's solve.
SCALAR_TOUCH_PARTICLES = 40
_DEGENERATE = 1e-12  # a particle closer than this to the centre goes out along +Z
# A particle whose squared distance from a sphere's centre exceeds its reach squared by this
# factor is clear of it whatever the rounding of the square root (a few 1e-16 relative).
_CLEAR = 1.0 + 1e-12


def push_out_of_sphere(x: np.ndarray, x_prev: np.ndarray, center: np.ndarray, sphere_radius: float,
                       radius: np.ndarray, friction: float, ws: Workspace,
                       surface: np.ndarray | None = None, pushed: list | None = None) -> bool:
    """Sphere fast path on the (3, S, Ps) layout: the common case, kept to a few ufuncs.
    Whether it moved a particle; the flat ids of those it moved are appended to `pushed` when
    given. Each particle goes out along d = x - centre to its `radius` (S, Ps; -inf where
    immovable) past the sphere, then position-based Coulomb friction
    (`colliders.apply_friction`)."""
    if x[0].size <= SCALAR_TOUCH_PARTICLES:
        return _push_out_of_sphere_scalar(x, x_prev, center, sphere_radius, radius, friction,
                                          surface, pushed)
    d, d2, length, pen = ws.tmp, ws.tmp_b, ws.len, ws.pen
    # Positional `out`: at bench sizes the cost is per-call overhead.
    np.subtract(x, center[:, None, None], d)
    np.multiply(d, d, d2)
    np.add(d2[0], d2[1], length)
    np.add(length, d2[2], length)
    np.sqrt(length, length)
    # Penetration of the particle sphere: radius + R - |d| (radius is -inf where immovable).
    np.add(radius, sphere_radius, pen)
    np.subtract(pen, length, pen)
    if not pen.max() > 0.0:
        return False
    np.maximum(pen, 0.0, out=pen)
    degenerate = length < _DEGENERATE
    np.maximum(length, _DEGENERATE, out=length)
    np.divide(d, length, out=d)  # outward unit normal
    if degenerate.any():
        d[2][degenerate] = 1.0
    np.multiply(d, pen, out=d2)
    x += d2
    if pushed is not None:
        pushed.append(np.flatnonzero(pen.reshape(-1) > 0.0))
    if friction > 0.0:
        apply_friction(_particle_major(x), _particle_major(x_prev), _particle_major(d), pen,
                       friction, surface)
    return True


def _push_out_of_sphere_scalar(x: np.ndarray, x_prev: np.ndarray, center: np.ndarray,
                               sphere_radius: float, radius: np.ndarray, friction: float,
                               surface: np.ndarray | None, pushed: list | None,
                               floats: _Floats | None = None) -> bool:
    """`push_out_of_sphere` and its friction on Python floats, every operation of the
    vectorised pass in its order (IEEE 754 rounds each alike): the same bits, also for NaN
    (no push anywhere, as NaN fails the vectorised maximum test) and infinite coordinates.
    A particle the sphere does not push is skipped where the vectorised pass's update is the
    identity (it adds ±0 to a finite, nonzero coordinate); one clear of the sphere by more
    than rounding is not even measured (most particles of a pass), and only the particles
    measured are visited again (a ponytail's pass over 40 particles took 38 µs when one
    touched, 13 when none did). `floats`: the positions as Python floats shared by the spheres
    of one collider pass (updated in place and marked changed; `_collide` writes them back),
    None to read and write `x` here."""
    cx, cy, cz = center.tolist()
    if floats is None:
        X, Y, Z = x.reshape(3, -1).tolist()
        rad = radius.reshape(-1).tolist()
    else:
        X, Y, Z = floats.xyz
        rad = floats.radius
    inf = math.inf
    near = []  # (particle, offset from the centre, its length, penetration), measured
    deepest = -inf
    for i, (xi, yi, zi, r) in enumerate(zip(X, Y, Z, rad, strict=True)):
        dx, dy, dz = xi - cx, yi - cy, zi - cz
        d2 = dx * dx + dy * dy + dz * dz
        reach = r + sphere_radius
        if (d2 < inf and (reach <= 0.0 or d2 > reach * reach * _CLEAR)
                and xi != 0.0 and yi != 0.0 and zi != 0.0):
            continue  # clear, finite, off the coordinate planes: left as it is
        length = math.sqrt(d2)
        pen = reach - length
        if pen != pen:
            return False  # NaN: the vectorised pass's maximum is NaN, which pushes nothing
        if pen > deepest:
            deepest = pen
        near.append((i, dx, dy, dz, length, pen))
    if not deepest > 0.0:
        return False
    hit = []
    applied = []  # (particle, unit normal, penetration) of every particle the pass updates
    for i, dx, dy, dz, length, pen in near:
        if not pen > 0.0 and length < inf and X[i] != 0.0 and Y[i] != 0.0 and Z[i] != 0.0:
            continue
        pen = pen if pen >= 0.0 else 0.0
        nx, ny, nz = _sphere_normal((dx, dy, dz), length)
        X[i] += nx * pen
        Y[i] += ny * pen
        Z[i] += nz * pen
        if pen > 0.0:
            hit.append(i)
        applied.append((i, nx, ny, nz, pen))
    if pushed is not None:
        pushed.append(np.array(hit, dtype=np.int64))
    if friction > 0.0:
        PX, PY, PZ = x_prev.reshape(3, -1).tolist()
        if not math.isfinite(sum(PX) + sum(PY) + sum(PZ)):
            # A non-finite start of the substep: the particles left as they are get the
            # friction update too (x - t * NaN), with the normal of their offset.
            updated = {i for i, *_ in applied}
            for i in range(len(X)):
                if i in updated or (-inf < PX[i] < inf and -inf < PY[i] < inf
                                    and -inf < PZ[i] < inf):
                    continue
                dx, dy, dz = X[i] - cx, Y[i] - cy, Z[i] - cz
                applied.append((i, *_sphere_normal((dx, dy, dz),
                                                   math.sqrt(dx * dx + dy * dy + dz * dz)), 0.0))
        moving = surface is not None
        if moving:
            (r00, r01, r02, t0), (r10, r11, r12, t1), (r20, r21, r22, t2) = surface[:3].tolist()
        for i, nx, ny, nz, pen in applied:
            xi, yi, zi = X[i], Y[i], Z[i]
            if moving:
                mx = xi * r00 + yi * r01 + zi * r02 + t0
                my = xi * r10 + yi * r11 + zi * r12 + t1
                mz = xi * r20 + yi * r21 + zi * r22 + t2
            else:
                mx, my, mz = xi, yi, zi
            dx, dy, dz = mx - PX[i], my - PY[i], mz - PZ[i]
            normal = dx * nx + dy * ny + dz * nz
            tx, ty, tz = dx - nx * normal, dy - ny * normal, dz - nz * normal
            t_len = math.sqrt(tx * tx + ty * ty + tz * tz)
            t_len = t_len if t_len >= SLIDE_EPS or t_len != t_len else SLIDE_EPS
            fraction = friction * pen / t_len
            fraction = fraction if fraction <= 1.0 or fraction != fraction else 1.0
            X[i] = xi - tx * fraction
            Y[i] = yi - ty * fraction
            Z[i] = zi - tz * fraction
    if floats is None:
        x[...] = np.array((X, Y, Z)).reshape(x.shape)
    else:
        floats.changed = True
    return True


class _Floats:
    """A small rig's positions (3, S, Ps) as three flat lists of Python floats and its
    particles' radii, shared by the fast-path spheres of one collider pass: each sphere read
    them from the array and wrote them back (a ponytail's pass: four spheres, four round trips
    for 40 particles)."""

    def __init__(self, x: np.ndarray, radius: np.ndarray):
        self.xyz = x.reshape(3, -1).tolist()
        self.radius = radius.reshape(-1).tolist()
        self.changed = False

    def write(self, x: np.ndarray) -> None:
        """Into `x`, if a sphere moved anything."""
        if self.changed:
            x[...] = np.array(self.xyz).reshape(x.shape)


def _sphere_normal(d: tuple[float, float, float], length: float) -> tuple[float, float, float]:
    """The outward unit normal d / |d| of `push_out_of_sphere` on floats (+Z-ward when |d| is
    below _DEGENERATE, as the vectorised pass sets it)."""
    dx, dy, dz = d
    if length < _DEGENERATE:
        return dx / _DEGENERATE, dy / _DEGENERATE, 1.0
    return dx / length, dy / length, dz / length


# --------------------------------------------------------------------------------------------
# The bake.

# Up to this many particles (S x P) an output frame's positions are copied from the (3, S, Ps)
# state in one transposed copy, above it one strided copy per component (NumPy 1.26, per
# frame: 5 particles 0.65 against 3.9 us, 576 5.2 against 8.5, 2,304 38 against 24).
OUTPUT_ONE_COPY = 1024


class _Bake:
    """Drives `step` over the frame range; per-frame work is done once per frame."""

    def __init__(self, model: StrandModel, drive: CheckedDrive, settings: SolverSettings, *,
                 known: int | None = None):
        self.model, self.settings = model, settings
        self.h = float(settings.substep)
        self.ws = Workspace(model, self.h, iterations=settings.iterations)
        S = self.ws.S
        self.F = drive.frames
        self.fps = drive.fps
        self.kinematic = drive.kinematic
        self.static_params = all(
            np.ndim(a) == 0 or a.shape[0] == 1 or a.strides[0] == 0
            for a in drive.params.values()
        )
        self._coefficients: dict[int, FrameCoefficients] = {}
        # (coefficients, their `float_step.FloatCoefficients` or None): the latest asked for.
        self._float_coefficients: tuple | None = None
        # (substep n, (3, S, 2) root segment reference at its start n h) after the last drive
        # with shock propagation, so the next one starts from it.
        self._root_segment: tuple[int, np.ndarray] | None = None
        # Per-sample facts, derived as the samples arrive (all at once for a bake, a few per
        # frame for a bake fed as the timeline plays, `Stream`): what a substep reads never
        # depends on samples after the ones it interpolates, so both agree bit for bit.
        # The first sample with the same params (the add-on samples every setting per frame,
        # animated or not: per-frame coefficients, ~3-5 ms at 1,000 x 32, are rebuilt only at
        # samples whose params differ from the previous sample's, compared exactly).
        self._param_frame = np.zeros(self.F, dtype=np.int64)
        # Animation cuts: sample intervals over which a chain's root jumps further than
        # CUT_DISTANCE (a teleport, a camera-cut re-pose); (F, S) bool.
        self.cuts = np.zeros((self.F, S), dtype=bool)
        self.any_cut = False
        self._cut_frame = 1  # the next output frame whose move `_frame_cuts` judges
        colliders = model.colliders
        K = colliders.count
        kinds = colliders.kind
        # Sphere fast path where both ends of every interval are similarity transforms.
        self.similar = np.zeros((self.F, K), dtype=bool)
        # Colliders with friction drag what rests on them by their surface motion (SubstepDrive;
        # `surface_motion` is None over a substep where one did not move).
        self.moving_colliders = bool(K and np.any(colliders.friction > 0.0))
        # Box and plane colliders always need the inverse; an ellipsoid only over an interval
        # where it is not a similarity at both ends (`_needs_inverse`, decided per interval).
        self.needs_inverse = bool(np.any(kinds == ColliderKind.BOX)
                                  | np.any(kinds == ColliderKind.PLANE))
        self._ellipsoids = kinds == ColliderKind.ELLIPSOID
        self._any_ellipsoid = bool(self._ellipsoids.any())
        self._no_colliders = np.empty((0, 0, 4, 4))  # grown to the longest piece, then sliced
        lengths = model.tether_length[np.arange(S), np.asarray(model.count) - 1]
        self.bound = np.maximum(DIVERGENCE_FACTOR * lengths, DIVERGENCE_MIN_BOUND)
        self.bound_squared = (self.bound**2)[:, None]
        self._unchecked = _pad(self.kinematic | ~model.active, self.ws.Ps, True)  # never diverged
        self.roots_only_output = bool(np.all(self.kinematic[:, 0])
                                      and not np.any(self.kinematic[:, 1:]))
        self._out_scratch = np.empty((3, S, self.ws.Ps))
        # Its three component rows and the (S, Ps) bool the check fills, made once (views and
        # temporaries cost as much as the ufuncs on a small rig's 18 numbers, every frame).
        self._out_rows = tuple(self._out_scratch)
        self._out_within = np.empty((S, self.ws.Ps), dtype=bool)
        self._one_copy = S * self.ws.P <= OUTPUT_ONE_COPY
        self.settled = drive.settled if drive.settled is not None and drive.settled.any() \
            else None
        self.meshes = None
        if drive.meshes is not None:
            self.meshes = (MeshField(drive.meshes, fps=self.fps, radius=0.0), drive.mesh_mask)
        self.known = 0
        self.update(drive, self.F if known is None else known)

    def update(self, drive: CheckedDrive, known: int) -> None:
        """Take `drive` with its samples before `known` read (later ones are placeholders a
        substep never reads) and derive the per-sample facts of the new ones."""
        P, Ps = self.ws.P, self.ws.Ps
        self.drive = drive
        reference = drive.reference
        soa = _component_major(reference, Ps)
        if soa is not None:  # the caller filled the solver's own layout: no copy
            soa[..., P:] = soa[..., P - 1 : P]
            self.reference_soa = soa
        else:
            if Ps > P:
                pad = np.repeat(reference[:, :, P - 1 : P], Ps - P, axis=2)
                reference = np.concatenate([reference, pad], axis=2)
            # (F, 3, S, Ps)
            self.reference_soa = np.ascontiguousarray(np.moveaxis(reference, -1, 1))
        # (F, S, Ps, 3) for output and checks: a view of the same memory (a second copy was
        # 366 MB at 512 bones × 25,000 samples)
        self.reference = np.moveaxis(self.reference_soa, 1, -1)
        first, known = self.known, min(int(known), self.F)
        if known > first:
            self._derive(first, known)
        self.known = known
        self._reset_interpolation()
        if self.meshes is not None:
            self.meshes[0].update(drive.meshes, known)

    def update_rows(self, rows: CheckedDrive, start: int) -> None:
        """Samples `start`.. of the drive are `rows` (validated alone, `start` = the samples
        read so far): written into the drive in place and their facts derived, O(new rows).
        The drive's arrays must be the bake's own (`Stream` copies them)."""
        if start != self.known:
            raise ValueError(f"rows start at sample {start}, {self.known} are read")
        end = min(start + rows.frames, self.F)
        n = end - start
        drive = self.drive
        write_rows(drive, rows, start, end)
        P, Ps = self.ws.P, self.ws.Ps
        reference = rows.reference[:n]
        if Ps > P:
            pad = np.repeat(reference[:, :, P - 1 : P], Ps - P, axis=2)
            reference = np.concatenate([reference, pad], axis=2)
        self.reference_soa[start:end] = np.moveaxis(reference, -1, 1)  # and self.reference
        self._derive(start, end)
        self.known = end
        self._reset_interpolation()
        if self.meshes is not None:
            self.meshes[0].update(drive.meshes, end)

    def _reset_interpolation(self) -> None:
        """Interpolation caches may hold an interval whose far end was a placeholder."""
        S, Ps = self.ws.S, self.ws.Ps
        self._interval = -1
        self._dref = np.empty((3, S, Ps))
        self._previous = np.empty((3, S, Ps))  # reference before a frame's first substep
        # Reference of one frame's substeps when step needs it (grown on demand, reused).
        self._batch = np.empty((0, 3, S, Ps))
        # (interval, coefficients, (A, B)) of the two latest intervals, see `_source_terms`.
        self._sources = [(-1, None, (np.empty((3, S, Ps)), np.empty((3, S, Ps))))
                         for _ in range(2)]
        # (first interval, stop, coefficients, [(A rows, B rows)] per interval): `_source_terms`
        # as floats for a block of intervals (`float_step.SOURCE_BLOCK`).
        self._source_floats: tuple | None = None

    def _derive(self, first: int, known: int) -> None:
        """Per-sample facts of samples first..known-1 (and of the intervals they end)."""
        drive = self.drive
        if not self.static_params and known > 1:
            lo = max(first, 1)
            changed = np.zeros(known - lo, dtype=bool)
            for a in drive.params.values():
                if np.ndim(a) == 0 or a.shape[0] == 1 or a.strides[0] == 0:
                    continue
                changed |= np.any((a[lo:known] != a[lo - 1:known - 1]).reshape(known - lo, -1),
                                  axis=1)
            previous = self._param_frame[lo - 1]
            rows = np.maximum.accumulate(np.where(changed, np.arange(lo, known), previous))
            self._param_frame[lo:known] = np.maximum(rows, previous)
        lo = max(first - 1, 0)
        if known - lo >= 2:
            roots = self.reference[lo:known, :, 0]
            jump = np.linalg.norm(np.diff(roots, axis=0), axis=-1) > CUT_DISTANCE
            self.cuts[lo:known - 1] = jump
            self.any_cut = self.any_cut or bool(jump.any())
        self._frame_cuts(known)
        kinds = self.model.colliders.kind
        for k in np.flatnonzero(kinds == ColliderKind.ELLIPSOID):
            for f in range(first, known):
                self.similar[f, k] = is_similarity(drive.collider_matrix[f, k])

    def _needs_inverse(self, similar: np.ndarray) -> bool:
        """Whether the colliders' inverse matrices are needed over an interval whose ellipsoids
        are similarities at both ends where `similar` (K,) says so."""
        return self.needs_inverse or (self._any_ellipsoid
                                      and bool(np.any(self._ellipsoids & ~similar)))

    def _settled_at(self, t: float, chains: np.ndarray) -> np.ndarray:
        """(3, S, Ps) the reference at time `t` with the settled pose (`settled.py`) put back
        on `chains` (S,) bool (chains with one)."""
        P = self.ws.P
        x = self.reference_at(t, np.empty_like(self.reference_soa[0]))
        space = interpolate(self.drive.space, *frame_interval(t, self.fps, self.F))
        reference = np.moveaxis(x[:, :, :P], 0, -1)
        placed = settled_chain_positions(self.model, reference, space,
                                         self.drive.settled_offset,
                                         ~self.kinematic & chains[:, None])
        x[:, chains, :P] = np.moveaxis(placed[chains], -1, 0)
        x[:, :, P:] = x[:, :, P - 1 : P]
        return x

    def _restart_settled(self, state: State, t: float, chains: np.ndarray) -> None:
        """Put `chains` (S,) bool in their settled pose at time `t`, at rest in their space:
        moving with the character (the pose one substep later sets the velocity), so a walking
        character's tail does not start trailing behind it."""
        now = self._settled_at(t, chains)
        later = self._settled_at(t + self.h, chains)
        state.x[:, chains] = now[:, chains]
        state.x_prev[:, chains] = 2.0 * now[:, chains] - later[:, chains]

    def coefficients(self, frame: int) -> FrameCoefficients:
        key = int(self._param_frame[frame])  # the first frame with these params
        c = self._coefficients.get(key)
        if c is None:
            c = frame_coefficients(self.ws, self.kinematic, self.drive.params, key)
            self._coefficients = {key: c}
        self._coefficients_now = c
        return c

    def substep_drive(self, t_start: float, t_end: float, *, frozen: bool) -> SubstepDrive:
        """Interpolated drive for the substep [t_start, t_end] (frozen: pre-roll on frame 0)."""
        f, alpha = (0, 0.0) if frozen else frame_interval(t_end, self.fps, self.F)
        if f != self._interval:
            self._interval = f
            g = min(f + 1, self.F - 1)
            np.subtract(self.reference_soa[g], self.reference_soa[f], out=self._dref)
        ref = self.ws.reference
        np.multiply(self._dref, alpha, out=ref)
        ref += self.reference_soa[f]
        g = min(f + 1, self.F - 1)
        cm = self.drive.collider_matrix
        M = lerp_affine(cm[f], cm[g], alpha) if cm.shape[1] else cm[f]
        similar = self.similar[f] & self.similar[g]
        Minv = inverse_affine(M) if self._needs_inverse(similar) else None
        coeffs = self.coefficients(f)
        start = None
        if cm.shape[1] and self.moving_colliders and not frozen:
            fs, a_s = frame_interval(t_start, self.fps, self.F)
            gs = min(fs + 1, self.F - 1)
            start = lerp_affine(cm[fs], cm[gs], a_s)
        carry = None
        if coeffs.needs_carry and not frozen:
            fs, a_s = frame_interval(t_start, self.fps, self.F)
            space = self.drive.space
            gs = min(fs + 1, self.F - 1)
            # (Its own names: `start` is the colliders' start, SubstepDrive.collider_start.)
            space_start = space[fs] + a_s * (space[gs] - space[fs])
            space_end = space[f] + alpha * (space[g] - space[f])
            if not np.array_equal(space_start, space_end):
                carry = carry_operators(space_start, space_end, coeffs.world_motion_fraction)
        return SubstepDrive(t=t_end, reference=ref, collider_matrix=M, collider_inverse=Minv,
                            collider_similarity=similar, carry=carry, coefficients=coeffs,
                            collider_start=start, meshes=self.meshes)

    def reference_at(self, t: float, out: np.ndarray) -> np.ndarray:
        """The interpolated reference (3, S, Ps) at time `t` into `out`."""
        f, alpha = frame_interval(t, self.fps, self.F)
        g = min(f + 1, self.F - 1)
        np.subtract(self.reference_soa[g], self.reference_soa[f], out=out)
        out *= alpha
        out += self.reference_soa[f]
        return out

    def frame_drives(self, n_first: int, n_stop: int) -> list[SubstepDrive]:
        """Drives of the substeps n_first..n_stop-1 (substep n spans [n h, (n + 1) h]).

        The same values as `substep_drive` per substep, element by element, but interpolated
        for the whole batch at once: a handful of NumPy calls per frame instead of per substep.
        """
        h, fps, F = self.h, self.fps, self.F
        intervals = [frame_interval((n + 1) * h, fps, F) for n in range(n_first, n_stop)]
        drives: list[SubstepDrive] = []
        j = 0
        while j < len(intervals):
            # Substeps sharing the interval f (at most two groups per frame).
            f = intervals[j][0]
            k = j
            while k < len(intervals) and intervals[k][0] == f:
                k += 1
            alphas = np.array([a for _, a in intervals[j:k]])
            g = min(f + 1, F - 1)
            coeffs = self.coefficients(f)
            # source = base_h2 + pull * (ref_f + alpha * dref) = A + alpha * B with A, B fixed
            # over the interval; `step` forms it when it needs it, while the state is in cache
            # (a frame's sources built ahead were 8 MB at the bench size, memory bound).
            A, B = self._source_terms(f, coeffs)
            # `step` reads the whole interpolated reference only for pinned nodes along the
            # chain and max distance; otherwise it is not built.
            needs_reference = coeffs.max_distance is not None or not coeffs.roots_only
            ref = None
            if needs_reference:
                if self._batch.shape[0] < len(intervals):
                    self._batch = np.empty((len(intervals),) + self._dref.shape)
                ref = self._batch[j:k]
                if f != self._interval:
                    self._interval = f
                    np.subtract(self.reference_soa[g], self.reference_soa[f], out=self._dref)
                np.multiply(self._dref[None], alphas[:, None, None, None], out=ref)
                ref += self.reference_soa[f]
            cm = self.drive.collider_matrix
            if cm.shape[1]:
                M = lerp_affine(cm[f][None], cm[g][None], alphas[:, None, None, None])
            else:  # no collider: (k - j, 0, 4, 4), sliced from one empty array
                if self._no_colliders.shape[0] < k - j:
                    self._no_colliders = np.empty((k - j, 0, 4, 4))
                M = self._no_colliders[:k - j]
            collider_starts = None  # (the shock below has its own `starts`)
            if cm.shape[1] and self.moving_colliders:
                fs, a_s = frame_interval((n_first + j) * h, fps, F)
                gs = min(fs + 1, F - 1)
                collider_starts = np.concatenate([lerp_affine(cm[fs], cm[gs], a_s)[None],
                                                  M[:-1]])
            similar = self.similar[f] & self.similar[g]
            Minv = inverse_affine(M) if self._needs_inverse(similar) else None
            shock = None
            if coeffs.shock is not None:
                # Root motion of every substep of the group at once, from the root segment's
                # reference before each substep (the previous substep's) to its own.
                rf = self.reference_soa[f][..., 0:2]
                ends = (self.reference_soa[g][..., 0:2] - rf)[None] * alphas[:, None, None, None]
                ends += rf
                first = n_first + j
                if self._root_segment is None or self._root_segment[0] != first:
                    # Not carried over from the substep before (first substep, or the shock was
                    # off there): interpolate it.
                    self._root_segment = (first, self.reference_at(first * h, self._previous)
                                          [..., 0:2].copy())
                starts = np.concatenate([self._root_segment[1][None], ends[:-1]])
                shock = root_motion(starts, ends, coeffs.shock)
                self._root_segment = (n_first + k, ends[-1].copy())
            for t in range(k - j):
                n = n_first + j + t
                carry = None
                if coeffs.needs_carry:
                    carry = self.substep_drive(n * h, (n + 1) * h, frozen=False).carry
                drives.append(SubstepDrive(
                    t=(n + 1) * h, reference=None if ref is None else ref[t],
                    collider_matrix=M[t],
                    collider_inverse=None if Minv is None else Minv[t],
                    collider_similarity=similar, carry=carry, coefficients=coeffs,
                    source_terms=(A, B, float(alphas[t])),
                    shock_motion=None if shock is None else (shock[0][t], shock[1][t]),
                    collider_start=None if collider_starts is None else collider_starts[t],
                    meshes=self.meshes))
            j = k
        return drives

    def _root_segment_at(self, t: float) -> np.ndarray:
        """The reference's first two particles (3, S, 2) at time t."""
        f, alpha = frame_interval(t, self.fps, self.F)
        g = min(f + 1, self.F - 1)
        a = self.reference_soa[f][..., 0:2]
        return a + alpha * (self.reference_soa[g][..., 0:2] - a)

    def _frame_cuts(self, known: int) -> None:
        """Cuts judged over whole output frames, as the threshold is meant ("between two
        frames"), for the frames whose samples are all known: a root that moves further than
        CUT_DISTANCE from one frame to the next makes every sample interval of that frame a
        cut (unless one of them is one already), so the chain is carried over the whole frame
        with its root. A 2 m teleport keyed
        Linear on two neighbouring frames moved 0.2-0.4 m a sample at 120-240 Hz, was no cut,
        and whipped the chain 0.9 m. (Scaling each sample's move by the samples per frame
        instead made a stepped 20 cm pose change a cut: a step moves as far in one sample as
        in its frame.) Decided as each frame's samples arrive, before its substeps run: the
        preview, fed a frame at a time, judges as the bake does."""
        fps, out_fps, F = self.fps, self.drive.output_fps, self.F
        roots = self.reference[:, :, 0]
        r1 = None  # the roots at frame i - 1's time, from the iteration before
        while self._cut_frame < self.drive.output_frames:
            i = self._cut_frame
            t0, t1 = (i - 1) / out_fps, i / out_fps
            f1, a1 = frame_interval(t1, fps, F)
            if (f1 + 1 if a1 > 0.0 else f1) >= known:
                break
            self._cut_frame += 1
            r0 = interpolate(roots, *frame_interval(t0, fps, F)) if r1 is None else r1
            r1 = interpolate(roots, f1, a1)
            jump = np.linalg.norm(r1 - r0, axis=-1) > CUT_DISTANCE
            if not jump.any():
                continue
            first = int(np.floor(t0 * fps + _TIME_EPS))
            last = min(int(np.ceil(t1 * fps - _TIME_EPS)), F - 1)  # intervals first..last-1
            # A jump within one sample interval (a step keyed Constant) is that interval's cut
            # already: the rest of the frame keeps its motion.
            jump &= ~self.cuts[first:last].any(axis=0)
            self.cuts[first:last] |= jump
            self.any_cut = True

    def _start_outside(self, state: State) -> None:
        """Put the start pose out of the colliders as a pose, not as motion (`_put_out`),
        against the colliders at time 0.

        Why: a groom or a modelled chain often passes through the body (a strand from the
        crown drawn up and over the head crosses it). Pushed out in the first substep, the
        push is taken as velocity ((x - x_prev) / h: 5 cm in a 240 Hz substep is 12 m/s) and
        the strand is thrown: the contact rounds (`_contact_rounds`) passed that push on along
        the chain, and a crown strand of the head-turn sample rose 58 cm above the head and
        fell over the face. Overlap that exists before the motion starts is not an approach
        the contact should stop, so it is removed with no velocity, as split-impulse and
        depenetration-velocity caps do in game physics (Catto 2006; PhysX's max depenetration
        velocity, here zero at the start). A start pose clear of the colliders is untouched
        (the same bits)."""
        self._put_out(state, self.substep_drive(-self.h, 0.0, frozen=True))

    def _put_out(self, state: State, sd: SubstepDrive, chains: np.ndarray | None = None) -> None:
        """Move the particles (of `chains` (S,) bool, or all) out of the colliders of `sd`
        positions only: the colliders, then the lengths and contacts agreed positions only
        (`_lengths_after_contact`), up to START_OUTSIDE_ROUNDS times; every particle keeps its
        motion over the substep (`x - x_prev`: none at rest, the settled pose's, or a chain's
        carried over a cut), and the other chains are left as they were. Untouched, bit for
        bit, when no collider pushes anything."""
        model, ws = self.model, self.ws
        if not (ws.colliders or sd.meshes is not None):
            return
        c = sd.coefficients
        x, x_prev = state.x, state.x_prev
        start_x, start_prev = x.copy(), x_prev.copy()
        pushed = False
        for _ in range(START_OUTSIDE_ROUNDS):
            np.copyto(x_prev, x)  # no tangential motion for the friction to hold back
            before = x.copy() if c.direct is not None else None
            if not _collide(model, ws, x, x_prev, sd, c):
                break
            pushed = True
            if c.ftl is None:
                continue  # compliant lengths: their own passes restore them
            contacts: dict = {}
            if c.direct is not None:
                c.direct.begin()
                _contacts(before, x, c.direct.P, contacts)
            _lengths_after_contact(model, ws, x, x_prev, sd, c, sd.reference, contacts)
        if not pushed:
            np.copyto(x_prev, start_prev)
            return
        np.subtract(x, start_x - start_prev, out=x_prev)
        if chains is not None:
            others = ~chains
            x[:, others], x_prev[:, others] = start_x[:, others], start_prev[:, others]

    def _blend_outside(self, out: np.ndarray, T: float) -> None:
        """Put a frame blended between two substeps (`out`, a frame time T off the substep
        grid: 25 or 50 fps at 240 Hz) out of the colliders at T, as a pose (`_put_out`).

        Why: both substep states are outside, but the blend is the chord between them and the
        FTL re-placement after it pulls particles toward their parents, so a particle sliding
        around a box's edge or a capsule ended such frames inside them (audit s46: a chain
        dragged across them at 5 g, 12 mm into a 10 cm box and 20 mm into a 3 cm capsule at 25
        and 50 fps; 0 at 24, 30 and 60). Only the written frame changes; the simulation goes
        on from the substep states. Untouched, bit for bit, where no collider pushes anything."""
        if not (self.ws.colliders or self.meshes is not None):
            return
        now = self._coefficients_now
        # [T, T]: the colliders where they are at T, with no motion for the friction to follow.
        sd = self.substep_drive(T, T, frozen=False)
        self._put_out(State(x=out, x_prev=out.copy()), sd)
        self._coefficients_now = now

    def _carry_over_cut(self, state: State, t0: float, t1: float,
                        sd: SubstepDrive | None = None) -> None:
        """Across an animation cut, move the chains that jump rigidly with their root segment
        (positions and previous positions: the shape and the velocity relative to the root are
        kept), as the cloth restarts on a cut and StrayCloth carries a settled pose over it.
        Without it a 2 m teleport left a 0.66 m whip, still 0.2 m off a second later. Where
        they land inside a collider of the substep `sd`, they are put out of it as a pose, as
        at the start (`_put_out`)."""
        cut = self.cuts[frame_interval(0.5 * (t0 + t1), self.fps, self.F)[0]]
        if not cut.any():
            return
        A, b = root_motion(self._root_segment_at(t0), self._root_segment_at(t1),
                           cut.astype(np.float64))
        apply_carry(state.x, A, b, self.ws.tmp)
        apply_carry(state.x_prev, A, b, self.ws.tmp)
        if self.settled is not None and np.any(cut & self.settled):
            self._restart_settled(state, t1, cut & self.settled)
        if sd is not None:
            self._put_out(state, sd, cut)

    def _drives(self, n_first: int, n_stop: int) -> Iterator[SubstepDrive]:
        """`frame_drives` of substeps n_first..n_stop-1 in pieces of one sample interval each:
        its per-interval buffers (`_source_terms`, `_batch`) hold two, and the drives of a piece
        are stepped before the next piece is built."""
        # A piece is a run of substeps whose drive times (their ends) share one sample
        # interval: pieces cut at the substep grid instead split almost every interval in two
        # when samples are sub-frame (two substeps per sample at 120 Hz: the piece [2, 3] had
        # substep 2 in interval 1 and substep 3 in interval 2), twice the per-interval work.
        h, fps, F = self.h, self.fps, self.F
        start = n_first
        while start < n_stop:
            f = frame_interval((start + 1) * h, fps, F)[0]
            stop = start + 1
            while stop < n_stop and frame_interval((stop + 1) * h, fps, F)[0] == f:
                stop += 1
            yield from self.frame_drives(start, stop)
            start = stop

    def _source_terms(self, f: int, coeffs: FrameCoefficients) -> tuple[np.ndarray, np.ndarray]:
        """`A = base_h2 + pull * ref_f`, `B = pull * (ref_g - ref_f)` of interval f, cached for
        the two latest intervals (a frame's drives span at most two, and hold on to them)."""
        for i, (key, owner, terms) in enumerate(self._sources):
            if key == f and owner is coeffs:
                self._sources.append(self._sources.pop(i))  # most recently used last
                return terms
        # Least recently used out: never the other interval of the frame being built.
        _, _, (A, B) = self._sources.pop(0)
        g = min(f + 1, self.F - 1)
        np.subtract(self.reference_soa[g], self.reference_soa[f], out=B)
        B *= coeffs.pull
        np.multiply(self.reference_soa[f], coeffs.pull, out=A)
        A += coeffs.base_h2
        self._sources.append((f, coeffs, (A, B)))
        return A, B

    def _on_floats(self, n_first: int, n_stop: int) -> list | None:
        """Per substep n_first..n_stop-1, (interval, blend, coefficients, float coefficients)
        when every one of them can run on floats (`float_step`), else None (a cut to carry
        over, as `_carry_over_cut` finds it, is one of the array passes)."""
        h, fps, F = self.h, self.fps, self.F
        steps = []
        interval = fc = c = None
        for n in range(n_first, n_stop):
            if self.any_cut and self.cuts[frame_interval((n + 0.5) * h, fps, F)[0]].any():
                return None
            f, alpha = frame_interval((n + 1) * h, fps, F)
            if f != interval:  # (the substeps of one interval share its coefficients)
                interval = f
                c = self.coefficients(f)
                if self._float_coefficients is None or self._float_coefficients[0] is not c:
                    self._float_coefficients = (c, FloatCoefficients.of(c, self.ws,
                                                                        self.meshes))
                fc = self._float_coefficients[1]
                if fc is None:
                    return None
            steps.append((f, alpha, c, fc))
        return steps

    def _steps_on_floats(self, fs: FloatState, state: State, n: int, steps: list, T: float,
                         before: np.ndarray) -> bool:
        """Run `steps` (`_on_floats`) from substep n on `fs`, the state as floats, then write
        its positions back into `state.x` (its previous positions stay on floats until the
        float path ends: `run`); the state one substep before an off-grid frame time T into
        `before`. Returns whether T was crossed (as the array loop in `run` does)."""
        h = self.h
        crossed = False
        for f, alpha, c, fc in steps:
            if (n + 1) * h > T + _TIME_EPS:
                fs.store_x(before)
                crossed = True
            cached = self._source_floats
            if cached is None or not cached[0] <= f < cached[1] or cached[2] is not c:
                # A block of intervals from f on, within the samples read (a `Stream`'s later
                # samples are placeholders; `_reset_interpolation` drops the block when more
                # are read).
                stop = min(f + SOURCE_BLOCK, self.F, max(self.known - 1, f + 1))
                cached = self._source_floats = (
                    f, stop, c, fc.source_block(self.reference_soa, f, stop))
            A, B = cached[3][f - cached[0]]
            step_floats(fs, fc, A, B, alpha, state)
            self._coefficients_now = c
            n += 1
        fs.store_x(state.x)
        return crossed

    def run(self) -> Iterator[tuple[int, int]]:
        model, h = self.model, self.h
        F, fps = self.drive.output_frames, self.drive.output_fps  # the result's frames
        S, P = self.ws.S, self.ws.P
        state = State.at_rest(model, self.reference[0][:, :P])
        if self.settled is not None:
            self._restart_settled(state, 0.0, self.settled)
        self._start_outside(state)
        # At rest at t = 0 under constant acceleration: x_prev = x + a h^2 / 2 makes position
        # Verlet reproduce x0 + a t^2 / 2 exactly (instead of a spurious initial velocity a h / 2).
        state.x_prev += 0.5 * self.coefficients(0).gravity_h2
        self.state = state
        positions = np.empty((F, S, P, 3))
        self.positions = positions  # filled frame by frame (a `Stream` reads each as it comes)
        total = F
        substeps = 0
        # Pre-roll (in output frames): settle on the first sample's drive, time up to 0.
        n_pre = int(round(self.settings.preroll_frames / fps / h))
        for n in range(n_pre):
            sd = self.substep_drive((n - n_pre) * h, (n - n_pre + 1) * h, frozen=True)
            step(model, state, sd, h, workspace=self.ws)
            substeps += 1
        self._output(positions, 0, state.x)
        yield 1, total
        n = 0
        # The state one substep before the last off-grid frame time crossed: it stays valid
        # while no substep runs, so a frame between the same two substeps as the one before it
        # (a Substep Rate under the frame rate) blends them too instead of taking the later one.
        before = np.empty_like(state.x)
        crossed = False
        # The state on floats while frame after frame runs there (`float_step`): taken to
        # floats once, not per frame, and only its positions written back per frame (for the
        # output); all of it goes back when a frame takes the array passes, and at the end.
        floats: FloatState | None = None
        for i in range(1, F):
            T = i / fps
            n_stop = n
            while n_stop * h < T - _TIME_EPS:
                n_stop += 1
            on_floats = self._on_floats(n, n_stop)
            if on_floats is not None:
                if floats is None:
                    floats = FloatState(state)
                crossed = self._steps_on_floats(floats, state, n, on_floats, T,
                                                before) or crossed
                substeps += n_stop - n
                n = n_stop
            elif floats is not None:
                floats.store(state)
                floats = None
            for sd in () if on_floats is not None else self._drives(n, n_stop):
                if (n + 1) * h > T + _TIME_EPS:
                    np.copyto(before, state.x)
                    crossed = True
                if self.any_cut:
                    self._carry_over_cut(state, n * h, (n + 1) * h, sd)
                step(model, state, sd, h, workspace=self.ws)
                n += 1
                substeps += 1
            if crossed and abs(n * h - T) > _TIME_EPS:
                w = (T - (n - 1) * h) / h
                out = before + w * (state.x - before)
                ftl = self._coefficients_now.ftl
                if ftl is not None:
                    # Blending two exact-length states shortens rotating segments (a chord):
                    # re-place rigid segments on the blended frame (no velocity involved),
                    # from the kinematic nodes at the frame time (what `_output` writes).
                    np.copyto(out, self._reference_out(T)[0],
                              where=self._coefficients_now.kinematic)
                    solve_ftl(out, None, ftl, self.ws.ftl_scratch)
                self._blend_outside(out, T)
            else:
                out = state.x
            self._output(positions, i, out, T)
            yield i + 1, total
        if floats is not None:
            floats.store(state)
        self.result = BakeResult(positions=positions, substeps=substeps)

    def _reference_out(self, T: float) -> tuple[np.ndarray, np.ndarray]:
        """The reference at output time T: ((3, S, Ps), (S, Ps, 3)); a sample's own arrays when
        T is on the sample grid (every output frame when the two rates are equal)."""
        j = T * self.fps
        k = int(round(j))
        if abs(j - k) <= _TIME_EPS * self.fps and k < self.F:
            return self.reference_soa[k], np.ascontiguousarray(self.reference[k])
        soa = self.reference_at(T, np.empty_like(self.reference_soa[0]))
        return soa, np.ascontiguousarray(np.moveaxis(soa, 0, -1))

    def _output(self, positions: np.ndarray, i: int, x: np.ndarray, T: float = 0.0) -> None:
        P = self.ws.P
        out = positions[i]
        reference_soa, reference = self._reference_out(T)
        # Divergence check on the component-major state first (cheap, no transposed temporaries):
        # squared distance to the reference against the squared bound; kinematic nodes are
        # written as the reference below, so they never count. NaN compares False -> suspect.
        # Full (3, S, Ps) width: contiguous operands, padding is never checked.
        d = self._out_scratch
        dx, dy, dz = self._out_rows
        within = self._out_within
        np.subtract(x, reference_soa, out=d)
        np.multiply(d, d, out=d)
        dx += dy
        dx += dz
        np.less_equal(dx, self.bound_squared, out=within)
        within |= self._unchecked
        suspect = not within.all()
        if self._one_copy:
            out[...] = x[:, :, :P].transpose(1, 2, 0)
        else:
            for c in range(3):  # one strided copy per component (see `OUTPUT_ONE_COPY`)
                np.copyto(out[..., c], x[c, :, :P])
        # Kinematic nodes and padding are exactly the reference at the frame time.
        if self.roots_only_output:
            out[:, 0] = reference[:, 0]
        else:
            np.copyto(out, reference[:, :P], where=self.kinematic[..., None])
        if suspect:
            self._check(out, i, reference)  # names the first diverged particle (raises)

    def _check(self, out: np.ndarray, frame: int, reference: np.ndarray) -> None:
        active = self.model.active
        distance = np.linalg.norm(out - reference[:, : self.ws.P], axis=-1)
        first = first_diverged(distance, self.bound[:, None], active)
        if first is not None:
            s, p = first
            detail = (f"chain '{self.model.strand_names[s]}' particle {p} is "
                      + distance_detail(distance[s, p]))
            raise DivergenceError(self.model.setup_of(s), frame, detail)


class Stream(FedBake):
    """A bake fed its samples as they are read (the add-on's live preview steps it one scene
    frame per timeline frame): `needed(i)` samples must be real before `step()` gives output
    frame i, and `feed` hands over the drive with more of them. The drive has the bake's full
    shape from the start (samples not read yet are placeholders, e.g. the last one repeated);
    a substep never reads past the sample after its own time, so the frames come out bit for
    bit as `bake` gives them for the same drive."""

    def __init__(self, model: StrandModel, drive: Drive, settings: SolverSettings | None = None,
                 *, known: int):
        settings = settings if settings is not None else SolverSettings()
        self._bake = _Bake(model, owned(validate_drive(model, drive)), settings, known=known)
        self._frames = self._bake.run()
        self.model = model
        self.frames_done = 0  # output frames stepped
        self.output_frames = self._bake.drive.output_frames
        self.output_fps = self._bake.drive.output_fps

    def needed(self, frame: int) -> int:
        """Samples that must be read before output frame `frame` (index from 0) is stepped:
        every sample up to its time, and the next (an interval's far end, read with weight 0
        when the frame falls on a sample)."""
        h = self._bake.h
        # The frame's last substep ends at the first substep time at or after the frame time.
        last = max(math.ceil((frame / self.output_fps - _TIME_EPS) / h - 1e-9), 0) * h
        return min(int(math.floor(last * self._bake.fps + 1e-9)) + 2, self._bake.F)

    def feed(self, drive: Drive, known: int) -> None:
        """The drive again, with its samples before `known` now read (validated again)."""
        self._bake.update(owned(validate_drive(self.model, drive)), known)

    def feed_rows(self, rows: Drive) -> None:
        """The next samples, read after the `known` ones, as a drive of those rows alone (its
        per-sample fields have only them; validated alone): O(new rows), where `feed` takes
        the whole drive again."""
        checked = validate_drive(self.model, replace(rows, output_fps=None, output_frames=None))
        self._bake.update_rows(checked, self.known)


class BakeJob(FrameJob):
    """Iterator over a bake, one frame per `next()`: yields (frames_done, total).

    When exhausted, `result` holds the `BakeResult`. A modal operator advances it in chunks and
    simply drops it to cancel; nothing is returned before the whole range is validated and solved.
    """

    result: BakeResult | None

    def __init__(self, model: StrandModel, drive: Drive, settings: SolverSettings):
        checked = validate_drive(model, drive)
        bake = _Bake(model, checked, settings)
        super().__init__(bake, bake.run(), checked.output_frames)


def bake_steps(model: StrandModel, drive: Drive, settings: SolverSettings | None = None) -> BakeJob:
    """Validate, then return an iterator yielding (frames_done, total) per baked frame."""
    return BakeJob(model, drive, settings if settings is not None else SolverSettings())


def bake(model: StrandModel, drive: Drive, settings: SolverSettings | None = None, *,
         progress: Callable[[int, int], None] | None = None) -> BakeResult:
    """Bake the whole frame range; raises SetupError / DivergenceError before returning."""
    return run_job(bake_steps(model, drive, settings), progress)


def start(model: StrandModel, drive: Drive, settings: SolverSettings | None = None, *,
          t_start: float = 0.0, t_end: float | None = None) -> tuple[State, SubstepDrive]:
    """Initial state (frame 0's reference, at rest) and the drive of the substep
    [t_start, t_end], for driving `step` by hand (tests, custom loops)."""
    settings = settings if settings is not None else SolverSettings()
    runner = _Bake(model, validate_drive(model, drive), settings)
    state = State.at_rest(model, runner.reference[0][:, : model.particles])
    if t_end is None:
        t_end = t_start + runner.h
    return state, runner.substep_drive(t_start, t_end, frozen=False)
