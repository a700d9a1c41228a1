"""Audit (session 40): firm bending at the default 240 Hz substep against a max distance, a
violation of the energy law found with parameters the suite did not use (its firm-bending test
takes 1e-5 m/N only at 480 Hz). Fixed: the direct
solve's straight bending rows keep their vectors across the chord over the whole substep
(`DirectCoefficients.across`), so their summed XPBD multipliers push along the rows they were
summed on."""

from __future__ import annotations

from .test_energy import _bending_energy, _energy, _rise_and_release, _strand_on_a_head


def test_firm_bending_at_240_hz_rooted_on_a_head_gains_no_energy():
    """test_energy's strand on a head (8 segments, 0.25 m, max distance 8 cm), with bending
    compliance 1e-5 m/N at the default 240 Hz substep: its energy, bending spring counted as
    that test does, may not rise by more than 1 % of its fall."""
    x = _strand_on_a_head(segments=8, length=0.25, hz=240.0, radius=0.02, limit=0.08,
                          friction=0.0, seconds=2.0, compliance=1e-5)
    rise, released = _rise_and_release(x, _energy(x, 240.0) + _bending_energy(x, x[0], 1e-5))
    assert released > 1.0
    assert rise <= 0.01 * released, (rise, released)
