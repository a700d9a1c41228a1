"""Capture Settled Pose for bone chains and hair guides: simulate the setup from the scene's
start frame to a chosen frame and save its state there (``core.strands.settled``); with Settled
Pose on, bakes start, and restart after animation cuts, from it.

Bone chains keep each bone tail's offset on its pose bone (``PoseBone.waft.settled_offset``),
so it survives renaming and reordering; hair guides keep theirs as a point attribute of the
Curves data (``addon/settled.py``). Offsets are in the setup space's axes, Blender units.
"""

from __future__ import annotations

import numpy as np

from ...core.errors import SetupError
from ...core.strands import capture_settled_offsets
from ..hair import system as hair_system
from ..preview import suspended
from ..progress import run_to_end
from ..sampling import at_first_frame
from ..settled import Captured, capture_frames, store_point_offsets
from . import reading, system


def capture_settled_pose(scene, ob, *, frame: int | None = None, settings) -> Captured:
    """Simulate ``ob`` (an armature with bone chains, or hair guide Curves) alone and without
    its settled pose from ``scene.frame_start`` to ``frame`` (the current frame when None), and
    store its state there; turns its Settled Pose on. Raises ``SetupError`` (the file unchanged)
    when it cannot bake."""
    with suspended():  # the animation is sampled, never the live preview's pose
        return _capture(scene, ob, frame, settings)


def _capture(scene, ob, frame, settings) -> Captured:
    if ob.type == 'ARMATURE' and ob.waft.enabled:
        start, frame = capture_frames(scene, f"Armature '{ob.name}'", frame)
        offset = _capture_chains(scene, ob, start, frame, settings)
    elif hair_system.claims(ob):
        start, frame = capture_frames(scene, f"Curves '{ob.name}'", frame)
        offset = _capture_guides(scene, ob, start, frame, settings)
    else:
        raise SetupError(f"Object '{ob.name}' is not an enabled Waft armature or hair guides")
    ob.waft.settled_frame = frame
    ob.waft.use_settled_pose = True
    return Captured(name=ob.name, frame=frame, frames=frame - start + 1,
                    largest_offset=float(np.linalg.norm(offset, axis=-1).max()))


def _capture_chains(scene, ob, start: int, frame: int, settings) -> np.ndarray:
    """Simulate and store on the pose bones; (B, 3) the offsets stored."""
    with at_first_frame(scene, start):  # (as the bake reads it)
        read = reading.read_scene(scene, objects=[ob], frame_start=start, frame_end=frame,
                                  use_settled=False)
    run = run_to_end(system.simulate(read, scene, settings=settings, sample_chunk=1 << 30))
    offset = capture_settled_offsets(run.inputs.drive, run.result.positions,
                                     frame - start) / read.unit_scale
    stored = []
    for s, chain in enumerate(read.chains):
        for b, name in enumerate(chain.bone_names):
            bone = ob.pose.bones[name].waft
            bone.settled_offset = offset[s, b + 1]
            bone.has_settled = True
            stored.append(offset[s, b + 1])
    ob.waft.settled_count = len(stored)
    return np.array(stored)


def _capture_guides(scene, ob, start: int, frame: int, settings) -> np.ndarray:
    """Simulate and store as the Curves' point attribute; (G, P, 3) the offsets stored."""
    with at_first_frame(scene, start):
        prepared = hair_system.prepare(scene, objects=[ob], frame_start=start, frame_end=frame,
                                       use_settled=False)
    run = run_to_end(hair_system.simulate(prepared, scene, settings=settings))
    offset = capture_settled_offsets(run.drive, run.result.positions,
                                     frame - start) / prepared.unit
    store_point_offsets(ob.data, offset)
    ob.waft.settled_count = offset.shape[0] * offset.shape[1]
    return offset
