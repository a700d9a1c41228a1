"""What lies on a collider under friction comes to rest (session 49): every chain preset draped
from a still root over a sphere, a capsule, a box and the ground, passive (no wind, nothing
animated), friction 0.3 (the collider's default).

The add-on's presets (addon/strands/presets.py, which imports bpy through its menus) are read
as plain dicts from the file's syntax tree, so this stays a NumPy-only test; a preset's
`gravity_factor` scales standard gravity as the add-on does (addon/strands/assemble.py).

Rest: every particle touching the collider (within half a millimetre of its radius) moves less
than 1 mm/s over the last second of an 8 s bake. Coulomb friction holds a contact whose
tangential pull is inside the cone without any slip, so a contact still moving seconds after
the drape is friction failing, not physics; 1 mm/s is 4 µm a 240 Hz substep, 2.4 % of the
170 µm gravity presses a resting particle into the collider each substep (under 1 mm a
second, below anything a frame shows). The free part below a contact may still swing (a
lightly damped pendulum: SOFT's damping + drag 1.3/s lets its amplitude fall by e^(-0.65 t));
only the contacts are held to rest.
"""

from __future__ import annotations

import ast

import numpy as np
import pytest

from waft import core
from waft.core.colliders import ColliderKind, shape_normal

from .conftest import REPO_ROOT, G

FPS = 60.0
SECONDS = 8.0
BONES, LENGTH, RADIUS = 8, 0.05, 0.01
SIZE = 0.1  # sphere / capsule / box half size, metres
FRICTION = 0.3
REST_SPEED = 1e-3  # m/s, see the module docstring
TOUCH = 5e-4  # a particle within this of its radius from the surface touches it


def chain_presets() -> dict[str, dict[str, float]]:
    """`PRESETS` of addon/strands/presets.py, evaluated from its assignments alone."""
    tree = ast.parse((REPO_ROOT / "addon" / "strands" / "presets.py").read_text())
    keep = []
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        named = any(isinstance(t, ast.Name) and t.id in ("PRESETS", "_HAIR_BASE")
                    for t in targets)
        update = (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                  and ast.unparse(node.value.func) == "PRESETS.update")
        if named or update:
            keep.append(node)
    namespace: dict = {}
    exec(compile(ast.Module(body=keep, type_ignores=[]), "presets.py", "exec"), namespace)
    return namespace["PRESETS"]


PRESETS = chain_presets()
FIELDS = set(core.StrandParams.__dataclass_fields__)


def _scene(kind: str):
    """The chain laid level from a still root just above the collider's top (0.15 m above the
    ground), out over its +x side; the collider set and its matrix."""
    root = np.array([-0.05 if kind == "box" else 0.0, 0.0,
                     0.15 if kind == "plane" else SIZE + 0.02])
    chain = root + np.arange(BONES + 1)[:, None] * np.array([LENGTH, 0.0, 0.0])
    shape = {"sphere": ColliderKind.ELLIPSOID, "capsule": ColliderKind.CAPSULE,
             "box": ColliderKind.BOX, "plane": ColliderKind.PLANE}[kind]
    M = np.eye(4)
    if kind == "capsule":  # its axis (local Z) along world Y, across the chain
        M[:3, :3] = [[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]
    colliders = core.ColliderSet.create(names=["C"], kind=[shape], size=[SIZE],
                                        radius_a=[SIZE], radius_b=[SIZE], friction=[FRICTION])
    return chain, colliders, M


def contact_rest_speed(rig, preset: str, kind: str) -> float:
    """The largest speed (m/s) of a particle touching the collider over the last second."""
    chain, colliders, M = _scene(kind)
    frames = int(SECONDS * FPS) + 1
    values = PRESETS[preset]
    params = {name: value for name, value in values.items() if name in FIELDS}
    params["gravity"] = np.array([0.0, 0.0, -G]) * values.get("gravity_factor", 1.0)
    model, drive = rig.build([chain], frames=frames, fps=FPS, colliders=colliders,
                             collider_matrix=np.tile(M, (frames, 1, 1, 1)), radius=RADIUS,
                             use_tether=True, **{"damping": 1.0, "shape_stiffness": 0.1,
                                                 "bend_compliance": 5e-5, "drag": 0.5,
                                                 **params})
    x = core.bake(model, drive).positions[:, 0]
    assert np.isfinite(x).all()
    speed = np.linalg.norm(np.diff(x, axis=0), axis=-1) * FPS
    _, distance = shape_normal(int(colliders.kind[0]), x.reshape(-1, 3), M, np.linalg.inv(M),
                               colliders, 0)
    touching = (distance.reshape(x.shape[:2]) < RADIUS + TOUCH)[1:]
    return float(np.where(touching, speed, 0.0)[-int(FPS):].max())


KINDS = ("sphere", "capsule", "box", "plane")
# mm/s over the last second, touching particles (session 49). Cause measured: the first
# collider pass of a substep pushes a resting particle 170 um (0.3 x 170 = 51 um of cone) and
# holds its 21 um slide; the contact rounds' SHAKE then moves it 6.3 um along the ground, and the
# passes after find it with 0.48 um, 4.5e-17 m or -3.7e-14 m of penetration: each pass's cone is
# its own penetration's, so nothing holds it (docs/hair.md, Session 49).
CREEPING = {("SOFT", "plane"): 1.87}


def _cases():
    for preset in PRESETS:
        for kind in KINDS:
            marks = ()
            if (preset, kind) in CREEPING:
                marks = pytest.mark.xfail(strict=True, reason=(
                    f"s49: its contacts creep {CREEPING[preset, kind]} mm/s after 7 s: each "
                    "collider pass's friction cone is its own penetration's, not the substep's "
                    "summed push (170 um, then < 0.5 um), so the rounds' 6.3 um a substep along "
                    "the ground is never held. s50 (measured again 1.867): the cone summed "
                    "over the substep alone 0.0009 mm/s, but 5 of 36 ground cases of "
                    "tools/chain_rest_spread.py over 1 mm/s (main 4) and 15 over 0.1 (main 7); "
                    "with SHAKE holding the static particles 4-27 of 36 "
                    "(tools/patches/s50_static_hold.diff)"))
            yield pytest.param(preset, kind, marks=marks, id=f"{preset}-{kind}")


@pytest.mark.parametrize(("preset", "kind"), list(_cases()))
def test_a_chain_preset_draped_on_a_collider_comes_to_rest(rig, preset, kind):
    speed = contact_rest_speed(rig, preset, kind)
    assert speed < REST_SPEED, f"{speed * 1e3:.3f} mm/s"
