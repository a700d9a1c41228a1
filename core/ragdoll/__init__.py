"""Physical animation: ragdolls of capsule bodies that follow an animation (Jedi: Fallen Order).

XPBD rigid bodies (Müller et al. 2020) with ball joints, swing/twist limits, orientation motors,
velocity drives, target constraints, collisions and a local-space output blend. See
docs/ragdoll-solver.md.
"""

from .drive import RagdollDrive
from .model import BodyMode, RagdollModel, RagdollRest, build_ragdoll_model, capsule_inertia
from .params import RagdollParams, RagdollSettings
from .solver import RagdollJob, RagdollResult, RagdollStream, bake_ragdoll, bake_ragdoll_steps

__all__ = [
    "BodyMode", "RagdollDrive", "RagdollJob", "RagdollModel", "RagdollParams", "RagdollRest",
    "RagdollResult", "RagdollSettings", "RagdollStream", "bake_ragdoll", "bake_ragdoll_steps",
    "build_ragdoll_model", "capsule_inertia",
]
