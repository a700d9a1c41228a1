"""Let benchmark scripts import ``waft.core`` from this checkout.

The repository root is the ``waft`` package, but its ``__init__`` registers the Blender add-on
(needs bpy). A bare namespace module for ``waft`` pointing at the checkout lets ``waft.core``
(NumPy only) import without running that code.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def use_checkout() -> None:
    """Make ``import waft.core…`` load this checkout's core (once per process)."""
    if "waft" not in sys.modules:
        module = types.ModuleType("waft")
        module.__path__ = [str(REPO_ROOT)]
        module.__spec__ = importlib.util.spec_from_loader("waft", loader=None, is_package=True)
        sys.modules["waft"] = module
