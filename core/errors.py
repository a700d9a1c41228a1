"""Exceptions raised by the solver core.

`core` validates its input before simulating anything and raises precise errors that name the
offending setup, chain, collider or setting; the Blender operators turn them into reports.
"""

from __future__ import annotations


class WaftError(Exception):
    """Base class of every error Waft raises on purpose."""


class SetupError(WaftError, ValueError):
    """Invalid input: the message names the setup / chain / collider / field at fault."""


class DivergenceError(WaftError, RuntimeError):
    """The simulation produced non-finite positions or left a generous bound.

    Raised before any result is returned, so a diverged bake never writes anything.
    """

    def __init__(self, setup: str, frame: int, detail: str = ""):
        self.setup = setup
        self.frame = int(frame)
        self.detail = detail
        message = f"Simulation of setup '{setup}' diverged at frame {self.frame}"
        if detail:
            message += f": {detail}"
        super().__init__(message)
