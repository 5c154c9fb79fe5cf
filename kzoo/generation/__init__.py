"""Text generation: samplers, the fixed-shape generate loops (keras.ops),
and their per-backend compilation (`compiled.py`, the only backend-specific
module here)."""

from kzoo.generation.generate import generate
from kzoo.generation.samplers import (
    BeamSampler,
    GreedySampler,
    RandomSampler,
    Sampler,
    TopKSampler,
    TopPSampler,
    get_sampler,
)

__all__ = [
    "generate", "get_sampler", "Sampler", "GreedySampler", "RandomSampler",
    "TopKSampler", "TopPSampler", "BeamSampler",
]
