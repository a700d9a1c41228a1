"""Live preview: see the bone chains', cloth cages', rods', hair guides' and ragdolls'
simulation while the timeline plays, without baking.

With *Preview* on (``Scene.waft.use_preview``: the Waft scene panel, the sidebar and the
timeline header), a ``frame_change_post`` handler steps the bake's own solvers
(``strands/preview.py``, ``cloth/preview.py``) one frame per timeline frame from the scene's
first frame and puts the result on the bones; no key is written. (Ragdolls and rods read the
whole shot at the first frame: ``ragdoll/preview.py``, ``cloth/rod_preview.py``.) Played from
the first frame the preview shows, frame for frame, bit for bit what *Bake* writes (the tests
play the frames and compare with the baked F-curves).

- **Cache.** Every simulated frame is kept (``MAX_CACHED_BONE_FRAMES``), so scrubbing back over
  them is instant. A change to anything the simulation reads (a Waft setting of the scene, an
  armature, a bone or a collider, a key of their animation, an unanimated collider's or
  armature's transform, the frame range or rate) is noticed at the next frame change
  (``fingerprint``) and drops the cache: the preview starts over from the first frame.
- **Jumps.** A frame up to ``CATCH_UP_FRAMES`` after the last simulated one is reached by
  simulating every frame in between (playback that drops frames keeps the state right); a
  farther jump, or a frame before the first, shows the animation and says to play from the
  first frame.
- **Cost.** Milliseconds per simulated frame against the frame time are shown; when slower,
  the status says so (frames are never skipped in the simulation).

Every system is previewed: bone chains, cloth cages, rods, hair Curves guides and ragdolls.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
import time
from dataclasses import dataclass, field

import bpy
import numpy as np

from ..core.errors import DivergenceError, SetupError
from . import reading, sampling_scope
from .compat import action_fcurves
from .sampling import animated_channels, frame_kept, is_result_or_rest_track

CATCH_UP_FRAMES = 12  # frames simulated on one frame change, at most, to reach a later frame
# Bone rotations (or hair guide points) kept for scrubbing; older frames are dropped.
MAX_CACHED_BONE_FRAMES = 2_000_000

_previews: dict[str, Preview] = {}
_busy = False  # the handler is running (sampling sets frames, which calls it again)


@dataclass
class Preview:
    """The preview state of one scene."""

    fingerprint: str = ""
    run: object = None  # Runs (every system's run), or None before the first frame
    cache: dict = field(default_factory=dict)  # {frame: what it shows}
    cost_ms: float = 0.0  # per simulated frame, the latest
    frame_ms: float = 0.0  # the scene's frame time
    message: str = ""  # why the current frame shows the animation, or the error
    showing: int | None = None  # the frame whose simulation is on the bones
    loop: bool = False  # the scene's Loop is on (the bake then differs from the preview)

    def status(self) -> str:
        if self.message:
            return self.message
        if not self.cache:
            return "Play from the first frame to preview"
        first, last = min(self.cache), max(self.cache)
        text = f"Simulated {first}–{last}, {self.cost_ms:.1f} ms/frame"
        notes = self.run.notes() if self.run is not None else ""
        if notes:
            text += f"; {notes}"
        if self.loop:
            text += "; Loop is on: the bake blends a seamless cycle, the preview plays straight"
        if self.cost_ms > self.frame_ms > 0.0:
            text += f" (slower than the {self.frame_ms:.0f} ms frame time: no frame is skipped)"
        return text


def state(scene) -> Preview | None:
    return _previews.get(scene.name)


# --------------------------------------------------------------------------------------------
# What the simulation reads, hashed.


def _hash_group(h, group, animated: dict | None = None, path: str = "") -> None:
    """Every plain property of a property group (``ob.waft``, a bone's, a collider's), but the
    ones ``animated`` (``_animated_settings``) names for its data path ``path``: their keys are
    hashed with the animation, and their value changes from frame to frame (a keyed wind used
    to start the preview over on every frame)."""
    values = reading.settings_values(group)
    skip = animated.get(path) if animated else None
    if skip:
        values = tuple(None if name in skip else value for (name, _), value
                       in zip(reading.plain_properties(group), values, strict=True))
    h.update(repr(values).encode())


def _hash_body_settings(h, bone, animated: dict) -> None:
    """A ragdoll body's per-frame settings: properties of the pose bone itself
    (``PoseBone.waft_ragdoll_<name>``, so that Insert Keyframe works on them), not of its
    group; the animated ones left out (``_hash_group``)."""
    from .ragdoll.properties import ANIMATED_BODY_SETTINGS, BONE_PREFIX

    skip = animated.get(f'pose.bones["{bone.name}"]', ())
    h.update(repr(tuple(None if BONE_PREFIX + name in skip else getattr(bone, BONE_PREFIX + name)
                        for name in ANIMATED_BODY_SETTINGS)).encode())


def _animated_settings(paths: set[str]) -> dict[str, set[str]]:
    """``{owner path: names of its animated properties}`` of the animated data paths ``paths``
    (``waft.wind_speed`` → ``{"waft": {"wind_speed"}}``, ``pose.bones["B"].waft_ragdoll_blend``
    → ``{'pose.bones["B"]': {"waft_ragdoll_blend"}}``)."""
    animated: dict[str, set[str]] = {}
    for path in paths:
        owner, _, name = path.rpartition(".")
        animated.setdefault(owner, set()).add(name)
    return animated


def _hash_animation(h, ob) -> None:
    """The keys, modifiers and drivers of everything the user animates ``ob`` with (Waft's own
    result and rest tracks left out), the NLA stack's mute and influence too."""
    anim_data = ob.animation_data
    if anim_data is None:
        return
    actions = [anim_data.action]
    for track in anim_data.nla_tracks:
        if is_result_or_rest_track(track.name):
            continue
        h.update(repr((track.name, track.mute, track.is_solo)).encode())
        for strip in track.strips:
            actions.append(strip.action)
            h.update(repr((strip.frame_start, strip.frame_end, strip.influence, strip.mute,
                           strip.blend_type, strip.repeat, strip.scale)).encode())
    fcurves = [fc for action in actions if action is not None for fc in action_fcurves(action)]
    for fc in fcurves + list(anim_data.drivers):
        h.update(repr((fc.data_path, fc.array_index, fc.mute, len(fc.modifiers),
                       fc.extrapolation)).encode())
        parts = []
        for name in ("co", "handle_left", "handle_right"):
            part = np.empty(len(fc.keyframe_points) * 2, dtype=np.float32)
            fc.keyframe_points.foreach_get(name, part)
            parts.append(part)
        points = np.concatenate(parts)
        h.update(points.tobytes())
        h.update(repr([k.interpolation for k in fc.keyframe_points]).encode())
        if fc.driver is not None:
            h.update(fc.driver.expression.encode())


TRANSFORM = ("location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle",
             "scale", "delta_location", "delta_rotation_euler", "delta_rotation_quaternion",
             "delta_scale")
POSE_CHANNELS = (("location", 3), ("rotation_quaternion", 4), ("rotation_euler", 3),
                 ("rotation_axis_angle", 4), ("scale", 3))
_BONE_CHANNEL = re.compile(r'^pose\.bones\["((?:[^"\\]|\\.)*)"\]\.(\w+)$')


def _static(values, prop: str, animated: set) -> tuple:
    """``values`` with the indices an F-curve or driver animates (``animated``: (path, index))
    left out: those change from frame to frame and are hashed with the animation."""
    return tuple(None if (prop, i) in animated else v for i, v in enumerate(values))


def _hash_transform(h, ob, animated: set) -> None:
    """The object's own transform channels that nothing animates, its rotation mode and its
    parenting, and the same up its parent chain with the parents' animation: a parent empty
    moved by hand (the armature's world space) went unseen."""
    h.update(repr((ob.rotation_mode, tuple(_static(getattr(ob, prop), prop, animated)
                                           for prop in TRANSFORM))).encode())
    parent = ob.parent
    if parent is not None:
        h.update(repr((parent.name, ob.parent_type, ob.parent_bone,
                       tuple(map(tuple, ob.matrix_parent_inverse)))).encode())
        _hash_transform(h, parent, animated_channels(parent, skip_track=is_result_or_rest_track))
        _hash_animation(h, parent)


def _driven_bones(ob, objects, names: list[str]) -> list[str]:
    """The bones of armature ``ob`` a Waft system writes: ``names`` (its chains and ragdoll
    bodies), and the bones a cage in ``objects`` drives and its rods: the preview shows its
    result on their channels, so their pose values are not inputs (their static values are
    the rest channels, read apart)."""
    for cage in objects:
        if cage.type == 'MESH' and cage.waft_cloth.enabled and cage.waft_cloth.armature == ob:
            names += [item.bone for item in cage.waft_cloth.bones]
    if ob.waft_rod.enabled:
        for item in ob.waft_rod.chains:
            bone = ob.pose.bones.get(item.root)
            while bone is not None:  # (as rods._chain: a fork ends the rod)
                names.append(bone.name)
                bone = bone.children[0] if len(bone.children) == 1 else None
    return names


def _hash_pose(h, ob, animated: set, driven: list[str]) -> None:
    """An armature's rest bones (head, tail, roll: Edit Mode) and every pose channel nothing
    animates (a pose scale typed in changes the chains' rest), but the ``driven`` bones'."""
    bones = ob.data.bones
    rest = np.empty(len(bones) * 16, dtype=np.float32)
    bones.foreach_get("matrix_local", rest)
    lengths = np.empty(len(bones), dtype=np.float32)
    bones.foreach_get("length", lengths)
    h.update(rest.tobytes() + lengths.tobytes())
    pose = ob.pose.bones
    keyed = _keyed_pose_channels(frozenset(animated), tuple(pose.keys()), tuple(driven))
    for prop, size in POSE_CHANNELS:
        values = np.empty(len(pose) * size, dtype=np.float32)
        pose.foreach_get(prop, values)
        values[keyed.get(prop, [])] = 0.0  # (the animated ones: hashed with the animation)
        h.update(values.tobytes())


@functools.lru_cache(maxsize=8)
def _keyed_pose_channels(animated: frozenset, names: tuple, driven: tuple
                         ) -> dict[str, list[int]]:
    """{pose channel: flat indices into its ``foreach_get`` array} of the animated ones and of
    every channel of the ``driven`` bones."""
    index = {name: b for b, name in enumerate(names)}
    sizes = dict(POSE_CHANNELS)
    keyed: dict[str, list[int]] = {prop: [index[name] * size + i for name in driven
                                          if name in index for i in range(size)]
                                   for prop, size in POSE_CHANNELS}
    for path, i in animated:
        m = _BONE_CHANNEL.match(path)
        if m is None or m.group(2) not in sizes:
            continue
        b = index.get(m.group(1).replace('\\"', '"'))
        size = sizes[m.group(2)]
        if b is not None and i < size:
            keyed.setdefault(m.group(2), []).append(b * size + i)
    return keyed


def _hash_constraints(h, bone, keyed: bool) -> None:
    """A pose bone's constraints: names, types (in the names, as Blender gives them), mute and
    influence (unless ``keyed``: some constraint's setting of the bone is animated). Read in
    bulk: one attribute read per setting of every constraint cost a generated Rigify rig (384
    constrained bones) 7 ms a frame."""
    constraints = bone.constraints
    n = len(constraints)
    values = np.empty(2 * n, dtype=np.float32)
    constraints.foreach_get("influence", values[:n])
    mute = np.empty(n, dtype=bool)
    constraints.foreach_get("mute", mute)
    values[n:] = mute
    if keyed:  # (hashed with the keys)
        values[:n] = 0.0
    h.update(repr(constraints.keys()).encode() + values.tobytes())


def fingerprint(scene, objects, colliders) -> str:
    """A hash of everything the preview's simulation of ``objects`` (armatures) reads."""
    h = hashlib.blake2b(digest_size=16)
    settings = scene.waft
    h.update(repr((scene.frame_start, scene.frame_end, scene.use_preview_range,
                   scene.frame_preview_start, scene.frame_preview_end, scene.render.fps,
                   scene.render.fps_base, tuple(scene.gravity), scene.use_gravity,
                   scene.unit_settings.scale_length, settings.substep_rate,
                   settings.sample_rate, settings.iterations, settings.preroll)).encode())
    for ob in list(objects) + list(colliders):
        h.update(ob.name.encode())
        channels = animated_channels(ob, skip_track=is_result_or_rest_track)
        paths = {path for path, _ in channels}
        animated = _animated_settings(paths)
        _hash_transform(h, ob, channels)
        if ob.type == 'EMPTY':  # a collider's shape and size (Auto: the display type)
            h.update(repr((ob.empty_display_type, ob.empty_display_size)).encode())
        name = "waft_collider" if ob in colliders else "waft"
        _hash_group(h, getattr(ob, name), animated, name)
        if ob.type == 'ARMATURE' and ob in objects:
            for name in ("waft_ragdoll", "waft_rod", "waft_hair"):  # waft_hair: render strands
                _hash_group(h, getattr(ob, name), animated, name)
            for i, chain in enumerate(ob.waft_rod.chains):
                _hash_group(h, chain, animated, f"waft_rod.chains[{i}]")
            # Every bone's membership; the settings only of the bones that use them (the
            # strand readers read a bone's only when it simulates, the ragdoll's only on a
            # body): a generated Rigify rig has 700 bones, which cost 20 ms a frame.
            driven = []
            for bone in ob.pose.bones:
                waft, ragdoll = bone.waft, bone.waft_ragdoll
                simulate, body = waft.simulate, ragdoll.body
                h.update(bytes((simulate, body)))
                if simulate:
                    _hash_group(h, waft)
                if body:
                    _hash_group(h, ragdoll)
                    _hash_body_settings(h, bone, animated)
                if simulate or body:
                    driven.append(bone.name)
                    h.update(bone.rotation_mode.encode())
            driven = _driven_bones(ob, objects, driven)
            _hash_pose(h, ob, channels, driven)
            # The constraints of the driven bones and of their parents up to the root (those
            # move what the chains hang from; a generated Rigify rig has 384 constrained
            # bones, all of them read cost 2-4 ms a frame).
            keyed = {owner[: owner.index(".constraints[")] for owner in animated
                     if ".constraints[" in owner}
            seen = set()
            for name in driven:
                bone = ob.pose.bones.get(name)
                while bone is not None and bone.name not in seen:
                    seen.add(bone.name)
                    if bone.constraints:
                        _hash_constraints(h, bone, f'pose.bones["{bone.name}"]' in keyed)
                    bone = bone.parent
        if ob.type == 'CURVES':
            _hash_group(h, ob.waft_hair, animated, "waft_hair")
            co = np.empty(len(ob.data.points) * 3, dtype=np.float32)
            ob.data.position_data.foreach_get("vector", co)  # the groom
            h.update(co.tobytes())
        if ob.type == 'MESH' and ob.waft_cloth.enabled:
            _hash_group(h, ob.waft_cloth, animated, "waft_cloth")
            co = np.empty(len(ob.data.vertices) * 3, dtype=np.float32)
            ob.data.vertices.foreach_get("co", co)  # the cage's own shape
            h.update(co.tobytes())
        if not paths and ob.parent is None:
            h.update(np.array(ob.matrix_world, dtype=np.float64).tobytes())
        _hash_animation(h, ob)
    return h.hexdigest()


def _chain_armatures(scene) -> list:
    return [ob for ob in scene.objects if ob.type == 'ARMATURE' and ob.waft.enabled]


def _cages(scene) -> list:
    from .cloth.reading import is_cage

    return [ob for ob in scene.objects if is_cage(ob)]


def _ragdolls(scene) -> list:
    from .ragdoll.system import claims

    return [ob for ob in scene.objects if claims(ob)]


def _rod_armatures(scene) -> list:
    from .cloth.rods import claims

    return [ob for ob in scene.objects if claims(ob)]


def _grooms(scene) -> list:
    from .hair.system import claims

    return [ob for ob in scene.objects if claims(ob)]


def _inputs(scene) -> tuple[list, list]:
    """The objects the preview simulates (armatures with bone chains or a ragdoll and what
    carries them, cloth cages and the armatures they drive, hair Curves and their surfaces)
    and the colliders in the scene."""
    objects = {ob.name: ob for ob in _chain_armatures(scene)}
    for ob in _rod_armatures(scene):
        objects[ob.name] = ob
    for ragdoll in _ragdolls(scene):
        objects[ragdoll.name] = ragdoll
        if ragdoll.parent is not None:  # a carrier ragdoll, or what the armature rides on
            objects[ragdoll.parent.name] = ragdoll.parent
    for cage in _cages(scene):
        objects[cage.name] = cage
        armature = cage.waft_cloth.armature
        if armature is not None:
            objects[armature.name] = armature
    for groom in _grooms(scene):
        objects[groom.name] = groom
        if groom.data.surface is not None:
            objects[groom.data.surface.name] = groom.data.surface
    colliders = [ob for ob in scene.objects if ob.waft_collider.enabled]
    return sorted(objects.values(), key=lambda ob: ob.name), sorted(colliders,
                                                                    key=lambda ob: ob.name)


class Runs:
    """Every system's preview run (``strands.preview.PreviewRun``, ``cloth.preview
    .ClothPreviewRun``), stepped together one frame at a time."""

    def __init__(self, runs: list):
        self.runs = runs

    @property
    def next_frame(self) -> int:
        return self.runs[0].next_frame

    def step(self) -> list:
        # Every run's bones back to the animation before any run samples the scene: one
        # system's preview pose is never read as another's input (the bake samples each with
        # the others' bones unkeyed too).
        if len(self.runs) > 1:
            self.restore_static()
        return [item for run in self.runs for item in run.step()]

    def restore_static(self) -> None:
        for run in self.runs:
            run.restore_static()

    def result_for(self, inputs, settings):
        """The bone chains' result for a bake (``strands.preview.PreviewRun.result_for``)."""
        from .strands.preview import PreviewRun

        for run in self.runs:
            if isinstance(run, PreviewRun):
                return run.result_for(inputs, settings)
        return None

    def system_result_for(self, kind: type, model, drive, settings):
        """The result of the run of class ``kind`` (``ClothPreviewRun``, ``RagdollPreviewRun``,
        ``RodPreviewRun``, ``HairPreviewRun``) for a bake whose solver input is ``model``,
        ``drive`` and ``settings`` (its ``result_for``), None without such a run."""
        for run in self.runs:
            if isinstance(run, kind):
                return run.result_for(model, drive, settings)
        return None

    @property
    def startup_ms(self) -> float:
        """Time spent reading whole shots up front (the ragdolls' first frame): not a frame's
        cost."""
        return sum(getattr(run, "sample_ms", 0.0) for run in self.runs)

    def notes(self) -> str:
        """What the runs add to the status: the ragdolls' and VRM spring bones' reading of the
        shot at the first frame, and the falls so far."""
        from .ragdoll.preview import RagdollPreviewRun
        from .strands.preview import PreviewRun

        parts = []
        for run in self.runs:
            if isinstance(run, PreviewRun) and run.vrm is not None:
                parts.append(f"VRM spring bones solved over the shot in {run.sample_ms:.0f} ms "
                             "at the first frame")
            if isinstance(run, RagdollPreviewRun) and run.stream is not None:
                parts.append(f"ragdolls read the shot in {run.sample_ms:.0f} ms at the first "
                             "frame")
                parts += [f"{name} fell at frame {frame}" for name, frame in run.fell_at()]
        return "; ".join(parts)


def _new_run(scene) -> Runs:
    from .bake_api import solver_settings
    from .cloth.preview import ClothPreviewRun
    from .cloth.rod_preview import RodPreviewRun
    from .hair.preview import HairPreviewRun
    from .ragdoll.preview import RagdollPreviewRun
    from .strands.preview import PreviewRun

    settings = solver_settings(scene)
    runs = []
    if _chain_armatures(scene):
        runs.append(PreviewRun(scene, settings=settings))
    if _cages(scene):
        runs.append(ClothPreviewRun(scene, settings=settings))
    if _grooms(scene):
        runs.append(HairPreviewRun(scene, settings=settings))
    if _rod_armatures(scene):
        runs.append(RodPreviewRun(scene, settings=settings))
    if _ragdolls(scene):
        runs.append(RagdollPreviewRun(scene, settings=settings))
    return Runs(runs)


def _drawn(scene, kind: str) -> list:
    """``[(name, payload), …]``: the entries of ``kind`` the preview shows at the current frame
    (entries without an object: drawn by the overlay, never written)."""
    preview = _previews.get(scene.name)
    if preview is None or preview.showing is None or not scene.waft.use_preview:
        return []
    return [(name, payload) for ob, name, prop, payload in preview.cache.get(preview.showing, ())
            if ob is None and prop == kind]


def shown_guides(scene) -> list:
    """``[(curves name, (G, P, 3) float32 points in its space, its world matrix), …]`` the
    preview shows at the current frame (drawn by the overlay), [] when none."""
    from .hair.preview import GUIDES

    return [(name, *payload) for name, payload in _drawn(scene, GUIDES)]


def shown_cages(scene) -> list:
    """``[(cage name, cloth.preview.ShownCage), …]``: the simulated cloth cages the preview
    shows at the current frame (drawn by the overlay; the cage mesh itself is never written)."""
    from .cloth.preview import CAGE

    return _drawn(scene, CAGE)


def shown_strands(scene) -> list:
    """``[(owner name, hair.preview_strands.ShownStrands), …]``: the render strands the preview
    shows at the current frame (their ``positions()`` are the bake's)."""
    from .hair.preview_strands import STRANDS

    return _drawn(scene, STRANDS)


# --------------------------------------------------------------------------------------------
# The handler.


@contextlib.contextmanager
def suspended():
    """While the block runs, no bone shows a preview pose and no frame change steps the
    preview: a bake, a settled-pose capture, a limit fit or an export reads the animator's own
    pose of the unkeyed bones (the bake keeps it on its rest track) and samples the animation.
    Read with the preview's pose on the bones, a bake used to key it as the rest pose. The cache
    stays: the bones show it again at the next frame change."""
    global _busy
    was_busy = _busy
    _busy = True
    try:
        for preview in _previews.values():
            if preview.run is not None:
                with contextlib.suppress(ReferenceError):  # the object itself went away
                    preview.run.restore_static()
            preview.showing = None
        yield
    finally:
        _busy = was_busy


def solved(scene, inputs, settings):
    """The preview's result for a bake of ``scene`` whose solver input is ``inputs``, when the
    preview has played the whole range from bit-identical input and settings; else None
    (``PreviewRun.result_for``). *Bake* then writes it without solving again."""
    preview = _previews.get(scene.name)
    if preview is None or preview.run is None:
        return None
    try:
        return preview.run.result_for(inputs, settings)
    except ReferenceError:  # an object the run held is gone: the bake solves
        return None


def _solved(scene, kind: type, model, drive, settings):
    preview = _previews.get(scene.name)
    if preview is None or preview.run is None:
        return None
    try:
        return preview.run.system_result_for(kind, model, drive, settings)
    except ReferenceError:  # an object the run held is gone: the bake solves
        return None


def solved_cloth(scene, model, drive, settings):
    """``solved`` for the cloth cages: the preview's ``ClothResult`` when it has played the
    bake's exact input, else None."""
    from .cloth.preview import ClothPreviewRun

    return _solved(scene, ClothPreviewRun, model, drive, settings)


def solved_ragdoll(scene, model, drive, settings):
    """``solved`` for the ragdolls (``RagdollResult``)."""
    from .ragdoll.preview import RagdollPreviewRun

    return _solved(scene, RagdollPreviewRun, model, drive, settings)


def solved_hair(scene, model, drive, settings):
    """``solved`` for the hair Curves guides (``BakeResult``)."""
    from .hair.preview import HairPreviewRun

    return _solved(scene, HairPreviewRun, model, drive, settings)


def solved_rods(scene, model, drive, settings):
    """``solved`` for the rods (``RodResult``)."""
    from .cloth.rod_preview import RodPreviewRun

    return _solved(scene, RodPreviewRun, model, drive, settings)


def _show_animation(preview: Preview, message: str) -> None:
    if preview.run is not None:
        preview.run.restore_static()
    preview.showing = None
    preview.message = message


def _drop(preview: Preview) -> None:
    """Forget the run and its frames (the bones go back to the animation)."""
    if preview.run is not None:
        preview.run.restore_static()
    preview.run, preview.cache, preview.showing = None, {}, None


def _simulate_to(scene, preview: Preview, frame: int) -> None:
    run = preview.run
    if run is None:
        run = preview.run = _new_run(scene)
    t0, startup = time.perf_counter(), run.startup_ms
    count = 0
    # Only what the simulation reads is evaluated while it samples (sub-frames too); the rest
    # is given back before the frame itself is set again, so the view never shows it hidden.
    with frame_kept(scene), sampling_scope.unneeded_hidden(scene):
        while run.next_frame <= frame:
            simulated = run.next_frame
            preview.cache[simulated] = run.step()
            count += 1
    elapsed = 1000.0 * (time.perf_counter() - t0) - (run.startup_ms - startup)
    preview.cost_ms = elapsed / max(count, 1)
    bones = sum(_size(v) for v in preview.cache.values())
    while bones > MAX_CACHED_BONE_FRAMES and len(preview.cache) > 1:
        bones -= _size(preview.cache.pop(min(preview.cache)))


def _size(frame_pose: list) -> int:
    """What one cached frame holds: a bone per entry, a point per point drawn or kept to draw
    (hair guides' points; render strands' and cages' ``held``)."""
    return sum(_held(ob, payload) for ob, _, _, payload in frame_pose)


def _held(ob, payload) -> int:
    if ob is not None:
        return 1
    held = getattr(payload, "held", None)
    return held if held is not None else payload[0].size // 3


def update(scene) -> None:
    """Show the current frame's simulation (simulating up to it when needed)."""
    from .preview_channels import show

    preview = _previews.setdefault(scene.name, Preview())
    frame = scene.frame_current
    objects, colliders = _inputs(scene)
    if not objects:
        _drop(preview)
        preview.message = "No bone chains, cloth cages, rods, hair guides or ragdolls to preview"
        return
    try:
        preview.frame_ms = 1000.0 / reading.scene_fps(scene)
        preview.loop = bool(scene.waft.use_loop)
        inputs = fingerprint(scene, objects, colliders)
        if inputs != preview.fingerprint:
            _drop(preview)
            preview.fingerprint = inputs
        start, end = reading.frame_range(scene)
        if frame not in preview.cache:
            next_frame = start if preview.run is None else preview.run.next_frame
            if not (start <= frame <= end):
                _show_animation(preview, f"Frame {frame} is outside the range {start}–{end}")
                return
            if not next_frame <= frame <= next_frame + CATCH_UP_FRAMES:
                _show_animation(preview, f"Not simulated yet: play from frame {start}")
                return
            _simulate_to(scene, preview, frame)
    except (SetupError, DivergenceError) as error:
        _drop(preview)
        preview.message = str(error)
        return
    except ReferenceError:
        # An object or bone the run held was removed (deleted, or undone without the undo
        # handler, e.g. by a script): start over at the next frame change.
        _previews.pop(scene.name, None)
        return
    show(preview.cache[frame])
    preview.showing, preview.message = frame, ""


@bpy.app.handlers.persistent
def _on_frame_change(scene, depsgraph=None) -> None:
    global _busy
    if _busy or not scene.waft.use_preview:
        return
    _busy = True
    try:
        update(scene)
    finally:
        _busy = False


@bpy.app.handlers.persistent
def _on_load(*_args) -> None:
    # Another file: its scenes are other scenes.
    _previews.clear()


@bpy.app.handlers.persistent
def _on_undo(*_args) -> None:
    # Undo/redo rebuilt the objects and bones a run holds, from a state that may have been
    # saved with a simulated pose shown: give the unkeyed bones their own pose back (by name),
    # then start over at the next frame change.
    for preview in _previews.values():
        if preview.run is not None:
            with contextlib.suppress(ReferenceError):  # the object itself went away
                preview.run.restore_static()
    _previews.clear()


@bpy.app.handlers.persistent
def _on_save_pre(*_args) -> None:
    # The file keeps the animator's pose, never the preview's.
    for preview in _previews.values():
        if preview.run is not None:
            preview.run.restore_static()


@bpy.app.handlers.persistent
def _on_save_post(*_args) -> None:
    from .preview_channels import show

    for preview in _previews.values():
        if preview.run is not None and preview.showing in preview.cache:
            show(preview.cache[preview.showing])


_HANDLERS = (("frame_change_post", "_on_frame_change"), ("load_post", "_on_load"),
             ("undo_post", "_on_undo"), ("redo_post", "_on_undo"),
             ("save_pre", "_on_save_pre"), ("save_post", "_on_save_post"))


def set_enabled(scene, enabled: bool) -> None:
    """``Scene.waft.use_preview`` changed: show the current frame's simulation, or give the
    bones back to the animation (the frame evaluated again)."""
    global _busy
    if _busy:
        return
    _busy = True
    try:
        if enabled:
            update(scene)
        else:
            preview = _previews.pop(scene.name, None)
            if preview is not None:
                _drop(preview)
                scene.frame_set(scene.frame_current, subframe=scene.frame_subframe)
    finally:
        _busy = False


def draw_status(layout, scene) -> None:
    """The preview toggle and, when on, what it shows (the Waft panels)."""
    layout.prop(scene.waft, "use_preview", icon='PLAY')
    if scene.waft.use_preview:
        preview = state(scene)
        if preview is not None:
            layout.label(text=preview.status(), icon='ERROR' if preview.message else 'INFO',
                         translate=False)


def _draw_timeline(self, context) -> None:
    space = context.space_data
    if getattr(space, "mode", 'TIMELINE') != 'TIMELINE':
        return
    self.layout.prop(context.scene.waft, "use_preview", text="Waft Preview", icon='PLAY')


def _timeline_header():
    return getattr(bpy.types, "DOPESHEET_HT_playback_controls", bpy.types.DOPESHEET_HT_header)


def register() -> None:
    for name, function in _HANDLERS:
        getattr(bpy.app.handlers, name).append(globals()[function])
    _timeline_header().append(_draw_timeline)


def unregister() -> None:
    _timeline_header().remove(_draw_timeline)
    for name, function in _HANDLERS:
        handlers = getattr(bpy.app.handlers, name)
        if globals()[function] in handlers:
            handlers.remove(globals()[function])
    _previews.clear()
