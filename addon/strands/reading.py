"""Read once: the bone-chain setups (armatures with flagged bone runs) as plain arrays.

Chains are runs of ``PoseBone.waft.simulate`` bones; each setup carries its settings and the
colliders it touches. Validation happens here, before anything is sampled or written; errors
name the object and bone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import SetupError
from .. import reading as shared
from ..mesh_colliders import mesh_collider_union

# Settings of Object.waft that are plain floats; each must be finite.
SETUP_FLOAT_SETTINGS = (
    "shape_stiffness", "shape_decay", "damping", "stretch_compliance", "bend_compliance",
    "max_distance", "radius", "gravity_factor", "world_motion_fraction", "wind_speed",
    "wind_turbulence", "wind_gust", "drag", "wind_direction_variation", "wind_tangent_response",
    "wind_strand_variation", "ftl_damping", "local_stiffness", "shape_range", "shock_propagation",
    "voxel_friction",
)


# The VRM Spring Bone solver's settings (the setup's and each bone's override).
VRM_FLOAT_SETTINGS = ("vrm_stiffness", "vrm_gravity_power", "vrm_drag_force")


BONE_FLOAT_SETTINGS = ("shape_stiffness", "damping", "radius") + VRM_FLOAT_SETTINGS


@dataclass(frozen=True)
class ChainRead:
    """One simulated chain: bones from root to tip, as indices into ``ob.pose.bones``."""

    setup_index: int
    bone_names: tuple[str, ...]
    bone_indices: tuple[int, ...]
    parent_index: int  # index of the first bone's parent in ob.pose.bones, -1 if none
    pinned: tuple[bool, ...]
    bone_length: np.ndarray  # (B,) rest length in armature units
    rest_matrix: np.ndarray  # (B, 4, 4) Bone.matrix_local
    parent_rest_matrix: np.ndarray  # (4, 4)
    # (B, 3) each bone tail's settled offset (Capture Settled Pose; Blender units, the setup
    # space's axes) when the setup's Settled Pose is on, else None
    settled_offset: np.ndarray | None = None
    # The chain's own colliders (the first bone's Chain Colliders collection), or None: the
    # setup's. An empty list: this chain collides with nothing.
    colliders: list | None = None


@dataclass(frozen=True)
class SetupRead:
    object: object  # bpy.types.Object (armature)
    name: str
    bone_count: int  # len(ob.pose.bones), the foreach_get buffer size
    chains: tuple[ChainRead, ...]
    space_bone: int = -1  # index in ob.pose.bones of the Space Bone, -1 = the object
    solver: str = "WAFT"  # Object.waft.solver: "WAFT" or "VRM" (VRM Spring Bone)


@dataclass(frozen=True)
class SceneRead:
    setups: tuple[SetupRead, ...]
    chains: tuple[ChainRead, ...]  # all chains of all setups, in setup order
    colliders: tuple[shared.ColliderRead, ...]
    collider_mask: np.ndarray  # (K, S) bool
    unit_scale: float  # metres per Blender unit
    frame_start: int
    frame_end: int
    fps: float
    # Body-mesh colliders (addon.mesh_colliders.MeshColliderRead) and their (M, S) bool mask.
    meshes: tuple = ()
    mesh_mask: np.ndarray | None = None

    def chain_name(self, s: int) -> str:
        """``"<armature>: <first bone>"``: chain ``s``'s key in ``chain_positions`` (render
        strands find their armature's guides by it)."""
        chain = self.chains[s]
        return f"{self.setups[chain.setup_index].name}: {chain.bone_names[0]}"


def find_setups(scene, objects=None) -> list:
    """The armatures to bake: ``objects`` if given (each must be a setup), else every setup."""
    if objects is None:
        found = [ob for ob in scene.objects if ob.type == 'ARMATURE' and ob.waft.enabled]
        if not found:
            raise SetupError(
                f"Scene '{scene.name}' has no Waft setup: select bones in Pose Mode and use "
                f"Assign Bones, or enable Waft on an armature")
        return sorted(found, key=lambda ob: ob.name)
    setups = []
    for ob in objects:
        if isinstance(ob, str):
            name = ob
            ob = scene.objects.get(name)
            if ob is None:
                raise SetupError(f"Object '{name}' is not in scene '{scene.name}'")
        if ob.type != 'ARMATURE':
            raise SetupError(f"Object '{ob.name}' is not an armature; only armatures can be "
                             f"Waft setups")
        if not ob.waft.enabled:
            raise SetupError(f"Object '{ob.name}' is not a Waft setup (enable Waft on it)")
        setups.append(ob)
    if not setups:
        raise SetupError("No objects given to bake")
    return setups


def _flagged_children(pose_bone) -> list:
    return [child for child in pose_bone.children if child.waft.simulate]


def chain_bone_runs(ob) -> list[list]:
    """Runs of simulated pose bones, root first; a run starts at a flagged bone whose parent is
    not flagged. A flagged bone with several flagged children is ambiguous and rejected."""
    runs = []
    for pose_bone in ob.pose.bones:
        if not pose_bone.waft.simulate:
            continue
        if pose_bone.parent is not None and pose_bone.parent.waft.simulate:
            continue
        run = [pose_bone]
        while True:
            children = _flagged_children(run[-1])
            if len(children) > 1:
                names = " and ".join(f"'{c.name}'" for c in children)
                raise SetupError(
                    f"Armature '{ob.name}', bone '{run[-1].name}': chain branches into {names}; "
                    f"flag one branch only (unflag the others or make them separate chains)")
            if not children:
                break
            run.append(children[0])
        runs.append(run)
    return runs


MIN_GUIDE_BONES = 2


def is_hair_guide_setup(ob) -> bool:
    """An armature whose chains are hair guides (it grows render strands, ``waft_hair``)."""
    hair = getattr(ob, "waft_hair", None)
    return bool(hair is not None and getattr(hair, "render_strands", False))


def check_hair_guides(ob, runs) -> None:
    """A hair guide needs at least two bones: one bone cannot bend, curl or carry local shape,
    and render strands interpolated from it would be straight sticks. Single-bone chains stay
    valid for other setups (a tail, an antenna: the foundation's single-bone use case)."""
    if not is_hair_guide_setup(ob):
        return
    for run in runs:
        if len(run) < MIN_GUIDE_BONES:
            raise SetupError(
                f"Armature '{ob.name}', bone '{run[0].name}': a hair guide needs at least "
                f"{MIN_GUIDE_BONES} bones (this chain has {len(run)}); one bone cannot bend or "
                f"keep a curl. Flag its child bones too, or turn off Render Strands")


def _settled_offset(ob, run) -> np.ndarray:
    """(B, 3) the saved settled offsets of a chain's bones; SetupError naming the bone when one
    has none (flagged after the capture)."""
    for pose_bone in run:
        if not pose_bone.waft.has_settled:
            raise SetupError(f"Armature '{ob.name}', bone '{pose_bone.name}': Settled Pose is on "
                             "but this bone has no saved pose (it joined a chain after the "
                             "capture); use Capture Settled Pose again")
    return np.array([tuple(pb.waft.settled_offset) for pb in run], dtype=np.float64)


def _check_settled_captured(ob) -> None:
    if ob.waft.settled_count == 0:
        raise SetupError(f"Armature '{ob.name}': Settled Pose is on but no pose was captured; "
                         "use Capture Settled Pose at a frame where the chains hang as they "
                         "should")


def _check_settled_count(ob, runs) -> None:
    captured, bones = ob.waft.settled_count, sum(len(run) for run in runs)
    if captured != bones:
        raise SetupError(f"Armature '{ob.name}': the settled pose was captured with {captured} "
                         f"simulated bones but the chains have {bones}; capture it again")


def read_chain(ob, setup_index: int, run, bone_index: dict, metres_per_unit: float, *,
               use_settled: bool = False) -> ChainRead:
    for pose_bone in run:
        if not pose_bone.bone.length * metres_per_unit > shared.MIN_BONE_LENGTH:
            raise SetupError(f"Armature '{ob.name}', bone '{pose_bone.name}': bone has zero "
                             f"length; give it a length in Edit Mode")
        if pose_bone.waft.use_overrides:
            shared.check_finite_settings(pose_bone.waft, BONE_FLOAT_SETTINGS,
                                  f"Armature '{ob.name}', bone '{pose_bone.name}'")
    parent = run[0].parent
    identity = np.eye(4)
    return ChainRead(
        setup_index=setup_index,
        bone_names=tuple(pb.name for pb in run),
        bone_indices=tuple(bone_index[pb.name] for pb in run),
        parent_index=bone_index[parent.name] if parent is not None else -1,
        pinned=tuple(bool(pb.waft.pinned) for pb in run),
        bone_length=np.array([pb.bone.length for pb in run], dtype=np.float64),
        rest_matrix=np.array([np.array(pb.bone.matrix_local) for pb in run], dtype=np.float64),
        parent_rest_matrix=(np.array(parent.bone.matrix_local, dtype=np.float64)
                            if parent is not None else identity),
        settled_offset=_settled_offset(ob, run) if use_settled else None,
        colliders=_chain_colliders(ob, run[0]),
    )


def _chain_colliders(ob, first_bone) -> list | None:
    """The Waft colliders of the chain's own collection (``PoseBone.waft.collider_collection``
    on its first bone), or None when it has none (the setup's colliders then)."""
    collection = first_bone.waft.collider_collection
    if collection is None:
        return None
    return shared.enabled_colliders(None, collection)


def read_setup(ob, setup_index: int, unit: float, *, use_settled: bool = True) -> SetupRead:
    """``use_settled`` False: ignore the setup's settled pose (Capture Settled Pose simulates
    without it)."""
    shared.check_world_scale(ob, "Armature")
    shared.check_finite_settings(ob.waft, SETUP_FLOAT_SETTINGS + VRM_FLOAT_SETTINGS,
                                 f"Armature '{ob.name}'")
    shared.check_animation_target(ob)
    runs = chain_bone_runs(ob)
    if not runs:
        raise SetupError(f"Armature '{ob.name}': no bones are flagged for simulation; select "
                         f"bones in Pose Mode and use Assign Bones")
    check_hair_guides(ob, runs)
    bone_index = {pb.name: i for i, pb in enumerate(ob.pose.bones)}
    # Shortest world length of one armature unit (smallest scale column), in metres.
    metres = unit * float(np.linalg.norm(np.array(ob.matrix_world)[:3, :3], axis=0).min())
    settled = use_settled and ob.waft.use_settled_pose
    if settled:
        _check_settled_captured(ob)
    chains = tuple(read_chain(ob, setup_index, run, bone_index, metres, use_settled=settled)
                   for run in runs)
    if settled:  # after the chains, whose errors name the bone without a pose
        _check_settled_count(ob, runs)
    space = shared.space_bone(ob, f"Armature '{ob.name}'")
    space_bone = bone_index[space[1]] if space is not None else -1
    return SetupRead(object=ob, name=ob.name, bone_count=len(ob.pose.bones), chains=chains,
                     space_bone=space_bone, solver=ob.waft.solver)


def read_scene(scene, *, objects=None, frame_start=None, frame_end=None,
               use_settled: bool = True) -> SceneRead:
    """Validate and read every setup and collider taking part in a bake."""
    start, end = shared.frame_range(scene, frame_start, frame_end)
    scale = shared.unit_scale(scene)
    fps = shared.scene_fps(scene)
    setups = tuple(read_setup(ob, i, scale, use_settled=use_settled)
                   for i, ob in enumerate(find_setups(scene, objects)))
    chains = tuple(chain for setup in setups for chain in setup.chains)
    per_setup = [shared.setup_collider_objects(scene, s.object) for s in setups]
    per_chain = [per_setup[c.setup_index] if c.colliders is None else c.colliders
                 for c in chains]
    for chain in chains:
        for ob in chain.colliders or ():
            if scene.objects.get(ob.name) is not ob:
                raise SetupError(f"Armature '{setups[chain.setup_index].name}', bone "
                                 f"'{chain.bone_names[0]}': chain collider '{ob.name}' is not "
                                 f"in scene '{scene.name}'")
    colliders, mask = shared.collider_union(per_chain)
    meshes, mesh_mask = mesh_collider_union(per_chain, scale)
    return SceneRead(setups=setups, chains=chains, colliders=colliders, collider_mask=mask,
                     unit_scale=scale, frame_start=start, frame_end=end, fps=fps,
                     meshes=meshes, mesh_mask=mesh_mask)
