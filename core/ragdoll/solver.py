"""The ragdoll bake: settings, the frame loop, outputs (Müller et al. 2020, Alg. 2 per substep).

The substep itself is `level.Level.step` (fixed substep h, independent of the scene frame rate,
so 30 and 60 fps bakes agree). This module runs the substeps of every frame, writes each
frame's poses (interpolated between substeps when a frame falls between them), checks for
divergence and the free-fall switch, and applies the local-space output blend at the end.

Ragdolls carried by another ragdoll's body are solved after their carrier, frame by frame, in
their own scene (seed 004 runs BD-1 in its own physics scene after the hero's): level 0 first,
then the ragdolls it carries, whose targets are moved rigidly with the carrier body's simulated
pose at every substep."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from ..affine import lerp_affine
from ..colliders import ColliderKind
from ..errors import DivergenceError
from ..job import FrameJob, FrameStream, run_job
from ..timestep import frame_interval
from .blend import lift_above_planes, local_blend
from .bodies import nlerp, q2m, qmul, quat_conj, rotate
from .drive import CheckedDrive, RagdollDrive, validate_drive
from .level import Level, Substep
from .model import BodyMode, RagdollModel
from .params import RagdollSettings

_TIME_EPS = 1e-9
DIVERGENCE_BOUND = 1.0e4  # m from the target: a body further away has exploded


@dataclass(frozen=True)
class RagdollResult:
    body_matrix: np.ndarray  # (F, N, 4, 4) world body frames after the local-space blend
    physics_matrix: np.ndarray  # (F, N, 4, 4) before the blend
    fell_at: np.ndarray  # (R,) frame the root lock released, -1 = never
    substeps: int


class _Run:
    """The whole bake: levels in carrier order, the frame loop, outputs."""

    def __init__(self, model: RagdollModel, drive: CheckedDrive, settings: RagdollSettings):
        self.model, self.drive, self.settings = model, drive, settings
        self.h = float(settings.substep)
        self.fallen = np.zeros(model.n_ragdolls, dtype=bool)
        self.fallen_version = 0
        self.fell_at = np.full(model.n_ragdolls, -1, dtype=np.int64)
        self.levels = [
            Level(model, drive, settings, np.flatnonzero(model.level == lv), self)
            for lv in range(model.n_levels)
        ]
        self.level_of_body = np.full(model.n_bodies, -1, dtype=np.int64)
        for i, lv in enumerate(self.levels):
            self.level_of_body[lv.bodies] = i
        self.records: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in self.levels]
        # Each level's pose one substep before the last off-grid frame time crossed: it stays
        # valid while no substep runs, so a frame between the same two substeps as the one
        # before it (a Substep Rate under the frame rate) blends them too (`chunk`).
        self.before: list[tuple[np.ndarray, np.ndarray] | None] = [None for _ in self.levels]
        # The still planes (the ground): the blended output is lifted out of them
        # (`blend.lift_above_planes`).
        cm = drive.collider_matrix
        still = [k for k in np.flatnonzero(model.colliders.kind == ColliderKind.PLANE)
                 if np.all(cm[:, k] == cm[:1, k])]
        self.still_planes = (np.array(still, dtype=np.int64),
                             cm[0, still] if len(cm) else np.zeros((0, 4, 4)))
        self._colliders_key = None
        self._colliders = None
        # Colliders that never move (a ground, walls) give the same ColliderFrame every
        # substep: built once.
        cm = drive.collider_matrix
        self.moving_colliders = np.any(cm != cm[:1], axis=(0, 2, 3))
        self._static_colliders = not self.moving_colliders.any()

    def colliders_at(self, sub: Substep):
        """The colliders at the end of substep `sub` (interpolated matrices, cached)."""
        key = (sub.f, sub.alpha) if not self._static_colliders else "static"
        if key != self._colliders_key:
            cm = self.drive.collider_matrix
            f = sub.f
            g = min(f + 1, self.drive.frames - 1)
            M = lerp_affine(cm[f], cm[g], sub.alpha)
            self._colliders = self.levels[0].contacts.frame(M) if self.levels else None
            self._colliders_key = key
        return self._colliders

    def carrier_delta(self, carrier: np.ndarray, sub: Substep, k: int):
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

    def chunk(self, subs: list[Substep], T: float | None, n0: int
              ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Run every level over the substeps `subs` (starting at substep index n0); return each
        level's pose at time T (interpolated between substeps when T is off the grid)."""
        h = self.h
        out = []
        for li, level in enumerate(self.levels):
            self.records[li] = []
            before = self.before[li] if T is not None else None
            for k, sub in enumerate(subs):
                n_end = n0 + k + 1
                if T is not None and n_end * h > T + _TIME_EPS:
                    before = self.before[li] = level.pose()
                level.step(sub, k)
                self.records[li].append(level.pose())
            x, q = self.records[li][-1] if subs else level.pose()
            if before is not None and T is not None and (n0 + len(subs)) * h > T + _TIME_EPS:
                n_end = n0 + len(subs)
                wgt = (T - (n_end - 1) * h) / h
                if abs(wgt - 1.0) > 1e-12:
                    x = before[0] + wgt * (x - before[0])
                    q = nlerp(before[1], q, wgt)
            out.append((x, q))
        return out

    def frames(self) -> Iterator[tuple[int, int]]:
        model, drive, h = self.model, self.drive, self.h
        F, fps, N = drive.out_frames, drive.out_fps, model.n_bodies
        physics = self.physics = np.empty((F, N, 4, 4))
        n_pre = int(round(self.settings.preroll_frames / fps / h))
        pre = [Substep(0, 0.0, True)] * n_pre
        poses = self.chunk(pre, None, -n_pre) if n_pre else [lv.pose() for lv in self.levels]
        self._store(physics, 0, poses)
        self._fall_checks(0, poses)
        self.substeps = n_pre
        self._next = 0  # the next substep to run
        yield 1, F
        sample = 1  # the next sample whose time the root lock's fall test runs at
        for i in range(1, F):
            T = i / fps
            # The fall test runs at the samples' times, not the output frames' (so every frame
            # rate lets go at the same instant), in order with the substeps it changes.
            while sample < drive.frames and sample / drive.fps < T - _TIME_EPS:
                self._fall_checks(sample, self._advance(sample / drive.fps))
                sample += 1
            poses = self._advance(T)
            self._store(physics, i, poses)
            if sample < drive.frames and sample / drive.fps <= T + _TIME_EPS:
                self._fall_checks(sample, poses)
                sample += 1
            yield i + 1, F
        self.result = RagdollResult(body_matrix=self.shown(np.arange(F)), physics_matrix=physics,
                                    fell_at=self.fell_at.copy(), substeps=self.substeps)

    def _advance(self, T: float) -> list[tuple[np.ndarray, np.ndarray]]:
        """Run the substeps up to time T; every level's pose at T."""
        h, drive, n = self.h, self.drive, self._next
        n_stop = n
        while n_stop * h < T - _TIME_EPS:
            n_stop += 1
        subs = [Substep(*frame_interval((m + 1) * h, drive.fps, drive.frames), False)
                for m in range(n, n_stop)]
        self.substeps += len(subs)
        self._next = n_stop
        return self.chunk(subs, T, n)

    def _matrices(self, level: Level, pose, mode: np.ndarray, target: np.ndarray) -> np.ndarray:
        """The level's body frames (n, 4, 4) of `pose`, its kinematic bodies (by `mode` (N,))
        exactly on `target` (N, 4, 4)."""
        m = level.frame_matrices(*pose)
        if not level.carried:
            kin = mode[level.bodies] == BodyMode.KINEMATIC
            kin &= ~level.fallen_body()
            m[kin] = target[level.bodies[kin]]
        return m

    def _store(self, physics: np.ndarray, i: int, poses) -> None:
        """Output frame i: the bodies' frames, checked for divergence."""
        drive = self.drive
        for level, pose in zip(self.levels, poses, strict=True):
            m = self._matrices(level, pose, drive.out_params["mode"][i], drive.out_target[i])
            physics[i, level.bodies] = m
            self._check(level, m, i)

    def _fall_checks(self, s: int, poses) -> None:
        """The fall test of every level at sample s, with the poses at its time."""
        if not np.any(self.drive.params["root_lock"][s]):
            return
        drive = self.drive
        frames = np.empty((self.model.n_bodies, 4, 4))
        for level, pose in zip(self.levels, poses, strict=True):
            frames[level.bodies] = self._matrices(level, pose, drive.params["mode"][s],
                                                  drive.target[s])
        for level in self.levels:
            self._fall_check(level, frames, s)

    def _check(self, level: Level, m: np.ndarray, i: int) -> None:
        gap = np.linalg.norm(m[:, :3, 3] - self.drive.out_origin[i, level.bodies], axis=-1)
        bad = ~(gap <= DIVERGENCE_BOUND) | ~np.isfinite(m).all(axis=(1, 2))
        if np.any(bad):
            j = int(np.argmax(bad))
            body = int(level.bodies[j])
            r = int(self.model.ragdoll_of_body[body])
            raise DivergenceError(self.model.setup_names[r], i,
                                  f"bone '{self.model.names[body]}' is "
                                  + ("not finite" if not np.isfinite(gap[j])
                                     else f"{gap[j]:.3g} m from its target"))

    def _fall_check(self, level: Level, frames: np.ndarray, s: int) -> None:
        """Release the root lock for good when the root is further than fall_threshold from its
        target (seed 004's stormtrooper against a wall; PuppetMaster's knock-out distance), at
        sample s with the bodies' `frames` (N, 4, 4) at its time. `fell_at` is the first output
        frame at or after it."""
        drive, model = self.drive, self.model
        P = drive.params
        for r in level.ragdolls:  # loop over ragdolls (a handful), not bodies
            if self.fallen[r] or not P["root_lock"][s, r]:
                continue
            root = int(model.root[r])
            target = drive.target[s, root]
            c = int(model.carrier[r, 1])
            if c >= 0:  # the target rides on the carrier's simulated body
                target = frames[c] @ np.linalg.inv(drive.target[s, c]) @ target
            gap = float(np.linalg.norm(frames[root, :3, 3] - target[:3, 3]))
            if gap > P["fall_threshold"][s, r]:
                self.fallen[r] = True
                self.fallen_version += 1
                self.fell_at[r] = int(np.ceil(s / drive.fps * drive.out_fps - 1e-9))

    def shown(self, frames: np.ndarray) -> np.ndarray:
        """(len(frames), N, 4, 4) world body frames of the solved `frames` after the local-space
        output blend. Each frame depends only on itself and the frames before it (a recovery
        blend starts at the fall, which is decided at its frame), so a frame shown as soon as
        it is solved (a live preview) is bit for bit the bake's."""
        model, drive = self.model, self.drive
        physics = self.physics[frames]
        params = drive.out_params
        blend = params["blend"][frames].copy()
        kinematic = params["mode"][frames] == BodyMode.KINEMATIC
        for r in range(model.n_ragdolls):
            fell = int(self.fell_at[r])
            after = frames >= fell
            if fell < 0 or not after.any():
                continue
            sl = slice(model.body_offset[r], model.body_offset[r + 1])
            blend[after, sl] = recovery_weight(
                frames[after], fell=fell, fps=drive.out_fps,
                delay=float(params["recovery_delay"][fell, r]),
                duration=float(params["recovery_time"][fell, r]))[:, None]
            kinematic[after, sl] = False
        target = drive.out_target[frames].copy()
        carried_bodies = np.flatnonzero(model.carrier[model.ragdoll_of_body, 1] >= 0)
        if len(carried_bodies):
            cb = model.carrier[model.ragdoll_of_body[carried_bodies], 1]
            delta = physics[:, cb] @ np.linalg.inv(drive.out_target[frames][:, cb])
            target[:, carried_bodies] = delta @ target[:, carried_bodies]
            kinematic[:, carried_bodies] = False  # they follow the (blended) carrier below
        body = local_blend(physics=physics, target=target, blend=blend, parent=model.parent,
                           depth=model.depth, kinematic=kinematic)
        for r in range(model.n_ragdolls):
            sl = slice(model.body_offset[r], model.body_offset[r + 1])
            # (decided frame by frame: a streamed frame is the bake's)
            mixed = np.any(blend[:, sl] > 0.0, axis=1) & ~np.all(blend[:, sl] >= 1.0, axis=1)
            if model.carrier[r, 1] < 0 and mixed.any():
                lift_above_planes(shown=body, physics=physics, target=target,
                                  length=model.length, radius=model.radius,
                                  mask=model.collider_mask, planes=self.still_planes,
                                  bodies=sl, mixed=mixed)
        # Carried ragdolls ride on the carrier body as it is finally shown (after its blend).
        for lv in self.levels:
            if not lv.carried:
                continue
            cb = lv.carrier_of_body
            delta = body[:, cb] @ np.linalg.inv(physics[:, cb])
            body[:, lv.bodies] = delta @ body[:, lv.bodies]
        return body


def recovery_weight(frames: np.ndarray, *, fell: int, fps: float, delay: float,
                    duration: float) -> np.ndarray:
    """Blend toward the animation after a fall at frame `fell`: 0 until `delay` seconds have
    passed, then a smoothstep 3u² - 2u³ to 1 over `duration` seconds (C1: the shown pose
    leaves the simulation and meets the animation without a jump in position or velocity)."""
    t = (frames - fell) / fps - delay
    if not np.isfinite(delay):
        return np.zeros(len(frames))
    if duration <= 0.0:
        return (t >= 0.0).astype(np.float64)
    u = np.clip(t / duration, 0.0, 1.0)
    return u * u * (3.0 - 2.0 * u)


class RagdollJob(FrameJob):
    """Iterator over a bake, one frame per `next()`: yields (frames_done, total); afterwards
    `result` holds the `RagdollResult`. Dropping it cancels (nothing is returned early)."""

    def __init__(self, model: RagdollModel, drive: RagdollDrive, settings: RagdollSettings):
        settings.validate()
        checked = validate_drive(model, drive)
        run = _Run(model, checked, settings)
        super().__init__(run, run.frames(), checked.out_frames)


class RagdollStream(FrameStream):
    """The bake's frame loop one frame at a time, each frame's shown pose at once (a live
    preview steps it as the timeline plays): `step()` solves the next drive frame and returns its
    world body frames after the output blend, bit for bit the bake's frame (``_Run.shown``).
    After the last frame `result()` is the bake's ``RagdollResult``."""

    def __init__(self, model: RagdollModel, drive: RagdollDrive,
                 settings: RagdollSettings | None = None):
        settings = settings if settings is not None else RagdollSettings()
        settings.validate()
        checked = validate_drive(model, drive)
        run = _Run(model, checked, settings)
        super().__init__(run, run.frames(), checked.out_frames)

    def step(self) -> np.ndarray:
        """Solve the next frame; its (N, 4, 4) world body frames as shown."""
        return self._runner.shown(np.array([self.advance()]))[0]

    @property
    def fell_at(self) -> np.ndarray:
        """(R,) the drive frame each ragdoll's root lock released at so far, -1 = not yet."""
        return self._runner.fell_at.copy()


def bake_ragdoll_steps(model: RagdollModel, drive: RagdollDrive,
                       settings: RagdollSettings | None = None) -> RagdollJob:
    """Validate, then return an iterator yielding (frames_done, total) per baked frame."""
    return RagdollJob(model, drive, settings if settings is not None else RagdollSettings())


def bake_ragdoll(model: RagdollModel, drive: RagdollDrive, settings: RagdollSettings | None = None,
                 *, progress: Callable[[int, int], None] | None = None) -> RagdollResult:
    """Bake the whole range; raises SetupError / DivergenceError before returning anything."""
    return run_job(bake_ragdoll_steps(model, drive, settings), progress)
