"""Fabric presets: ClothParams values that read as the fabric (issue 4, seed 001).

Seed 001 ends with "it looks like tweed, not silk or rubber", and says the same system made
Barry Wheeler's down jacket and an old lady's veil by changing parameters only. Each preset is a
plain dict, ClothParams field name -> value (SI, per second), so the add-on can copy it onto its
properties; `DESCRIPTIONS` holds one line per fabric. Why the numbers (particles have unit
mass, so a compliance is metres per newton per kilogram of cloth, see params.py):

* stretch: woven fabrics barely stretch (1e-6, hard vertical on); rubber is the fabric that does
  (1e-3, hard vertical off so it can lengthen);
* bend: the main "weight" cue. Leather and tweed hold their shape (1e-4 / 3e-3), silk and the
  veil fold at once (0.5 / 2.0, effectively no bending resistance);
* damping and drag: drag is air per kilogram, so light sheer fabrics (silk 2, veil 4) follow the
  air; heavy ones (leather 0.2) swing through it. Damping is internal friction: down and leather
  settle fast, rubber and the veil keep moving;
* contact damping (seed 001 contact friction): rough tweed and leather cling to the body, silk
  slides;
* edges (seed 001): light fabrics flutter at the edges (edge wind 2-2.5), stiff ones hardly;
* radius / layer thickness: the down jacket is thick (4 cm), the veil almost has no thickness.
"""

from __future__ import annotations

from .params import DEFAULTS

_WOVEN = {
    "stretch_compliance": 1e-6,
    "use_hard_vertical": True,
    "gravity": tuple(DEFAULTS["gravity"]),
}

FABRICS: dict[str, dict] = {
    "TWEED": {
        **_WOVEN,
        "shear_compliance": 1e-3, "bend_compliance": 3e-3, "horizontal_compliance": 1e-5,
        "damping": 1.5, "drag": 0.5, "world_motion_fraction": 0.2, "contact_damping": 10.0,
        "edge_damping_scale": 0.5, "edge_wind_scale": 2.0, "edge_world_motion_scale": 1.5,
        "edge_max_distance_scale": 1.5, "radius": 0.02, "layer_thickness": 0.01,
    },
    "SILK": {
        **_WOVEN,
        "shear_compliance": 1e-2, "bend_compliance": 0.5, "horizontal_compliance": 1e-4,
        "damping": 0.3, "drag": 2.0, "world_motion_fraction": 0.4, "contact_damping": 2.0,
        "edge_damping_scale": 0.6, "edge_wind_scale": 2.5, "edge_world_motion_scale": 1.5,
        "edge_max_distance_scale": 1.5, "radius": 0.01, "layer_thickness": 0.005,
    },
    "LEATHER": {
        **_WOVEN,
        "stretch_compliance": 0.0, "shear_compliance": 1e-4, "bend_compliance": 1e-4,
        "horizontal_compliance": 1e-6, "damping": 3.0, "drag": 0.2,
        "world_motion_fraction": 0.15, "contact_damping": 15.0, "edge_damping_scale": 0.8,
        "edge_wind_scale": 1.2, "edge_world_motion_scale": 1.2, "edge_max_distance_scale": 1.2,
        "radius": 0.02, "layer_thickness": 0.01,
    },
    "RUBBER": {
        **_WOVEN,
        "stretch_compliance": 1e-3, "use_hard_vertical": False, "shear_compliance": 1e-3,
        "bend_compliance": 1e-2, "horizontal_compliance": 1e-3, "damping": 0.2, "drag": 0.2,
        "world_motion_fraction": 0.3, "contact_damping": 2.0, "edge_damping_scale": 1.0,
        "edge_wind_scale": 1.0, "edge_world_motion_scale": 1.0, "edge_max_distance_scale": 1.0,
        "radius": 0.02, "layer_thickness": 0.01,
    },
    "DOWN_JACKET": {
        **_WOVEN,
        "shear_compliance": 1e-3, "bend_compliance": 2e-3, "horizontal_compliance": 1e-5,
        "damping": 4.0, "drag": 1.5, "world_motion_fraction": 0.15, "contact_damping": 12.0,
        "edge_damping_scale": 0.7, "edge_wind_scale": 1.5, "edge_world_motion_scale": 1.3,
        "edge_max_distance_scale": 1.3, "radius": 0.04, "layer_thickness": 0.03,
    },
    "VEIL": {
        **_WOVEN,
        "shear_compliance": 5e-2, "bend_compliance": 2.0, "horizontal_compliance": 1e-3,
        "damping": 0.2, "drag": 4.0, "world_motion_fraction": 0.5, "contact_damping": 2.0,
        "edge_damping_scale": 0.5, "edge_wind_scale": 2.0, "edge_world_motion_scale": 1.5,
        "edge_max_distance_scale": 1.5, "radius": 0.005, "layer_thickness": 0.003,
    },
}

DESCRIPTIONS: dict[str, str] = {
    "TWEED": "Alan Wake's jacket: heavy wool, holds its shape, clings to the body, edges flutter",
    "SILK": "Light and slippery: folds at once, follows the air, keeps rippling",
    "LEATHER": "Heavy and stiff: swings as a piece, settles quickly, barely reacts to wind",
    "RUBBER": "Stretchy and bouncy: lengthens under load and springs back",
    "DOWN_JACKET": "Thick padded shell: puffy, damped by the air inside, moves in slow lumps",
    "VEIL": "Sheer and weightless: floats on the slightest air, no bending resistance",
}
