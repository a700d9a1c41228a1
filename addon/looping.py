"""The bake's simulate step with Loop on or off, shared by the systems that loop (bone chains:
``strands/loop.py``, cloth-bones: ``cloth/loop.py``): each gives ``extended(read, cycles)``
and ``loop_clip(read, run, length)``; with Loop on the run covers earlier whole cycles and is
cut to the blended clip."""

from __future__ import annotations


def simulate_for_bake(simulate, loop, read, scene, *, settings, sample_chunk: int):
    """Generator (yields Progress): ``simulate``'s run over the baked range, or with Loop on the
    last cycle of a run over *Loop Cycles* earlier cycles too, blended into a loop."""
    if not scene.waft.use_loop:
        return (yield from simulate(read, scene, settings=settings, sample_chunk=sample_chunk))
    length = read.frame_end - read.frame_start + 1
    run = yield from simulate(loop.extended(read, scene.waft.loop_cycles), scene,
                              settings=settings, sample_chunk=sample_chunk)
    return loop.loop_clip(read, run, length)
