"""Building blocks shared by every model family (keras.ops only)."""

from kzoo.layers.activations import get_activation
from kzoo.layers.attention import MultiHeadAttention
from kzoo.layers.character_cnn import CharacterCNN
from kzoo.layers.decoder_block import TransformerDecoderBlock
from kzoo.layers.dense import FoldedDense, folded_matmul
from kzoo.layers.dropout import Dropout
from kzoo.layers.embeddings import (
    PositionEmbedding,
    SinusoidalPositions,
    RowDropoutEmbedding,
    TokenEmbedding,
    sinusoidal_position_table,
    token_and_position_embeddings,
)
from kzoo.layers.heads import MaskedLMHead, TiedLMHead
from kzoo.layers.highway import Highway
from kzoo.layers.masks import CausalPaddingMask, causal_mask
from kzoo.layers.normalization import RMSNorm, normalization_layer
from kzoo.layers.pooling import LastTokenPooling
from kzoo.layers.recurrent import ProjectedLSTM
from kzoo.layers.scalar_mix import ScalarMix
from kzoo.layers.relative_position import (
    RelativePositionBias,
    relative_position_bucket,
)
from kzoo.layers.span_boundary_head import SpanBoundaryHead
from kzoo.layers.transformer_block import TransformerBlock

__all__ = [
    "get_activation",
    "Dropout",
    "FoldedDense",
    "folded_matmul",
    "MultiHeadAttention",
    "PositionEmbedding",
    "SinusoidalPositions",
    "sinusoidal_position_table",
    "RowDropoutEmbedding",
    "TokenEmbedding",
    "token_and_position_embeddings",
    "MaskedLMHead",
    "LastTokenPooling",
    "TiedLMHead",
    "SpanBoundaryHead",
    "CausalPaddingMask",
    "causal_mask",
    "TransformerBlock",
    "TransformerDecoderBlock",
    "RMSNorm",
    "normalization_layer",
    "RelativePositionBias",
    "relative_position_bucket",
    "CharacterCNN",
    "Highway",
    "ProjectedLSTM",
    "ScalarMix",
]
