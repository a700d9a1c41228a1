"""Would a spatial broad phase pay for render-strand collision? (issue 13, session 50)

    python tools/render_collision_blocks.py [--repeats 15] [--blocks 16 64 256]

On `bench_render_collision`'s frame (50,000 strands x 16 points, head, neck, shoulders) it
measures, against `collide._candidates` (the broad phase `collide_strands` runs), the broad
phase the issue proposed: the strands in a spatial order made once (a Morton key of the rest
roots, cut into blocks of B strands), each frame a box per block and point index ("cell": the
block's B points of index k) from the points themselves, cells whose box misses every
collider's bounding sphere skipped, the exact float32 sphere tests on the points of the other
cells. It checks that both find the very same candidates, rows and tests (sorted by point),
and prints CPU milliseconds per part, best of N, old and new alternating in one process.

A second figure is the floor of any bound: the same cells with their boxes given for free
(as a bound made from the guides at interpolation would be, at best), so only the gathers, the
tests and the collection of the cells' points are timed. A third prints the minor page faults
per call of `collide_strands` once the process has freed a frame-sized array (as every bake
has: binding, interpolation), the figure a workspace of kept scratch arrays would remove.

Conservative skip: a point x of a cell lies in its box [lo, hi], so |x − c|² ≥ the box's gap²
(per axis max(lo − c, c − hi, 0), summed). Both are float32 values, so the gaps are exact in
float64 and their sum of squares is within 1e-15 of the real one; the float32 test of the
point rounds five times (a difference per axis is at least (1 − u) of the real one, a square
and the two sums lose (1 − u) each, u = 2⁻²⁴), so its d² ≥ (1 − 3e-7) of the real one. A cell
is skipped when gap² · (1 − SKIP_MARGIN) > limit², which leaves every point of it above the
limit in float32 too. `--touch` first checks a sphere that a cell's box just touches (`touching`).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests" / "benchmarks"))

from _waft import use_checkout  # noqa: E402

use_checkout()

from waft.core.hair._bench import collision_scene  # noqa: E402
from waft.core.hair.collide import _candidates, _sphere_test, bounding_sphere  # noqa: E402

SKIP_MARGIN = 4e-6  # relative, > the 3e-7 a float32 squared distance can fall below the real one
ROW = np.dtype((np.void, 12))  # one float32 point


def morton_order(roots: np.ndarray, *, block: int, bits: int = 10) -> np.ndarray:
    """Strand indices sorted by the Morton key of their roots (N, 3), padded to whole blocks by
    repeating each last block's final strand (a repeat leaves the block's box unchanged)."""
    lo, hi = roots.min(axis=0), roots.max(axis=0)
    q = ((roots - lo) / np.maximum(hi - lo, 1e-30) * (2 ** bits - 1)).astype(np.int64)
    key = np.zeros(len(roots), dtype=np.int64)
    for b in range(bits):
        for a in range(3):
            key |= ((q[:, a] >> b) & 1) << (3 * b + a)
    order = np.argsort(key, kind="stable")
    pad = -len(order) % block
    return np.concatenate([order, np.full(pad, order[-1])])


def cell_boxes(strands: np.ndarray, order: np.ndarray, block: int, ordered: np.ndarray):
    """Per block and point index, the box (lo, hi) of its points, each (3, cells) float64:
    the strands gathered in `order` into `ordered`, then halving min/max (block a power of 2;
    `np.minimum.reduceat` over the blocks took 8-13 ms)."""
    N, P, _ = strands.shape
    np.take(strands.reshape(N, P * 3), order, axis=0, out=ordered, mode="clip")
    v = ordered.reshape(-1, block, P * 3)
    h = block // 2
    lo = np.minimum(v[:, :h], v[:, h:])
    hi = np.maximum(v[:, :h], v[:, h:])
    while h > 1:
        h //= 2
        np.minimum(lo[:, :h], lo[:, h:2 * h], out=lo[:, :h])
        np.maximum(hi[:, :h], hi[:, h:2 * h], out=hi[:, :h])
    rows = (lo[:, 0].reshape(-1, 3).T, hi[:, 0].reshape(-1, 3).T)
    return tuple(r.astype(np.float64) for r in rows)


def cells_hit(lo: np.ndarray, hi: np.ndarray, spheres: list, first: int, P: int) -> np.ndarray:
    """Which cells' boxes may hold a point inside a sphere (float32 centre, squared limit)."""
    hit = np.zeros(lo.shape[1], dtype=bool)
    gap, other, d2 = np.empty_like(lo), np.empty_like(lo), np.empty(lo.shape[1])
    for centre, limit2 in spheres:
        c = centre.astype(np.float64)[:, None]
        np.subtract(lo, c, out=gap)
        np.subtract(c, hi, out=other)
        np.maximum(gap, other, out=gap)
        np.maximum(gap, 0.0, out=gap)
        np.multiply(gap, gap, out=gap)
        np.add(gap[0], gap[1], out=d2)
        d2 += gap[2]
        d2 *= 1.0 - SKIP_MARGIN
        hit |= d2 <= float(limit2)
    hit = hit.reshape(-1, P)
    hit[:, :first] = False  # the roots stay
    return hit.ravel()


def cell_points(hit: np.ndarray, block: int, P: int, count: int) -> np.ndarray:
    """Indices into the ordered points (flat, strand-major) of the hit cells' points, less the
    padding past `count` strands."""
    cells = np.flatnonzero(hit)
    b, p = np.divmod(cells, P)
    first = b * (block * P) + p
    index = (first[:, None] + (np.arange(block) * P)[None]).ravel()
    return index[index < count * P]


def tested(source: np.ndarray, index: np.ndarray, spheres: list):
    """The sphere tests of the points `source` (flat rows of 12 bytes) at `index`: which are
    candidates, their rows (3, c) and their tests (K, c), as `_candidates` makes them."""
    x = np.ascontiguousarray(
        np.take(source, index, mode="clip").view(np.float32).reshape(-1, 3).T)
    m = x.shape[1]
    d2, other = np.empty(m, dtype=np.float32), np.empty(m, dtype=np.float32)
    tests, inside = np.empty((len(spheres), m), dtype=bool), np.zeros(m, dtype=bool)
    for (centre, limit2), test in zip(spheres, tests, strict=True):
        inside |= _sphere_test(x, centre, limit2, d2, other, test)
    hit = np.flatnonzero(inside)
    return hit, np.take(x, hit, axis=1, mode="clip"), np.take(tests, hit, axis=1, mode="clip")


def spheres_of(colliders, matrices, radius, first: int) -> list:
    reach = float(radius[first:].max())
    out = []
    for k in range(colliders.count):
        centre, bound = bounding_sphere(int(colliders.kind[k]), np.asarray(matrices[k]),
                                        float(colliders.size[k]), float(colliders.radius_a[k]),
                                        float(colliders.radius_b[k]))
        out.append((centre.astype(np.float32), np.float32(bound + reach) ** 2))
    return out


def same(old, new_index, new_x, new_tests) -> bool:
    index, x, within, _ = old
    order = np.argsort(new_index)
    return (np.array_equal(index, new_index[order]) and np.array_equal(x, new_x[:, order])
            and np.array_equal(within, new_tests[:, order]))


def measure(strands, radius, spheres, roots, block: int, repeats: int, first: int = 1):
    N, P, _ = strands.shape
    flat = strands.reshape(-1, 3)
    order = morton_order(roots, block=block)
    ordered = np.empty((len(order), P * 3), dtype=strands.dtype)
    times: dict[str, list] = {}

    def tick(name, t0):
        times.setdefault(name, []).append(time.process_time() - t0)
        return time.process_time()

    for _ in range(repeats):
        t = time.process_time()
        old = _candidates(flat, spheres, radius, first)
        t = tick("old: _candidates", t)
        lo, hi = cell_boxes(strands, order, block, ordered)
        t = tick("new: gather in order + cell boxes", t)
        hit = cells_hit(lo, hi, spheres, first, P)
        t = tick("new: box tests", t)
        index = cell_points(hit, block, P, N)
        source = ordered.reshape(-1, 3).view(ROW).ravel()
        found, x, tests = tested(source, index, spheres)
        point = index[found]
        user = order[point // P] * P + point % P
        tick("new: the cells' points: gather, tests, collect", t)
        # The floor: the same cells' points, taken from the strands as given (boxes free).
        t = time.process_time()
        wanted = order[index // P] * P + index % P
        found2, x2, tests2 = tested(flat.view(ROW).ravel(), wanted, spheres)
        user2 = wanted[found2]
        tick("floor: boxes free, the cells' points from the strands", t)
    assert same(old, user, x, tests), "the block broad phase found other candidates"
    assert same(old, user2, x2, tests2), "the floor found other candidates"
    best = {k: 1e3 * min(v) for k, v in times.items()}
    new = sum(v for k, v in best.items() if k.startswith("new"))
    print(f"\nblock {block} strands: cells hit {hit.mean():.3f}, points tested "
          f"{len(index):,} of {N * (P - first):,}, candidates {len(old[0]):,} (the same)")
    for k, v in best.items():
        print(f"  {k:52s} {v:6.2f} ms")
    print(f"  {'new in all':52s} {new:6.2f} ms")


def faults_per_call(strands, radius, colliders, matrices, calls: int = 12):
    from waft.core.hair.collide import collide_strands
    out = np.empty_like(strands)
    freed = np.ones(strands.shape, dtype=np.float64)  # a frame-sized temporary, as a bake frees
    del freed
    faults = []
    for _ in range(calls):
        np.copyto(out, strands)
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        collide_strands(out, radius, colliders, matrices)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
    print(f"\ncollide_strands minor page faults per call, after one frame-sized free: "
          f"median {int(np.median(faults[2:]))}, max {max(faults[2:])}")


def touching(block: int) -> bool:
    """Strands all alike (each cell's box is one point) and a sphere whose limit is the float32
    squared distance of one point that float32 rounds below its real one: the point is a
    candidate, and its cell's box is beyond the limit in float64 by that rounding, so a box test
    with no margin skips it. True when the block broad phase finds `_candidates`' points."""
    rng = np.random.default_rng(7)
    P = 64
    one = (rng.normal(size=(P, 3)) * 500.0).astype(np.float32)
    centre = np.float32([510.0, -230.0, 90.0])
    d = one[1:] - centre
    d2 = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2]  # float32, as the test
    real = ((one[1:].astype(np.float64) - centre.astype(np.float64)) ** 2).sum(axis=1)
    below = np.flatnonzero(d2.astype(np.float64) < real)
    limit2 = np.float32(d2[below].min())
    strands = np.repeat(one[None], 4 * block, axis=0)
    spheres = [(centre, limit2)]
    order = morton_order(strands[:, 0].astype(np.float64), block=block)
    ordered = np.empty((len(order), P * 3), dtype=np.float32)
    lo, hi = cell_boxes(strands, order, block, ordered)
    hit = cells_hit(lo, hi, spheres, 1, P)
    index = cell_points(hit, block, P, len(strands))
    found, x, tests = tested(ordered.reshape(-1, 3).view(ROW).ravel(), index, spheres)
    user = order[index[found] // P] * P + index[found] % P
    old = _candidates(strands.reshape(-1, 3), spheres, np.zeros(P), 1)
    ok = same(old, user, x, tests)
    print(f"\ntouching sphere (margin {SKIP_MARGIN:g}): {len(old[0])} candidate(s), the block "
          f"broad phase finds {len(user)}: {'the same' if ok else 'OTHERS'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--blocks", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--touch", action="store_true")
    args = parser.parse_args()
    if args.touch and not touching(min(args.blocks)):
        return 1
    strands, radius, colliders, matrices, roots = collision_scene()
    spheres = spheres_of(colliders, matrices, radius, 1)
    for block in args.blocks:
        if block & (block - 1):
            parser.error("blocks are powers of 2")
        measure(strands, radius, spheres, roots.position, block, args.repeats)
    faults_per_call(strands, radius, colliders, matrices)
    return 0


if __name__ == "__main__":
    sys.exit(main())
