"""Sample once: step the scene over the frame range a single time and collect every animated
input as arrays ``(F, …)``.

One ``scene.frame_set`` per sample time serves every setup and collider together (sample times
may be sub-frame: ``sample_times``); pose matrices come
out of ``pose.bones.foreach_get("matrix")`` (column-major 4×4 blocks, reference/blender-api.md
§2), so bones under IK or constraints are read from the evaluated pose. Settings are read per
frame only when they are animated (an F-curve or driver targets them), else once. Waft's own
NLA track is muted while sampling so a previous bake is never sampled as the reference.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable

import numpy as np

from ..core.errors import SetupError
from . import compat
from .progress import Progress

WAFT_TRACK = "Waft"
REST_TRACK = "Waft: rest"  # see rest_channels.py
ORIGINAL_TRACK = "Waft: original"  # the user's action, stashed (writing.py)


def is_strand_track(name: str) -> bool:
    """The strand system's own tracks: its result and its rest channels."""
    return name in (WAFT_TRACK, REST_TRACK)


FOLLOWED_TRACKS = ("Waft Ragdoll", "Waft Ragdoll: rest")  # the ragdoll result and rest tracks
# Every system's result track (strands, ragdoll, cloth, rods: cloth/writing.py) and its rest
# track. By exact name: a user's own track may well start with "Waft" ("Wafting idle" was
# taken for Waft's, rebuilt and written into).
RESULT_TRACKS = frozenset((WAFT_TRACK, FOLLOWED_TRACKS[0], "Waft Cloth", "Waft Rod"))
REST_TRACKS = frozenset(f"{name}: rest" for name in RESULT_TRACKS)


def is_result_or_rest_track(name: str) -> bool:
    """Any Waft track but the stashed user action (``Waft: original`` is the user's)."""
    return name in RESULT_TRACKS or name in REST_TRACKS


def is_rest_track(name: str) -> bool:
    """A Waft rest track (the user's static pose held under the results)."""
    return name in REST_TRACKS


def is_followed(name: str) -> bool:
    """A track other systems sample with it playing: the ragdoll's, written first in a bake."""
    return name in FOLLOWED_TRACKS


def is_result_track(name: str) -> bool:
    """A Waft result track: not the user's original, not a rest track (``…: rest``)."""
    return name in RESULT_TRACKS


def animated_channels(ob, *, skip_track: Callable[[str], bool] = is_strand_track
                      ) -> set[tuple[str, int]]:
    """(data path, array index) of every channel of ``ob`` a driver or an F-curve animates: of
    its active action or of the strips of NLA tracks ``skip_track`` does not exclude (by track
    name). Per index: a rotation keyed about Z alone leaves X and Y static. Muted tracks, strips
    and F-curves play nothing, so what only they key is static too."""
    anim_data = ob.animation_data
    if anim_data is None:
        return set()
    channels = {(fc.data_path, fc.array_index) for fc in anim_data.drivers if not fc.mute}
    played = []  # (action, slot): only the slot each one plays animates this object
    if anim_data.action is not None:
        played.append((anim_data.action, compat.active_slot(anim_data)))
    for track in anim_data.nla_tracks:
        if not skip_track(track.name) and not track.mute:
            played.extend((strip.action, getattr(strip, "action_slot", None))
                          for strip in track.strips
                          if strip.action is not None and not strip.mute)
    for action, slot in played:
        channels.update((fc.data_path, fc.array_index)
                        for fc in compat.slot_fcurves(action, slot) if not fc.mute)
    return channels


def animated_paths(ob, *, skip_track: Callable[[str], bool] = is_strand_track) -> set[str]:
    """The data paths of ``animated_channels``."""
    return {path for path, _ in animated_channels(ob, skip_track=skip_track)}


def user_paths(ob) -> set[str]:
    """Data paths the user animates: drivers, the active action, strips of every track that is
    not a Waft result or rest track (the stashed ``Waft: original`` counts as the user's)."""
    return animated_paths(ob, skip_track=is_result_or_rest_track)


def user_channels(ob) -> set[tuple[str, int]]:
    """The (data path, index) pairs of ``user_paths``."""
    return animated_channels(ob, skip_track=is_result_or_rest_track)


@functools.cache
def _setting_patterns(prop: str, bone_separator: str) -> tuple[re.Pattern, re.Pattern]:
    """(object setting, pose-bone setting) path patterns of the property group ``prop``."""
    name = re.escape(prop)
    return (re.compile(rf"^{name}\.(\w+)"),
            re.compile(rf'^pose\.bones\["((?:[^"\\]|\\.)*)"\]\.{name}'
                       rf'{re.escape(bone_separator)}(\w+)'))


def setting_paths(paths, prop: str = "waft", bone_separator: str = "."
                  ) -> tuple[set[str], set[tuple[str, str]]]:
    """Split data paths into animated (object setting names, (bone name, setting name) pairs)
    of the property group ``prop`` (``Object.<prop>`` and ``PoseBone.<prop>``; with
    bone_separator "_", the pose bone's own properties ``PoseBone.<prop>_<name>``)."""
    setup_path, bone_path = _setting_patterns(prop, bone_separator)
    setup, bones = set(), set()
    for path in paths:
        if m := setup_path.match(path):
            setup.add(m.group(1))
        elif m := bone_path.match(path):
            bones.add((m.group(1).replace('\\"', '"'), m.group(2)))
    return setup, bones


@contextlib.contextmanager
def tracks_muted(objects, mute: Callable[[str], bool]):
    """Mute the NLA tracks of ``objects`` whose name ``mute`` accepts; restore the mute flags
    afterwards."""
    saved = []
    for ob in objects:
        anim_data = ob.animation_data
        if anim_data is None:
            continue
        for track in anim_data.nla_tracks:
            if mute(track.name):
                saved.append((track, track.mute))
                track.mute = True
    try:
        yield
    finally:
        for track, mute_flag in saved:
            track.mute = mute_flag


@contextlib.contextmanager
def frame_kept(scene):
    """Put the scene back on its current frame (and subframe) however the block ends, also
    when a sampling generator is closed early (a cancelled bake)."""
    frame, subframe = scene.frame_current, scene.frame_subframe
    try:
        yield
    finally:
        scene.frame_set(frame, subframe=subframe)


@contextlib.contextmanager
def at_first_frame(scene, start: int):
    """The scene on the bake's first frame while the setups are read (and back on its own frame
    afterwards): what a read takes from the scene as it stands (a cage's and its armature's
    world matrices, which a cloth-bone rig's rest offsets come from; a ragdoll's object matrix)
    must not depend on where the playhead was. A cage whose armature object travels was baked
    1.2 m off with the playhead on the last frame, and apart from the preview, which reads on the
    first frame."""
    if scene.frame_current == start and scene.frame_subframe == 0.0:
        yield  # (already there: no evaluation of the scene for nothing)
        return
    with frame_kept(scene):
        scene.frame_set(start)
        yield


def sample_steps(scene, sampler, *, chunk: int, muted, system: str = "strands"):
    """Generator: run ``sampler`` (``done``/``total``/``sample_chunk``/``result``) over its
    frames ``chunk`` at a time inside the context ``muted`` (the result tracks muted), yielding
    ``Progress``; the current frame is restored, then ``sampler.result()`` returned."""
    with frame_kept(scene), muted:
        while sampler.done < sampler.total:
            yield Progress("sample", sampler.sample_chunk(chunk), sampler.total, system=system)
    return sampler.result()


def waft_tracks_muted(objects):
    """Mute each object's ``Waft`` NLA track for the duration; restore the mute state after."""
    return tracks_muted(objects, lambda name: name == WAFT_TRACK)


def sample_times(frame_start: int, frame_end: int, fps: float, rate: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(times, on_grid, at_frames): the scene frames (possibly fractional) to sample so that
    the inputs are read every 1 / ``rate`` seconds from ``frame_start`` (the same instants at
    every frame rate, also when the grid is coarser than the frames) and at every scene frame;
    index arrays into ``times`` of the grid samples and of the scene frames. ``rate`` 0: the
    scene frames only."""
    frames = np.arange(frame_start, frame_end + 1, dtype=np.float64)
    if rate <= 0.0:
        index = np.arange(len(frames))
        return frames, index, index
    count = int(np.ceil((len(frames) - 1) / fps * rate - 1e-9)) + 1
    grid = frame_start + np.arange(count) * (fps / rate)
    # Grid points within float rounding of a scene frame are that frame.
    snapped = np.where(np.abs(grid - np.round(grid)) < 1e-9, np.round(grid), grid)
    times = np.union1d(snapped, frames)
    return times, np.searchsorted(times, snapped), np.searchsorted(times, frames)


def settings_at(settings: list, index, samples: int) -> list:
    """Per-setup settings dicts ``{name: (F or 1, ...)}`` of ``samples`` samples at ``index``:
    a setting read once (one row) keeps its single row, an animated one takes the rows."""
    def rows(a: np.ndarray) -> np.ndarray:
        return a if len(a) == 1 and samples > 1 else a[index]
    return [{name: rows(values) for name, values in d.items()} for d in settings]


class FrameSampler:
    """Steps the scene through ``frames`` (scene frames, fractional for sub-frame samples) in
    chunks (a modal bake steps it; ``sample_steps`` runs it); subclasses read everything of one
    sample in ``_sample_frame(i)``."""

    def __init__(self, scene, frames):
        self.scene = scene
        self.frames = frames
        self.done = 0

    @property
    def total(self) -> int:
        return len(self.frames)

    def sample_chunk(self, count: int) -> int:
        """Sample up to ``count`` more frames; returns how many frames are done."""
        stop = min(self.done + count, self.total)
        self.block_samples(self.done, stop)
        self.done = stop
        return self.done

    def block_samples(self, start: int, stop: int) -> None:
        """Set the scene to each sample time start..stop-1 in turn and read it
        (``_sample_frame``); a subclass may read a block its own way."""
        scene = self.scene
        for i in range(start, stop):
            frame = float(self.frames[i])
            whole = int(np.floor(frame))
            scene.frame_set(whole, subframe=frame - whole)
            self._sample_frame(i)

    def _sample_frame(self, i: int) -> None:
        raise NotImplementedError

    def _check_finished(self) -> None:
        if self.done != self.total:
            raise RuntimeError("sampling is not finished")


def frame_text(frame) -> str:
    """A sample's scene frame for a message: ``7``, or ``7.25`` between frames."""
    frame = float(frame)
    return str(int(frame)) if frame.is_integer() else f"{frame:.3f}".rstrip("0")


def first_bad_frame(frames, bad_per_frame) -> int:
    """The scene frame of the first True in ``bad_per_frame`` ((F,), or (1,) for a setting
    read once: the first frame)."""
    return int(frames[int(np.argmax(bad_per_frame))]) if len(frames) > 1 else int(frames[0])


def check_scale_series(matrices: np.ndarray, frames: np.ndarray, what: str) -> None:
    """SetupError naming ``what`` and the frame when a sampled world matrix ((F, 4, 4)) is not
    finite or its scale is zero or negative (keyed or driven there)."""
    finite = np.isfinite(matrices).reshape(len(matrices), -1).all(axis=1)
    if not finite.all():
        raise SetupError(f"{what}: world matrix is not finite at frame "
                         f"{first_bad_frame(frames, ~finite)}")
    det = np.linalg.det(matrices[:, :3, :3])
    if np.any(det <= 0.0):
        raise SetupError(f"{what}: world scale is zero or negative at frame "
                         f"{first_bad_frame(frames, det <= 0.0)}")


def pose_not_finite(matrices: np.ndarray) -> tuple[int, int] | None:
    """(sample, column) of the first non-finite pose matrix of (F, bones, 4, 4), or None."""
    bad = ~np.isfinite(matrices.reshape(matrices.shape[0], matrices.shape[1], -1)).all(axis=2)
    if not bad.any():
        return None
    f, column = np.argwhere(bad)[0]
    return int(f), int(column)


def check_settings_finite(where: str, settings: dict, frames) -> None:
    """SetupError naming ``where``, the setting and the frame when a sampled setting ((F or 1,
    …) per name) is NaN or infinite (e.g. keyed or driven to NaN)."""
    for name, values in settings.items():
        bad = ~np.isfinite(values).reshape(len(values), -1).all(axis=1)
        if bad.any():
            raise SetupError(f"{where}: setting '{name}' is not finite at frame "
                             f"{first_bad_frame(frames, bad)}")
