"""The cloth bake loop: fixed substeps, Verlet prediction, coloured XPBD, seed 001 extras.

Per substep `h` (fixed, 1/240 s by default, whatever the frame rate):

1. local-space carry: x and x_prev follow `1 - world_motion_fraction` of the character space's
   motion (`core.space`, seed 001: simulate in character space plus a fraction of world motion);
2. Verlet prediction `x += (x - x_prev) exp(-(damping + drag + contact) h) + (g + drag wind) h^2`
   (damping per second, so it does not depend on h or the frame rate);
3. pinned vertices copy the reference, interpolated at the substep time;
4. XPBD stretch (vertical / horizontal), shear and bend groups, one NumPy expression per graph
   colour over every cloth, `iterations` passes (Macklin 2016 XPBD: compliance alpha / h^2, so
   stiffness does not change with h or iterations; Macklin 2019 Small Steps: one pass per small
   substep beats many iterations);
5. stiff cloths (STIFF_COMPLIANCE): max distance from the reference, an inelastic stop before
   the exact lengths;
6. seed 001 hard vertical constraints: SHAKE's mass-weighted projection of every pin-to-pin span
   and, in stiff cloths, every hanging column (Ryckaert et al. 1977; positions and velocities
   agree, so the stiff links find nothing to turn into velocity), then the top-down sweep,
   no vertical link ever longer than rest;
7. seed 003 layered self-collision; colliders (`core.colliders`, friction, contact flags that
   add `contact_damping` in the next substep: seed 001 contact friction);
8. Jolt skinned constraint: max distance from the reference, back stop behind its surface;
9. where a collider or a layer touched the cloth, the sweep (max distance inside it), the
   layers and the colliders again, positions only (COLLIDER_SWEEPS); then, from the first
   level a collider touched, the sweep once more with the colliders (shapes and body meshes,
   `mesh_sweep`) inside it (`contact_sweep`), so the substep ends with every link, contact
   and max distance holding.
10. the contacts' velocity pass: no velocity along a collider's normal relative to its
   surface where it touched the cloth in the substep (restitution 0, Müller et al. 2020).

Frame `i` is output at `i / fps` (exact on the substep grid for 24/30/60 fps at 240 Hz; other
rates blend the two substep states around it and redo the vertical sweep on the blend).
Animation cuts (seed 003) restart a cloth from the new reference and blend its output from the
old deformation over `cut_blend_frames`; `reset_frames` restart without a blend. A cloth with
a settled pose (seed 003 Pose Track, `settled.py`) starts and restarts from it instead.
Float64, no threads, no global random state: identical input gives bit-identical output.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from .. import transcendental
from ..affine import inverse_affine as affine_inverse
from ..affine import lerp_affine
from ..colliders import ColliderKind, is_similarity, shape_normal, surface_motion
from ..errors import DivergenceError, SetupError
from ..forces import wind_at
from ..job import FrameJob, distance_detail, first_diverged, run_job
from ..mesh_colliders import MeshField
from ..settled import settled_positions
from ..streaming import FedBake, owned, write_rows
from ..timestep import SolverSettings, frame_interval, interpolate
from .constraints import (
    Colour,
    Level,
    Span,
    Sweep,
    axis_major,
    clamp_max_distance,
    collide,
    collide_edges,
    collide_mesh_edges,
    edge_contact_parameter,
    narrowest_radius,
    norm3,
    push_backstop,
    push_layers,
    solve_colour,
    solve_spans,
    stop_link_normal_velocity,
    stop_normal_velocity,
    sweep_levels,
    turn_links_out,
    turn_vertices_out,
)
from .contact_sweep import first_step, sweep_with_contacts
from .drive import CheckedClothDrive, ClothDrive, between_samples, validate_cloth_drive
from .mesh_sweep import MeshSweepPush
from .model import ClothModel, DistanceGroup

_TIME_EPS = 1e-9
EDGE_STRETCH = 1.5  # links may stretch this much past their rest length (edge-test bound)
DIVERGENCE_FACTOR = 100.0  # a vertex further than 100 cloth sizes from its reference ...
DIVERGENCE_MIN_BOUND = 10.0  # ... and at least 10 m away has diverged
# Hz: turbulent wind is re-sampled at this fixed simulated rate (frame-rate independent). Its
# eddies are 0.5 m (core.forces), so even a 10 m/s gale carries one past a vertex in 0.05 s:
# 30 Hz gives 1.5 samples per eddy there and many more at cape-in-the-wind speeds.
WIND_SAMPLE_RATE = 30.0


# Positions-only rounds of the hard vertical sweep and the colliders after a collider touched
# the cloth (step 9): the colliders ran after the sweep and won, so the links at a pushed vertex
# ended the substep stretched: a 12 x 12 cloth falling onto a frictionless ball 4 % on the impact
# frame and 0.4-0.8 % while draped on it (with a max distance). One round: at most 0.24 %, the
# drops' energies as before (tests/core/cloth/test_cloth_energy.py), for 1.6x the solve of a
# cloth always touching a collider (two rounds: 0.19 % for 2.1x).
COLLIDER_SWEEPS = 1
# Rounds of colliders and links that put a start pose out of the colliders (`_Bake.
# _start_outside`), the colliders last, until a round's pushes are under the tolerance (metres:
# 0.01 mm is 2.4 mm/s at 240 Hz). A cage stretched over a ball never gets there (the links pull
# it 0.3 mm back in each round); what counts is the strain left to spring back: an 8 x 8 cage
# drawn 1-3 cm into a ball, box or capsule moved at most 0.87 m/s after 1/24 s with 8 rounds,
# 0.46 with 16 and 24 (free fall: 0.41), 3.2 with 4. 16 rounds on a 32 x 64 cage: ~0.2 s once.
START_OUTSIDE_ROUNDS = 16
START_OUTSIDE_TOLERANCE = 1e-5
# Metres: rounding allowance of the contact sweep's bound on a link's distance from a collider
# (`_Bake._contact_push`); links the bound clears skip the exact edge test.
LINK_BOUND_SLACK = 1e-6
# How much faster than the distance moved an ellipsoid's signed distance may change under a
# general matrix (`core.colliders.ellipsoid_normal` measures to a tangent plane, not exactly):
# the contact sweep's bound divides by it. Spheres, capsules, boxes and planes measure exactly.
SD_LIPSCHITZ = 2.0


@dataclass(frozen=True)
class ClothResult:
    positions: np.ndarray  # (F, N, 3) world metres at each frame's time
    contact: np.ndarray  # (F, N) bool: touched a collider during the substeps up to the frame
    cuts: np.ndarray  # (F, C) bool: animation cut detected at the frame (seed 003)
    substeps: int  # substeps simulated, pre-roll included


@dataclass
class _Frame:
    """Per-substep factors of one frame's settings."""

    decay: np.ndarray  # (N, 3) exp(-(damping + drag) h), 0 where pinned (per component: an
    # (N, 3) * (N, 1) broadcast costs NumPy ~1.6x an elementwise product)
    contact_decay: np.ndarray  # (N, 1) exp(-contact_damping h)
    accel_h2: np.ndarray  # (N, 3) (g + drag * mean wind) h^2, 0 where pinned
    wind: dict | None  # turbulent wind settings (per vertex) when turbulence is on
    carry: np.ndarray  # (N, 3) 1 - world motion fraction (edge multiplier applied)
    needs_carry: bool
    colours: list[Colour]
    use_lambda: bool
    levels: Sweep
    spans: list[Span]  # pin-to-pin spans with exact lengths (empty: none, or soft vertical)
    max_index: np.ndarray  # vertices with a finite max distance
    max_limit: np.ndarray
    max_by_axis: np.ndarray  # (3, n) flat indices of max_index (constraints.axis_major)
    max_full: np.ndarray  # (N,) every vertex's max distance, inf = none
    # The max distance clamped before the exact lengths: the vertices of stiff cloths
    # (`_Bake._stiff_cloths`) with a finite max distance, and their flat indices (3, n).
    early_index: np.ndarray
    early_limit: np.ndarray
    early_by_axis: np.ndarray
    back_index: np.ndarray
    back_distance: np.ndarray
    radius: np.ndarray  # (N,) -inf where pinned
    layer_thickness: np.ndarray  # (L,)


class _Bake:
    """The bake loop (`run`). Everything derived from the samples is derived as they arrive
    (`update`: all at once for a bake, a few per frame for `ClothStream`), and nothing a
    substep reads depends on a sample after the one ending its interval, so a stream and a
    bake of the same drive agree bit for bit."""

    def __init__(self, model: ClothModel, drive: CheckedClothDrive, settings: SolverSettings, *,
                 known: int | None = None):
        self.model, self.drive, self.settings = model, drive, settings
        self.h = float(settings.substep)
        self.F, self.fps = drive.frames, drive.fps
        N = model.n_vertices
        self.cloth = model.cloth_of_vertex
        self.free = ~model.pinned
        self.pinned_index = np.flatnonzero(model.pinned)
        self.w = self.free.astype(np.float64)
        self.reference = drive.reference
        self.params = drive.params
        self.static_params = all(a.shape[0] == 1 or a.strides[0] == 0
                                 for a in drive.params.values())
        self._frame_cache: dict[int, _Frame] = {}
        self._constraint_cache: dict[bytes, tuple[list[Colour], Sweep, list[Span]]] = {}
        # Levels below the pinned set, each with the vertex its members hang from.
        self.level_members = []
        for k in range(1, int(model.level.max()) + 1):
            child = np.flatnonzero(model.level == k)
            parent = model.parent[child]
            rest = np.linalg.norm(model.rest_positions[child] - model.rest_positions[parent],
                                  axis=1)
            self.level_members.append((child, parent, rest))
        # Collider data: which free vertices each collider acts on, sphere fast path per frame.
        colliders = model.colliders
        self.collider_index = []
        for k in range(colliders.count):
            on = model.collider_mask[k][self.cloth] & self.free
            if on.any():
                self.collider_index.append((k, int(colliders.kind[k]),
                                            float(colliders.friction[k]), np.flatnonzero(on)))
        # Links tested against colliders between their ends (constraints.collide_edges): the
        # quad sides and diagonals, so nothing thinner than the spacing slips through a quad.
        self.edge_a = np.concatenate([model.stretch.a, model.shear.a])
        self.edge_b = np.concatenate([model.stretch.b, model.shear.b])
        rest = model.rest_positions
        self.longest_edge = float(np.max(np.linalg.norm(rest[self.edge_b] - rest[self.edge_a],
                                                        axis=1), initial=0.0))
        self.substeps_per_frame = max(1, math.ceil(1.0 / (self.fps * self.h) - 1e-9))
        self._near: list = []
        self._hit = np.zeros(N, dtype=bool)
        self._near_frame, self._near_step = -1, 0
        # The largest particle radius of the frames built so far (`_build_frame`): the broad
        # phases' margin and the meshes' reach grow with it, the same way in a bake and a stream.
        self.max_radius = 0.0
        # Body-mesh colliders: the field, the free vertices any mesh acts on and the (M, n)
        # mask of which mesh acts on which of them (None: all).
        self.meshes = None
        if drive.meshes is not None:
            per_vertex = drive.mesh_mask[:, self.cloth] & self.free
            index = np.flatnonzero(per_vertex.any(axis=0))
            if len(index):
                field = MeshField(drive.meshes, fps=self.fps, radius=0.0)
                mask = per_vertex[:, index]
                self.meshes = (field, index, None if mask.all() else mask)
                # Links with a free end, against the meshes of their cloth (edge contacts).
                movable = self.free[self.edge_a] | self.free[self.edge_b]
                links = np.flatnonzero(movable & drive.mesh_mask[:, self.cloth[self.edge_a]]
                                       .any(axis=0))
                link_mask = drive.mesh_mask[:, self.cloth[self.edge_a[links]]]
                self.mesh_links = (self.edge_a[links], self.edge_b[links],
                                   None if link_mask.all() else link_mask,
                                   np.linalg.norm(rest[self.edge_b[links]]
                                                  - rest[self.edge_a[links]], axis=1))
        K = colliders.count
        kinds = colliders.kind
        # (K, N): which vertices each shape collider touched in the substep (step 10's contacts).
        self.touched_by = np.zeros((K, N), dtype=bool)
        self.start = np.zeros((N, 3))  # the substep's start (`contact_friction`)
        # Sphere fast path where an ellipsoid is a similarity at both ends of an interval.
        self.similar = np.zeros((self.F, K), dtype=bool)
        self._ellipsoids = np.flatnonzero(kinds == ColliderKind.ELLIPSOID)
        # Colliders with friction drag what rests on them by their surface motion
        # (`surface_motion` is None over a substep where one did not move).
        self.moving_colliders = bool(K and np.any(colliders.friction > 0.0))
        # Box and plane colliders always need the inverse; an ellipsoid only over an interval
        # where it is not a similarity at both ends (`needs_inverse`).
        self._always_inverse = bool(np.any(kinds == ColliderKind.BOX)
                                    | np.any(kinds == ColliderKind.PLANE))
        # Reference surface normals per sample (backstop), only when some backstop is on.
        self.normals = None
        if np.any(np.isfinite(drive.params["backstop_distance"])):
            self.normals = np.zeros((self.F, N, 3))
        # Output frames (the scene's, `drive.output_fps`) over the samples: each frame's sample
        # interval and blend, its reference, and the cuts of the sample intervals that end
        # within (frame i - 1, frame i] (a jump between two sub-frame samples is a cut of the
        # scene frame it leads up to). Animation cuts (seed 003): a reference vertex of the
        # cloth jumps further than the threshold between two samples; resets restart every
        # cloth.
        C = model.n_cloths
        self.out_fps, self.F_out = drive.output_fps, drive.output_frames
        out_t = np.arange(self.F_out) / self.out_fps
        self.out_interval = [frame_interval(t, self.fps, self.F) for t in out_t]
        self.out_sample = np.array([f + (a >= 1.0 - _TIME_EPS) for f, a in self.out_interval])
        # The last sample each output frame's reference reads.
        self._out_reads = np.array([min(f + 1, self.F - 1) if a != 0.0 else f
                                    for f, a in self.out_interval], dtype=np.int64)
        self.ref_out = np.zeros((self.F_out, N, 3))
        self._ref_out_done = 0
        # Output frames whose `drive.output_reference` row is real (a stream fed rows raises
        # it, `ClothStream.feed_rows`); a whole drive's rows are real as its samples are.
        self.out_known = self.F_out
        # Frames between two samples whose reference is sampled at the frame, not interpolated:
        # their output is held to it (pins, sweep, max distance) also on a substep.
        self._off_sample = np.array([drive.output_reference is not None
                                     and between_samples(a, self.fps)
                                     for _, a in self.out_interval], dtype=bool)
        self._owner = np.ceil(np.arange(self.F) / self.fps * self.out_fps - 1e-9
                              ).astype(np.int64)
        self.cuts = np.zeros((self.F_out, C), dtype=bool)
        self.restart = np.zeros((self.F_out, C), dtype=bool)
        for r in drive.reset_frames:
            self.restart[r] = True
        self.known = 0
        extent = np.zeros(C)
        for c in range(C):
            lo, hi = model.vertex_offset[c], model.vertex_offset[c + 1]
            pts = model.rest_positions[lo:hi]
            extent[c] = np.linalg.norm(pts.max(axis=0) - pts.min(axis=0))
        self.bound = np.maximum(DIVERGENCE_FACTOR * extent, DIVERGENCE_MIN_BOUND)[self.cloth]
        self.update(drive, self.F if known is None else known)

    def update(self, drive: CheckedClothDrive, known: int) -> None:
        """Take `drive` with its samples before `known` read (later ones are placeholders no
        substep reads) and derive the facts of the new ones."""
        self.drive, self.reference, self.params = drive, drive.reference, drive.params
        first, known = self.known, min(int(known), self.F)
        if known > first:
            self._derive(first, known)
        self.known = known
        self._derive_frames()
        if self.meshes is not None:
            self.meshes[0].update(drive.meshes, known)

    def _derive(self, first: int, known: int) -> None:
        """Per-sample facts of samples first..known-1 (and of the intervals they end)."""
        drive = self.drive
        for k in self._ellipsoids:
            for f in range(first, known):
                self.similar[f, k] = is_similarity(drive.collider_matrix[f, k])
        if self.normals is not None:
            self.normals[first:known] = vertex_normals(self.reference[first:known],
                                                       self.model.quads, self.model.n_vertices)
        lo = max(first, 1)
        if known > lo:
            jump = np.linalg.norm(self.reference[lo:known] - self.reference[lo - 1:known - 1],
                                  axis=-1)  # (n, N)
            per_cloth = np.zeros((known - lo, self.model.n_cloths))
            np.maximum.at(per_cloth, (slice(None), self.cloth), jump)
            cut = per_cloth > drive.params["cut_threshold"][lo:known]
            owner = self._owner[lo:known]
            on = owner < self.F_out
            np.logical_or.at(self.cuts, owner[on], cut[on])
            np.logical_or.at(self.restart, owner[on], cut[on])

    def _derive_frames(self) -> None:
        """The reference (and cut) of every output frame whose samples are read: sampled at
        the frame when the drive has it (`output_reference`), else the samples interpolated
        (at 25 and 50 fps most frames fall between two 120 Hz samples, and the interpolated
        cage was up to 1.5 mm off the skinned cage a 4 g figure-eight showed there)."""
        exact = self.drive.output_reference
        i = self._ref_out_done
        while (i < self.F_out and self._out_reads[i] < self.known
               and (exact is None or i < self.out_known)):
            self.ref_out[i] = (exact[i] if self._off_sample[i]
                               else interpolate(self.reference, *self.out_interval[i]))
            if i > 0:
                self._frame_cut(i)
            i += 1
        self._ref_out_done = i

    def _frame_cut(self, i: int) -> None:
        """Output frame `i` is a cut (and restarts) where a cloth's reference moved further
        than its threshold since frame i - 1, as the Cut Threshold means it ("between two
        frames"): a 2 m teleport keyed Linear on two neighbouring frames moved 0.2 m a sample
        at 10 samples a frame, was no cut, and whipped the cloth 0.7 m. Judged once the
        frame's reference is known, before the frame is solved (the preview judges alike)."""
        jump = np.linalg.norm(self.ref_out[i] - self.ref_out[i - 1], axis=-1)
        per_cloth = np.zeros(self.model.n_cloths)
        np.maximum.at(per_cloth, self.cloth, jump)
        cut = per_cloth > self.drive.params["cut_threshold"][self.out_sample[i]]
        self.cuts[i] |= cut
        self.restart[i] |= cut

    def needs_inverse(self, f: int, g: int) -> bool:
        """Whether the colliders' inverse matrices are needed over sample interval (f, g)."""
        if self._always_inverse:
            return True
        e = self._ellipsoids
        return bool(len(e)) and not bool(np.all(self.similar[f, e] & self.similar[g, e]))

    def restart_positions(self, i: int) -> np.ndarray:
        """(N, 3) where the cloths restart at output frame `i`: the reference, or for a cloth
        with a settled pose (seed 003 Pose Track, `settled.py`) the pose put back on it."""
        ref = self.ref_out[i].copy()
        if not self.drive.settled.any():
            return ref
        space = interpolate(self.drive.space, *self.out_interval[i])[self.cloth]
        on = self.drive.settled[self.cloth]
        ref[on] = settled_positions(ref[on], space[on], self.drive.settled_offset[on])
        return ref

    # ----------------------------------------------------------------------------------------
    def frame(self, f: int) -> _Frame:
        key = 0 if self.static_params else f
        cached = self._frame_cache.get(key)
        if cached is None:
            cached = self._build_frame(key)
            self._frame_cache = {key: cached}
        return cached

    def _build_frame(self, f: int) -> _Frame:
        model, h, cloth, p = self.model, self.h, self.cloth, self.params
        edge = model.edge_vertex
        free = self.free

        def per_vertex(name: str) -> np.ndarray:
            return p[name][f][cloth]

        def edge_scaled(name: str, scale: str) -> np.ndarray:
            return per_vertex(name) * np.where(edge, per_vertex(scale), 1.0)

        damping = edge_scaled("damping", "edge_damping_scale")
        drag = edge_scaled("drag", "edge_wind_scale")
        keep = np.where(free, transcendental.exp(-(damping + drag) * h), 0.0)
        decay = np.repeat(keep[:, None], 3, axis=1)
        contact_decay = transcendental.exp(-per_vertex("contact_damping") * h)[:, None]
        wind_velocity = per_vertex("wind_velocity")
        turbulence = per_vertex("wind_turbulence")
        # Turbulent vertices sample the noise field (every 1/WIND_SAMPLE_RATE s); the others
        # get the mean wind as a constant acceleration, bit-identical to a calm neighbour.
        turbulent = free & (turbulence > 0) & (drag > 0) & np.any(wind_velocity != 0, axis=1)
        steady = np.where(turbulent, 0.0, drag)[:, None] * wind_velocity
        accel = per_vertex("gravity") + steady
        accel_h2 = np.where(free[:, None], accel * h * h, 0.0)
        wind = None
        if turbulent.any():
            index = np.flatnonzero(turbulent)
            wind = {"index": index, "wind_velocity": wind_velocity[index],
                    "turbulence": turbulence[index], "seed": per_vertex("wind_seed")[index],
                    "drag_h2": drag[index, None] * h * h}
        fraction = np.clip(edge_scaled("world_motion_fraction", "edge_world_motion_scale"),
                           0.0, 1.0)
        carry = np.repeat((1.0 - fraction)[:, None], 3, axis=1)

        iterations = int(self.settings.iterations)
        use_lambda = iterations > 1
        colours, sweep, spans = self._constraints(f)
        limit = (model.max_distance * per_vertex("max_distance_scale")
                 * np.where(edge, per_vertex("edge_max_distance_scale"), 1.0))
        max_on = free & np.isfinite(limit)
        early = max_on & self._stiff_cloths(f)[cloth]
        back = per_vertex("backstop_distance")
        back_on = free & np.isfinite(back) if self.normals is not None else np.zeros_like(free)
        radius = np.where(free, per_vertex("radius"), -np.inf)
        largest = float(np.max(radius, initial=0.0))
        if largest > self.max_radius:
            self.max_radius = largest
            if self.meshes is not None:
                self.meshes[0].widen(largest)
        thickness = p["layer_thickness"][f][cloth[model.layers.vertex]]
        return _Frame(decay=decay, contact_decay=contact_decay, accel_h2=accel_h2, wind=wind,
                      carry=carry, needs_carry=bool(np.any(fraction[free] < 1.0)),
                      colours=colours, use_lambda=use_lambda, levels=sweep, spans=spans,
                      max_index=np.flatnonzero(max_on), max_limit=limit[max_on],
                      max_by_axis=axis_major(np.flatnonzero(max_on)),
                      max_full=np.where(max_on, limit, np.inf),
                      early_index=np.flatnonzero(early), early_limit=limit[early],
                      early_by_axis=axis_major(np.flatnonzero(early)),
                      back_index=np.flatnonzero(back_on), back_distance=back[back_on],
                      radius=radius, layer_thickness=thickness)

    def _constraints(self, f: int) -> tuple[list[Colour], Sweep, list[Span]]:
        """XPBD colours, the vertical sweep and the pin-to-pin spans for frame f's compliances
        and hard-vertical flags, cached by those values (an animated damping or wind does not
        rebuild them)."""
        p, model = self.params, self.model
        names = ("stretch_compliance", "horizontal_compliance", "shear_compliance",
                 "bend_compliance", "use_hard_vertical")
        key = b"".join(np.ascontiguousarray(p[name][f]).tobytes() for name in names)
        cached = self._constraint_cache.get(key)
        if cached is not None:
            return cached
        colours: list[Colour] = []
        stretch_alpha = np.where(model.vertical, p["stretch_compliance"][f][model.stretch.cloth],
                                 p["horizontal_compliance"][f][model.stretch.cloth])
        groups = [(model.stretch, stretch_alpha),
                  (model.shear, p["shear_compliance"][f][model.shear.cloth]),
                  (model.bend, p["bend_compliance"][f][model.bend.cloth])]
        for group, alpha in groups:
            colours.extend(_colours(group, alpha, self.w, self.h))
        hard = p["use_hard_vertical"][f][self.cloth]
        levels = []
        for child, parent, rest in self.level_members:
            on = hard[child]
            if on.any():
                par = parent[on]
                levels.append(Level(child[on], par, rest[on][:, None],
                                    unique_parents=np.unique(par).size == par.size))
        spans = []
        if hard.any():
            # Pin-to-pin spans, then the hanging columns (`model._columns`) of the cloths with
            # stiff bending or shear links (`_stiff_cloths`), all by SHAKE.
            stiff = self._stiff_cloths(f)
            columns = []
            for path in model.columns:
                rows = stiff[self.cloth[path[:, 0]]]
                if rows.any():
                    columns.append(path[rows])
            spans = [Span(path, model.rest_positions, self.w, hard)
                     for path in (*model.spans, *columns)]
        if len(self._constraint_cache) >= 16:
            self._constraint_cache.clear()
        self._constraint_cache[key] = (colours, Sweep(levels, model.n_vertices, self.w), spans)
        return self._constraint_cache[key]

    def _stiff_cloths(self, f: int) -> np.ndarray:
        """Which cloths (C,) bend or shear stiffer than STIFF_COMPLIANCE at frame f: their
        columns are projected by SHAKE and their max distance clamped before the exact lengths
        (`step`). Softer cloths keep the sweep alone, whose numerical damping their energy
        does not need (see STIFF_COMPLIANCE)."""
        p = self.params
        C = self.model.n_cloths
        bend = np.broadcast_to(np.asarray(p["bend_compliance"][f], dtype=float), (C,))
        shear = np.broadcast_to(np.asarray(p["shear_compliance"][f], dtype=float), (C,))
        return np.minimum(bend, shear) < STIFF_COMPLIANCE

    # ----------------------------------------------------------------------------------------
    def reference_at(self, t: float, restarting: np.ndarray | None,
                     frozen: np.ndarray) -> tuple[np.ndarray, int, float]:
        """Reference (N, 3) at time `t`; `frozen` (the previous output frame's) for restarting
        cloths."""
        f, alpha = frame_interval(t, self.fps, self.F)
        g = min(f + 1, self.F - 1)
        ref = self.reference[f] + alpha * (self.reference[g] - self.reference[f])
        if restarting is not None:
            ref[restarting] = frozen[restarting]
        return ref, f, alpha

    def step(self, x: np.ndarray, x_prev: np.ndarray, n: int, fr: _Frame, ref: np.ndarray,
             f: int, alpha: float, space_start: np.ndarray | None, contact: np.ndarray,
             contact_any: np.ndarray, wind_h2: np.ndarray | None, *,
             frozen: bool = False) -> None:
        """One substep (see the module docstring for the order). `frozen`: a pre-roll substep,
        the drive held at frame 0 (the colliders do not move under it)."""
        model = self.model
        drive = self.drive
        g = min(f + 1, self.F - 1)
        if self.collider_index:
            self.touched_by.fill(False)
        # 1. Local-space carry of x and x_prev by (1 - fraction) of the space motion.
        if space_start is not None:
            space_end = drive.space[f] + alpha * (drive.space[g] - drive.space[f])
            motion = space_end @ affine_inverse(space_start)  # (C, 4, 4)
            if not np.array_equal(motion, np.broadcast_to(np.eye(4), motion.shape)):
                offsets = self.model.vertex_offset
                if np.all(motion == motion[0]):
                    # Usually one character space drives every cage: one block for all.
                    blocks = [(0, offsets[-1], motion[0])]
                else:  # each cloth is one contiguous block
                    blocks = [(offsets[c], offsets[c + 1], motion[c])
                              for c in range(self.model.n_cloths)]
                for lo, hi, m in blocks:
                    A = m[:3, :3].T - np.eye(3)
                    for buf in (x[lo:hi], x_prev[lo:hi]):
                        moved = buf @ A
                        for k in range(3):  # a (n, 3) + (3,) broadcast costs ~3x these
                            moved[:, k] += m[k, 3]
                        moved *= fr.carry[lo:hi]
                        buf += moved
        if self.moving_colliders:
            # Where each vertex starts the substep: friction holds its motion from here
            # (`contact_friction`; x_prev is moved by the sweep's position fixes).
            np.copyto(self.start, x)
        # 2. Verlet prediction with per-second damping (contact adds its own).
        velocity = x - x_prev
        velocity *= fr.decay
        if contact.any():
            velocity[contact] *= fr.contact_decay[contact]
        x_prev[...] = x
        x += velocity
        x += fr.accel_h2
        if wind_h2 is not None:
            x += wind_h2
        # 3. Pinned vertices copy the reference.
        x[self.pinned_index] = ref.take(self.pinned_index, axis=0)
        # 4. XPBD constraint colours.
        for _ in range(int(self.settings.iterations)):
            for c in fr.colours:
                solve_colour(x, c, use_lambda=fr.use_lambda)
        if fr.use_lambda:
            for c in fr.colours:
                c.lam.fill(0.0)
        # 5. Stiff cloths' max distance, before the exact lengths: clamped only in and after
        # the sweep, the children it stops were turned about their parents there (a position
        # fix) and the stiff links carried that turn into velocity next substep (rigid bending
        # gained its fall's energy again on its max distance). Clamped here it is an inelastic
        # stop the lengths then respect, and the sweep's own clamps are roundings.
        if fr.early_index.size:
            clamp_max_distance(x, ref, fr.early_index, fr.early_limit, by_axis=fr.early_by_axis)
        # 6. Hard vertical constraints (seed 001): pin-to-pin spans and stiff cloths' hanging
        # columns exact by SHAKE's mass-weighted projection, then the top-down sweep (rounding
        # there, or the whole job where SHAKE rejected a step or is not used).
        if fr.spans:
            solve_spans(x, x_prev, fr.spans)
        if fr.levels:
            if fr.max_index.size:
                sweep_levels(x, fr.levels, x_prev, reference=ref,
                             limit=fr.max_full, fixed=self.model.pinned)
            else:
                sweep_levels(x, fr.levels, x_prev)
        # 7. Layers, then colliders.
        layers = model.layers
        layered = layers.count and push_layers(x, layers.vertex, layers.quad, layers.uv,
                                               layers.side, fr.layer_thickness)
        self._collide(x, x_prev, n, fr, f, g, alpha, frozen, contact, contact_any)
        # 8. Max distance from the reference, back stop behind its surface.
        if fr.max_index.size:
            clamp_max_distance(x, ref, fr.max_index, fr.max_limit, by_axis=fr.max_by_axis)
        normal = None
        if fr.back_index.size:
            normal = self.normals[f] + alpha * (self.normals[g] - self.normals[f])
            normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
            push_backstop(x, ref, normal, fr.back_index, fr.back_distance)
        # 9. Lengths and contacts agree at the end of the substep: the sweep (with the max
        # distance inside it), the layers and the colliders again, positions only (x_prev moves
        # along, so they make no velocity), until they move nothing (the strands'
        # `_lengths_after_contact`). The layers count as contacts: they pushed outer vertices
        # after the sweep, and a two-layer cage shaken at 2.9 g ended 23 % of its frames with an
        # outer vertical link over 0.5 % long (8.4 % at worst; 2.5 % of frames, 3.3 % with it).
        if COLLIDER_SWEEPS and fr.levels and (layered or contact.any()):
            before = x.copy()
            again = np.zeros_like(contact)
            swept = np.zeros_like(contact)
            for _ in range(COLLIDER_SWEEPS):
                if fr.max_index.size:
                    sweep_levels(x, fr.levels, None, reference=ref, limit=fr.max_full,
                                 fixed=self.model.pinned)
                else:
                    sweep_levels(x, fr.levels, None)
                layered = layers.count and push_layers(x, layers.vertex, layers.quad, layers.uv,
                                                       layers.side, fr.layer_thickness)
                again[:] = False
                self._collide(x, x_prev, n, fr, f, g, alpha, frozen, again, contact_any)
                if fr.max_index.size:
                    clamp_max_distance(x, ref, fr.max_index, fr.max_limit, by_axis=fr.max_by_axis)
                if normal is not None:
                    push_backstop(x, ref, normal, fr.back_index, fr.back_distance)
                if not (again.any() or layered):
                    break
            if self.collider_index or self.meshes is not None:
                # The lengths again with the colliders inside the sweep (`contact_sweep`), from
                # the first level a collider touched this substep: the colliders just ran last
                # and left the links at their pushes stretched (a grid over a thin tapered
                # capsule 4 % at 120 Hz, 1.7 % at 240 Hz; a skirt around a body mesh with
                # running legs 1.4 % at the frames; now exact).
                start = first_step(fr.levels, again)
                if start is not None:
                    push = self._contact_push(x, fr, start, n, f, g, alpha, swept, frozen)
                    if fr.max_index.size:
                        sweep_with_contacts(x, fr.levels, start, push, reference=ref,
                                            limit=fr.max_full)
                        # Where a link cannot reach inside its child's max distance the sweep
                        # leaves it outside, as `sweep_levels` does; the max distance wins.
                        clamp_max_distance(x, ref, fr.max_index, fr.max_limit,
                                           by_axis=fr.max_by_axis)
                    else:
                        sweep_with_contacts(x, fr.levels, start, push)
                    if normal is not None:
                        push_backstop(x, ref, normal, fr.back_index, fr.back_distance)
            x_prev += x - before
            contact_any |= swept
            touched = contact | again | swept
        else:
            touched = contact
        # 10. The contacts' velocity pass: no normal velocity relative to a collider the cloth
        # touched in this substep (`_contact_velocity`).
        if self.collider_index and touched.any():
            self._contact_velocity(x, x_prev, touched, n, fr, f, g, alpha, frozen)

    def _contact_velocity(self, x: np.ndarray, x_prev: np.ndarray, touched: np.ndarray, n: int,
                          fr: _Frame, f: int, g: int, alpha: float, frozen: bool) -> None:
        """Step 10: PBD's velocity update at the contacts with restitution 0 (Müller et al.
        2020, Detailed Rigid Body Simulation with Extended Position Based Dynamics, §3.6:
        Δv = n (-v_n + min(-e v̄_n, 0)), e = 0): every vertex the shape colliders touched in
        this substep (`touched_by`), and every link crossing one between its ends with both
        ends touched (an edge contact flags both; a link with one touched end is that vertex's
        contact), ends it with no velocity along the collider's normal relative to its surface
        (`x_prev` moves along the normal; the velocity is x - x_prev). The pushes are
        positions (step 7's `collide` a velocity change, step 9's contact sweep a position fix
        only): a vertex pushed out of a collider it had entered at speed kept that speed into
        it through step 9 and was lifted again next substep, and a push averaged over several
        links, or out of a depth left by the substep before, threw it off the surface. An 8 x 8
        cage falling onto a static box gained 4.0 % of its fall undamped (1.3 % with default
        damping, 11 % undamped at 120 Hz substeps), onto a capsule 5.5 % / 3.3 % (the drop
        bounced off it at 2/3 of its speed); now 0.1-1.3 %
        (tests/core/cloth/test_cloth_box_audit.py). The tangential velocity is left to the
        colliders' position-based Coulomb friction (step 7). Removing only the approach
        (keeping what a push threw outward) left the box at 1.9 %; stopping every link with
        one touched end as well, 1.0 % / 1.2 % at 120 Hz (0.18 % / 0.16 % now)."""
        cm = self.drive.collider_matrix
        M_all = lerp_affine(cm[f], cm[g], alpha)
        Minv_all = affine_inverse(M_all) if self.needs_inverse(f, g) else None
        M_start = None  # where the colliders were at the substep's start (their surface motion)
        if not frozen:
            fs, a_s = frame_interval(n * self.h, self.fps, self.F)
            gs = min(fs + 1, self.F - 1)
            M_start = lerp_affine(cm[fs], cm[gs], a_s)
        colliders = self.model.colliders
        for k, kind, _friction, index, _by_axis, edges in self._near:
            touched = self.touched_by[k]
            index = index[touched[index]]
            if edges.size:
                edges = edges[touched[self.edge_a[edges]] & touched[self.edge_b[edges]]]
            if index.size == 0 and edges.size == 0:
                continue
            M = M_all[k]
            Minv = Minv_all[k] if Minv_all is not None else None
            similar = bool(self.similar[f, k] and self.similar[g, k])
            surface = None if M_start is None else surface_motion(M_start[k], M, Minv)
            if index.size:
                stop_normal_velocity(x, x_prev, index, kind, M, Minv, colliders, k, similar,
                                     surface)
            if edges.size:
                stop_link_normal_velocity(x, x_prev, self.edge_a[edges], self.edge_b[edges],
                                          self.w, fr.radius, kind, M, Minv, colliders, k,
                                          similar, surface)

    def _mesh_span(self, n: int, frozen: bool, at: float = 0.0) -> tuple[float, float]:
        """The times (start, end) the body meshes are queried at in substep `n`. A frozen pass
        (pre-roll, start pass) holds them at time `at` with no motion, as it holds the shape
        colliders at their (f, alpha): frame 0 for the pre-roll and the start, the restart's
        frame for a cut. The pre-roll took n h.. (n + 1) h, the mesh playing its first frames
        while the drive stood at frame 0, and a stream (`ClothStream`) read samples it had not
        read yet (held placeholders: a deforming body's streamed frames parted from the
        bake's); the strands hold it at frame 0 (`_Bake.substep_drive(frozen=True)`)."""
        if frozen:
            return at, at
        return n * self.h, (n + 1) * self.h

    def _collide(self, x: np.ndarray, x_prev: np.ndarray, n: int, fr: _Frame, f: int, g: int,
                 alpha: float, frozen: bool, contact: np.ndarray, contact_any: np.ndarray,
                 at: float = 0.0) -> None:
        """Step 7's colliders: shapes (vertices and edges), then body meshes; `contact` is set
        for what they touched this pass. `at`: the meshes' time in a frozen pass
        (`_mesh_span`)."""
        model = self.model
        drive = self.drive
        contact[:] = False
        if self.collider_index:
            cm = drive.collider_matrix
            M_all = lerp_affine(cm[f], cm[g], alpha)
            if f != self._near_frame or n - self._near_step >= self.substeps_per_frame:
                self._near = self.near_colliders(x, x_prev, f, g)
                self._near_frame, self._near_step = f, n
            Minv_all = (affine_inverse(M_all) if self.needs_inverse(f, g)
                        else None)  # all K at once
            M_start = None  # where the colliders were at the substep's start (friction drags)
            if self.moving_colliders and not frozen:
                fs, a_s = frame_interval(n * self.h, self.fps, self.F)
                gs = min(fs + 1, self.F - 1)
                M_start = lerp_affine(cm[fs], cm[gs], a_s)
            for k, kind, friction, index, by_axis, edges in self._near:
                M = M_all[k]
                Minv = Minv_all[k] if Minv_all is not None else None
                similar = bool(self.similar[f, k] and self.similar[g, k])
                surface = None
                if M_start is not None and friction > 0.0:
                    surface = surface_motion(M_start[k], M, Minv)
                touched = self.touched_by[k]
                collide(x, x_prev, index, fr.radius.take(index), kind, M, Minv, model.colliders, k,
                        similar, friction, touched, by_axis=by_axis, surface=surface,
                        start=self.start)
                collide_edges(x, self.edge_a[edges], self.edge_b[edges], self.w, fr.radius, kind,
                              M, Minv, model.colliders, k, similar, touched)
                contact |= touched
            contact_any |= contact
        if self.meshes is not None:
            field, index, mask = self.meshes
            points = x[index]
            t_start, t_end = self._mesh_span(n, frozen, at)
            pushed = field.push_out(points, x_prev[index], fr.radius.take(index), t_start,
                                    t_end, mask)
            if len(pushed):
                x[index] = points
                contact[index[pushed]] = True
                contact_any[index[pushed]] = True
            link_a, link_b, link_mask, link_rest = self.mesh_links
            if len(pushed):  # links with a pushed end: the vertex contacts hold them
                clear = ~(contact[link_a] | contact[link_b])
                link_a, link_b, link_rest = link_a[clear], link_b[clear], link_rest[clear]
                link_mask = None if link_mask is None else link_mask[:, clear]
            edge_contact = np.zeros_like(contact)
            collide_mesh_edges(field, x, link_a, link_b, self.w, fr.radius, link_rest,
                               t_start, t_end, link_mask, edge_contact)
            contact |= edge_contact
            contact_any |= edge_contact

    def _contact_push(self, x: np.ndarray, fr: _Frame, first: int, n: int, f: int, g: int,
                      alpha: float, touched: np.ndarray, frozen: bool = False
                      ) -> Callable[[np.ndarray, np.ndarray, np.ndarray], bool]:
        """The contact sweep's push (`contact_sweep.sweep_with_contacts`): one level's children
        out of the shape colliders near them, then out of the body meshes (`mesh_sweep`), with
        their parents held, positions only (no friction: this is a projection of the lengths,
        the substep's friction has acted). Flags what it touched in `touched`.

        Each collider's signed distance to its broad-phase vertices (`near_colliders`) is taken
        once, where the sweep starts; a signed distance changes by at most the distance moved
        (SD_LIPSCHITZ), so only the children that moved close enough, and the links whose ends
        did, are tested exactly (a point of a link is at least (d_a + d_b - length) / 2 from
        the surface). Testing every child and link of every level against a skirt's four leg
        capsules made its bake 1.9x slower, though most tests found nothing."""
        N = self.model.n_vertices
        start = x.copy()
        radius = fr.radius
        shapes = []
        near = self._near if self.collider_index else []
        if near:
            cm = self.drive.collider_matrix
            M_all = lerp_affine(cm[f], cm[g], alpha)
            Minv_all = affine_inverse(M_all) if self.needs_inverse(f, g) else None
        for k, kind, _friction, index, _by_axis, edges in near:
            near = np.zeros(N, dtype=bool)
            near[index] = True
            if edges.size:
                near[self.edge_a[edges]] = True
                near[self.edge_b[edges]] = True
            candidates = np.flatnonzero(near)
            M = M_all[k]
            Minv = Minv_all[k] if Minv_all is not None else None
            similar = bool(self.similar[f, k] and self.similar[g, k])
            _, sd = shape_normal(kind, x[candidates], M, Minv, self.model.colliders, k,
                                 similarity=similar)
            lipschitz = 1.0 if similar or kind != ColliderKind.ELLIPSOID else SD_LIPSCHITZ
            # Where the sweep started (inf: not this collider's to test); vertices only, then
            # links too where the collider is thin enough for the edge test.
            distance = np.full(N, np.inf)
            distance[candidates] = sd / lipschitz
            vertex = np.zeros(N, dtype=bool)
            vertex[index] = True
            shapes.append((k, kind, M, Minv, similar, distance, vertex, edges.size > 0,
                           lipschitz))
        meshes = None
        if self.meshes is not None:
            field, index, mask = self.meshes
            levels = fr.levels.levels[first:]
            links = tuple(np.concatenate([getattr(lv, name).reshape(-1) for lv in levels])
                          for name in ("parent", "child", "rest"))
            meshes = MeshSweepPush(field, index, mask, x, radius, links,
                                   *self._mesh_span(n, frozen))
            if not meshes.parts:
                meshes = None

        def push(parent: np.ndarray, child: np.ndarray, rest: np.ndarray) -> bool:
            moved = False
            moved_b = norm3(x[child] - start[child])
            moved_a = norm3(x[parent] - start[parent])
            r_a, r_b = radius[parent], radius[child]
            reach = np.maximum(r_a, r_b) + LINK_BOUND_SLACK
            for k, kind, M, Minv, similar, distance, vertex, links, lipschitz in shapes:
                low_b = distance[child] - moved_b
                low_a = distance[parent] - moved_a
                test = vertex[child] & (low_b * lipschitz < r_b)
                if links:
                    test |= 0.5 * (low_a + low_b - rest) * lipschitz < reach
                near = np.flatnonzero(test)
                if near.size == 0:
                    continue
                a, b, length = parent[near], child[near], rest[near]
                # Children and parents in one call: the vertices' own test, and the exact bound
                # on their links.
                normal, sd = shape_normal(kind, x[np.concatenate([b, a])], M, Minv,
                                          self.model.colliders, k, similarity=similar)
                sd_b, sd_a = sd[:near.size], sd[near.size:]
                penetration = r_b[near] - sd_b
                hit = (penetration > 0.0) & vertex[b]
                if hit.any():
                    turn_vertices_out(x, a[hit], b[hit], normal[:near.size][hit],
                                      penetration[hit], length[hit], touched)
                    self.touched_by[k, b[hit]] = True
                    moved = True
                if not links:
                    continue
                crossing = ~hit & (0.5 * (sd_a + sd_b - length) < reach[near])
                if crossing.any():  # the parent is final: only the child moves
                    scratch = self._hit
                    scratch[:] = False
                    depth = np.maximum(r_a[near][crossing] - sd_a[crossing], 0.0)
                    turn_links_out(x, a[crossing], b[crossing], length[crossing], radius,
                                   depth, kind, M, Minv,
                                   self.model.colliders, k, similar, scratch)
                    if scratch.any():
                        moved = True
                        np.logical_or(touched, scratch, out=touched)
                        np.logical_or(self.touched_by[k], scratch, out=self.touched_by[k])
            if meshes is not None:
                if moved:  # the shapes moved some children: their bounds count from there
                    moved_b = norm3(x[child] - start[child])
                if meshes(x, parent, child, rest, moved_a, moved_b, touched):
                    moved = True
            return moved

        return push

    def near_colliders(self, x: np.ndarray, x_prev: np.ndarray, f: int, g: int) -> list:
        """Broad phase, once per frame's worth of substeps: the vertices each collider may reach
        before the next refresh. A vertex is a candidate when its distance to the collider's
        centre is below the collider's bounding radius plus the particle radius plus a margin:
        twice its current speed over a frame, its reference's motion over the frame (a sprint
        start drags it along), the collider centre's motion and 5 cm."""
        cm = self.drive.collider_matrix
        reach_v = (2.0 * self.substeps_per_frame * np.linalg.norm(x - x_prev, axis=1)
                   + np.linalg.norm(self.reference[g] - self.reference[f], axis=1) + 0.05)
        near = []
        for k, kind, friction, index in self.collider_index:
            bound = max(bounding_radius(kind, cm[f, k], self.model.colliders, k),
                        bounding_radius(kind, cm[g, k], self.model.colliders, k))
            if not np.isfinite(bound):
                near.append((k, kind, friction, index, axis_major(index),
                             self.near_edges(x, index, kind, cm[f, k], k, reach_v, 0.0)))
                continue
            centre = cm[f, k, :3, 3]
            travel = float(np.linalg.norm(cm[g, k, :3, 3] - centre))
            distance = np.linalg.norm(x[index] - centre, axis=1)
            # A link may cross the collider with both ends further out than its bound: its
            # ends are candidates within half the longest link more.
            reach = bound + travel + reach_v[index] + self.max_radius
            close = distance < reach
            edge_close = distance < reach + 0.5 * self.longest_edge
            if edge_close.any():
                near.append((k, kind, friction, index[close], axis_major(index[close]),
                             self.near_edges(x, index[edge_close], kind, cm[f, k], k, reach_v,
                                             travel)))
        return near

    def near_edges(self, x: np.ndarray, vertices: np.ndarray, kind: int, M: np.ndarray, k: int,
                   reach_v: np.ndarray, travel: float) -> np.ndarray:
        """The edge broad phase, once per frame: links with an end among `vertices` whose
        closest point is within a frame's motion (theirs and the collider's) of the collider
        at the frame's start (the bound of `constraints.edge_contact_parameter`)."""
        candidate = np.zeros(self.model.n_vertices, dtype=bool)
        candidate[vertices] = True
        edges = np.flatnonzero(candidate[self.edge_a] | candidate[self.edge_b])
        a, b = self.edge_a[edges], self.edge_b[edges]
        if narrowest_radius(kind, M, self.model.colliders, k) >= \
                0.5 * self.longest_edge * EDGE_STRETCH:
            return edges[:0]  # too wide to slip between vertices: their own test suffices
        found = edge_contact_parameter(kind, x[a], x[b], M, None, self.model.colliders, k)
        if found is None:
            return edges[:0]
        margin = np.maximum(reach_v[a], reach_v[b]) + travel + self.max_radius
        return edges[found[1] < margin]

    # ----------------------------------------------------------------------------------------
    def run(self) -> Iterator[tuple[int, int]]:
        model, h, F, fps = self.model, self.h, self.F, self.fps
        F_out, out_fps = self.F_out, self.out_fps
        N = model.n_vertices
        x = self.restart_positions(0)
        x_prev = x.copy()
        positions = np.empty((F_out, N, 3))
        self.positions = positions  # filled frame by frame (a `ClothStream` reads each)
        contacts = np.zeros((F_out, N), dtype=bool)
        contact = np.zeros(N, dtype=bool)
        contact_any = np.zeros(N, dtype=bool)
        substeps = 0
        wind_every = max(1, round(1.0 / (WIND_SAMPLE_RATE * h)))
        wind_h2 = None

        def wind_force(n: int, fr: _Frame) -> np.ndarray | None:
            """Turbulent wind acceleration times h^2 (N, 3), zero on the steady vertices."""
            if fr.wind is None:
                return None
            w = fr.wind
            index = w["index"]
            sample = wind_at(x=x[index, None, :], t=n * h, wind_velocity=w["wind_velocity"],
                             turbulence=w["turbulence"], gust=np.zeros(index.size),
                             seed=w["seed"])
            out = np.zeros((N, 3))
            out[index] = sample[:, 0, :] * w["drag_h2"]
            return out

        self._start_outside(x, x_prev)
        # At rest at t = 0 under constant acceleration: x_prev = x + a h^2 / 2 makes position
        # Verlet reproduce x0 + a t^2 / 2 exactly (no spurious initial velocity a h / 2).
        x_prev += 0.5 * self.frame(0).accel_h2
        first_wind = wind_force(0, self.frame(0))
        if first_wind is not None:
            x_prev += 0.5 * first_wind

        # Pre-roll: settle on frame 0's drive, time running up to 0 from below.
        n_pre = int(round(self.settings.preroll_frames / fps / h))
        fr0 = self.frame(0)
        ref0 = self.reference[0]
        for n in range(n_pre):
            if n % wind_every == 0:
                wind_h2 = wind_force(n - n_pre, fr0)
            self.step(x, x_prev, n, fr0, ref0, 0, 0.0, None, contact, contact_any, wind_h2,
                      frozen=True)
            substeps += 1
        blend_gap = np.zeros((N, 3))
        blend_start = np.zeros(model.n_cloths, dtype=np.int64)
        blend_frames = np.zeros(model.n_cloths, dtype=np.int64)
        self._output(positions, 0, x, blend_gap, blend_start, blend_frames)
        contacts[0] = contact_any
        yield 1, F_out
        n = 0
        # The state one substep before the last off-grid frame time crossed. It stays valid
        # while no substep runs: with more frames a second than substeps (a Substep Rate under
        # the frame rate) a frame can fall between the same two substeps as the one before it
        # and must blend them too (it took the later state: a cage at 240 fps on 100 Hz
        # substeps gained 75 % of its fall in its output).
        before = np.empty_like(x)
        crossed = False
        for i in range(1, F_out):
            T = i / out_fps
            restart_cloths = self.restart[i]
            restarting = restart_cloths[self.cloth] if restart_cloths.any() else None
            contact_any[:] = False
            while n * h < T - _TIME_EPS:
                t_start, t_end = n * h, (n + 1) * h
                fr = self.frame(frame_interval(t_end, fps, F)[0])
                ref, f, alpha = self.reference_at(t_end, restarting, self.ref_out[i - 1])
                space_start = None
                if fr.needs_carry:
                    fs, a_s = frame_interval(t_start, fps, F)
                    gs = min(fs + 1, F - 1)
                    space_start = self.drive.space[fs] + a_s * (self.drive.space[gs]
                                                                - self.drive.space[fs])
                    if restarting is not None:
                        # No carry across a cut: the cloth restarts at the frame anyway.
                        space_start = space_start.copy()
                        end = self.drive.space[f] + alpha * (self.drive.space[min(f + 1, F - 1)]
                                                             - self.drive.space[f])
                        space_start[restart_cloths] = end[restart_cloths]
                if n % wind_every == 0:
                    wind_h2 = wind_force(n, fr)
                if t_end > T + _TIME_EPS:
                    np.copyto(before, x)
                    crossed = True
                self.step(x, x_prev, n, fr, ref, f, alpha, space_start, contact, contact_any,
                          wind_h2)
                n += 1
                substeps += 1
            if crossed and abs(n * h - T) > _TIME_EPS:
                w = (T - (n - 1) * h) / h
                out = before + w * (x - before)
            elif self._off_sample[i]:
                # On a substep but between two samples: the substep held the cloth to the
                # samples interpolated, the frame is held to its own reference.
                out = x.copy()
            else:
                out = x
            if out is not x:
                out[self.pinned_index] = self.ref_out[i][self.pinned_index]
                fr = self.frame(self.out_sample[i])
                if fr.levels:
                    # Blending two exact-length states shortens rotating links (a chord).
                    # The sweep keeps the max distance as the substeps' does: without it the
                    # chord's fix pushed hem vertices past their limit (a cage on a 5 g
                    # figure-eight 0.14 mm past it at 25 and 50 fps, 0 at 24/30/60).
                    if fr.max_index.size:
                        sweep_levels(out, fr.levels, reference=self.ref_out[i],
                                     limit=fr.max_full, fixed=self.model.pinned)
                    else:
                        sweep_levels(out, fr.levels)
                if fr.max_index.size:
                    # The blend is measured against the reference at the frame's time, not the
                    # blend of the two substeps' references; the max distance wins (step 8).
                    clamp_max_distance(out, self.ref_out[i], fr.max_index, fr.max_limit,
                                       by_axis=fr.max_by_axis)
            if restarting is not None:
                # Restart from the new reference at rest; the output blends the old deformation
                # (cloth minus reference at the previous frame) away over cut_blend_frames.
                gap = positions[i - 1] - self.ref_out[i - 1]
                cut_cloths = self.cuts[i]
                blend_now = cut_cloths[self.cloth] & restarting
                blend_gap[restarting] = np.where(blend_now[restarting, None],
                                                 gap[restarting], 0.0)
                blend_start[restart_cloths] = i
                blend_frames[restart_cloths] = np.where(
                    cut_cloths[restart_cloths],
                    self.params["cut_blend_frames"][self.out_sample[i]][restart_cloths], 0)
                restart = self.restart_positions(i)
                x[restarting] = restart[restarting]
                # Out of the colliders as a pose, like the start (`_start_outside`).
                self._start_outside(x, x_prev, restarting=restarting, i=i, n=n)
                # The blend runs from the old deformation to the restart's (a settled pose's).
                blend_gap[restarting] -= (x - self.ref_out[i])[restarting]
                # A frame between the same two substeps blends from the restart too.
                before[restarting] = x[restarting]
                x_prev[restarting] = (x[restarting]
                                      + 0.5 * self.frame(self.out_sample[i]).accel_h2[restarting])
                contact[restarting] = False
                out = out.copy()
                out[restarting] = x[restarting]
            self._output(positions, i, out, blend_gap, blend_start, blend_frames)
            contacts[i] = contact_any
            yield i + 1, F_out
        self.result = ClothResult(positions=positions, contact=contacts, cuts=self.cuts.copy(),
                                  substeps=substeps)

    def _start_outside(self, x: np.ndarray, x_prev: np.ndarray, *,
                       restarting: np.ndarray | None = None, i: int = 0, n: int = 0) -> None:
        """Put the start pose (at rest: `x_prev` equals `x`) out of the colliders as a pose,
        not as motion: the colliders (then the max distance and back stop, which win over them
        as in step 8), the links relaxed and the hard vertical links swept positions only, the
        colliders and limits having the last word, up to START_OUTSIDE_ROUNDS times, and
        `x_prev` = `x`.

        Why: a cage is often drawn into the body it hangs on. Pushed out in the first substep,
        the push is taken as velocity ((x - x_prev) / h: 4 cm in a 240 Hz substep is 10 m/s)
        and the cage is thrown off the body (a cage starting 3 cm into a ball flew off it at
        9.7 m/s, into a box at 16 m/s). Overlap that exists before anything moves is not an
        approach a contact should stop, so it is removed with no velocity, as split impulses
        and depenetration-velocity caps do in game physics (Catto 2006; PhysX's maximum
        depenetration velocity, here zero at the start), and as the strands' start does
        (`core/strands/solver.py`, `_Bake._start_outside`). A start clear of the colliders is
        untouched (the same bits).

        `restarting` (N,) bool: only those vertices, restarting at output frame `i` (a cut or a
        reset; substep `n` next), against the colliders at that frame's time; the others and
        the colliders' broad phase are left as they were."""
        if not (self.collider_index or self.meshes is not None):
            return
        if restarting is None:
            fr, ref, f, g, alpha = self.frame(0), self.reference[0], 0, 0, 0.0
            normal = self.normals[0] if self.normals is not None else None
        else:
            fr, ref = self.frame(self.out_sample[i]), self.ref_out[i]
            f, alpha = frame_interval(i / self.out_fps, self.fps, self.F)
            g = min(f + 1, self.F - 1) if alpha else f
            normal = None if self.normals is None else (
                self.normals[f] + alpha * (self.normals[g] - self.normals[f]))
            others = ~restarting
            kept = (x[others].copy(), x_prev[others].copy(), self._near, self._near_frame,
                    self._near_step)
            self._near_frame = -1  # the broad phase of the restart pose, not of the old one
        if fr.back_index.size:
            normal = normal / np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
        else:
            normal = None
        N = self.model.n_vertices
        contact, contact_any = np.zeros(N, dtype=bool), np.zeros(N, dtype=bool)
        for r in range(START_OUTSIDE_ROUNDS + 1):
            np.copyto(x_prev, x)  # no tangential motion for the friction to hold back
            np.copyto(self.start, x)
            self._collide(x, x_prev, n, fr, f, g, alpha, True, contact, contact_any,
                          at=0.0 if restarting is None else i / self.out_fps)
            if restarting is not None:
                contact &= restarting
            # The max distance and the back stop win over the colliders, as in step 8.
            if fr.max_index.size:
                clamp_max_distance(x, ref, fr.max_index, fr.max_limit, by_axis=fr.max_by_axis)
            if normal is not None:
                push_backstop(x, ref, normal, fr.back_index, fr.back_distance)
            if not contact.any() or r == START_OUTSIDE_ROUNDS or (
                    r and np.abs(x - x_prev).max() <= START_OUTSIDE_TOLERANCE):
                break
            # The links relaxed with the pushes, positions only (one XPBD pass of every colour),
            # then the hard links: a link left strained by a push springs back when the motion
            # starts (a cage pushed out of a box and then let go moved at 3.4 m/s).
            for c in fr.colours:
                solve_colour(x, c, use_lambda=False)
            if fr.levels and fr.max_index.size:
                sweep_levels(x, fr.levels, None, reference=ref, limit=fr.max_full,
                             fixed=self.model.pinned)
            elif fr.levels:
                sweep_levels(x, fr.levels, None)
        np.copyto(x_prev, x)
        if restarting is None:
            self._near_frame, self._near_step = -1, 0  # the broad phase saw the start pose only
        else:
            x[others], x_prev[others] = kept[0], kept[1]
            self._near, self._near_frame, self._near_step = kept[2:]

    def _output(self, positions: np.ndarray, i: int, x: np.ndarray, blend_gap: np.ndarray,
                blend_start: np.ndarray, blend_frames: np.ndarray) -> None:
        out = positions[i]
        out[...] = x
        out[self.pinned_index] = self.ref_out[i][self.pinned_index]
        # Cut blend: weight 1 - (i - start + 1) / (B + 1) of the old deformation on frame i.
        age = i - blend_start + 1
        weight = np.where((blend_frames > 0) & (age <= blend_frames),
                          1.0 - age / (blend_frames + 1.0), 0.0)
        if np.any(weight > 0):
            out += weight[self.cloth][:, None] * blend_gap
            fr = self.frame(self.out_sample[i])
            if fr.max_index.size:  # the blend never takes a vertex past its max distance
                clamp_max_distance(out, self.ref_out[i], fr.max_index, fr.max_limit,
                                   by_axis=fr.max_by_axis)
        self._check(out, i)

    def _check(self, out: np.ndarray, frame: int) -> None:
        distance = np.linalg.norm(out - self.ref_out[frame], axis=-1)
        first = first_diverged(distance, self.bound)
        if first is not None:
            (v,) = first
            setup, local = self.model.locate(v)
            detail = f"vertex {local} is " + distance_detail(distance[v])
            raise DivergenceError(setup, frame, detail)


# Bending or shear compliance (m/N per kilogram of cloth) below which a cloth's columns are
# projected by SHAKE and its max distance clamped before the exact lengths. The sweep alone
# places each child at length and leaves the parent's share of the move a position fix; links
# this stiff turn those fixes into velocity wherever the cage is held (Leather, bending 1e-4,
# gained 3 % of its fall on its max distance, 4-6 % at 480 Hz; rigid bending 104-136 %). At
# 1e-3 the sweep alone keeps every drop within 0.7 % at 240 and 480 Hz, and its slight
# numerical damping keeps a shaken default cage (1e-2) out of chaos: with the SHAKE columns 14
# of 24 cages shaken at 2-8 g ended over 1 mm from a 1e-9 m nudge (12 with the sweep), the
# median 59 mm (1.7), and SHAKE costs a tridiagonal solve per column per substep
# (tools/cloth_sensitivity.py, docs/cloth-solver.md). No preset but Leather is this stiff.
STIFF_COMPLIANCE = 1e-3


def _colours(group: DistanceGroup, alpha: np.ndarray, w: np.ndarray, h: float) -> list[Colour]:
    """Per-colour XPBD factors; colours whose every constraint is off (alpha inf) are dropped."""
    out = []
    if group.count == 0:
        return out
    w_a, w_b = w[group.a], w[group.b]
    alpha_tilde = alpha / (h * h)
    with np.errstate(invalid="ignore"):
        denominator = w_a + w_b + alpha_tilde
        k_a = np.where(np.isfinite(alpha_tilde), w_a / denominator, 0.0)
        k_b = np.where(np.isfinite(alpha_tilde), w_b / denominator, 0.0)
    for idx in group.colours:
        on = idx[(k_a[idx] > 0) | (k_b[idx] > 0)]
        if on.size == 0:
            continue
        out.append(Colour(a=group.a[on], b=group.b[on], rest=group.rest[on],
                          k_a=k_a[on][:, None], k_b=k_b[on][:, None],
                          w_a=w_a[on][:, None], w_b=w_b[on][:, None],
                          alpha_tilde=alpha_tilde[on], denominator=denominator[on],
                          lam=np.zeros(on.size)))
    return out


def vertex_normals(reference: np.ndarray, quads: np.ndarray, n_vertices: int) -> np.ndarray:
    """Area-weighted winding normals (F, N, 3) of the reference surface at every frame."""
    corners = reference[:, quads]  # (F, Q, 4, 3)
    qn = np.cross(corners[..., 2, :] - corners[..., 0, :], corners[..., 3, :] - corners[..., 1, :])
    normals = np.zeros((reference.shape[0], n_vertices, 3))
    for k in range(4):
        np.add.at(normals, (slice(None), quads[:, k]), qn)
    normals /= np.maximum(np.linalg.norm(normals, axis=-1, keepdims=True), 1e-12)
    return normals


def bounding_radius(kind: int, M: np.ndarray, colliders, k: int) -> float:
    """Radius around the collider origin containing the whole shape (inf for planes)."""
    axes = np.linalg.norm(M[:3, :3], axis=0)
    size = float(colliders.size[k])
    if kind == ColliderKind.ELLIPSOID:
        return size * float(axes.max())
    if kind == ColliderKind.CAPSULE:
        radius = max(float(colliders.radius_a[k]), float(colliders.radius_b[k]))
        return size * float(axes[2]) + radius * float(max(axes[0], axes[1]))
    if kind == ColliderKind.BOX:
        return size * float(axes.sum())
    return np.inf


def _owned(checked: CheckedClothDrive) -> CheckedClothDrive:
    """`streaming.owned`, with the stream's own output reference too (it takes fed rows)."""
    checked = owned(checked)
    if checked.output_reference is None:
        return checked
    return replace(checked, output_reference=np.array(checked.output_reference))


class ClothStream(FedBake):
    """A cloth bake fed its samples as they are read (a live preview steps it one scene frame
    per timeline frame): `needed(i)` samples must be real before `step()` gives output frame i,
    and `feed` hands over the drive with more of them. The drive has the bake's full shape from
    the start (samples not read yet are placeholders, e.g. the last one repeated); a substep
    never reads past the sample that ends its interval, so the frames come out bit for bit as
    `bake_cloth` gives them for the same drive."""

    def __init__(self, model: ClothModel, drive: ClothDrive,
                 settings: SolverSettings | None = None, *, known: int):
        self.model = model
        self._settings = settings if settings is not None else SolverSettings()
        checked = _owned(validate_cloth_drive(model, drive))
        self._bake = _Bake(model, checked, self._settings, known=known)
        self._frames = self._bake.run()
        self.frames_done = 0  # output frames stepped
        self.output_frames = checked.output_frames

    def needed(self, frame: int) -> int:
        """Samples that must be read before output frame `frame` (index from 0) is stepped:
        through the far end of the interval its last substep ends in, and its reference's."""
        bake = self._bake
        h, F = bake.h, bake.F
        T = frame / bake.out_fps
        n_last = max(math.ceil((T - _TIME_EPS) / h - 1e-9), 0)
        while n_last * h < T - _TIME_EPS:  # the loop's own stopping rule
            n_last += 1
        f, _ = frame_interval(n_last * h, bake.fps, F)
        return min(max(f + 2, int(bake._out_reads[frame]) + 1), F)

    def feed(self, drive: ClothDrive, known: int) -> None:
        """The drive again, with its samples before `known` now read (validated again)."""
        self._bake.out_known = self._bake.F_out  # a whole drive's rows are real (`_Bake`)
        self._bake.update(_owned(validate_cloth_drive(self.model, drive)), known)

    @property
    def output_known(self) -> int:
        """Output frames whose reference the stream holds (`feed_rows`' `output_reference`
        goes on from here)."""
        return self._bake._ref_out_done

    def step(self) -> np.ndarray:
        bake = self._bake
        if bake.drive.output_reference is not None and bake._ref_out_done <= self.frames_done:
            raise ValueError(f"frame {self.frames_done} needs its output_reference row "
                             f"({self.output_known} are fed)")
        return super().step()

    def feed_rows(self, rows: ClothDrive) -> None:
        """The next samples, read after the `known` ones, as a drive of those rows alone (its
        per-sample fields have only them; validated alone, written into the stream's own copy
        of the drive): O(new rows), where `feed` takes the whole drive again. A drive with an
        `output_reference` takes the rows of the output frames read with these samples in
        `rows.output_reference`, from output frame `output_known` on."""
        checked = validate_cloth_drive(self.model, replace(rows, output_fps=None,
                                                           output_frames=None,
                                                           reset_frames=(),
                                                           output_reference=None))
        bake = self._bake
        exact = bake.drive.output_reference
        if (exact is None) != (rows.output_reference is None):
            raise ValueError("feed_rows takes output_reference rows exactly when the stream's "
                             "drive has an output_reference")
        if exact is not None:
            new = np.asarray(rows.output_reference, dtype=np.float64)
            first = bake._ref_out_done
            count = min(len(new), bake.F_out - first)
            if new.shape[1:] != exact.shape[1:] or not np.all(np.isfinite(new)):
                raise SetupError(f"output_reference rows have shape {new.shape} or are not "
                                 f"finite, expected (frames, {exact.shape[1]}, 3)")
            exact[first:first + count] = new[:count]
            bake.out_known = first + count
        start = bake.known
        end = min(start + checked.frames, bake.F)
        write_rows(bake.drive, checked, start, end)
        bake.update(bake.drive, end)


class ClothBakeJob(FrameJob):
    """Iterator over a cloth bake, one frame per `next()`: yields (frames_done, total).

    `result` holds the `ClothResult` once exhausted; dropping the job cancels it.
    """

    def __init__(self, model: ClothModel, drive: ClothDrive, settings: SolverSettings):
        if not isinstance(settings, SolverSettings):
            raise SetupError(f"settings must be a SolverSettings, got {type(settings).__name__}")
        checked = validate_cloth_drive(model, drive)
        bake = _Bake(model, checked, settings)
        super().__init__(bake, bake.run(), checked.output_frames)


def bake_cloth_steps(model: ClothModel, drive: ClothDrive,
                     settings: SolverSettings | None = None) -> ClothBakeJob:
    """Validate, then return an iterator yielding (frames_done, total) per baked frame."""
    return ClothBakeJob(model, drive, settings if settings is not None else SolverSettings())


def bake_cloth(model: ClothModel, drive: ClothDrive, settings: SolverSettings | None = None, *,
               progress: Callable[[int, int], None] | None = None) -> ClothResult:
    """Bake the whole range; raises SetupError / DivergenceError before returning anything."""
    return run_job(bake_cloth_steps(model, drive, settings), progress)
