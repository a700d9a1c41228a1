"""Render strands in the live preview: each simulated frame's strands made from that frame's
guides exactly as the bake makes them (``output.StrandBinder``, bound on the first frame), and
drawn by the viewport overlay as lines (nothing is written while the preview runs).

A frame keeps only what its strands are made from (the guides at the strand resolution, the
scalp's vertices, Clump, Randomness, the colliders' matrices and the body meshes' vertices):
20,000 strands × 16 points are 3.8 MB a frame, their inputs a few kB.
``ShownStrands.positions`` makes them when the frame is drawn (the overlay keeps the last
frame's).
"""

from __future__ import annotations

import numpy as np

from . import output

STRANDS = "strands"  # the property name of a shown entry: (None, owner name, STRANDS, ShownStrands)


class ShownStrands:
    """One previewed frame's render strands of one owner (an armature or hair Curves)."""

    def __init__(self, binder: output.StrandBinder, guides: np.ndarray, scalp, i: int = 0):
        self.binder = binder
        self.guides = guides  # (G, points, 3) float32 world
        self.vertices = scalp.vertices[i]
        self.clump = scalp.clump[i]
        self.randomness = scalp.randomness[i]
        self.collider_matrix = scalp.collider_matrix[i]
        self.meshes = scalp.meshes
        self.sample = i

    @property
    def held(self) -> int:
        """Points this frame keeps (the preview cache's budget counts them)."""
        meshes = self.meshes.vertices if self.meshes is not None else ()
        return (self.guides.size + self.vertices.size + sum(v[self.sample].size
                                                            for v in meshes)) // 3

    def positions(self) -> np.ndarray:
        """(count, points, 3) float32 world: the strands the bake writes for this frame."""
        s = self.binder.target.settings
        out = np.empty((s.count, s.points, 3), dtype=np.float32)
        return self.binder.positions(self.guides, self.vertices, self.clump, self.randomness,
                                     self.collider_matrix, out, self.meshes, self.sample)


class PreviewStrands:
    """The render strands of one target through a preview run, frame after frame."""

    def __init__(self, scene, target: output.Target, muted: list):
        self.scene, self.target, self.muted = scene, target, muted
        self.binder: output.StrandBinder | None = None

    def frame(self, frame: int, chains: list[np.ndarray]) -> tuple:
        """The shown entry of scene frame ``frame`` whose guide chains (n_i, 3) world Blender
        units are ``chains``; samples the scalp at that frame (as the bake does per frame)."""
        guides = output.guides_at_lod([c[None] for c in chains], self.target.settings.points)
        scalp = output.sample_scalps(self.scene, [self.target], [frame], self.muted)[0]
        if self.binder is None:
            self.binder = output.StrandBinder(self.target, guides[0], scalp.vertices[0],
                                              scalp.clump[0])
        shown = ShownStrands(self.binder, guides[0].astype(np.float32), scalp)
        return (None, self.target.setup, STRANDS, shown)


class ChainStrands:
    """The render strands of guide armatures through the bone chains' preview run
    (``systems.STRAND_OUTPUTS``' ``preview_output``)."""

    def __init__(self, scene, targets: list, muted: list):
        self.items = [PreviewStrands(scene, target, muted) for target in targets]

    def frame(self, frame: int, chain_positions: dict) -> list:
        """Shown entries of scene frame ``frame`` from its solved chains ``{"<armature>: <first
        bone>": (bones + 1, 3) world Blender units}`` (the bake's ``chain_positions``, one
        frame)."""
        return [item.frame(frame, output.owner_chains(item.target, chain_positions))
                for item in self.items]
