"""Bone-chain system: runs of flagged pose bones simulated as strands by ``core.strands`` (FTL
with the DFTL velocity correction, Müller et al. 2012, plus XPBD constraints), written back as
bone rotations on the ``Waft`` NLA track. See docs/internals.md.

``addon.register()`` registers ``properties`` then ``panels`` (addon/__init__.py ``PARTS``); the
other modules define no Blender class, so importing them registers nothing.
"""
