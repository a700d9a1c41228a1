"""How far a 1e-9 m nudge of the input carries a shaken cage: the frame-rate check for chaos.

Frame rates read the same keys at the same instants in seconds, but Blender evaluates them at
other frame numbers, so the sampled inputs differ by about 1e-6 m. A cloth whose motion is
chaotic (a cage whipped until it folds over and crumples) turns that into centimetres, and no
sampling can make such frame rates agree. This script shakes cages (6 x 5, 8 x 8, 12 x 6
vertices, 0.1 m apart, default settings) on a 1.5 Hz figure-eight peaking at 2-8 g in the
horizontal and the vertical plane, bakes each twice (the second with every reference vertex
nudged by a fixed random 1e-9 m) and prints one JSON line per cage and a summary line: how far
apart the two bakes end after 2 s.

    .venv/bin/python tools/cloth_sensitivity.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "benchmarks"))
import _waft  # noqa: E402

_waft.use_checkout()

from waft.core.cloth import ClothDrive, ClothParams, bake_cloth, build_cloth_model  # noqa: E402
from waft.core.cloth._bench_cases import grid_rest  # noqa: E402

RATE = 120.0  # samples per second (the add-on's default sample rate)
SECONDS = 2.0
NUDGE = 1e-9  # metres
GRIDS = ((6, 5), (8, 8), (12, 6))
PEAKS_G = (2.0, 3.0, 5.0, 8.0)
PLANES = ("horizontal", "vertical")


def shaken(columns: int, rows: int, *, peak_g: float, plane: str, nudge: float) -> np.ndarray:
    """Positions of a cage whose pinned top row follows the figure-eight, at 24 fps."""
    rest = grid_rest(columns, rows, width=0.1 * (columns - 1), height=0.1 * (rows - 1))
    model = build_cloth_model(cloths=[rest])
    t = np.arange(int(SECONDS * RATE) + 1) / RATE
    omega = 2.0 * np.pi * 1.5
    amplitude = peak_g * 9.81 / omega**2
    second = 0.5 * amplitude * np.sin(2.0 * omega * t)
    zero = np.zeros_like(t)
    offset = np.stack([amplitude * np.sin(omega * t),
                       second if plane == "horizontal" else zero,
                       second if plane == "vertical" else zero], axis=1)
    points = rest.rest_positions
    shift = nudge * np.random.default_rng(0).normal(size=points.shape)
    reference = points[None] + offset[:, None] + shift[None]
    drive = ClothDrive(fps=RATE, reference=reference,
                       space=np.broadcast_to(np.eye(4), (t.size, 1, 4, 4)),
                       collider_matrix=np.zeros((t.size, 0, 4, 4)),
                       params=ClothParams.defaults(1), output_fps=24.0)
    return bake_cloth(model, drive).positions


def main() -> None:
    apart = []
    for columns, rows in GRIDS:
        for plane in PLANES:
            for peak_g in PEAKS_G:
                cage = {"columns": columns, "rows": rows, "peak_g": peak_g, "plane": plane}
                base = shaken(columns, rows, peak_g=peak_g, plane=plane, nudge=0.0)
                nudged = shaken(columns, rows, peak_g=peak_g, plane=plane, nudge=NUDGE)
                distance = float(np.max(np.linalg.norm(nudged[-1] - base[-1], axis=-1)))
                apart.append(distance)
                print(json.dumps({**cage, "apart_after_2s_m": distance}), flush=True)
    apart = np.array(apart)
    print(json.dumps({"cages": int(apart.size), "over_1mm": int(np.sum(apart > 1e-3)),
                      "over_1cm": int(np.sum(apart > 1e-2)),
                      "median_m": float(np.median(apart))}))


if __name__ == "__main__":
    main()
