"""Language-model heads shared across families."""

import keras
from keras import ops

from kzoo.layers.activations import get_activation
from kzoo.layers.dense import FoldedDense


class MaskedLMHead(keras.layers.Layer):
    """BERT's masked-LM head: gather masked positions, dense + activation +
    LayerNorm, then logits through the (tied) token embedding plus a bias.

    The dense layer maps to the embedding's width: the hidden width for
    BERT, the narrower factorised embedding for ALBERT (its head's
    `dense` is hidden -> embedding_size, its LayerNorm embedding_size wide).

    Args:
        token_embedding: the backbone's `TokenEmbedding`; its matrix is the
            output projection (weights are tied, not copied).
        activation: Hugging Face activation name (`"gelu"` for BERT).
        layer_norm_epsilon: epsilon of the head's LayerNorm.
    """

    # What the head was trained for, kept with its weights: any task with
    # a masked-LM head may load it (see kzoo.core.head_weights).
    head_kind = "masked_lm"

    def __init__(self, token_embedding, activation="gelu",
                 layer_norm_epsilon=1e-12, kernel_initializer="glorot_uniform",
                 **kwargs):
        super().__init__(**kwargs)
        self.token_embedding = token_embedding
        self.activation = activation
        self.layer_norm_epsilon = layer_norm_epsilon
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self._activation_fn = get_activation(activation)

    def build(self, sequence_output_shape, mask_positions_shape=None):
        input_shape = sequence_output_shape
        width = self.transform_width(input_shape[-1])
        # The sublayers take the head's dtype policy: without it they get
        # the global one, and a mixed-precision task's head would compute
        # in float32.
        self.transform = FoldedDense(
            width, kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy, name="transform")
        self.transform.build(input_shape)
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy,
            name="layer_norm")
        self.layer_norm.build(tuple(input_shape[:-1]) + (width,))
        self.bias = self.add_weight(
            name="bias", shape=(self.token_embedding.input_dim,),
            initializer="zeros")
        self.built = True

    def call(self, sequence_output, mask_positions):
        # (batch, num_masks, hidden): only the masked positions are scored.
        hidden = ops.take_along_axis(
            sequence_output,
            ops.expand_dims(ops.cast(mask_positions, "int32"), -1),
            axis=1,
        )
        hidden = self.layer_norm(self._activation_fn(self.transform(hidden)))
        return self.output_logits(hidden) + self.bias

    def transform_width(self, hidden_dim):
        """The width the transform maps to: the embedding's, which the
        tied logits need (BERT's equals its hidden size; ELECTRA's
        generator maps its hidden size down to its embedding size).
        MobileBERT's head keeps the hidden size and widens the output
        embedding instead."""
        return self.token_embedding.output_dim

    def output_logits(self, hidden):
        """`(batch, masks, transform width)` -> vocabulary logits, bias
        not yet added: through the tied token embedding."""
        return self.token_embedding.logits(hidden)

    def compute_output_shape(self, sequence_output_shape,
                             mask_positions_shape):
        return tuple(mask_positions_shape) + (self.token_embedding.input_dim,)

    def get_config(self):
        # The tied embedding is not config: the task passes it in again.
        config = super().get_config()
        config.update({
            "activation": self.activation,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer),
        })
        return config


class TiedLMHead(keras.layers.Layer):
    """Language-model logits through the (tied) token embedding:
    `hidden @ embeddings^T`, by default no bias (GPT-2's `lm_head`);
    `use_bias=True` adds a bias per token (fastai's `LinearDecoder` with
    `tie_encoder`, AWD-LSTM's).

    The embedding is referenced, not tracked: its matrix belongs to the
    backbone, so a task's weights file does not store it twice.
    """

    head_kind = "language_model"   # see kzoo.core.head_weights

    def __init__(self, token_embedding, use_bias=False, **kwargs):
        super().__init__(**kwargs)
        # Bypass Keras attribute tracking (see the class docstring).
        self.__dict__["_token_embedding"] = token_embedding
        self.use_bias = bool(use_bias)

    @property
    def token_embedding(self):
        return self.__dict__["_token_embedding"]

    def build(self, input_shape=None):
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                name="bias", shape=(self.token_embedding.input_dim,),
                initializer="zeros")
        self.built = True

    def call(self, hidden_states):
        # (batch, seq, hidden) -> (batch, seq, vocab)
        logits = self.token_embedding.logits(hidden_states)
        return logits if self.bias is None else logits + self.bias

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.token_embedding.input_dim,)
