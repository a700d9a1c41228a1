"""Warnings about a cloth cage, shown in its panels before a bake, each with a one-click fix
(``operators/fix_warning.py``; the bone chains' are ``strands/warnings.py``):

- **constraints** on the bones the cage drives that would override the baked keys: fix =
  *Constrained Bones › Turn Off for Result*, as for bone chains and ragdolls;
- a **collider inside the cage** at the current pose: the cloth's collision spheres (*Radius*)
  overlap a shape collider, measured as the solver measures it, so the first substep throws
  the cloth out. The solver collides the quads' sides and diagonals as well as the vertices
  (a ball between vertices is pushed out too), so the cloth is sampled along every link of a
  quad with a free end (``LINK_SAMPLES`` points between its ends): fix = shrink the collider
  about its origin (a plane: move it back along its normal) until every sample is clear
  (``strands.warnings.shrink_to_clear``).

The cage is read as it is evaluated at the current frame (skinned by its Armature modifier).
"""

from __future__ import annotations

import bpy
import numpy as np

from ...core.errors import SetupError
from ..reading import read_collider
from ..strands.warnings import (
    SetupWarning,
    collider_inside,
    constraint_warnings,
    penetration,
    shrink_to_clear,
)
from .reading import collider_objects, is_cage, pinned_vertices

LINK_SAMPLES = 7  # points between the ends of each quad side and diagonal


def cloth_samples(ob) -> tuple[np.ndarray, np.ndarray]:
    """(world points (n, 3), radii (n,)) that stand for cage ``ob``'s cloth as the solver
    collides it, evaluated at the current frame: every free (unpinned) vertex, and
    ``LINK_SAMPLES`` points along each side and diagonal of a quad with a free end."""
    mesh = ob.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
    local = np.empty(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", local)
    world = np.array(ob.matrix_world, dtype=np.float64)
    points = local.reshape(-1, 3) @ world[:3, :3].T + world[:3, 3]
    free = ~pinned_vertices(ob)
    if len(free) != len(points):  # modifiers change the count: the bake says why
        raise SetupError(f"Cage '{ob.name}': its modifiers change the vertex count")
    links = set()
    for polygon in ob.data.polygons:
        v = list(polygon.vertices)
        ends = [(v[i], v[(i + 1) % len(v)]) for i in range(len(v))]
        if len(v) == 4:
            ends += [(v[0], v[2]), (v[1], v[3])]
        links.update(tuple(sorted(e)) for e in ends if free[e[0]] or free[e[1]])
    samples = [points[free]]
    if links:
        a, b = np.array(sorted(links)).T
        t = np.arange(1, LINK_SAMPLES + 1) / (LINK_SAMPLES + 1)
        samples.append((points[a, None] + t[None, :, None] * (points[b] - points[a])[:, None])
                       .reshape(-1, 3))
    out = np.concatenate(samples)
    return out, np.full(len(out), float(ob.waft_cloth.radius))


def _colliding(scene, ob) -> list[SetupWarning]:
    points, radii = cloth_samples(ob)
    out = []
    for collider_ob in collider_objects(scene, ob):
        if collider_ob.type != 'EMPTY' or not len(points):
            continue
        depth = penetration(read_collider(collider_ob), points, radii)
        if depth.max() > 0.0:
            out.append(collider_inside(collider_ob.name, inside=f"cage '{ob.name}'",
                                       thrown="the cloth",
                                       where=f"up to {1000 * depth.max():.0f} mm"))
    return out


def _constraints(scene, ob) -> list[SetupWarning]:
    armature = ob.waft_cloth.armature
    if armature is None or armature.type != 'ARMATURE':
        return []
    names = [item.bone for item in ob.waft_cloth.bones if item.bone in armature.pose.bones]
    return constraint_warnings(scene, armature, names, "the baked cloth")


def cloth_warnings(scene, ob) -> list[SetupWarning]:
    """The warnings of cage ``ob`` (none when it is not one, or when the bake would refuse
    it: the bake then says why)."""
    if ob is None or not is_cage(ob):
        return []
    try:
        return _constraints(scene, ob) + _colliding(scene, ob)
    except SetupError:
        return []


def clear_collider(scene, ob, collider_ob) -> float:
    """Shrink ``collider_ob`` until cage ``ob``'s cloth is clear of it (``cloth_samples``)."""
    points, radii = cloth_samples(ob)
    return shrink_to_clear(collider_ob, points, radii, "the cloth")
