"""Make a ragdoll from chosen bones: fill gaps so the bodies form one tree, apply the humanoid
defaults (capsule radius, joint limits) by bone name. Used by ``waft.ragdoll_create``.
"""

from __future__ import annotations

import math

import numpy as np

from ...core.errors import SetupError
from ...core.ragdoll.limits import fit_limits
from ...core.rotations import quat_from_matrix, quat_multiply
from .humanoid import (
    body_mass,
    defaults_for,
    hinge_limits,
    is_limb_segment,
    role_of,
    side_of,
)
from .takes import read_poses


def body_parent(name: str, parents: dict[str, str | None], bodies) -> str | None:
    """The body that body ``name`` hangs from: its parent bone when that is a body; else
    (Rigify, which parents DEF limbs to ORG bones while the DEF bones are the skeleton the mesh
    follows) the body ``DEF-x`` of its nearest ``ORG-x`` ancestor, looking up through ORG bones
    only. None for a root, or when the parent bone is not a body.

    ``parents``: bone → parent bone (None at a root); ``bodies``: the body names.
    """
    bone = parents[name]
    while bone is not None:
        if bone in bodies:
            return bone
        if not bone.startswith("ORG-"):
            return None
        deform = "DEF-" + bone[4:]
        if deform in bodies and deform != name:  # DEF-x may hang from its own ORG-x
            return deform
        bone = parents[bone]
    return None


def rigify_parents(parents: dict[str, str | None], chosen) -> dict[str, str | None]:
    """``parents`` with each chosen bone re-hung from the chosen body it hangs from through
    Rigify's ORG bones (``body_parent``), so ``fill_tree`` sees one tree."""
    out = dict(parents)
    for name in chosen:
        joint = body_parent(name, parents, chosen)
        if joint is not None:
            out[name] = joint
    return out


def fill_tree(parents: dict[str, str | None], chosen: set[str]) -> list[str]:
    """``chosen`` plus the bones between each chosen bone and its nearest chosen ancestor, so
    the bodies form one tree (e.g. hips + upper arm adds the spine and the shoulder).

    ``parents``: bone → parent bone (None at a root), in armature order. SetupError when the
    chosen bones have no common chosen ancestor (two separate trees).
    """
    result = set(chosen)
    for name in chosen:
        path, bone = [], parents[name]
        while bone is not None and bone not in chosen:
            path.append(bone)
            bone = parents[bone]
        if bone is not None:
            result.update(path)
    roots = [n for n in result if parents[n] not in result]
    if len(roots) > 1:
        names = ", ".join(f"'{n}'" for n in sorted(roots))
        raise SetupError(f"the chosen bones form separate trees with roots {names}; choose a "
                         f"common parent bone too (a ragdoll is one tree of bodies)")
    return [n for n in parents if n in result]


def humanoid_bones(names, deform=None) -> set[str]:
    """Every bone whose name a humanoid role matches; when some of those deform the mesh, only
    those (``deform``: name → Bone.use_deform). A generated Rigify rig names its controls,
    ORG and MCH bones like the body too (70 matches across four layers, in separate trees);
    the DEF bones are the skeleton the mesh follows."""
    matched = {n for n in names if role_of(n) is not None}
    if deform is not None:
        deforming = {n for n in matched if deform.get(n)}
        if deforming:
            return deforming
    return matched


def character_height(points: np.ndarray) -> float:
    """Height of the rig in world units from its bones' world heads and tails (P, 3)."""
    return float(np.ptp(points[:, 2])) if len(points) else 0.0


def role_shares(names) -> dict[str, float]:
    """1 / (bodies with the same role and side): a rig with chest and upper chest splits the
    chest's mass between them."""
    counts: dict[tuple[str, str], int] = {}
    keys = {}
    for name in names:
        role = role_of(name)
        if role is not None:
            keys[name] = (role, side_of(name))
            counts[keys[name]] = counts.get(keys[name], 0) + 1
    return {name: 1.0 / counts[key] for name, key in keys.items()}


def _next_joint(bone):
    """Where the limb goes from ``bone``'s head (armature space): to its child's head (the
    next joint: a forearm's wrist), else to its tail."""
    head = np.array(bone.head_local)
    for child in bone.children:
        step = np.array(child.head_local) - head
        if float(np.linalg.norm(step)) > 1e-6:
            return step
    return np.array(bone.tail_local) - head


def character_forward(ob, names) -> np.ndarray:
    """The character's front in armature space: where its feet go from the ankle to the next
    joint (the toes), horizontally, else Blender's convention (-Y)."""
    feet = [n for n in names if role_of(n) == "foot"]
    ahead = np.zeros(3)
    for name in feet:
        step = _next_joint(ob.data.bones[name]) * np.array([1.0, 1.0, 0.0])
        ahead += step / max(float(np.linalg.norm(step)), 1e-300)
    size = float(np.linalg.norm(ahead))
    if len(feet) and size > 0.2 * len(feet):
        return ahead / size
    return np.array([0.0, -1.0, 0.0])


MAX_SEGMENT_BEND = math.radians(5.0)  # a limb bone's segments run on along one line


def welded_segment(ob, name: str, hung: dict) -> bool:
    """Whether body ``name`` should be welded to the body it hangs from (``hung``): a further
    segment of the same limb bone (``humanoid.is_limb_segment``: Rigify's DEF-shin.L.001 after
    DEF-shin.L) that continues it at rest, head at its tail and along its axis. A ball joint
    with elbow or knee limits there let a limp Rigify shin fold in the middle; a stiff cone
    there fought the joints (54-118 mm gaps): the two are one rigid segment."""
    parent = hung.get(name)
    if not is_limb_segment(name, parent):
        return False
    bone, up = ob.data.bones[name], ob.data.bones[parent]
    along = np.array(bone.tail_local) - np.array(bone.head_local)
    before = np.array(up.tail_local) - np.array(up.head_local)
    size = float(np.linalg.norm(along) * np.linalg.norm(before))
    joined = float(np.linalg.norm(np.array(bone.head_local) - np.array(up.tail_local)))
    return (size > 0.0 and float(along @ before) >= math.cos(MAX_SEGMENT_BEND) * size
            and joined <= 0.01 * float(np.linalg.norm(before)))


def segment_head(name: str, hung: dict, welded) -> str:
    """The body that carries bone ``name``: itself, or for a bone welded to the body it hangs
    from (``welded``: the welded bones; ``hung``: bone → the body it hangs from) that body's
    carrier, up the chain of welds (DEF-forearm.L.001 → DEF-forearm.L)."""
    seen = 0
    while name in welded and hung.get(name) is not None and seen <= len(hung):
        name, seen = hung[name], seen + 1
    return name


def hinge_of(ob, name: str, hung: dict, forward: np.ndarray):
    """``humanoid.hinge_limits`` of body ``name`` from its rest bone, its joint parent's
    (``hung``: bone → the body it hangs from) and where its limb goes."""
    parent = hung.get(name)
    bone = ob.data.bones[name]
    rest = np.array(bone.matrix_local)[:3, :3]
    parent_axis = (np.array(ob.data.bones[parent].matrix_local)[:3, 1]
                   if parent is not None else None)
    return hinge_limits(role_of(name), child_axes=rest, parent_axis=parent_axis,
                        forward=forward, limb=_next_joint(bone))


def apply_defaults(pose_bone, height: float, share: float = 1.0, unit: float = 1.0,
                   hinge=None, weld: bool = False) -> None:
    """Body on, DRIVEN, humanoid radius, mass and limits where the name is known; the radius
    falls back to the envelope (0) and the mass to the density otherwise.

    ``height`` in scene units, ``unit`` metres per scene unit (for the mass); ``hinge``:
    (swing half-angles, swing centre) of a one-sided hinge (``hinge_of``), or None; ``weld``:
    welded to the body it hangs from (``welded_segment``).
    """
    body = pose_bone.waft_ragdoll
    body.body = True
    body.mode = "DRIVEN"
    body.weld = weld
    found = defaults_for(pose_bone.name)
    if found is None:
        return
    if height > 0.0:
        body.radius = found.radius_of_height * height
        body.use_mass = True
        body.mass = found.mass_fraction * share * body_mass(height * unit)
    body.swing_limit = tuple(math.radians(v) for v in found.swing_deg)
    body.swing_center = (0.0, 0.0)
    if hinge is not None:
        body.swing_limit, body.swing_center = hinge
    body.twist_limit = tuple(math.radians(v) for v in found.twist_deg)


FIT_MARGIN_DEG = 10.0  # room left between the animation's range of motion and a fitted limit


def bone_orientation(matrices: np.ndarray) -> np.ndarray:
    """Unit quaternions (…, 4) of 4×4 bone matrices whose columns may carry scale."""
    m = matrices[..., :3, :3]
    return quat_from_matrix(m / np.linalg.norm(m, axis=-2, keepdims=True))


def rest_relative(ob, children: list[str], parents: list[str]) -> np.ndarray:
    """(k, 4) each child's rest orientation in its parent body's rest frame."""
    rest = np.array([np.array(ob.data.bones[n].matrix_local) for n in children + parents])
    q_rest = bone_orientation(rest)
    k = len(children)
    return quat_multiply(q_rest[k:] * np.array([1.0, -1.0, -1.0, -1.0]), q_rest[:k])


def fit_limits_to_animation(scene, ob, names, hung: dict, takes) -> int:
    """Widen the swing and twist limits of the bodies ``names`` so every take of ``takes``
    (``takes.fit_takes``: the animation playing over the scene's frame range, each of the rig's
    actions over its own) stays inside them with FIT_MARGIN_DEG to spare (``core.ragdoll.limits
    .fit_limits``), reading the evaluated pose like the bake (``takes.read_poses``). ``hung``:
    bone → the body it hangs from (``rigify_parents``). Returns how many bodies' limits grew."""
    welded = {n for n in names if ob.pose.bones[n].waft_ragdoll.weld and hung.get(n) in names}
    # a welded bone has no joint; a bone hanging from one is jointed to the body carrying it
    jointed = [n for n in names if hung.get(n) in names and n not in welded]
    if not jointed or not takes:
        return 0
    parents = [segment_head(hung[n], hung, welded) for n in jointed]
    pose = read_poses(scene, ob, jointed + parents, takes)
    if not len(pose):
        return 0
    q = bone_orientation(pose)
    k = len(jointed)
    bodies = [ob.pose.bones[n].waft_ragdoll for n in jointed]
    swing = np.array([tuple(b.swing_limit) for b in bodies])
    twist = np.array([tuple(b.twist_limit) for b in bodies])
    center = np.array([tuple(b.swing_center) for b in bodies])
    new_swing, new_twist, new_center = fit_limits(
        q_child=q[:, :k], q_parent=q[:, k:], rest_relative=rest_relative(ob, jointed, parents),
        swing_limit=swing, twist_limit=twist, margin=math.radians(FIT_MARGIN_DEG),
        swing_center=center)
    grown = 0
    for body, old, new in zip(bodies, zip(swing, twist, center, strict=True),
                              zip(new_swing, new_twist, new_center, strict=True), strict=True):
        if any(np.any(a != b) for a, b in zip(old, new, strict=True)):
            body.swing_limit, body.twist_limit, body.swing_center = (tuple(v) for v in new)
            grown += 1
    return grown
