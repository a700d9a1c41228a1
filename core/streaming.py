"""Shared by the bakes fed their samples as they are read (`strands.solver.Stream`,
`cloth.solver.ClothStream`): the stream's own writable copy of a checked drive, and the rows
of newly read samples written into it. Both drives keep their per-sample inputs in the same
fields: `reference`, `space`, `collider_matrix`, the `params` dict and the body `meshes`."""

from __future__ import annotations

from dataclasses import replace

import numpy as np


def _per_sample(a) -> bool:
    """An array with a row per sample (not one row, or a read-only broadcast of one)."""
    return np.ndim(a) > 0 and a.shape[0] > 1 and a.strides[0] != 0


def owned(drive):
    """`drive` with writable per-sample arrays of its own (a view of the caller's arrays, or a
    read-only broadcast, would not take the rows)."""
    meshes = drive.meshes
    if meshes is not None:
        meshes = replace(meshes, vertices=tuple(np.array(v) for v in meshes.vertices))
    return replace(drive, reference=np.array(drive.reference), space=np.array(drive.space),
                   collider_matrix=np.array(drive.collider_matrix),
                   params={name: np.array(a) if _per_sample(a) else a
                           for name, a in drive.params.items()}, meshes=meshes)


def write_rows(drive, rows, start: int, end: int) -> None:
    """Samples start..end-1 of `drive` (from `owned`) become the first rows of `rows` (a
    checked drive of the new samples alone). A setting that is not animated must not change."""
    n = end - start
    drive.reference[start:end] = rows.reference[:n]
    drive.space[start:end] = rows.space[:n]
    drive.collider_matrix[start:end] = rows.collider_matrix[:n]
    for name, values in drive.params.items():
        new = rows.params[name]
        if _per_sample(values):
            values[start:end] = new[:n]
        elif not np.array_equal(np.asarray(values)[:1], np.asarray(new)[:1], equal_nan=True):
            raise ValueError(f"setting '{name}' is not animated yet changed")
    if drive.meshes is not None:
        for mine, theirs in zip(drive.meshes.vertices, rows.meshes.vertices, strict=True):
            mine[start:end] = theirs[:n]


class FedBake:
    """The frame stepping both streams share: `_bake` (its `known` samples, `positions` filled
    frame by frame, `result` at the end), `_frames` (its `run()` generator), `needed(i)`."""

    _bake: object
    _frames: object
    frames_done: int
    output_frames: int

    @property
    def known(self) -> int:
        return self._bake.known

    def needed(self, frame: int) -> int:
        raise NotImplementedError

    def step(self) -> np.ndarray:
        """Solve the next output frame; its positions, world metres."""
        i = self.frames_done
        if i >= self.output_frames:
            raise IndexError("every frame of the stream is solved")
        if self.known < self.needed(i):
            raise ValueError(f"frame {i} needs {self.needed(i)} samples, {self.known} are read")
        next(self._frames)
        self.frames_done = i + 1
        return self._bake.positions[i]

    def result(self):
        """Once every frame is stepped: the result the bake gives for the same drive."""
        if self.frames_done < self.output_frames:
            raise ValueError(f"{self.frames_done} of {self.output_frames} frames are solved")
        for _ in self._frames:  # the loop's end, where the bake's result is built
            pass
        return self._bake.result
