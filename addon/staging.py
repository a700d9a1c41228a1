"""A system written before the others, and undone when a later one fails.

``bake_api`` writes the ragdolls first when other systems bake in the same run, so bone chains,
hair and cloth on a ragdolled character sample the ragdoll's new result (DESIGN: sample once,
solve, write once; here per stage). The ragdoll's previous result must survive a later failure
or a cancelled modal bake, so before the first stage writes, its tracks are set aside: renamed
and muted, untouched otherwise. Success discards them; failure clears the new result and puts
them back exactly (name and mute state), so the file is as it was.

A system taking part provides ``written(prepared) -> [(object, track names)]``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .nla import clear_held_track, remove_track, remove_track_and_orphans
from .writing import restore_original_action, results_left

# Set-aside tracks lose the "Waft" prefix: no system mutes, clears or counts them meanwhile.
ASIDE = "(set aside) "


@dataclass
class Aside:
    written: list  # (object, track names) the first stage writes
    tracks: list  # (object, track, name, mute) of every track set aside


def set_aside(modules, prepared) -> Aside:
    """Rename the first stage's current tracks out of the way; mute its results (its rest
    tracks keep playing the user's static pose, which the sampling needs)."""
    written = [pair for module, item in zip(modules, prepared, strict=True)
               for pair in module.written(item)]
    tracks = []
    for ob, names in written:
        anim_data = ob.animation_data
        for track in (anim_data.nla_tracks if anim_data is not None else ()):
            if track.name in names:
                tracks.append((ob, track, track.name, track.mute))
    for _, track, name, _ in tracks:
        track.name = ASIDE + name
        if not name.endswith(": rest"):
            track.mute = True
    return Aside(written=written, tracks=tracks)


def restore(scene, aside: Aside) -> None:
    """Remove what the first stage wrote, put its previous tracks back as they were, and give
    the user's action back where the first stage had stashed it."""
    for ob, names in aside.written:
        for name in names:
            if name.endswith(": rest"):
                clear_held_track(ob, name)
            else:
                remove_track(ob, name)
    for _, track, name, mute in aside.tracks:
        track.name = name
        track.mute = mute
    for ob, _ in aside.written:
        anim_data = ob.animation_data
        if anim_data is not None and not results_left(anim_data):
            restore_original_action(ob, scene)


def discard(aside: Aside) -> None:
    """The bake succeeded: remove the previous tracks and the actions only they used."""
    for ob, track, _, _ in aside.tracks:
        remove_track_and_orphans(ob.animation_data, track)
