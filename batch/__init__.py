"""Batch baking at studio scale: many .blend shots on a Dask cluster (docs/batch.md).

``python -m waft.batch bake SHOTS... --out DIR`` on the command line, ``bake_many`` from Python.
This package runs outside Blender and never imports bpy: each shot is baked by a fresh Blender
process (the bpy wheel) that a Dask worker starts (``task.py`` → ``child.py``).
"""

from .errors import BatchError
from .ledger import BakeSettings
from .report import ShotResult, read_jsonl
from .run import bake_many
from .shots import Shot, read_shots

__all__ = ["BakeSettings", "BatchError", "Shot", "ShotResult", "bake_many", "read_jsonl",
           "read_shots"]
