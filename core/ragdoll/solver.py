"""The ragdoll bake: XPBD rigid bodies with substeps (Müller et al. 2020, Alg. 2).

Per substep h (fixed, independent of the scene frame rate, so 30 and 60 fps bakes agree):
velocity drive and linear damping; integrate (gravity, gyroscopic term, exponential map);
kinematic bodies placed on their target; `iterations` position passes, each solving the two joint
colours (ball joint, orientation motor, swing/twist limits), the contacts and the distance
limits; velocities from the position change; a velocity pass (joint and motor damping).

Ragdolls carried by another ragdoll's body are solved after their carrier, frame by frame, in
their own scene (seed 004 runs BD-1 in its own physics scene after the hero's): level 0 first,
then the ragdolls it carries, whose targets are moved rigidly with the carrier body's simulated
pose at every substep.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from ..errors import DivergenceError, SetupError
from ..rotations import quat_from_matrix, quat_multiply
from .blend import local_blend
from .bodies import (
    Bodies,
    cross,
    nlerp,
    q2m,
    qmul,
    quat_conj,
    quat_exp,
    quat_log,
    rotate,
    rotate_inv,
)
from .contacts import Contacts
from .drive import CheckedDrive, RagdollDrive, sign_continuous, validate_drive
from .drives import drive_fraction, effective_limit, project_distance, velocity_drive
from .joints import JointColour, colour_joints, damp_joints, damp_joints_subtree, solve_ball
from .limits import (
    joint_rotation,
    limit_correction,
    project_limits,
    solve_limits,
    swing_twist,
)
from .model import BodyMode, RagdollModel
from .motors import (
    motor_alpha_tilde,
    motor_omega,
    project_rigid,
    solve_motor,
    solve_motor_subtree,
)
from .self_collision import SelfCollision

_TIME_EPS = 1e-9
DIVERGENCE_BOUND = 1.0e4  # m from the target: a body further away has exploded
BROAD_MARGIN = 0.02  # m, see the broad phase in _Level.step
SUBTREE_MOTORS = True  # motors turn the child's whole subtree (motors.solve_motor_subtree)
SELF_COLLISION_PASSES = 2  # Jacobi passes over the body pairs per iteration
JOINT_TOLERANCE = 0.005  # m: joints drifting further apart are pulled back (seed 004)


@dataclass(frozen=True)
class RagdollSettings:
    """substep (s, fixed), position iterations per substep, pre-roll frames settled on frame 0,
    and whether bodies of one ragdoll collide with each other (capsule-capsule, pairs that are
    not joint neighbours and do not overlap at bind pose)."""

    substep: float = 1.0 / 240.0
    iterations: int = 4
    preroll_frames: int = 0
    self_collision: bool = True

    def validate(self) -> None:
        if not (math.isfinite(self.substep) and 0.0 < self.substep <= 0.1):
            raise SetupError(f"ragdoll substep {self.substep!r} s must be in (0, 0.1]")
        if int(self.iterations) != self.iterations or not 1 <= self.iterations <= 256:
            raise SetupError(f"ragdoll iterations {self.iterations!r} must be an integer 1..256")
        if int(self.preroll_frames) != self.preroll_frames or self.preroll_frames < 0:
            raise SetupError(f"ragdoll preroll_frames {self.preroll_frames!r} must be >= 0")


@dataclass(frozen=True)
class RagdollResult:
    body_matrix: np.ndarray  # (F, N, 4, 4) world body frames after the local-space blend
    physics_matrix: np.ndarray  # (F, N, 4, 4) before the blend
    fell_at: np.ndarray  # (R,) frame the root lock released, -1 = never
    substeps: int


@dataclass(frozen=True)
class _Substep:
    f: int  # frame interval [f, f + 1]
    alpha: float  # blend within it
    frozen: bool  # pre-roll: frame 0's drive, target at rest


def _interval(t: float, fps: float, frames: int) -> tuple[int, float]:
    if frames < 2:
        return 0, 0.0
    u = t * fps
    if u <= 0.0:
        return 0, 0.0
    if u >= frames - 1:
        return frames - 2, 1.0
    f = min(math.floor(u), frames - 2)
    return f, u - f


class _FrameCoefficients:
    """Everything of one frame's settings the substeps need, for one level."""

    def __init__(self, level: _Level, f: int):
        P, h = level.params, level.h
        b = level.bodies
        mode = P["mode"][f, b].copy()
        fallen = level.fallen_body()
        mode[fallen] = BodyMode.FREE
        self.kinematic = mode == BodyMode.KINEMATIC
        driven = mode == BodyMode.DRIVEN
        self.inv_mass = np.where(self.kinematic, 0.0, 1.0 / level.mass)
        self.inv_inertia = np.where(self.kinematic[:, None], 0.0, 1.0 / level.inertia)
        r = level.ragdoll_local
        locked = level.is_root & P["root_lock"][f, level.ragdolls][r] & ~fallen & ~self.kinematic
        self.locked = locked
        self.any_locked = bool(locked.any())
        self.locked_index = np.flatnonzero(locked)
        strength = P["motor_strength"][f, b]
        alpha = motor_alpha_tilde(strength, level.joint_inertia, h)
        omega = motor_omega(strength)
        zeta = P["motor_damping"][f, b]
        with np.errstate(invalid="ignore"):
            motor_mu = np.where(np.isfinite(omega), 2.0 * zeta * omega, 0.0)
        motor_damp = np.where(driven & ~level.is_root, -np.expm1(-motor_mu * h), 0.0)
        joint_damp = np.where(level.is_root, 0.0, -np.expm1(-P["joint_damping"][f, b] * h))
        self.colours = []
        for col in level.colours:
            a = col.index
            self.colours.append(dict(
                ball=~col.is_root | locked[a],
                motor=(driven[a] & ~col.is_root & (strength[a] > 0)) | locked[a],
                alpha=np.where(locked[a], 0.0, alpha[a]),
                joint_damp=joint_damp[a],
                carry=level.subtree[a].T * ~self.kinematic[:, None],
                motor_damp=motor_damp[a],
            ))
        # Velocity drive and distance limit are explicit per-body settings: they act on every
        # simulated body (a FREE companion may keep its head near the target, seed 004's BD-1),
        # but not after the free-fall switch.
        simulated = ~self.kinematic & ~fallen
        self.drive = np.where(simulated, drive_fraction(P["velocity_drive"][f, b], h), 0.0)
        self.any_drive = bool(np.any(self.drive > 0))
        self.linear_keep = np.exp(-P["linear_damping"][f, b] * h)
        self.gravity = P["gravity"][f, level.ragdolls][r]
        limit = effective_limit(P["distance_limit"][f, b], P["distance_limit_speed"][f, b],
                                level.target_speed[f])
        self.limit = limit
        self.limit_active = simulated & np.isfinite(limit)
        self.any_limit = bool(np.any(self.limit_active))
        self.friction = P["friction"][f, b]
        # Final top-down pass, per depth level: joints re-attached (seed 004's joint projection),
        # rigid motors set, limits clamped, distance limits clamped; index arrays per level.
        rigid = driven & ~level.is_root & (strength >= 1.0)
        limited = level.has_limit & ~self.kinematic & ~rigid
        attach = ~level.is_root & ~self.kinematic & ~rigid
        self.final = []
        for d in range(int(level.depth.max()) + 1 if level.n else 0):
            at = level.depth == d
            self.final.append(tuple(np.flatnonzero(at & m) for m in
                                    (attach, rigid, limited, self.limit_active)))
        # For the cheap check of whether (and from which depth) the pass has work to do.
        self.attach_all = np.flatnonzero(attach)
        self.limited_all = np.flatnonzero(limited)
        self.distance_all = np.flatnonzero(self.limit_active)
        self.rigid_depth = int(level.depth[rigid].min()) if rigid.any() else 1 << 30


class _Level:
    """One solve scene: the ragdolls of one carrier level, with their own body state."""

    def __init__(self, model: RagdollModel, drive: CheckedDrive, settings: RagdollSettings,
                 ragdolls: np.ndarray, state: _Run):
        self.model, self.drive, self.run = model, drive, state
        self.h = float(settings.substep)
        self.iterations = int(settings.iterations)
        self.ragdolls = ragdolls
        self.params = drive.params
        self.bodies = np.concatenate([np.arange(model.body_offset[r], model.body_offset[r + 1])
                                      for r in ragdolls])
        b = self.bodies
        n = self.n = len(b)
        local = np.full(model.n_bodies, -1, dtype=np.int64)
        local[b] = np.arange(n)
        self.local = local
        rag_local = np.full(model.n_ragdolls, -1, dtype=np.int64)
        rag_local[ragdolls] = np.arange(len(ragdolls))
        self.ragdoll_local = rag_local[model.ragdoll_of_body[b]]
        gp = model.parent[b]
        self.is_root = gp < 0
        self.parent = np.where(self.is_root, n, local[np.maximum(gp, 0)])
        self.mass, self.inertia = model.mass[b], model.inertia[b]
        self.joint_inertia = model.joint_inertia[b]
        self.half = 0.5 * model.length[b]
        self.radius = model.radius[b]
        F, fps = drive.frames, drive.fps
        self.origin = drive.origin[:, b]  # (F, n, 3)
        self.quat = drive.quat[:, b]  # (F, n, 4)
        Rt = drive.target[:, b, :3, :3]
        self.centre = self.origin + Rt[..., :, 1] * self.half[:, None]
        pp = np.where(self.is_root, 0, self.parent)
        offset = np.einsum("fnji,fnj->fni", Rt[:, pp], self.origin - self.origin[:, pp])
        offset[..., 1] -= self.half[pp]
        self.anchor = np.where(self.is_root[:, None], self.origin, offset)  # (F, n, 3)
        rel = quat_multiply(quat_conj(self.quat[:, pp]), self.quat)
        rel = np.where(self.is_root[:, None], self.quat, rel)
        self.local_target = sign_continuous(rel)
        if F > 1:
            step = quat_multiply(self.local_target[1:], quat_conj(self.local_target[:-1]))
            w = quat_log(step) * fps  # parent-frame angular velocity of the local rotation
            self.local_omega = np.concatenate((w, w[-1:]))
            v = np.diff(self.centre, axis=0) * fps
            self.centre_velocity = np.concatenate((v, v[-1:]))
            speed = np.linalg.norm(np.diff(self.origin, axis=0), axis=-1) * fps
            self.target_speed = np.concatenate((speed, speed[-1:]))
        else:
            self.local_omega = np.zeros((1, n, 3))
            self.centre_velocity = np.zeros((1, n, 3))
            self.target_speed = np.zeros((1, n))
        rest = model.rest_matrix[b, :3, :3]
        qr = quat_from_matrix(rest)
        rest_rel = quat_multiply(quat_conj(qr[pp]), qr)
        rest_rel[self.is_root] = (1.0, 0.0, 0.0, 0.0)
        depth = self.depth = model.depth[b]
        self.anchor_a = np.zeros((n, 3))
        # subtree[j, k] = 1 when body k hangs (directly or not) from body j, itself included.
        self.subtree = np.zeros((n, n))
        current = np.arange(n)
        alive = np.ones(n, dtype=bool)
        while alive.any():  # loop over tree depth
            self.subtree[current[alive], np.flatnonzero(alive)] = 1.0
            up = np.where(alive, self.parent[current], n)
            alive = up < n
            current = np.where(alive, up, 0)
        self.anchor_a[:, 1] = -self.half
        self.rest_relative = rest_rel
        self.swing_limit, self.twist_limit = model.swing_limit[b], model.twist_limit[b]
        self.has_limit = ~self.is_root & (np.isfinite(self.swing_limit).any(axis=1)
                                          | np.isfinite(self.twist_limit).any(axis=1))
        self.colours: tuple[JointColour, ...] = colour_joints(
            parent=self.parent, depth=depth, half_length=self.half, rest_relative=rest_rel,
            swing_limit=model.swing_limit[b], twist_limit=model.twist_limit[b])
        self.contacts = Contacts(model, b, self.half, self.radius)
        self.self_collision = SelfCollision(
            ragdoll=model.ragdoll_of_body[b], parent=self.parent,
            rest_matrix=model.rest_matrix[b], half=self.half, radius=self.radius
        ) if settings.self_collision else None
        # Carried ragdolls: the carrier body (global index) of every body of this level.
        carrier = model.carrier[model.ragdoll_of_body[b], 1]
        self.carried = bool(np.all(carrier >= 0)) and n > 0
        self.carrier_of_body = carrier
        self.state = Bodies.at(self.centre[0], self.quat[0])
        if F > 1 and settings.preroll_frames == 0:
            # Start moving with the animation, not at rest: a body at rest under a moving target
            # would receive a jolt on the first substep.
            self.state.v[:n] = self.centre_velocity[0]
            spin = quat_multiply(self.quat[1], quat_conj(self.quat[0]))
            self.state.w[:n] = quat_log(spin) * fps
        self._coeff_key = None
        self.coeff: _FrameCoefficients | None = None

    # ----------------------------------------------------------------------------------------
    def fallen_body(self) -> np.ndarray:
        return self.run.fallen[self.model.ragdoll_of_body[self.bodies]]

    def coefficients(self, f: int) -> _FrameCoefficients:
        key = (f, int(self.run.fallen_version))
        if key != self._coeff_key:
            self.coeff = _FrameCoefficients(self, f)
            self._coeff_key = key
            s = self.state
            s.inv_mass[: self.n] = self.coeff.inv_mass
            s.inv_inertia[: self.n] = self.coeff.inv_inertia
        return self.coeff

    def targets(self, sub: _Substep, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Target origins (n, 3) and orientations (n, 4) at the end of substep k of the chunk."""
        f, a = sub.f, sub.alpha
        g = min(f + 1, self.drive.frames - 1)
        origin = self.origin[f] + a * (self.origin[g] - self.origin[f])
        quat = nlerp(self.quat[f], self.quat[g], a)
        if self.carried:
            rq, rt = self.run.carrier_delta(self.carrier_of_body, sub, k)
            origin = rotate(q2m(rq), origin) + rt
            quat = qmul(rq, quat)
        return origin, quat

    def step(self, sub: _Substep, k: int) -> None:
        """One substep (Müller 2020 Alg. 2) of this level's bodies."""
        h, n, s = self.h, self.n, self.state
        c = self.coefficients(sub.f)
        f, a = sub.f, sub.alpha
        g = min(f + 1, self.drive.frames - 1)
        origin_t, quat_t = self.targets(sub, k)
        Rt = q2m(quat_t)
        centre_t = origin_t + Rt[:, :, 1] * self.half[:, None]
        v, x = s.v[:n], s.x[:n]
        if c.any_drive:
            tv = np.zeros((n, 3)) if sub.frozen else self.centre_velocity[f]
            velocity_drive(v, x, centre_t, tv, c.drive)
        v *= c.linear_keep[:, None]
        # integrate
        np.copyto(s.x_prev, s.x)
        np.copyto(s.q_prev, s.q)
        np.copyto(s.R_prev, s.R)
        v += h * c.gravity
        x += h * v
        R = s.R[:n]
        wb = rotate_inv(R, s.w[:n])
        Iw = self.inertia * wb
        wb -= h * s.inv_inertia[:n] * cross(wb, Iw)
        s.w[:n] = rotate(R, wb)
        q = qmul(quat_exp(h * s.w[:n]), s.q[:n])
        q /= np.linalg.norm(q, axis=-1, keepdims=True)
        kin = c.kinematic
        q[kin] = quat_t[kin]
        x[kin] = centre_t[kin]
        s.q[:n] = q
        q2m(q, out=s.R[:n])
        s.freeze_inertia()
        # per-colour targets of this substep
        anchors, locals_ = [], []
        anchor = self.anchor[f] + a * (self.anchor[g] - self.anchor[f])
        local_t = nlerp(self.local_target[f], self.local_target[g], a)
        anchor[self.is_root] = origin_t[self.is_root]
        local_t[self.is_root] = quat_t[self.is_root]
        for col in self.colours:
            anchors.append(anchor[col.index])
            locals_.append(local_t[col.index])
        lams = [np.zeros((len(col.index), 3)) for col in self.colours]
        # Broad phase once per substep: bodies move at most ~|v| h per substep; what is
        # further than twice that (plus BROAD_MARGIN) cannot touch within it.
        colliders = self.run.colliders_at(sub)
        margin = BROAD_MARGIN + 2.0 * h * float(np.sqrt(np.max(np.einsum("nk,nk->n", v, v),
                                                               initial=0.0)))
        near = self.contacts.near(s, colliders, ~kin, margin)
        self_near = (self.self_collision is not None
                     and self.self_collision.near(s, 2.0 * margin))
        for it in range(self.iterations):
            for j, col in enumerate(self.colours):
                cc = c.colours[j]
                solve_ball(s, col, anchors[j], cc["ball"])
                if SUBTREE_MOTORS:
                    solve_motor_subtree(s, col, locals_[j], cc["alpha"], lams[j], cc["motor"],
                                        cc["carry"], self.joint_inertia[col.index],
                                        col.anchor_a)
                else:
                    solve_motor(s, col, locals_[j], cc["alpha"], lams[j], cc["motor"])
                if it == self.iterations - 1:  # momentum exchange at limits; the final
                    solve_limits(s, col)  # pass then clamps exactly
                if c.any_locked and col.is_root.any():
                    # A locked root is pushed back out of colliders before its children's
                    # joints see it: otherwise they are dragged into the wall with it and
                    # their contacts lever them around the joint (spurious spins).
                    self.contacts.project(s, self.run.colliders_at(sub), c.locked, count=False,
                                          only=c.locked_index)
            self.contacts.solve(s, colliders, ~kin, first=it == 0,
                                last=it == self.iterations - 1, translate=c.locked,
                                colliders=near)
            if self_near:
                for _ in range(SELF_COLLISION_PASSES):  # Jacobi over the pairs
                    self.self_collision.solve(s, ~kin)
        self.final_pass(c, anchor, local_t, origin_t)
        self.contacts.project(s, colliders, ~kin)  # every collider: nothing ends inside
        # velocities from the position change
        s.v[:] = (s.x - s.x_prev) / h
        dq = qmul(s.q, quat_conj(s.q_prev))
        s.w[:] = quat_log(dq) / h
        # velocity pass: no de-penetration pop, joint damping and the motors' dampers
        s.freeze_inertia()
        self.contacts.velocity_pass(s, c.friction, h)
        for j, col in enumerate(self.colours):
            cc = c.colours[j]
            if sub.frozen:
                target_w = np.zeros((len(col.index), 3))
            else:
                target_w = rotate(s.R[col.pairs.b], self.local_omega[f, col.index])
            if SUBTREE_MOTORS:
                damp_joints_subtree(s, col, cc["joint_damp"], target_w, cc["motor_damp"],
                                    cc["carry"], self.joint_inertia[col.index])
            else:
                damp_joints(s, col, cc["joint_damp"], target_w, cc["motor_damp"])

    def final_pass(self, c: _FrameCoefficients, anchor: np.ndarray, local_t: np.ndarray,
                   origin_t: np.ndarray) -> None:
        """Top down over depth levels, after the iterations: pull each child's head back to
        within JOINT_TOLERANCE of its parent's anchor (seed 004 projects joints that drift
        apart beyond a threshold), set full-strength
        motors exactly, clamp swing/twist limits (rotating about the head) and the distance
        limit to the target (translation). Children then follow their corrected parents, so
        every one of these holds exactly when the substep ends."""
        s = self.state
        start = self.final_start(c, anchor, origin_t)
        for attach, rigid, limited, distance in c.final[start:]:
            if len(attach):
                # Only the drift beyond JOINT_TOLERANCE: projecting the whole residual every
                # substep (follow-the-leader style) feeds velocity errors back into the swing.
                par = self.parent[attach]
                target = s.x[par] + rotate(s.R[par], anchor[attach])
                gap = target - (s.x[attach] + rotate(s.R[attach], self.anchor_a[attach]))
                dist = np.sqrt(np.einsum("nk,nk->n", gap, gap))
                excess = np.maximum(dist - JOINT_TOLERANCE, 0.0) / np.maximum(dist, 1e-300)
                s.x[attach] += gap * excess[:, None]
            if len(rigid):
                project_rigid(s, rigid, self.parent[rigid], anchor[rigid], self.anchor_a[rigid],
                              local_t[rigid])
            if len(limited):
                project_limits(s, limited, self.parent[limited], self.rest_relative[limited],
                               self.swing_limit[limited], self.twist_limit[limited],
                               self.anchor_a[limited])
            if len(distance):
                x = s.x[distance]
                head = x - s.R[distance, :, 1] * self.half[distance, None]
                project_distance(x, head, origin_t[distance], c.limit[distance],
                                 np.ones(len(distance), dtype=bool))
                s.x[distance] = x

    def final_start(self, c: _FrameCoefficients, anchor: np.ndarray, origin_t: np.ndarray
                    ) -> int:
        """The shallowest depth with anything for the final pass to correct (all bodies checked
        at once; usually nothing is violated and the per-level pass is skipped)."""
        s, depth = self.state, self.depth
        start = c.rigid_depth
        idx = c.attach_all
        if len(idx):
            par = self.parent[idx]
            gap = (s.x[par] + rotate(s.R[par], anchor[idx])
                   - s.x[idx] - rotate(s.R[idx], self.anchor_a[idx]))
            far = np.einsum("nk,nk->n", gap, gap) > JOINT_TOLERANCE ** 2
            if far.any():
                start = min(start, int(depth[idx[far]].min()))
        idx = c.limited_all
        if len(idx) and depth[idx].min() < start:
            d = joint_rotation(s.q[idx], s.q[self.parent[idx]], self.rest_relative[idx])
            swing, twist = swing_twist(d)
            fix, tfix = limit_correction(swing, twist, self.swing_limit[idx],
                                         self.twist_limit[idx])
            bad = (tfix != 0.0) | np.any(fix != 0.0, axis=1)
            if bad.any():
                start = min(start, int(depth[idx[bad]].min()))
        idx = c.distance_all
        if len(idx) and depth[idx].min() < start:
            head = s.x[idx] - s.R[idx, :, 1] * self.half[idx, None]
            gap = head - origin_t[idx]
            bad = np.einsum("nk,nk->n", gap, gap) > c.limit[idx] ** 2
            if bad.any():
                start = min(start, int(depth[idx[bad]].min()))
        return start

    def pose(self) -> tuple[np.ndarray, np.ndarray]:
        """(centres, orientations) of the level's bodies, copies."""
        return self.state.x[: self.n].copy(), self.state.q[: self.n].copy()

    def frame_matrices(self, x: np.ndarray, q: np.ndarray) -> np.ndarray:
        R = q2m(q)
        m = np.zeros((len(x), 4, 4))
        m[:, :3, :3] = R
        m[:, :3, 3] = x - R[:, :, 1] * self.half[:, None]
        m[:, 3, 3] = 1.0
        return m


class _Run:
    """The whole bake: levels in carrier order, the frame loop, outputs."""

    def __init__(self, model: RagdollModel, drive: CheckedDrive, settings: RagdollSettings):
        self.model, self.drive, self.settings = model, drive, settings
        self.h = float(settings.substep)
        self.fallen = np.zeros(model.n_ragdolls, dtype=bool)
        self.fallen_version = 0
        self.fell_at = np.full(model.n_ragdolls, -1, dtype=np.int64)
        self.levels = [
            _Level(model, drive, settings, np.flatnonzero(model.level == lv), self)
            for lv in range(model.n_levels)
        ]
        self.level_of_body = np.full(model.n_bodies, -1, dtype=np.int64)
        for i, lv in enumerate(self.levels):
            self.level_of_body[lv.bodies] = i
        self.records: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in self.levels]
        self._colliders_key = None
        self._colliders = None

    def colliders_at(self, sub: _Substep):
        """The colliders at the end of substep `sub` (interpolated matrices, cached)."""
        key = (sub.f, sub.alpha)
        if key != self._colliders_key:
            cm = self.drive.collider_matrix
            f = sub.f
            g = min(f + 1, self.drive.frames - 1)
            M = cm[f] + sub.alpha * (cm[g] - cm[f])
            self._colliders = self.levels[0].contacts.frame(M) if self.levels else None
            self._colliders_key = key
        return self._colliders

    def carrier_delta(self, carrier: np.ndarray, sub: _Substep, k: int):
        """Rigid motion (quat (n, 4), translation (n, 3)) taking each carrier body's animation
        target to its simulated pose at the end of substep k of the current chunk."""
        level = self.levels[int(self.level_of_body[carrier[0]])]
        x, q = self.records[self.levels.index(level)][k]
        li = level.local[carrier]
        xc, qc = x[li], q[li]
        Rc = q2m(qc)
        oc = xc - Rc[:, :, 1] * level.half[li][:, None]
        f, a = sub.f, sub.alpha
        g = min(f + 1, self.drive.frames - 1)
        ot = self.drive.origin[f, carrier] + a * (self.drive.origin[g, carrier]
                                                   - self.drive.origin[f, carrier])
        qt = nlerp(self.drive.quat[f, carrier], self.drive.quat[g, carrier], a)
        rq = qmul(qc, quat_conj(qt))
        rt = oc - rotate(q2m(rq), ot)
        return rq, rt

    def chunk(self, subs: list[_Substep], T: float | None, n0: int
              ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Run every level over the substeps `subs` (starting at substep index n0); return each
        level's pose at time T (interpolated between substeps when T is off the grid)."""
        h = self.h
        out = []
        for li, level in enumerate(self.levels):
            self.records[li] = []
            before = None
            for k, sub in enumerate(subs):
                n_end = n0 + k + 1
                if T is not None and n_end * h > T + _TIME_EPS:
                    before = level.pose()
                level.step(sub, k)
                self.records[li].append(level.pose())
            x, q = self.records[li][-1] if subs else level.pose()
            if before is not None and T is not None:
                n_end = n0 + len(subs)
                wgt = (T - (n_end - 1) * h) / h
                if abs(wgt - 1.0) > 1e-12:
                    x = before[0] + wgt * (x - before[0])
                    q = nlerp(before[1], q, wgt)
            out.append((x, q))
        return out

    def frames(self) -> Iterator[tuple[int, int]]:
        model, drive, h = self.model, self.drive, self.h
        F, fps, N = drive.frames, drive.fps, model.n_bodies
        physics = np.empty((F, N, 4, 4))
        n_pre = int(round(self.settings.preroll_frames / fps / h))
        pre = [_Substep(0, 0.0, True)] * n_pre
        poses = self.chunk(pre, None, -n_pre) if n_pre else [lv.pose() for lv in self.levels]
        self._store(physics, 0, poses)
        substeps = n_pre
        yield 1, F
        n = 0
        for i in range(1, F):
            T = i / fps
            n_stop = n
            while n_stop * h < T - _TIME_EPS:
                n_stop += 1
            subs = [_Substep(*_interval((m + 1) * h, fps, F), False) for m in range(n, n_stop)]
            poses = self.chunk(subs, T, n)
            substeps += len(subs)
            n = n_stop
            self._store(physics, i, poses)
            yield i + 1, F
        self.result = self._finish(physics, substeps)

    def _store(self, physics: np.ndarray, i: int, poses) -> None:
        drive = self.drive
        for level, (x, q) in zip(self.levels, poses, strict=True):
            m = level.frame_matrices(x, q)
            if not level.carried:
                kin = drive.params["mode"][i, level.bodies] == BodyMode.KINEMATIC
                kin &= ~level.fallen_body()
                m[kin] = drive.target[i, level.bodies[kin]]
            physics[i, level.bodies] = m
            self._check(level, m, i)
            self._fall_check(level, physics, i)

    def _check(self, level: _Level, m: np.ndarray, i: int) -> None:
        gap = np.linalg.norm(m[:, :3, 3] - self.drive.origin[i, level.bodies], axis=-1)
        bad = ~(gap <= DIVERGENCE_BOUND) | ~np.isfinite(m).all(axis=(1, 2))
        if np.any(bad):
            j = int(np.argmax(bad))
            body = int(level.bodies[j])
            r = int(self.model.ragdoll_of_body[body])
            raise DivergenceError(self.model.setup_names[r], i,
                                  f"bone '{self.model.names[body]}' is "
                                  + ("not finite" if not np.isfinite(gap[j])
                                     else f"{gap[j]:.3g} m from its target"))

    def _fall_check(self, level: _Level, physics: np.ndarray, i: int) -> None:
        """Release the root lock for good when the root is further than fall_threshold from its
        target (seed 004's stormtrooper against a wall; PuppetMaster's knock-out distance)."""
        P, model = self.drive.params, self.model
        for r in level.ragdolls:  # loop over ragdolls (a handful), not bodies
            if self.fallen[r] or not P["root_lock"][i, r]:
                continue
            root = int(model.root[r])
            target = self.drive.target[i, root]
            c = int(model.carrier[r, 1])
            if c >= 0:  # the target rides on the carrier's simulated body
                target = physics[i, c] @ np.linalg.inv(self.drive.target[i, c]) @ target
            gap = float(np.linalg.norm(physics[i, root, :3, 3] - target[:3, 3]))
            if gap > P["fall_threshold"][i, r]:
                self.fallen[r] = True
                self.fallen_version += 1
                self.fell_at[r] = i

    def _finish(self, physics: np.ndarray, substeps: int) -> RagdollResult:
        model, drive = self.model, self.drive
        F = drive.frames
        blend = drive.params["blend"].copy()
        kinematic = drive.params["mode"] == BodyMode.KINEMATIC
        for r in range(model.n_ragdolls):
            if self.fell_at[r] >= 0:
                sl = slice(model.body_offset[r], model.body_offset[r + 1])
                blend[self.fell_at[r]:, sl] = 0.0
                kinematic = kinematic.copy()
                kinematic[self.fell_at[r]:, sl] = False
        target = drive.target.copy()
        carried_bodies = np.flatnonzero(model.carrier[model.ragdoll_of_body, 1] >= 0)
        if len(carried_bodies):
            cb = model.carrier[model.ragdoll_of_body[carried_bodies], 1]
            delta = physics[:, cb] @ np.linalg.inv(drive.target[:, cb])
            target[:, carried_bodies] = delta @ target[:, carried_bodies]
            kinematic[:, carried_bodies] = False  # they follow the (blended) carrier below
        body = local_blend(physics=physics, target=target, blend=blend, parent=model.parent,
                           depth=model.depth, kinematic=kinematic)
        # Carried ragdolls ride on the carrier body as it is finally shown (after its blend).
        for lv in self.levels:
            if not lv.carried:
                continue
            cb = lv.carrier_of_body
            delta = body[:, cb] @ np.linalg.inv(physics[:, cb])
            body[:, lv.bodies] = delta @ body[:, lv.bodies]
        del F
        return RagdollResult(body_matrix=body, physics_matrix=physics,
                             fell_at=self.fell_at.copy(), substeps=substeps)


class RagdollJob:
    """Iterator over a bake, one frame per `next()`: yields (frames_done, total); afterwards
    `result` holds the `RagdollResult`. Dropping it cancels (nothing is returned early)."""

    def __init__(self, model: RagdollModel, drive: RagdollDrive, settings: RagdollSettings):
        settings.validate()
        checked = validate_drive(model, drive)
        self._run = _Run(model, checked, settings)
        self._iterator = self._run.frames()
        self.total = checked.frames
        self.result: RagdollResult | None = None

    def __iter__(self) -> RagdollJob:
        return self

    def __next__(self) -> tuple[int, int]:
        try:
            return next(self._iterator)
        except StopIteration:
            self.result = self._run.result
            raise


def bake_ragdoll_steps(model: RagdollModel, drive: RagdollDrive,
                       settings: RagdollSettings | None = None) -> RagdollJob:
    """Validate, then return an iterator yielding (frames_done, total) per baked frame."""
    return RagdollJob(model, drive, settings if settings is not None else RagdollSettings())


def bake_ragdoll(model: RagdollModel, drive: RagdollDrive, settings: RagdollSettings | None = None,
                 *, progress: Callable[[int, int], None] | None = None) -> RagdollResult:
    """Bake the whole range; raises SetupError / DivergenceError before returning anything."""
    job = bake_ragdoll_steps(model, drive, settings)
    for done, total in job:
        if progress is not None:
            progress(done, total)
    assert job.result is not None
    return job.result
