"""The geometry-nodes tree that rebuilds render strands from a compact bake at playback.

The compact bake (``core/hair/playback.py``) stores per frame only a small "carrier": the guides
at the LOD resolution, the scalp's matrix, Clump, Randomness and the colliders as exact world
shapes. This tree turns the strand object's own data (one two-point curve per strand, carrying
its binding as curve attributes) into the render strands of that frame with the same formulas
as the bake's NumPy code, in float32:

1. Resample every strand to P points; s = point index / (P - 1); radius from root to tip.
2. Interpolate between the three bound guides (``core/hair/interpolate.py``): the root from
   the scalp's evaluated mesh (Object Info, original space, times the baked scalp matrix), the
   blend of guide shapes, clump toward the nearest guide, and the jitter turned with the guide's
   home-triangle frame.
3. Push the points out of every collider to their radius, in passes that revisit only the
   strands moved deeper than ``SETTLED_DEPTH`` (``core/hair/collide.py``): one Set Position per
   shape kind, selected by kind, broad phase and depth, so each point pays only for the shape
   of the collider it is near.
4. Put the points a body-mesh collider moved where the bake put them: the carrier stores those
   few points (their strand and point index as a key, and their position); each strand point
   finds its key with Sample Nearest and takes the position when the key is its own.

The tree is shared by every strand object; the modifier's *Scalp* input names the scalp.
"""

from __future__ import annotations

import bpy

from ...core.hair import playback
from ...core.hair.collide import SETTLED_DEPTH

NODE_GROUP = "Waft Strands Rebuild"
VERSION = 5  # bump when the tree changes: an older group in a file is rebuilt
SCALP = "Scalp"


class Tree:
    """A few helpers that add a node and link or set its inputs, returning its output socket."""

    def __init__(self, group):
        self.nodes = group.nodes
        self.links = group.links

    def node(self, idname: str, **props):
        node = self.nodes.new(idname)
        for key, value in props.items():
            setattr(node, key, value)
        return node

    def put(self, socket, value) -> None:
        if isinstance(value, bpy.types.NodeSocket):
            self.links.new(value, socket)
        else:
            socket.default_value = value

    def math(self, operation: str, *args):
        node = self.node('ShaderNodeMath', operation=operation)
        for i, arg in enumerate(args):
            self.put(node.inputs[i], arg)
        return node.outputs[0]

    def vec(self, operation: str, *args, scale=None):
        node = self.node('ShaderNodeVectorMath', operation=operation)
        for i, arg in enumerate(args):
            self.put(node.inputs[i], arg)
        if scale is not None:
            self.put(node.inputs[3], scale)
        value = operation in ('DOT_PRODUCT', 'LENGTH', 'DISTANCE')
        return node.outputs[1 if value else 0]

    def add(self, *vectors):
        out = vectors[0]
        for v in vectors[1:]:
            out = self.vec('ADD', out, v)
        return out

    def sub(self, a, b):
        return self.vec('SUBTRACT', a, b)

    def scale(self, v, s):
        return self.vec('SCALE', v, scale=s)

    def dot(self, a, b):
        return self.vec('DOT_PRODUCT', a, b)

    def unit(self, v):
        return self.vec('NORMALIZE', v)

    def xyz(self, v):
        node = self.node('ShaderNodeSeparateXYZ')
        self.put(node.inputs[0], v)
        return node.outputs[0], node.outputs[1], node.outputs[2]

    def combine(self, x, y, z):
        node = self.node('ShaderNodeCombineXYZ')
        for i, arg in enumerate((x, y, z)):
            self.put(node.inputs[i], arg)
        return node.outputs[0]

    def compare(self, operation: str, a, b):
        node = self.node('FunctionNodeCompare', data_type='FLOAT', operation=operation)
        self.put(node.inputs['A'], a)
        self.put(node.inputs['B'], b)
        return node.outputs[0]

    def both(self, *conditions):
        out = conditions[0]
        for c in conditions[1:]:
            node = self.node('FunctionNodeBooleanMath', operation='AND')
            self.put(node.inputs[0], out)
            self.put(node.inputs[1], c)
            out = node.outputs[0]
        return out

    def switch(self, condition, if_false, if_true, kind: str = 'VECTOR'):
        node = self.node('GeometryNodeSwitch', input_type=kind)
        self.put(node.inputs[0], condition)
        self.put(node.inputs[1], if_false)
        self.put(node.inputs[2], if_true)
        return node.outputs[0]

    def per_curve(self, field, data_type: str = 'FLOAT_VECTOR'):
        """``field`` evaluated once per strand (curve) and given to each of its points: what
        depends only on the strand's binding is not recomputed for every point."""
        node = self.node('GeometryNodeFieldOnDomain', domain='CURVE', data_type=data_type)
        self.put(node.inputs[0], field)
        return node.outputs[0]

    def attribute(self, name: str, data_type: str):
        node = self.node('GeometryNodeInputNamedAttribute', data_type=data_type)
        node.inputs['Name'].default_value = name
        return node.outputs[0]

    def sample(self, geometry, value, index, *, data_type='FLOAT_VECTOR', domain='POINT'):
        node = self.node('GeometryNodeSampleIndex', data_type=data_type, domain=domain)
        self.put(node.inputs[0], geometry)
        self.put(node.inputs[1], value)
        self.put(node.inputs[2], index)
        return node.outputs[0]

    def store(self, geometry, name: str, value, *, selection=None, data_type='BOOLEAN',
              domain='POINT'):
        node = self.node('GeometryNodeStoreNamedAttribute', data_type=data_type, domain=domain)
        self.put(node.inputs['Geometry'], geometry)
        if selection is not None:
            self.put(node.inputs['Selection'], selection)
        self.put(node.inputs['Name'], name)
        self.put(node.inputs['Value'], value)
        return node.outputs[0]

    def set_position(self, geometry, *, selection=None, position=None, offset=None):
        node = self.node('GeometryNodeSetPosition')
        self.put(node.inputs['Geometry'], geometry)
        if selection is not None:
            self.put(node.inputs['Selection'], selection)
        if position is not None:
            self.put(node.inputs['Position'], position)
        if offset is not None:
            self.put(node.inputs['Offset'], offset)
        return node.outputs[0]

    def repeat(self, items: list[tuple[str, str]]):
        """A repeat zone with state ``items`` [(socket type, name)]: (input node, output node)."""
        start = self.node('GeometryNodeRepeatInput')
        end = self.node('GeometryNodeRepeatOutput')
        start.pair_with_output(end)
        end.repeat_items.clear()
        for kind, name in items:
            end.repeat_items.new(kind, name)
        return start, end


class _Carrier:
    """Reads the baked carrier's points (``core/hair/playback.py`` layout)."""

    def __init__(self, tree: Tree, geometry):
        self.t = tree
        self.geometry = geometry
        self.position = tree.node('GeometryNodeInputPosition').outputs[0]
        self.cache: dict[int, object] = {}

    def point(self, index):
        return self.t.sample(self.geometry, self.position, index)

    def header(self, j: int):
        if j not in self.cache:
            self.cache[j] = self.point(j)
        return self.cache[j]


def _interpolated(t: Tree, c: _Carrier, strands, scalp_geometry, s, k):
    """Step 2: the render-strand point positions before collision (interpolate.py)."""
    clump, randomness, _ = t.xyz(c.header(4))
    guides, points, _ = t.xyz(c.header(5))

    def guide_point(g, j):  # carrier index HEADER + g·P + j
        return c.point(t.math('ADD', t.math('MULTIPLY_ADD', g, points, j), playback.HEADER))

    g = [t.attribute(f"waft_g{i}", 'INT') for i in range(3)]
    weight = t.xyz(t.attribute("waft_weight", 'FLOAT_VECTOR'))
    root_of = [t.per_curve(guide_point(gi, 0)) for gi in g]
    shape = [t.sub(guide_point(gi, k), r) for gi, r in zip(g, root_of, strict=True)]
    # Root on the deformed scalp: barycentric in the evaluated mesh, then the scalp's matrix.
    position = t.node('GeometryNodeInputPosition').outputs[0]
    bary = t.xyz(t.attribute("waft_bary", 'FLOAT_VECTOR'))
    local = t.add(*(t.scale(t.sample(scalp_geometry, position,
                                     t.attribute(f"waft_scalp_v{i}", 'INT')), bary[i])
                    for i in range(3)))
    lx, ly, lz = t.xyz(local)
    root = t.per_curve(t.add(t.scale(c.header(0), lx), t.scale(c.header(1), ly),
                             t.scale(c.header(2), lz), c.header(3)))
    # The home-triangle frame of the nearest guide (interpolate._frames).
    frame_base = t.math('MULTIPLY_ADD', guides, points, playback.HEADER)  # HEADER + G·P
    corner = t.math('MULTIPLY_ADD', g[0], 2.0, frame_base)
    b, cc, flat = t.xyz(c.point(corner))
    helper = c.point(t.math('ADD', corner, 1.0))
    is_flat = t.compare('GREATER_THAN', flat, 0.5)
    ra = root_of[0]
    rb, rc = guide_point(b, 0), guide_point(cc, 0)
    tangent = t.sub(guide_point(g[0], 1), ra)
    z = t.switch(is_flat, t.unit(t.vec('CROSS_PRODUCT', t.sub(rb, ra), t.sub(rc, ra))),
                 t.unit(tangent))
    x0 = t.switch(is_flat, t.sub(rb, ra), helper)
    x = t.unit(t.sub(x0, t.scale(z, t.dot(x0, z))))
    y = t.vec('CROSS_PRODUCT', z, x)
    jx, jy, jz = t.xyz(t.attribute("waft_jitter", 'FLOAT_VECTOR'))
    jitter = t.per_curve(t.add(t.scale(x, jx), t.scale(y, jy), t.scale(z, jz)))
    # strand = root + h0 + (1 - c·s)(w1 (h1 - h0) + w2 (h2 - h0)) + s (R·J - c (root - g0 root))
    blend = t.add(t.scale(t.sub(shape[1], shape[0]), weight[1]),
                  t.scale(t.sub(shape[2], shape[0]), weight[2]))
    keep = t.math('SUBTRACT', 1.0, t.math('MULTIPLY', clump, s))
    line = t.sub(t.scale(jitter, randomness), t.scale(t.sub(root, ra), clump))
    out = t.add(root, shape[0], t.scale(blend, keep), t.scale(line, s))
    return t.set_position(strands, position=out)


def _sphere(t: Tree, x, centre, radius):
    d = t.sub(x, centre)
    return t.unit(d), t.math('SUBTRACT', t.vec('LENGTH', d), radius)


def _rows(t: Tree, x, r0, r1, r2, offset):
    return t.add(t.combine(t.dot(r0, x), t.dot(r1, x), t.dot(r2, x)), offset)


def _columns(t: Tree, u, c0, c1, c2):
    ux, uy, uz = t.xyz(u)
    return t.add(t.scale(c0, ux), t.scale(c1, uy), t.scale(c2, uz))


def _shapes(t: Tree, x, v, f):
    """(normal, signed distance) of each shape kind at x (colliders.py, world space)."""
    out = {playback.SPHERE: _sphere(t, x, v[0], f[0])}
    # Ellipsoid: radial projection in unit space, normal Minv^T s, distance to the tangent plane.
    u = t.unit(t.scale(_rows(t, x, v[4], v[5], v[6], v[7]), t.math('DIVIDE', 1.0, f[0])))
    p = t.add(t.scale(_columns(t, u, v[0], v[1], v[2]), f[0]), v[3])
    n = t.unit(_columns(t, u, v[4], v[5], v[6]))
    out[playback.ELLIPSOID] = (n, t.dot(t.sub(x, p), n))
    # Tapered capsule (round cone): side line, or one of the end spheres.
    A, axis, B = v[0], v[1], v[2]
    ra, rb, length, ca, sb = f[0], f[1], f[2], f[3], f[4]
    rel = t.sub(x, A)
    y = t.dot(rel, axis)
    radial = t.sub(rel, t.scale(axis, y))
    rho = t.vec('LENGTH', radial)
    along = t.math('SUBTRACT', t.math('MULTIPLY', ca, y), t.math('MULTIPLY', sb, rho))
    n_side = t.add(t.scale(t.unit(radial), ca), t.scale(axis, sb))
    sd_side = t.math('SUBTRACT', t.math('MULTIPLY_ADD', ca, rho, t.math('MULTIPLY', sb, y)), ra)
    n_a, sd_a = _sphere(t, x, A, ra)
    n_b, sd_b = _sphere(t, x, B, rb)
    low = t.compare('LESS_THAN', along, 0.0)
    high = t.compare('GREATER_THAN', along, t.math('MULTIPLY', ca, length))
    out[playback.CAPSULE] = (
        t.switch(low, t.switch(high, n_side, n_b), n_a),
        t.switch(low, t.switch(high, sd_side, sd_b, 'FLOAT'), sd_a, 'FLOAT'))
    # Box: outside, the clamped point; inside, out through the face nearest in world units.
    half = f[0]
    local = _rows(t, x, v[4], v[5], v[6], v[7])
    halves = t.combine(half, half, half)
    clamped = t.vec('MAXIMUM', t.vec('MINIMUM', local, halves), t.scale(halves, -1.0))
    size = t.vec('ABSOLUTE', local)
    sx, sy, sz = t.xyz(size)
    outside = t.compare('GREATER_THAN', t.math('MAXIMUM', sx, t.math('MAXIMUM', sy, sz)), half)
    gx, gy, gz = t.xyz(t.vec('MULTIPLY', t.sub(halves, size), v[8]))
    face_x = t.both(t.compare('LESS_EQUAL', gx, gy), t.compare('LESS_EQUAL', gx, gz))
    face_y = t.compare('LESS_EQUAL', gy, gz)
    lx, ly, lz = t.xyz(local)
    on_face = t.switch(face_x, t.switch(face_y, lz, ly, 'FLOAT'), lx, 'FLOAT')
    sign = t.switch(t.compare('GREATER_EQUAL', on_face, 0.0), -1.0, 1.0, 'FLOAT')
    cap = t.math('MULTIPLY', sign, half)
    inside_point = t.switch(face_x, t.switch(face_y, t.combine(lx, ly, cap),
                                             t.combine(lx, cap, lz)), t.combine(cap, ly, lz))
    n_inside = t.scale(t.switch(face_x, t.switch(face_y, v[11], v[10]), v[9]), sign)
    surface = t.add(_columns(t, t.switch(outside, inside_point, clamped), v[0], v[1], v[2]),
                    v[3])
    gap = t.sub(x, surface)
    n = t.switch(outside, n_inside, t.unit(gap))
    out[playback.BOX] = (n, t.dot(gap, n))
    out[playback.PLANE] = (v[0], t.math('SUBTRACT', t.dot(x, v[0]), f[0]))
    return out


def _collided(t: Tree, c: _Carrier, strands, k):
    """Step 3: passes over the colliders (collide.py), each a repeat over the K records."""
    guides, points, passes = t.xyz(c.header(5))
    colliders = t.xyz(c.header(4))[2]
    # HEADER + G·P + 2G: the first collider record
    first = t.math('ADD', t.math('MULTIPLY', guides, t.math('ADD', points, 2.0)), playback.HEADER)
    strands = t.store(strands, "waft_active", True, domain='CURVE')
    outer_in, outer_out = t.repeat([('GEOMETRY', "Geometry")])
    t.put(outer_in.inputs[0], passes)
    t.put(outer_in.inputs[1], strands)
    # A float, not a boolean: read on the curve domain it averages its points (a boolean would
    # be true only where every point is), so "> 0" means "any point of the strand".
    geometry = t.store(outer_in.outputs[0 + _state_offset(outer_in)], "waft_hit", 0.0,
                       data_type='FLOAT')
    inner_in, inner_out = t.repeat([('GEOMETRY', "Geometry"), ('INT', "Collider")])
    t.put(inner_in.inputs[0], colliders)
    t.put(inner_in.inputs[1], geometry)
    t.put(inner_in.inputs[2], 0)
    off = _state_offset(inner_in)
    geometry, index = inner_in.outputs[off], inner_in.outputs[off + 1]
    base = t.math('MULTIPLY_ADD', index, playback.COLLIDER_POINTS, first)

    def record(j):
        return c.point(t.math('ADD', base, float(j)))

    kind, bound, f0 = t.xyz(record(0))
    centre = record(1)
    v = [record(2 + j) for j in range(12)]
    f1, f2, f3 = t.xyz(record(14))
    f4 = t.xyz(record(15))[0]
    x = t.node('GeometryNodeInputPosition').outputs[0]
    radius = t.node('GeometryNodeInputRadius').outputs[0]
    reach = t.math('ADD', bound, radius)
    d = t.sub(x, centre)
    near = t.both(t.attribute("waft_active", 'BOOLEAN'), t.compare('GREATER_EQUAL', k, 1.0),
                  t.compare('LESS_EQUAL', t.dot(d, d), t.math('MULTIPLY', reach, reach)))
    # Stored once, so the shape below is evaluated only on the points near this collider (a
    # field is evaluated again by every node that reads it, over every point).
    geometry = t.store(geometry, "waft_near", near)
    near = t.attribute("waft_near", 'BOOLEAN')
    depth = t.attribute("waft_depth", 'FLOAT')
    # The collider's own shape only: an Index Switch on a single value evaluates one branch.
    switch = t.node('GeometryNodeIndexSwitch', data_type='GEOMETRY')
    shapes = _shapes(t, x, v, (f0, f1, f2, f3, f4))
    while len(switch.index_switch_items) < len(shapes):
        switch.index_switch_items.new()
    t.put(switch.inputs[0], kind)
    for code, (n, sd) in shapes.items():
        branch = t.store(geometry, "waft_depth", t.math('SUBTRACT', radius, sd), selection=near,
                         data_type='FLOAT')
        branch = t.set_position(branch, selection=t.both(near, t.compare('GREATER_THAN', depth,
                                                                          0.0)),
                                offset=t.scale(n, depth))
        branch = t.store(branch, "waft_hit", 1.0, data_type='FLOAT',
                         selection=t.both(near, t.compare('GREATER_THAN', depth, SETTLED_DEPTH)))
        t.put(switch.inputs[1 + code], branch)
    geometry = switch.outputs[0]
    t.put(inner_out.inputs[0], geometry)
    t.put(inner_out.inputs[1], t.math('ADD', index, 1.0))
    geometry = inner_out.outputs[0]
    # The next pass looks only at the strands this one moved deeper than SETTLED_DEPTH.
    moved = t.compare('GREATER_THAN', t.attribute("waft_hit", 'FLOAT'), 0.0)
    geometry = t.store(geometry, "waft_active", moved, domain='CURVE')
    t.put(outer_out.inputs[0], geometry)
    return outer_out.outputs[0]


def _corrected(t: Tree, c: _Carrier, strands, k):
    """Step 4: the body-mesh corrections (``playback.carrier_points``) put in place."""
    guides, points, _ = t.xyz(c.header(5))
    colliders = t.xyz(c.header(4))[2]
    count = t.xyz(c.header(6))[2]
    slots = t.xyz(c.header(7))[0]
    # HEADER + G·(P + 2) + 16·K: the first key; the values follow the S key slots.
    keys = t.math('MULTIPLY_ADD', colliders, playback.COLLIDER_POINTS, t.math(
        'ADD', t.math('MULTIPLY', guides, t.math('ADD', points, 2.0)), playback.HEADER))
    values = t.math('ADD', keys, slots)
    cloud = t.node('GeometryNodePoints')
    t.put(cloud.inputs['Count'], slots)
    t.put(cloud.inputs['Position'], c.point(t.math(
        'ADD', keys, t.node('GeometryNodeInputIndex').outputs[0])))
    strand = t.per_curve(t.node('GeometryNodeInputIndex').outputs[0], 'INT')
    key = t.combine(strand, k, 0.0)
    nearest = t.node('GeometryNodeSampleNearest', domain='POINT')
    t.put(nearest.inputs[0], cloud.outputs[0])
    t.put(nearest.inputs['Sample Position'], key)
    slot = nearest.outputs[0]
    found = t.vec('DISTANCE', c.point(t.math('ADD', keys, slot)), key)
    own = t.both(t.compare('GREATER_THAN', count, 0.5), t.compare('LESS_THAN', found, 0.25))
    return t.set_position(strands, selection=own, position=c.point(t.math('ADD', values, slot)))


def _state_offset(repeat_input) -> int:
    """Index of the first state output of a repeat input (5.0 adds an Iteration output)."""
    return 1 if repeat_input.outputs[0].name == "Iteration" else 0


def frame_bake(t: Tree, source):
    """``source`` → a Bake node (its geometry output returned), with a Scene Time node feeding a
    second, float item: without anything time-dependent in the tree the depsgraph never
    re-evaluates the object on frame change, and playback stays on whichever frame was
    evaluated first (observed in 5.0). Both strand bake trees use it."""
    bake = t.node('GeometryNodeBake')
    # A Bake node from Python has no items; links to it fail silently until one exists.
    if len(bake.bake_items) == 0:
        bake.bake_items.new('GEOMETRY', "Geometry")
    bake.bake_items.new('FLOAT', "Frame")
    time = t.node('GeometryNodeInputSceneTime')
    t.put(bake.inputs[0], source)
    t.put(bake.inputs[1], time.outputs["Frame"])
    return bake.outputs[0]


def rebuild_node_group():
    """The shared tree (built once per file, rebuilt when ``VERSION`` changes)."""
    group = bpy.data.node_groups.get(NODE_GROUP)
    if group is not None and group.get("waft_version") == VERSION:
        return group
    if group is not None:
        group.name = f"{NODE_GROUP} (old)"
    group = bpy.data.node_groups.new(NODE_GROUP, 'GeometryNodeTree')
    group["waft_version"] = VERSION
    group.interface.new_socket("Geometry", in_out='INPUT', socket_type='NodeSocketGeometry')
    group.interface.new_socket(SCALP, in_out='INPUT', socket_type='NodeSocketObject')
    group.interface.new_socket("Geometry", in_out='OUTPUT', socket_type='NodeSocketGeometry')
    t = Tree(group)
    source = t.node('NodeGroupInput')
    sink = t.node('NodeGroupOutput')
    carrier = _Carrier(t, frame_bake(t, source.outputs[0]))
    info = t.node('GeometryNodeObjectInfo', transform_space='ORIGINAL')
    t.put(info.inputs[0], source.outputs[1])
    points = t.xyz(carrier.header(5))[1]
    resample = t.node('GeometryNodeResampleCurve')
    if "Mode" in resample.inputs:
        resample.inputs["Mode"].default_value = 'Count'
    else:
        resample.mode = 'COUNT'
    t.put(resample.inputs[0], source.outputs[0])
    t.put(resample.inputs["Count"], points)
    strands = resample.outputs[0]
    k = t.node('GeometryNodeSplineParameter').outputs["Index"]
    s = t.math('DIVIDE', k, t.math('SUBTRACT', points, 1.0))
    root_radius, tip_radius, _ = t.xyz(carrier.header(6))
    radius = t.node('GeometryNodeSetCurveRadius')
    t.put(radius.inputs[0], strands)
    t.put(radius.inputs["Radius"], t.math('MULTIPLY_ADD', t.math('SUBTRACT', tip_radius,
                                                                 root_radius), s, root_radius))
    strands = _interpolated(t, carrier, radius.outputs[0], info.outputs["Geometry"], s, k)
    strands = _collided(t, carrier, strands, k)
    strands = _corrected(t, carrier, strands, k)
    t.put(sink.inputs[0], strands)
    return group


def node_group_input(group, name: str) -> str:
    """The modifier property key (socket identifier) of the group input called ``name``."""
    return next(item.identifier for item in group.interface.items_tree
                if item.item_type == 'SOCKET' and item.in_out == 'INPUT' and item.name == name)
