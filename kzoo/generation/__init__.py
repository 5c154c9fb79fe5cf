"""Text generation: samplers, the fixed-shape generate loops (keras.ops),
and their per-backend compilation (`compiled.py`, the only backend-specific
module here), for decoder-only models (`generate`) and encoder-decoders
(`generate_seq2seq`; the protocol a model implements is in
`encoder_decoder.py`)."""

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
from kzoo.generation.seq2seq import generate_seq2seq

__all__ = [
    "generate", "generate_seq2seq", "get_sampler", "Sampler",
    "GreedySampler", "RandomSampler", "TopKSampler", "TopPSampler",
    "BeamSampler",
]
