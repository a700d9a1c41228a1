"""One solve scene of the ragdoll bake and its substep (Müller et al. 2020, Alg. 2).

A `Level` holds the bodies of the ragdolls of one carrier level (all of them when nothing is
carried) and advances them by one substep: velocity drive and damping, integration, kinematic
bodies on their targets, the iterations (the joint batches with ball joints, motors and limits:
one Jacobi batch of every joint, or two depth-parity colours with joints.TWO_COLOURS; the
contacts; self-collision), the top-down final pass, velocities and the velocity pass.
`FrameCoefficients` turns one frame's settings into what the substeps need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .. import transcendental
from ..mesh_colliders import connected_roots
from ..rotations import quat_between, quat_from_matrix, quat_multiply
from .articulated import (
    OFF,
    ArticulatedMotors,
    TreeFactor,
    TreeJoints,
    TreeResponse,
    TreeShape,
)
from .bodies import (
    Bodies,
    FrozenPairs,
    Pairs,
    cross,
    einsum,
    inverse3,
    nlerp,
    norm,
    positional,
    q2m,
    qmul,
    quat_conj,
    quat_exp,
    quat_log,
    rotate,
    rotate_inv,
    where,
)
from .contacts import Contacts
from .drive import CheckedDrive, sign_continuous
from .drives import drive_fraction, effective_limit, project_distance, velocity_drive
from .joints import (
    JointColour,
    colour_joints,
    damp_joints,
    damp_joints_subtree,
    joint_gaps,
    solve_ball,
    stop_opened_joints,
    subtree_masses,
)
from .limits import (
    LimitBlocks,
    inside_bound,
    joint_rotation,
    limit_correction,
    limit_directions,
    limit_rotation,
    project_limits,
    solve_limits,
    stop_at_limits,
    stop_undone_turns,
    swing_twist,
)
from .model import BodyMode, RagdollModel
from .momentum import (
    Momenta,
    cap_energy,
    energies,
    merge_momenta,
    momenta,
    restore_momenta,
)
from .motors import (
    motor_alpha_tilde,
    motor_omega,
    motor_subtree_inverse,
    project_rigid,
    solve_motor,
    solve_motor_subtree,
    solve_root_lock,
)
from .params import RagdollSettings
from .self_collision import SelfCollision


class Scene(Protocol):
    """What a level reads of the whole bake (solver._Run), without importing the solver: the
    levels are the solver's parts, not the other way round."""

    fallen: np.ndarray  # (R,) bool: the ragdoll let go of its root lock
    fallen_version: int
    moving_colliders: np.ndarray  # (K,) bool: the collider's matrix changes in the bake

    def colliders_at(self, sub: Substep): ...

    def carrier_delta(self, carrier: np.ndarray, sub: Substep, k: int): ...

BROAD_MARGIN = 0.02  # m, see the broad phase in Level.step
# Experimental (off): every motor solved at once through the ball-jointed tree, and every ball
# joint of a ragdoll by a Newton step in the mass metric (articulated.py: ArticulatedMotors,
# TreeJoints). Measured against the default (subtree motors, Jacobi joints): a standing
# mannequin on strength-0.9 motors gains 1 J instead of 11.7 kJ, and a 5 g shake on 0.5 motors
# baked at 24 and 30 fps ends 4e-7 m apart instead of 2e-6; but a limp humanoid crumpling over
# a box gains 3 J of 686 at 16 iterations (the default: none), because a limb whose joint the
# final pass puts into a collider has to be pulled back to its joint after the projection
# (else a limp Rigify shin opened by 5.5 cm), and a substep costs about 16 % more
# (docs/ragdoll-solver.md, "Experimental: the articulated solve").
ARTICULATED_MOTORS = False
ARTICULATED_JOINTS = False
# Static friction in the position solve (Müller 2020 §3.5, `Contacts._hold`). Without it a
# body lying still slides by the tangential part of g h² in every substep's positions before
# the velocity pass's friction stops it: a capsule on a 15° slope with friction 0.5 crept at
# g sin 15° h = 10.6 mm/s for ever (none with it), and limp humanoids dropped on the ground
# crawled for seconds (upright, folding: at rest after 6.9 s instead of 1.5 s). The hold is
# Coulomb's cone on the substep's summed impulses: held while |Σλ_t| ≤ μ Σλ_n, else it lets
# go for the rest of the substep and the velocity pass rubs with what is left of μ Σλ_n. It
# holds the contact point where the last substep's iterations left it, not where the contact
# projection moved it. The first version (each iteration's λ_t against the summed λ_n, so up
# to `iterations` times μ Σλ_n, and the projected point as the reference) changed three
# results: a thigh landing on a held foot stayed 7 mm inside it (bound 5), a motor-bent chain
# pressed into the ground moved 0.25 mm in its last 10 frames (bound 0.1; the projection's
# turns out of the ground slid it 1 mm/s, unheld), a walk into a wall on 0.97 motors peaked
# at 9.5 m/s (bound 8.9; with the cone clamped instead of let go, a foot in the wall-ground
# corner went from 2.1 to 10.3 m/s in 6 substeps at the cone's bound). False: velocity-pass
# friction alone.
STATIC_FRICTION = True
# Experimental (off): the final projections' turns stopped in the joints' relative angular
# velocities (limits.stop_undone_turns). Off because alone it moves a limp humanoid landing
# on its feet 2.08° past a limit (bound 2°), and with STATIC_FRICTION a walk into a wall on
# 0.9 motors at 480 Hz, 4 iterations, peaks at 8.56 m/s (bound 8.43).
STOP_UNDONE_TURNS = False
# The joints' velocity pass (joints.stop_opened_joints): a joint the iterations left open by
# more than JOINT_TOLERANCE keeps no relative velocity that opens it further. With one
# iteration the Jacobi joints do not carry a leg's weight from the pelvis to a foot on the
# ground within a substep: the shin sank 18-22 mm in the iterations (1.1-1.3 m/s), the final
# pass lifted it back by position, and the velocity stayed, substep after substep (a limp
# humanoid on its back at 60 Hz, 1 iteration, kept 5-7 J of kinetic energy and crawled at
# 0.2-0.8 m/s for seconds). It alternates VELOCITY_PASSES times with the contacts' normal
# stop (Contacts.velocity_pass, normal_only), each undoing part of the other (Gauss-Seidel
# over the two at the velocity level; each stop is inelastic, so no pass adds energy).
STOP_OPENED_JOINTS = True
VELOCITY_PASSES = 4
SUBTREE_MOTORS = True  # motors turn the child's whole subtree (motors.solve_motor_subtree)
SELF_COLLISION_PASSES = 2  # Jacobi passes over the body pairs per iteration
JOINT_TOLERANCE = 0.005  # m: joints drifting further apart are pulled back (seed 004)
# The root lock is force-limited: it may accelerate the whole ragdoll by at most this much
# (10 g: a sprint start is ~1 g, a hard landing a few g), so an obstacle between the root and
# its target wins and the fall threshold decides when the character lets go. A stronger lock
# stores energy in its fight with a contact that the limbs take away: a hips body run into a
# wall at 2 m/s (tests/core/ragdoll/test_ragdoll_conservation.py) bounces its legs off at
# 2.0 / 2.0 / 2.5 / 3.4 / 4.9 / 22.8 m/s with a bound of 8 / 10 / 12 / 15 / 20 / 100 g.
ROOT_LOCK_MAX_ACCELERATION = 10.0 * 9.81  # m/s²
# The lock's orientation turns the root alone (motors.solve_root_lock) and must hold it against
# the reactions of the limbs hanging from it, which the whole-body bound above does not cover:
# a foot caught on a step at a run pitched ragdoll_fall's locked hips 108° off their animation
# (144° with the limits fitted to the animation) and threw the body along the wall. Ten times
# that angular acceleration holds them within 36–75° through the stumble and the wall; above
# it the bound is never reached there.
ROOT_LOCK_TORQUE_FACTOR = 10.0
# Passes of `Level.follow_translated` per depth (its re-projection of what hangs from a moved
# parent may translate a body off its joint again); _GAP_EPS: rounding of a joint re-attached
# to exactly JOINT_TOLERANCE.
FOLLOW_PASSES = 8
# How far past its joint limit the contact projection may leave a body it turned out of a
# collider (`Level.clamp_turned`); beyond it the turn is taken back and the body translated.
# Exact (0), a leg sitting on the ground with both hips on their limits ping-ponged between
# the two clamps and the pelvis following one thigh at a time, and joints ended up to 15 mm
# apart; with 1.5° they close within the passes.
CONTACT_LIMIT_SLACK = np.radians(1.5)
# Bisection steps of `Level.bend_below_fixed` on the share of a bend its joint limits allow
# (the bend is then within 1/32 of the most they allow)
BEND_BISECTIONS = 5
SWING_BISECTIONS = 8  # swing_below_fixed: 90° / 2^8 = 0.35° on the limit and the clearance
_GAP_EPS = 1e-9
# Every motor is torque-limited: it may give what its joint carries (joint_inertia) at most
# this angular acceleration (about 300 g at a foot 1 m out; a walk's legs need ~100 rad/s², a
# fast kick ~1,000, holding a limb against gravity a few tens). A near-rigid motor (strength
# 0.97: a 65 Hz spring) pressing a stance foot into the corner of a wall and the ground fought
# the contact by 0.3 rad per substep with an unbounded torque, until the whole body spun: 181
# m/s at 480 Hz, 159 at 960 Hz (a walk of 1.9 m/s). Bounded at 300, 1,000 or 3,000 rad/s² it
# stays under 8 m/s.
MOTOR_MAX_ACCELERATION = 3000.0  # rad/s²


@dataclass(frozen=True)
class Substep:
    f: int  # frame interval [f, f + 1]
    alpha: float  # blend within it
    frozen: bool  # pre-roll: frame 0's drive, target at rest


class FrameCoefficients:
    """Everything of one frame's settings the substeps need, for one level."""

    def __init__(self, level: Level, f: int):
        P, h = level.params, level.h
        b = level.bodies
        mode = P["mode"][f, b].copy()
        fallen = level.fallen_body()
        mode[fallen] = BodyMode.FREE
        self.kinematic = mode == BodyMode.KINEMATIC
        driven = mode == BodyMode.DRIVEN
        self.inv_mass = where(self.kinematic, 0.0, 1.0 / level.mass)
        self.inv_inertia = where(self.kinematic[:, None], 0.0, 1.0 / level.inertia)
        r = level.ragdoll_local
        locked = level.is_root & P["root_lock"][f, level.ragdolls][r] & ~fallen & ~self.kinematic
        self.locked = locked
        self.any_locked = bool(locked.any())
        self.locked_index = np.flatnonzero(locked)
        self.root_locked = locked[level.root_index]
        strength = P["motor_strength"][f, b]
        alpha = motor_alpha_tilde(strength, level.joint_inertia, h)
        omega = motor_omega(strength)
        zeta = P["motor_damping"][f, b]
        with np.errstate(invalid="ignore"):
            motor_mu = where(np.isfinite(omega), 2.0 * zeta * omega, 0.0)
        motor_damp = where(driven & ~level.is_root, -transcendental.expm1(-motor_mu * h), 0.0)
        joint_mu = P["joint_damping"][f, b]
        joint_damp = where(level.is_root, 0.0, -transcendental.expm1(-joint_mu * h))
        # Bounds of the lock's summed impulses per substep (F h², τ h²; inf = not a lock):
        # force M a_max on the ragdoll's mass, torque J α_max with α_max = a_max / r_g, the
        # radius of gyration r_g = sqrt(J / M) of the ragdoll about the root's head.
        a_max_h2 = ROOT_LOCK_MAX_ACCELERATION * h * h
        lock_force = where(locked, level.ragdoll_mass * a_max_h2, np.inf)
        lock_torque = where(locked, np.sqrt(level.ragdoll_mass * level.joint_inertia)
                               * a_max_h2 * ROOT_LOCK_TORQUE_FACTOR, np.inf)
        self.root_lock_torque = lock_torque[level.root_index]
        # the motors of the articulated solve (articulated.py): α̃ per body, OFF where off
        on = driven & ~level.is_root & (strength > 0)
        self.any_motor = bool(on.any())
        self.motor_alpha = where(on, alpha, OFF)
        self.motor_damp = motor_damp
        self.motor_pinned = self.kinematic | locked
        self.colours = []
        for col in level.colours:
            a = col.index
            carry = level.subtree[a].T * ~self.kinematic[:, None]
            self.colours.append(dict(
                lock_force=lock_force[a],
                ball=~col.is_root | locked[a],
                # with the tree joints solved at once (TreeJoints) only the locked roots'
                # force-limited joints to their targets are left to solve_ball
                root_ball=col.is_root & locked[a],
                motor=(driven[a] & ~col.is_root & (strength[a] > 0)) | locked[a],
                # the subtree motors leave the locked roots to solve_root_lock
                subtree_motor=driven[a] & ~col.is_root & (strength[a] > 0),
                any_subtree_motor=bool(np.any(driven[a] & ~col.is_root & (strength[a] > 0))),
                alpha=where(locked[a], 0.0, alpha[a]),
                joint_damp=joint_damp[a],
                carry=carry,
                # (joints.subtree_recoil's masses: the bodies' inverse masses are the frame's)
                masses=subtree_masses(self.inv_mass, carry),
                # the parents that take the subtree motors' push (joints.subtree_recoil)
                recoil=~np.append(locked, False)[col.pairs.b],
                motor_damp=motor_damp[a],
                any_joint_damp=bool(np.any(joint_damp[a] > 0.0)),
                any_motor_damp=bool(np.any(motor_damp[a] > 0.0)),
                # the bound of each motor's summed impulse per substep (τ h²)
                motor_torque=level.joint_inertia[a] * MOTOR_MAX_ACCELERATION * h * h,
            ))
        # Velocity drive and distance limit are explicit per-body settings: they act on every
        # simulated body (a FREE companion may keep its head near the target, seed 004's BD-1),
        # but not after the free-fall switch.
        simulated = ~self.kinematic & ~fallen
        self.drive = where(simulated, drive_fraction(P["velocity_drive"][f, b], h), 0.0)
        self.any_drive = bool(np.any(self.drive > 0))
        self.linear_keep = transcendental.exp(-P["linear_damping"][f, b] * h)
        self.gravity = P["gravity"][f, level.ragdolls][r]
        limit = effective_limit(P["distance_limit"][f, b], P["distance_limit_speed"][f, b],
                                level.target_speed[f])
        self.limit = limit
        self.limit_active = simulated & np.isfinite(limit)
        self.any_limit = bool(np.any(self.limit_active))
        self.friction = P["friction"][f, b]
        # Ragdolls that only internal forces and uniform gravity act on (unless a collider or
        # another ragdoll comes near within the substep): their momenta are kept exactly
        # (momentum.py).
        external = (self.kinematic | locked | (self.drive > 0) | self.limit_active
                    | (self.linear_keep != 1.0))
        self.free_ragdoll = np.bincount(r, weights=external,
                                        minlength=len(level.ragdolls)) == 0
        self.any_free = bool(self.free_ragdoll.any())
        motor = driven & ~level.is_root & (strength > 0)
        self.passive_ragdoll = np.bincount(r, weights=motor, minlength=len(level.ragdolls)) == 0
        self.any_passive_free = bool(np.any(self.passive_ragdoll & self.free_ragdoll))
        self.restitution = P["restitution"][f, b]
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
        self.limited = limited
        self.distance_all = np.flatnonzero(self.limit_active)
        self.rigid_depth = int(level.depth[rigid].min()) if rigid.any() else 1 << 30


def settings_epochs(params: dict[str, np.ndarray], frames: int) -> np.ndarray:
    """(F,) ints, equal for consecutive frames whose every setting is equal (a new value
    wherever any setting of any body or ragdoll changes from the frame before)."""
    changed = np.zeros(frames, dtype=bool)
    for values in params.values():
        values = np.asarray(values)
        if frames > 1 and values.strides[0] != 0:  # (a stride of 0: one value for all frames)
            changed[1:] |= (values[1:] != values[:-1]).reshape(frames - 1, -1).any(axis=1)
    return np.cumsum(changed)


class Level:
    """One solve scene: the ragdolls of one carrier level, with their own body state."""

    def __init__(self, model: RagdollModel, drive: CheckedDrive, settings: RagdollSettings,
                 ragdolls: np.ndarray, state: Scene):
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
        self.parent = where(self.is_root, n, local[np.maximum(gp, 0)])
        self.root_index = np.flatnonzero(self.is_root)  # (the root lock's orientation)
        self.mass, self.inertia = model.mass[b], model.inertia[b]
        self.ragdoll_mass = np.bincount(self.ragdoll_local, weights=self.mass)[self.ragdoll_local]
        # member[r, k] = 1 when body k belongs to the level's ragdoll r
        self.member = (self.ragdoll_local[None, :] == np.arange(len(ragdolls))[:, None]
                       ).astype(float)
        self.joint_inertia = model.joint_inertia[b]
        self.half = 0.5 * model.length[b]
        self.radius = model.radius[b]
        F, fps = drive.frames, drive.fps
        self.origin = drive.origin[:, b]  # (F, n, 3)
        self.quat = drive.quat[:, b]  # (F, n, 4)
        Rt = drive.target[:, b, :3, :3]
        self.centre = self.origin + Rt[..., :, 1] * self.half[:, None]
        pp = where(self.is_root, 0, self.parent)
        offset = einsum("fnji,fnj->fni", Rt[:, pp], self.origin - self.origin[:, pp])
        offset[..., 1] -= self.half[pp]
        self.anchor = where(self.is_root[:, None], self.origin, offset)  # (F, n, 3)
        rel = quat_multiply(quat_conj(self.quat[:, pp]), self.quat)
        rel = where(self.is_root[:, None], self.quat, rel)
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
        self.level_bodies = [np.flatnonzero(depth == d) for d in range(int(depth.max()) + 1)
                             ] if n else []
        self.anchor_a = np.zeros((n, 3))
        # subtree[j, k] = 1 when body k hangs (directly or not) from body j, itself included.
        self.subtree = np.zeros((n, n))
        current = np.arange(n)
        alive = np.ones(n, dtype=bool)
        while alive.any():  # loop over tree depth
            self.subtree[current[alive], np.flatnonzero(alive)] = 1.0
            up = where(alive, self.parent[current], n)
            alive = up < n
            current = where(alive, up, 0)
        self.anchor_a[:, 1] = -self.half
        self.rest_relative = rest_rel
        self.swing_limit, self.twist_limit = model.swing_limit[b], model.twist_limit[b]
        self.swing_center = model.swing_center[b]
        self.has_limit = ~self.is_root & (np.isfinite(self.swing_limit).any(axis=1)
                                          | np.isfinite(self.twist_limit).any(axis=1))
        self.inside = inside_bound(self.swing_limit, self.twist_limit, self.swing_center)
        self.colours: tuple[JointColour, ...] = colour_joints(
            parent=self.parent, depth=depth, half_length=self.half, rest_relative=rest_rel,
            swing_limit=model.swing_limit[b], twist_limit=model.twist_limit[b],
            swing_center=model.swing_center[b])
        self.contacts = Contacts(model, b, self.half, self.radius)
        self.shapes = TreeShape.groups(self.ragdoll_local, self.parent) if n else []
        self.world_pairs = Pairs.create(np.arange(n), np.full(n, n))  # body -> static world
        others = model.collide_with_others[model.ragdoll_of_body[b]]
        self.self_collision = SelfCollision(
            ragdoll=model.ragdoll_of_body[b], parent=self.parent,
            rest_matrix=model.rest_matrix[b], half=self.half, radius=self.radius,
            own=settings.self_collision, others=others
        ) if settings.self_collision or others.any() else None
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
        self.coeff: FrameCoefficients | None = None
        # Frames whose settings are those of the frame before share its coefficients (made
        # once per run of equal frames instead of once per sample: 4.5 % of a limp humanoid's
        # bake). The distance limit's shrink reads the target's speed of each frame: with a
        # finite shrink speed every frame is its own.
        limit_speed = self.params["distance_limit_speed"][:, b]
        self.settings_epoch = (np.arange(F) if np.isfinite(limit_speed).any()
                               else settings_epochs(self.params, F))
        self.first_step = True
        self.previous_colliders = None
        self.started_inside = np.zeros(len(self.ragdolls), dtype=bool)

    # ----------------------------------------------------------------------------------------
    def fallen_body(self) -> np.ndarray:
        return self.run.fallen[self.model.ragdoll_of_body[self.bodies]]

    def coefficients(self, f: int) -> FrameCoefficients:
        key = (int(self.settings_epoch[f]), int(self.run.fallen_version))
        if key != self._coeff_key:
            self.coeff = FrameCoefficients(self, f)
            self._coeff_key = key
            s = self.state
            s.inv_mass[: self.n] = self.coeff.inv_mass
            s.inv_inertia[: self.n] = self.coeff.inv_inertia
        return self.coeff

    def targets(self, sub: Substep, k: int) -> tuple[np.ndarray, np.ndarray]:
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

    def step(self, sub: Substep, k: int) -> None:
        """One substep (Müller 2020 Alg. 2) of this level's bodies."""
        h, n, s = self.h, self.n, self.state
        c = self.coefficients(sub.f)
        f, a = sub.f, sub.alpha
        g = min(f + 1, self.drive.frames - 1)
        origin_t, quat_t = self.targets(sub, k)
        Rt = q2m(quat_t)
        centre_t = origin_t + Rt[:, :, 1] * self.half[:, None]
        v, x = s.v[:n], s.x[:n]
        colliders = self.run.colliders_at(sub)
        # (the colliders at the substep's start: static friction holds a body where a moving
        # collider carried it)
        previous = self.previous_colliders if self.previous_colliders is not None else colliders
        self.previous_colliders = colliders
        if self.contacts.allowance is None and self.first_step:  # the pose it starts in
            self.contacts.allowance = self.contacts.depths(s, colliders, np.arange(n))
            # A ragdoll that starts inside a collider may be lifted by its push-out (the
            # energy projection leaves that) until its penetration is gone
            self.started_inside = self.member @ (self.contacts.allowance.max(
                axis=0, initial=0.0) > 0.0) > 0
        self.first_step = False
        carried = self.contacts.allowance
        if self.started_inside.any():
            self.started_inside &= (carried is not None
                                    and self.member @ (carried.max(axis=0, initial=0.0)
                                                       > 0.0) > 0)
        start = (momenta(s, self.member, self.mass, self.inertia) if c.any_free else None)
        energy = (sum(energies(s, self.member, self.mass, self.inertia, c.gravity))
                  if c.any_passive_free else None)
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
        q /= norm(q, keepdims=True)
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
        root_target = quat_t[self.root_index]
        root_lam = np.zeros((len(self.root_index), 3))  # the root lock's summed angular impulses
        root_Ia = root_inertia = None
        if c.any_locked and (SUBTREE_MOTORS or ARTICULATED_MOTORS):  # inverted once
            root_Ia = s.Iw_inv[self.root_index]
            root_inertia = inverse3(root_Ia)
        # the locked roots' summed positional impulses (force-limited, see solve_ball)
        lock_lams = [np.zeros((len(col.index), 3)) if c.any_locked else None
                     for col in self.colours]
        # Inverse masses, world inverse inertias and the motors' 3x3 blocks do not change
        # within the iterations: gathered / inverted once per substep.
        frozen = [FrozenPairs.of(s, col.pairs) for col in self.colours]
        limit_blocks = [LimitBlocks(fz, col.pairs) for fz, col in zip(frozen, self.colours,
                                                                      strict=True)]
        motor_inv = [motor_subtree_inverse(fz.Ib, col.pairs.split, cc["alpha"],
                                           self.joint_inertia[col.index])
                     if cc["any_subtree_motor"] else None
                     for fz, col, cc in zip(frozen, self.colours, c.colours, strict=True)
                     ] if not ARTICULATED_MOTORS else None
        arts = []  # (ArticulatedMotors, its children's local targets, summed impulses)
        trees = []  # TreeJoints
        for shape in self.shapes if (ARTICULATED_MOTORS or ARTICULATED_JOINTS) else ():
            child = shape.bodies[:, shape.child]
            if not len(shape.child):
                continue
            anchor_a, anchor_b = self.anchor_a[child], anchor[child]
            factor = None
            if ARTICULATED_JOINTS:
                factor = TreeFactor.of(s, shape, anchor_a=anchor_a, anchor_b=anchor_b,
                                       pinned=c.kinematic[shape.bodies])
                trees.append(TreeJoints.of(factor, anchor_a=anchor_a, anchor_b=anchor_b))
            alpha = c.motor_alpha[child]
            if not (ARTICULATED_MOTORS and c.any_motor) or np.all(alpha >= OFF):
                continue
            # the motors pin the locked roots too (the lock stands for the animation)
            pinned = c.motor_pinned[shape.bodies]
            if factor is None or not np.array_equal(pinned, factor.pinned):
                factor = TreeFactor.of(s, shape, anchor_a=anchor_a, anchor_b=anchor_b,
                                       pinned=pinned)
            arts.append((ArticulatedMotors.of(
                TreeResponse.of(factor), alpha=alpha,
                damped=bool(np.any(c.motor_damp[child] > 0.0))),
                local_t[child], np.zeros(child.shape + (3,)),
                self.joint_inertia[child] * MOTOR_MAX_ACCELERATION * self.h * self.h))
        # Broad phase once per substep: bodies move at most ~|v| h per substep; what is
        # further than twice that (plus BROAD_MARGIN) cannot touch within it.
        self.contacts.sweep(s, colliders, ~kin)  # fast bodies do not tunnel through walls
        # the velocities before the solve: restitution bounces the approach speed back
        v_before, w_before = s.v[:n].copy(), s.w[:n].copy()
        margin = BROAD_MARGIN + 2.0 * h * float(np.sqrt(np.max(einsum("nk,nk->n", v, v),
                                                               initial=0.0)))
        # ... and the colliders near a locked root (usually none: the iterations' root pushes
        # are skipped).
        touched = np.zeros(n, dtype=bool)
        near, root_near = self.contacts.near_each(s, colliders, (~kin, c.locked), margin,
                                                  touched=touched)
        self_near = (self.self_collision is not None
                     and self.self_collision.near(s, 2.0 * margin))
        disturbed = np.zeros(n, dtype=bool)  # near a moving collider or another ragdoll
        links = None  # (ragdoll, ragdoll) of the pairs of two ragdolls that may touch
        if self_near:  # a pair of two ragdolls exchanges momentum between them
            pa, pb = self.self_collision.candidates[:2]
            ra, rb = self.ragdoll_local[pa], self.ragdoll_local[pb]
            crossing = ra != rb
            disturbed[pa[crossing]] = disturbed[pb[crossing]] = True
            if crossing.any():
                links = ra[crossing], rb[crossing]
        if energy is not None and len(near) and self.run.moving_colliders[near].any():
            disturbed[:] = True  # (which bodies it is near is not kept: all, to be safe)
        self.contacts.begin()
        for it in range(self.iterations):
            for j, col in enumerate(self.colours):
                cc = c.colours[j]
                if not ARTICULATED_JOINTS:
                    solve_ball(s, col, anchors[j], cc["ball"], frozen[j],
                               lam_total=lock_lams[j],
                               lam_max=cc["lock_force"] if c.any_locked else None)
                elif j == 0:
                    if c.any_locked:
                        solve_ball(s, col, anchors[j], cc["root_ball"], frozen[j],
                                   lam_total=lock_lams[j], lam_max=cc["lock_force"])
                    if trees:
                        dx, dth = np.zeros(s.x.shape), np.zeros(s.x.shape)
                        for tree in trees:
                            tree.solve(s, dx, dth)
                        s.move(dx, dth)
                if ARTICULATED_MOTORS:
                    if j == 0 and arts:
                        dx, dth = np.zeros(s.x.shape), np.zeros(s.x.shape)
                        for art, targets_, lam, lam_max in arts:
                            art.solve(s, targets_, lam, dx, dth, lam_max=lam_max)
                        s.move(dx, dth)
                    if j == 0 and c.any_locked:
                        solve_root_lock(s, self.root_index, root_target, root_lam,
                                        c.root_locked, c.root_lock_torque, root_Ia, root_inertia)
                elif SUBTREE_MOTORS:
                    if cc["any_subtree_motor"]:
                        solve_motor_subtree(s, col, locals_[j], cc["alpha"], lams[j],
                                            cc["subtree_motor"], cc["carry"],
                                            self.joint_inertia[col.index], col.anchor_a,
                                            K_inv=motor_inv[j], Ib=frozen[j].Ib,
                                            recoil=cc["recoil"], lam_max=cc["motor_torque"],
                                            masses=cc["masses"],
                                            inv_mass_b=frozen[j].inv_mass_b)
                    # else no motor on (a limp ragdoll): the pass's corrections are all zero
                    # and its `move` would only normalise the orientations again, which the
                    # ball joints' `move` just did (`Bodies.normalise` did that to keep the
                    # full pass's bits: 9 Python-level calls an iteration for a change in the
                    # last places of unit quaternions)
                    if j == 0 and c.any_locked:
                        solve_root_lock(s, self.root_index, root_target, root_lam,
                                        c.root_locked, c.root_lock_torque, root_Ia, root_inertia)
                else:
                    solve_motor(s, col, locals_[j], cc["alpha"], lams[j], cc["motor"],
                                lam_max=cc["motor_torque"])
                # Limits inside every iteration, both bodies moving (Müller 2020 §3.4.2): the
                # momentum they exchange is part of the solve, not added afterwards.
                solve_limits(s, col, limit_blocks[j])
                if len(root_near) and col.is_root.any():
                    # A locked root is pushed back out of colliders before its children's
                    # joints see it: otherwise they are dragged into the wall with it and
                    # their contacts lever them around the joint (spurious spins).
                    # (Only the colliders of the broad phase, as `contacts.solve`.) The push
                    # counts for friction: uncounted, the hips the lock pressed into a wall
                    # slid along it without friction, and the lock's pull toward a target
                    # behind the wall swung them to and fro along it at up to 6.7 m/s (a
                    # walk of 2.3 m/s).
                    self.contacts.project(s, colliders, c.locked, only=c.locked_index,
                                          colliders=root_near)
            if c.any_limit:
                self.solve_distance_limits(s, c, origin_t)
            self.contacts.solve(s, colliders, ~kin, last=it == self.iterations - 1,
                                translate=c.locked,
                                colliders=near, friction=c.friction if STATIC_FRICTION else None,
                                previous=previous)
            if self_near:
                for _ in range(SELF_COLLISION_PASSES):  # Jacobi over the pairs
                    if not self.self_collision.solve(s, ~kin):
                        break  # nothing penetrated: another pass would change nothing
                if STATIC_FRICTION:
                    self.self_collision.hold(s, ~kin, c.friction)
        # Velocities from the iterations' position change (Müller 2020 Alg. 2), taken BEFORE
        # the final projections: those are exact clean-ups of what the iterations left (joint
        # drift, limits, rigid motors, distance limits, penetration) applied to positions only.
        # Derived into velocities they were outside pushes (a limit projection rotates the
        # child while its parent stays put), which launched bodies and broke conservation.
        s.v[:] = (s.x - s.x_prev) / h
        dq = qmul(s.q, quat_conj(s.q_prev))
        s.w[:] = quat_log(dq) / h
        outside = [limit_directions(s, col) for col in self.colours]
        # the joints the iterations left open (the final pass closes them by position)
        gaps = ([joint_gaps(s, col, anchors[j]) for j, col in enumerate(self.colours)]
                if STOP_OPENED_JOINTS else None)
        solved_q = s.q[:n].copy() if STOP_UNDONE_TURNS else None
        self.final_pass(c, anchor, local_t, origin_t, outside)
        # (static friction holds contact points where the iterations left them: what the
        # contact projection moves along a collider is not a slip friction let happen)
        solved = (s.x[:n].copy(), s.R[:n].copy()) if STATIC_FRICTION else None
        self.contacts.allowance = (self.contacts.depths(s, colliders, np.arange(n))
                                   if self.project_contacts(c, colliders, ~kin, anchor)
                                   else None)
        if solved is not None:
            self.contacts.undone = solved + (s.x[:n].copy(), s.R[:n].copy())
        # What the projections turned back of a joint is not turned again by the velocity the
        # iterations left toward it (an inelastic stop, limits.stop_undone_turns; with the
        # substep's inverse inertias, as the iterations)
        if STOP_UNDONE_TURNS:
            turned = np.zeros((len(s.q), 3))  # (the world's row stays zero)
            turned[:n] = quat_log(qmul(s.q[:n], quat_conj(solved_q)))
            for col, cc in zip(self.colours, c.colours, strict=True):
                stop_undone_turns(s, col, turned, h, recoil=cc["recoil"])
        # velocity pass: no de-penetration pop, joint damping and the motors' dampers
        s.freeze_inertia()
        g = float(np.abs(c.gravity).max(initial=0.0))
        if gaps is not None:
            opened = [~col.is_root & ~kin[col.index]
                      & (einsum("nk,nk->n", gaps[j], gaps[j]) > JOINT_TOLERANCE ** 2)
                      for j, col in enumerate(self.colours)]
            if any(o.any() for o in opened):
                for rep in range(VELOCITY_PASSES):
                    for j, col in enumerate(self.colours):
                        if opened[j].any():
                            stop_opened_joints(s, col, anchors[j], gaps[j], opened[j],
                                               recoil=c.colours[j]["recoil"])
                    if rep < VELOCITY_PASSES - 1:  # (the last one is the full pass below)
                        self.contacts.velocity_pass(s, c.friction, h, restitution=c.restitution,
                                                    v_before=v_before, w_before=w_before,
                                                    gravity=g, normal_only=True)
        self.contacts.velocity_pass(s, c.friction, h, restitution=c.restitution,
                                    v_before=v_before, w_before=w_before, gravity=g)
        if self_near:
            self.self_collision.stop_normal_motion(s, ~kin, friction=c.friction, h=h)
        for j, col in enumerate(self.colours):
            cc = c.colours[j]
            if sub.frozen:
                target_w = np.zeros((len(col.index), 3))
            else:
                target_w = rotate(s.R[col.pairs.b], self.local_omega[f, col.index])
            if ARTICULATED_MOTORS:
                # (the motors' dampers act through the tree, below)
                if cc["any_joint_damp"]:
                    damp_joints(s, col, cc["joint_damp"])
            elif SUBTREE_MOTORS:
                # Joint damping is passive: a couple between child and parent (conserves
                # linear and angular momentum). The motor's damper pulls toward the
                # animation's velocity and turns the child's whole subtree (like its spring).
                if cc["any_joint_damp"]:
                    damp_joints(s, col, cc["joint_damp"])
                if cc["any_motor_damp"]:
                    damp_joints_subtree(s, col, np.zeros(len(col.index)), target_w,
                                        cc["motor_damp"], cc["carry"],
                                        self.joint_inertia[col.index], recoil=cc["recoil"],
                                        masses=cc["masses"])
            else:
                damp_joints(s, col, cc["joint_damp"], target_w, cc["motor_damp"])
        for art, *_ in arts:
            if art.D_inv is None:
                continue
            shape = art.shape
            child, parent = shape.bodies[:, shape.child], shape.bodies[:, shape.parent]
            relative = s.w[child] - s.w[parent]
            if not sub.frozen:
                relative -= einsum("rjik,rjk->rji", s.R[parent], self.local_omega[f, child])
            art.damp(s, relative * c.motor_damp[child][..., None])
        # The limits stop last: a hard stop after the soft dampers, which pull toward the
        # animation's velocity and would otherwise turn a joint held on its limit outward
        # again (the final pass then took that turn back by position, substep after substep).
        for col, cc, inward in zip(self.colours, c.colours, outside, strict=True):
            if inward is not None:
                stop_at_limits(s, col, inward, recoil=cc["recoil"])
        alone = np.zeros(len(self.ragdolls), dtype=bool)
        if start is not None and links is None:
            alone = c.free_ragdoll & (self.member @ touched == 0)
            if alone.any():
                impulse = h * (self.member @ (self.mass[:, None] * c.gravity))
                restore_momenta(s, self.member, self.mass, self.inertia, start, impulse, h,
                                alone, c.passive_ragdoll)
        elif start is not None:
            alone = self.restore_group_momenta(c, start, links, touched)
        if energy is not None:
            # A passive ragdoll on still colliders may only lose energy (momentum.py)
            still = (c.passive_ragdoll & c.free_ragdoll & (self.member @ disturbed == 0)
                     & ~alone)  # (restore_momenta has kept the energy of those alone)
            if still.any():
                cap_energy(s, self.member, self.mass, self.inertia, c.gravity, energy, still,
                           lift=~self.started_inside)

    def restore_group_momenta(self, c: FrameCoefficients, start: Momenta,
                              links: tuple[np.ndarray, np.ndarray], touched: np.ndarray
                              ) -> np.ndarray:
        """Step 7 for ragdolls that may touch each other in the substep: the contacts between
        two ragdolls are internal forces of the pair, so ragdolls linked by them (the
        connected parts of the links) that touch nothing else are one system whose linear
        momentum grows by M g h and whose angular momentum about its centre of mass stays.
        The contact's positional impulses are equal and opposite along the line through the
        two closest points, but the velocities taken from the positions keep x × v only to
        first order in h (each body's lever is its path's start, the correction's is its
        end), so two capsules thrown at each other off centre drifted by 2.2 % of their
        angular momentum (31 % at 120 Hz, 1 iteration). The union is projected back onto
        those invariants like a ragdoll alone (`restore_momenta`, Hairer, Lubich & Wanner
        IV.4), and a union of passive ragdolls gains no energy relative to its centre.
        Returns which ragdolls were restored."""
        R = len(self.ragdolls)
        root = connected_roots(R, *links)
        groups = (root[None, :] == np.unique(root)[:, None]).astype(float)  # (G, R)
        member = groups @ self.member
        free = groups @ (~c.free_ragdoll) == 0
        alone = free & (member @ touched == 0)
        if not alone.any():
            return np.zeros(R, dtype=bool)
        impulse = self.h * (member @ (self.mass[:, None] * c.gravity))
        passive = groups @ (~c.passive_ragdoll) == 0
        restore_momenta(self.state, member, self.mass, self.inertia,
                        merge_momenta(start, groups), impulse, self.h, alone, passive)
        return groups.T @ alone > 0

    def solve_distance_limits(self, s: Bodies, c: FrameCoefficients, origin_t: np.ndarray
                              ) -> None:
        """The distance limit as a hard one-sided constraint inside the iterations (Müller 2020
        eq. 25 with the target a static body): the head point is pulled back onto the sphere
        of radius `limit` about its target, turning the body as well, and the joints of the
        next iteration share the pull with the rest of the ragdoll. As a projection after the
        iterations alone it moved the body away from its parent: a companion's head locked to
        its target opened its neck by 16 cm while the free torso sagged."""
        n = self.n
        ra = rotate(s.R[:n], self.anchor_a)
        gap = s.x[:n] + ra - origin_t
        dist = np.sqrt(einsum("nk,nk->n", gap, gap))
        excess = where(c.limit_active, dist - c.limit, 0.0)
        over = excess > 0.0
        if over.any():
            delta = gap * (np.maximum(excess, 0.0) / np.maximum(dist, 1e-300))[:, None]
            positional(s, self.world_pairs, ra, np.zeros((n, 3)), delta, active=over)

    def final_pass(self, c: FrameCoefficients, anchor: np.ndarray, local_t: np.ndarray,
                   origin_t: np.ndarray, outside: list[np.ndarray | None] | None = None
                   ) -> None:
        """Top down over depth levels, after the iterations: pull each child's head back to
        within JOINT_TOLERANCE of its parent's anchor (seed 004 projects joints that drift
        apart beyond a threshold), set full-strength
        motors exactly, clamp swing/twist limits (rotating about the head) and the distance
        limit to the target (translation). Children then follow their corrected parents, so
        every one of these holds exactly when the substep ends. `outside`: each colour's
        `limit_directions` of the bodies as they are now, if known (`final_start`)."""
        s = self.state
        start = self.final_start(c, anchor, origin_t, outside)
        for attach, rigid, limited, distance in c.final[start:]:
            if len(attach):
                # Only the drift beyond JOINT_TOLERANCE: projecting the whole residual every
                # substep (follow-the-leader style) feeds velocity errors back into the swing.
                par = self.parent[attach]
                target = s.x[par] + rotate(s.R[par], anchor[attach])
                gap = target - (s.x[attach] + rotate(s.R[attach], self.anchor_a[attach]))
                dist = np.sqrt(einsum("nk,nk->n", gap, gap))
                excess = np.maximum(dist - JOINT_TOLERANCE, 0.0) / np.maximum(dist, 1e-300)
                s.x[attach] += gap * excess[:, None]
            if len(rigid):
                project_rigid(s, rigid, self.parent[rigid], anchor[rigid], self.anchor_a[rigid],
                              local_t[rigid])
            if len(limited):
                project_limits(s, limited, self.parent[limited], self.rest_relative[limited],
                               self.swing_limit[limited], self.twist_limit[limited],
                               self.anchor_a[limited], self.swing_center[limited])
            if len(distance):
                x = s.x[distance]
                head = x - s.R[distance, :, 1] * self.half[distance, None]
                project_distance(x, head, origin_t[distance], c.limit[distance],
                                 np.ones(len(distance), dtype=bool))
                s.x[distance] = x

    def project_contacts(self, c: FrameCoefficients, colliders, movable: np.ndarray,
                         anchor: np.ndarray) -> None:
        """Top down over depth levels from the shallowest penetrating body: re-attach each
        level's joints (as the final pass), then move its bodies out of the colliders, a body
        hanging from a joint by turning about its head (``Contacts.project``). Every joint and
        every contact then holds when the substep ends; projecting all bodies at once by
        translation left a foot on the ground 4–5 cm off its ankle (a limp Rigify human)."""
        s = self.state
        inside = self.contacts.penetrating(s, colliders, movable)
        if not inside.any():
            return False
        start = int(self.depth[inside].min())
        for d in range(start, len(c.final)):
            attach = c.final[d][0]
            lifted = bool(len(attach)) and self.contacts.lift_joints(
                s, colliders, movable, attach, self.parent[attach], anchor[attach],
                JOINT_TOLERANCE)
            if lifted:
                # A parent turned to lift a joint turns no further than its own limit allows
                # (what is left of the joint's depth is the child's translation below, and
                # the parents then follow it). Turned back toward where it was projected, it is
                # not translated.
                self.clamp_turned(c.final[d - 1][2], colliders, movable, translate=False)
            if (d > start or lifted) and len(attach):
                self.reattach(attach, anchor)
            self.project_depth(c, d, colliders, movable)
            if len(attach):
                self.follow_translated(c, d, anchor, movable, colliders)
            if ARTICULATED_JOINTS and len(attach):
                # ... and, with the joints exact, what the projection translated off its joint
                # goes back to within the joints' tolerance: a limb whose joint the final
                # pass's re-attachment put inside the ground was translated out, opening a limp
                # Rigify shin by 5.5 cm (the contact is left to the next substep instead).
                self.reattach(attach, anchor)
        self.swing_below_fixed(c.attach_all, anchor, movable, colliders)
        return True

    def swing_below_fixed(self, attach: np.ndarray, anchor: np.ndarray, movable: np.ndarray,
                          colliders) -> None:
        """Close the joints of `attach` still open to a parent that cannot move (a kinematic
        pelvis) by swinging the limb along the collider instead of leaving it translated off
        the joint.

        A joint is hard (bilateral); static friction is an inequality bounded by μ × the normal
        force (Coulomb cone, Müller et al. 2020 §3.5). Where only a slide of the foot can keep
        the joints (the pelvis is animated, the ground cannot be entered), friction gives,
        not the joint. `bend_below_fixed` bends the leg no further than its limits; a pelvis
        pressing deeper (8 g on a 1.5 Hz figure-eight, 6 g with the ground 5 cm higher) had
        `lift_chain` translate the leg up and open the hip by 24–84 mm at substep ends. Here
        the child's subtree is put back on its joint (a rigid translation: every joint and limit
        inside it stays as it was) and swung out (`_swing_out`) joint by joint down the path
        to its deepest point, as cyclic coordinate descent does in inverse kinematics (Wang &
        Chen 1991): the hip within its limit, then the knee, then the ankle. What no swing
        within the limits clears is translated out along the normal, opening the joint by
        that much only; a limb no better off than before is left as it was."""
        if not len(attach):
            return
        par = self.parent[attach]
        gap, dist = self.joint_gaps(attach, anchor)
        open_ = np.flatnonzero((dist > JOINT_TOLERANCE + _GAP_EPS) & ~movable[par]
                               & movable[attach])
        if not len(open_):
            return
        s, contacts = self.state, self.contacts
        for i in open_.tolist():  # (rare: a kinematic body pressing a limb into a collider)
            child = int(attach[i])
            bodies = np.flatnonzero(self.subtree[child] > 0.0)
            bodies = bodies[movable[bodies]]
            kept = s.x[bodies].copy(), s.q[bodies].copy(), s.R[bodies].copy()
            s.x[bodies] -= gap[i] * (1.0 - JOINT_TOLERANCE / dist[i])
            joint = child
            rest, normal = 0.0, None
            while joint >= 0:
                joint, rest, normal = self._swing_out(joint, anchor, movable, colliders)
            if rest > 0.0:  # what no swing clears: translated out, the joint opened
                s.x[bodies] += normal * rest
            _, after = self.joint_gaps(np.array([child]), anchor)
            if after[0] >= dist[i] or contacts.depths(s, colliders, bodies).max(
                    initial=0.0) > 1e-9:
                s.x[bodies], s.q[bodies], s.R[bodies] = kept  # no better than before

    def _swing_out(self, child: int, anchor: np.ndarray, movable: np.ndarray, colliders
                   ) -> tuple[int, float, np.ndarray | None]:
        """Turn the subtree of `child` about its joint (its parent's anchor) by the least angle
        that takes the subtree's deepest point out of the colliders, about r × n (r from the
        joint to that point, n the collider's normal there: the point rises by |r⊥| per radian
        and slides outward along the collider), no further than the child's own limit allows
        (`CONTACT_LIMIT_SLACK`, bisection, as `bend_below_fixed`). Returns (the body below
        `child` on the path to the deepest point still inside, -1 when none is; the depth
        left (m); the normal there)."""
        s, contacts = self.state, self.contacts
        bodies = np.flatnonzero(self.subtree[child] > 0.0)
        bodies = bodies[movable[bodies]]
        parent = int(self.parent[child])
        joint = (s.x[parent] + rotate(s.R[parent][None], anchor[child][None]))[0]
        axis = s.R[bodies, :, 1] * self.half[bodies, None]
        best, deepest, lever, normal = 0.0, -1, None, None
        for k in range(contacts.colliders.count):
            point, nrm, sd = contacts.deepest(k, s.x[bodies] - axis, s.x[bodies] + axis,
                                              colliders, self.radius[bodies])
            pen = where(contacts.mask[bodies, k], self.radius[bodies] - sd, 0.0)
            j = int(np.argmax(pen))
            if pen[j] > best:
                best, deepest, lever, normal = (float(pen[j]), int(bodies[j]),
                                                point[j] - joint, nrm[j])
        if lever is None:
            return -1, 0.0, None
        turn_axis = np.cross(lever, normal)
        size = float(np.sqrt(turn_axis @ turn_axis))
        if size > 1e-6 * float(np.sqrt(lever @ lever)):  # (straight along n: no side to turn)
            turn_axis /= size
            placed, q0 = s.x[bodies].copy(), s.q[bodies].copy()
            limited = np.array([child]) if self.has_limit[child] else None

            def swing(angle: float) -> tuple[float, float]:
                """The subtree turned by `angle` about the joint: (the child's limit excess
                (rad), the subtree's deepest penetration (m))."""
                r = quat_exp((angle * turn_axis)[None])
                s.q[bodies] = qmul(np.broadcast_to(r, q0.shape), q0)
                s.R[bodies] = q2m(s.q[bodies])
                s.x[bodies] = joint + rotate(np.broadcast_to(q2m(r), (len(bodies), 3, 3)),
                                             placed - joint)
                outside = 0.0
                if limited is not None:
                    fix = limit_rotation(s.q[limited], s.q[self.parent[limited]],
                                         self.rest_relative[limited],
                                         self.swing_limit[limited], self.twist_limit[limited],
                                         self.swing_center[limited])
                    outside = 0.0 if fix is None else float(norm(fix)[0])
                return outside, float(contacts.depths(s, colliders, bodies).max(initial=0.0))

            allowed = max(swing(0.0)[0], CONTACT_LIMIT_SLACK)
            low, high = 0.0, 0.5 * np.pi  # the largest turn within the limit
            if swing(high)[0] > allowed:
                for _ in range(SWING_BISECTIONS):
                    mid = 0.5 * (low + high)
                    low, high = (mid, high) if swing(mid)[0] <= allowed else (low, mid)
                high = low
            if swing(high)[1] <= 0.0:  # the least turn that clears the colliders
                low = 0.0
                for _ in range(SWING_BISECTIONS):
                    mid = 0.5 * (low + high)
                    low, high = (low, mid) if swing(mid)[1] <= 0.0 else (mid, high)
            swing(high)
            depth = contacts.depths(s, colliders, bodies).max(axis=0, initial=0.0)
            best, deepest = float(depth.max(initial=0.0)), int(bodies[np.argmax(depth)])
        if best <= 0.0 or deepest == child:
            return -1, best, normal
        below = deepest  # the next joint down the path to the deepest body
        while self.parent[below] != child:
            below = int(self.parent[below])
        return below, best, normal

    def follow_translated(self, c: FrameCoefficients, d: int, anchor: np.ndarray,
                          movable: np.ndarray, colliders) -> None:
        """After the contact projection of depth d: the parents follow the children it moved
        off their joints, so that every joint down to depth d is again within JOINT_TOLERANCE
        and no body of those depths is inside a collider.

        A steep body (the shin a limp human lands or kneels on) cannot be turned out of the
        ground about its head (``Contacts.project``, PIVOT_SLOPE): it is translated, and its
        joint opened by what it was inside, up to 12 mm on a limp Rigify human kneeling at
        4 iterations and 14 mm on a humanoid landing on straight legs (the final pass turns a
        knee left past its limit back about the knee, its tip into the ground). The ground's
        push on the child goes through its joint to the parent, as ``Contacts.lift_joints``
        hands a joint's push to the parent: first a turn of the parent about its own head
        toward the child (a thigh lying across the ground lifts the knee by a turn at the
        hip), kept only if it pushes the parent no deeper into any collider; what the turn
        cannot reach (a steep thigh on a straight leg) moves the parent by the joint's excess
        over the tolerance, and its own parent likewise, up the chain (`lift_chain`: the
        body's weight rests on the leg). The bodies hanging from what moved are re-attached
        and projected again. Position only, as the final pass: a passive ragdoll this lifts
        above its energy is taken back by the energy projection (momentum.cap_energy)."""
        for follow_pass in range(FOLLOW_PASSES):
            s = self.state
            attach = c.final[d][0]
            opened = self.opened_joints(attach, anchor, movable)
            if opened is None:
                return
            par, gap, dist, pick = opened
            turn = pick[~self.is_root[par[pick]]]
            if len(turn):
                self.turn_toward(par[turn], gap[turn], dist[turn],
                                 s.x[attach[turn]] + rotate(s.R[attach[turn]],
                                                            self.anchor_a[attach[turn]]),
                                 s.x[par[turn]] + rotate(s.R[par[turn]], anchor[attach[turn]]),
                                 colliders, c.limited)
                self.bend_below_fixed(attach, anchor, movable, colliders)
            top = self.lift_chain(c, d, anchor, movable)
            for e in range(top + 1, d + 1):  # what hangs from the moved bodies, top down
                below = c.final[e][0]
                if len(below):
                    self.reattach(below, anchor)
                    # The last pass keeps the joints rather than the limits: its translations
                    # would be left open (the limits then hold within the contact's turn)
                    self.project_depth(c, e, colliders, movable,
                                       keep_limits=follow_pass < FOLLOW_PASSES - 1)

    def project_depth(self, c: FrameCoefficients, d: int, colliders, movable: np.ndarray,
                      *, keep_limits: bool = True) -> None:
        """Move the bodies of depth d out of the colliders (``Contacts.project``: a body
        hanging from a joint turns about its head) without turning any past its joint limit.

        The turn is a rotation of the body relative to its parent, and the final pass has just
        left every limit exact: a foot landing on its toes was turned flat about the ankle up
        to 34° past the ankle's limit, a shin 12° past the knee's, a toe 42° past its joint,
        for a frame at the end of the substep. A body at its limit turns with its parent, as
        one: the ground's push goes through the limit into the parent. So what a turn takes
        past the limit is taken back (`project_limits`, about the head) and the body is
        translated out by what is still inside; the joint this opens is the parents' to close
        (`follow_translated`: a turn of the parent, else the chain lifted). Without
        `keep_limits` the turns are left as they are (no joint opened)."""
        at = self.level_bodies[d]
        self.contacts.project(self.state, colliders, movable, only=at, pivot=~self.is_root[at])
        if keep_limits:
            self.clamp_turned(c.final[d][2], colliders, movable)

    def clamp_turned(self, limited: np.ndarray, colliders, movable: np.ndarray, *,
                     translate: bool = True) -> None:
        """Turn the bodies `limited` (one depth level, unique) that a projection turned past
        their joint limits back inside about their heads (the final pass's clamp), then
        (`translate`) translate out of the colliders those that this put back inside."""
        if not len(limited):
            return
        s = self.state
        before = s.q[limited].copy()
        self.clamp_limits(limited)
        clamped = limited[np.any(s.q[limited] != before, axis=1)]
        if translate and len(clamped):
            self.contacts.project(s, colliders, movable, only=clamped)

    def clamp_limits(self, bodies: np.ndarray) -> None:
        """`project_limits` of `bodies` (unique) with CONTACT_LIMIT_SLACK to spare."""
        slack = CONTACT_LIMIT_SLACK
        twist = self.twist_limit[bodies] + np.array([-slack, slack])
        project_limits(self.state, bodies, self.parent[bodies], self.rest_relative[bodies],
                       self.swing_limit[bodies] + slack, twist, self.anchor_a[bodies],
                       self.swing_center[bodies])

    def opened_joints(self, attach: np.ndarray, anchor: np.ndarray, movable: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """The joints of `attach` further than JOINT_TOLERANCE from their anchors whose parent
        may move: (parents, gaps, their lengths, for each such parent the index of its farthest
        child's joint); None when there is none."""
        par = self.parent[attach]
        gap, dist = self.joint_gaps(attach, anchor)
        far = (dist > JOINT_TOLERANCE + _GAP_EPS) & movable[par]
        if not far.any():
            return None
        return par, gap, dist, _farthest_per_parent(par, dist, far)

    def joint_gaps(self, attach: np.ndarray, anchor: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
        """(head − parent's anchor (m, 3), its length (m,)) of the children `attach`."""
        s = self.state
        par = self.parent[attach]
        gap = (s.x[attach] + rotate(s.R[attach], self.anchor_a[attach])
               - s.x[par] - rotate(s.R[par], anchor[attach]))
        return gap, np.sqrt(einsum("nk,nk->n", gap, gap))

    def turn_toward(self, bodies: np.ndarray, gap: np.ndarray, dist: np.ndarray,
                    head: np.ndarray, joint: np.ndarray, colliders, limited: np.ndarray
                    ) -> None:
        """Turn `bodies` (unique) about their own heads so that each one's anchor `joint`
        (m, 3) comes within JOINT_TOLERANCE of its child's `head` (as near as a turn gets) and
        its own joint limit allows (`limited`: (n,) bool, the bodies with limits to keep); a
        body the turn pushes deeper into some collider keeps its place."""
        s = self.state
        pivot = s.x[bodies] - s.R[bodies, :, 1] * self.half[bodies, None]
        lever = joint - pivot
        reach = head - gap * (JOINT_TOLERANCE / dist)[:, None] - pivot
        axis = cross(lever, reach)
        sin = np.sqrt(einsum("nk,nk->n", axis, axis))
        cos = einsum("nk,nk->n", lever, reach)
        angle = transcendental.arctan2(sin, cos)
        dtheta = axis / np.maximum(sin, 1e-300)[:, None] * angle[:, None]
        depth = self.contacts.depths(s, colliders, bodies).max(axis=0, initial=0.0)
        kept = s.x[bodies].copy(), s.q[bodies].copy(), s.R[bodies].copy()
        s.rotate_bodies(bodies, dtheta)
        s.x[bodies] = pivot + s.R[bodies, :, 1] * self.half[bodies, None]
        # ... and the turn goes no further than the body's own joint limit (what is left is
        # the chain's to lift: `lift_chain`)
        limited = bodies[limited[bodies]]
        if len(limited):
            self.clamp_limits(limited)
        back = self.contacts.depths(s, colliders, bodies).max(axis=0, initial=0.0) > depth + 1e-6
        if back.any():
            s.x[bodies[back]] = kept[0][back]
            s.q[bodies[back]] = kept[1][back]
            s.R[bodies[back]] = kept[2][back]

    def bend_below_fixed(self, attach: np.ndarray, anchor: np.ndarray, movable: np.ndarray,
                         colliders) -> None:
        """Close the joints of `attach` still open after `turn_toward` whose parent hangs from
        a body that cannot move (a kinematic pelvis) by bending the pair at that joint, as
        two-bone inverse kinematics does (law of cosines): the parent turns about its own
        head, the child about its tail (its own child's joint stays where the contact
        projection put it), until parent's anchor and child's head meet at the point of the
        circle both reach, on the side the joint already bends to.

        `lift_chain` would translate the parent instead, and nothing above it can follow: a
        kinematic pelvis swung down at 5 g pressing straight legs into the ground had its
        hips opened by up to 56 mm at substep ends, the contact projection having translated
        the steep shins up (PIVOT_SLOPE) and the thighs after them. A turn cannot shorten
        the leg (`turn_toward`), a bend does. Not where the pair cannot reach (stretched or
        folded beyond its lengths, or straight: no side to bend to), nor where a turn would
        push a body deeper into a collider: `lift_chain` then translates as before."""
        opened = self.opened_joints(attach, anchor, movable)
        if opened is None:
            return
        par, _, _, pick = opened
        pick = pick[~self.is_root[par[pick]]]
        pick = pick[~movable[self.parent[par[pick]]]]
        if not len(pick):
            return
        s, child, p = self.state, attach[pick], par[pick]
        head_p = s.x[p] - s.R[p, :, 1] * self.half[p, None]
        knee_p = s.x[p] + rotate(s.R[p], anchor[child])  # the joint as the parent has it
        head_c = s.x[child] - s.R[child, :, 1] * self.half[child, None]  # ... as the child
        tail_c = s.x[child] + s.R[child, :, 1] * self.half[child, None]
        upper, lower = norm(knee_p - head_p), norm(head_c - tail_c)
        span = tail_c - head_p
        reach = norm(span)
        along = span / np.maximum(reach, 1e-300)[:, None]
        side = 0.5 * (knee_p + head_c) - head_p
        side -= along * einsum("nk,nk->n", side, along)[:, None]
        off = norm(side)
        ok = ((reach < upper + lower - 1e-9) & (reach > np.abs(upper - lower) + 1e-9)
              & (off > 1e-6 * reach))
        if not ok.any():
            return
        p, child = p[ok], child[ok]
        head_p, knee_p, head_c, tail_c = head_p[ok], knee_p[ok], head_c[ok], tail_c[ok]
        upper, lower, reach = upper[ok], lower[ok], reach[ok]
        a = (upper * upper - lower * lower + reach * reach) / (2.0 * reach)
        knee = (head_p + along[ok] * a[:, None] + side[ok] * (
            np.sqrt(np.maximum(upper * upper - a * a, 0.0)) / off[ok])[:, None])
        both = np.concatenate([p, child])
        depth = self.contacts.depths(s, colliders, both).max(axis=0, initial=0.0)
        kept = s.x[both].copy(), s.q[both].copy(), s.R[both].copy()
        pivot = np.concatenate([head_p, tail_c])
        lever = np.concatenate([knee_p, head_c]) - pivot
        goal = np.concatenate([knee, knee]) - pivot
        turn = quat_log(quat_between(lever / norm(lever, keepdims=True),
                                     goal / norm(goal, keepdims=True)))
        limited = np.flatnonzero(self.has_limit[both])

        def bend(t: np.ndarray) -> np.ndarray:
            """Both bodies of each pair turned by the fraction t (per pair) of their turns;
            how far (rad) each pair's joints are then outside their limits."""
            r = quat_exp(np.concatenate([t, t])[:, None] * turn)
            s.q[both] = qmul(r, kept[1])
            s.R[both] = q2m(s.q[both])
            s.x[both] = pivot + rotate(q2m(r), kept[0] - pivot)
            outside = np.zeros(len(both))
            if len(limited):
                b = both[limited]
                fix = limit_rotation(s.q[b], s.q[self.parent[b]], self.rest_relative[b],
                                     self.swing_limit[b], self.twist_limit[b],
                                     self.swing_center[b])
                if fix is not None:
                    outside[limited] = norm(fix)
            return np.maximum(outside[:len(p)], outside[len(p):])

        # The bend goes no further than the joints' limits allow (CONTACT_LIMIT_SLACK, as the
        # contact projection's turns; a deeper press is left to lift_chain's translation):
        # bisection on the fraction of the bend
        allowed = np.maximum(bend(np.zeros(len(p))), CONTACT_LIMIT_SLACK)
        share = np.ones(len(p))
        inside = bend(share) <= allowed
        if not inside.all():
            low, high = where(inside, 1.0, 0.0), share
            for _ in range(BEND_BISECTIONS):
                mid = 0.5 * (low + high)
                good = bend(mid) <= allowed
                low, high = where(good, mid, low), where(good, high, mid)
            share = low
            bend(share)
        back = self.contacts.depths(s, colliders, both).max(axis=0, initial=0.0) > depth + 1e-6
        back = back[:len(p)] | back[len(p):]  # (a pair is bent or left as it was)
        if back.any():
            bend(where(back, 0.0, share))
            back = np.concatenate([back, back])
            s.x[both[back]], s.q[both[back]], s.R[both[back]] = (k[back] for k in kept)

    def lift_chain(self, c: FrameCoefficients, d: int, anchor: np.ndarray,
                   movable: np.ndarray) -> int:
        """Bottom up from depth d: translate each parent whose child is further than
        JOINT_TOLERANCE from its anchor by the excess (for its farthest child), then its own
        parent by what that opens, up to the root or a kinematic body. Returns the shallowest
        depth moved (d + 1: none)."""
        s = self.state
        top = d + 1
        for e in range(d, 0, -1):
            attach = c.final[e][0]
            if not len(attach):
                break
            opened = self.opened_joints(attach, anchor, movable)
            if opened is None:
                break
            par, gap, dist, pick = opened
            excess = 1.0 - JOINT_TOLERANCE / dist[pick]
            s.x[par[pick]] += gap[pick] * excess[:, None]
            top = e - 1
        return top

    def reattach(self, attach: np.ndarray, anchor: np.ndarray) -> None:
        """Translate the children `attach` back to within JOINT_TOLERANCE of their parents'
        anchors."""
        s = self.state
        par = self.parent[attach]
        gap = (s.x[par] + rotate(s.R[par], anchor[attach])
               - s.x[attach] - rotate(s.R[attach], self.anchor_a[attach]))
        dist = np.sqrt(einsum("nk,nk->n", gap, gap))
        excess = np.maximum(dist - JOINT_TOLERANCE, 0.0) / np.maximum(dist, 1e-300)
        s.x[attach] += gap * excess[:, None]

    def final_start(self, c: FrameCoefficients, anchor: np.ndarray, origin_t: np.ndarray,
                    outside: list[np.ndarray | None] | None = None) -> int:
        """The shallowest depth with anything for the final pass to correct (all bodies checked
        at once; usually nothing is violated and the per-level pass is skipped).

        `outside`: each colour's `limit_directions` of the bodies as they are now (the step
        takes them for the limits' velocity stop just before the final pass): a joint outside
        its limits is a nonzero row there, so the limits need not be split into swing and
        twist again here (its joint rotation, swing-twist split and ellipse test: ~50 NumPy
        calls a substep of a limp body on its limits). The start only skips depths with
        nothing to do: a start too early changes no bit (a level with nothing outside and no
        joint beyond the tolerance leaves every body as it is), and one too late could only
        come from a joint outside by less than its correction's rounding."""
        s, depth = self.state, self.depth
        start = c.rigid_depth
        idx = c.attach_all
        if len(idx):
            par = self.parent[idx]
            gap = (s.x[par] + rotate(s.R[par], anchor[idx])
                   - s.x[idx] - rotate(s.R[idx], self.anchor_a[idx]))
            far = einsum("nk,nk->n", gap, gap) > JOINT_TOLERANCE ** 2
            if far.any():
                start = min(start, int(depth[idx[far]].min()))
        idx = c.limited_all
        if len(idx) and depth[idx].min() < start and outside is not None:
            for col, inward in zip(self.colours, outside, strict=True):
                if inward is not None:
                    bad = col.index[c.limited[col.index] & (inward != 0.0).any(axis=1)]
                    if len(bad):
                        start = min(start, int(depth[bad].min()))
        elif len(idx) and depth[idx].min() < start:
            d = joint_rotation(s.q[idx], s.q[self.parent[idx]], self.rest_relative[idx])
            if not (d[:, 0] > self.inside[idx]).all():  # (all clear of their limits: none bad)
                swing, twist = swing_twist(d)
                fix, tfix = limit_correction(swing, twist, self.swing_limit[idx],
                                             self.twist_limit[idx], self.swing_center[idx])
                bad = (tfix != 0.0) | (fix != 0.0).any(axis=1)
                if bad.any():
                    start = min(start, int(depth[idx[bad]].min()))
        idx = c.distance_all
        if len(idx) and depth[idx].min() < start:
            head = s.x[idx] - s.R[idx, :, 1] * self.half[idx, None]
            gap = head - origin_t[idx]
            bad = einsum("nk,nk->n", gap, gap) > c.limit[idx] ** 2
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


def _farthest_per_parent(parent: np.ndarray, dist: np.ndarray, far: np.ndarray) -> np.ndarray:
    """Indices of the farthest child of each parent among those `far` (one move per parent:
    a pelvis with both legs translated up follows the one further off)."""
    order = np.lexsort((-dist, parent))
    first = np.ones(len(parent), dtype=bool)
    first[1:] = parent[order][1:] != parent[order][:-1]
    pick = order[first]
    return pick[far[pick]]
