"""ELECTRA's pretraining: replaced-token detection (Clark et al., 2020)."""

import keras
from keras import ops

from kzoo.layers import MaskedLMHead
from kzoo.layers.encoder_stack import post_ln_encoder
from kzoo.core.arguments import POSITIVE_FLOAT, Optional, Real, Integer
from kzoo.models.electra.backbone import (ElectraBackbone, electra_embeddings,
                                          embedding_tables)
from kzoo.models.electra.discriminator import (ReplacedTokenLoss,
                                               replaced_token_head)
from kzoo.models.electra.preprocessor import ElectraMaskedLMPreprocessor
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import task_inputs
from kzoo.training import default_optimizer
from kzoo.training.losses import token_loss

# Inference draws with this fixed seed, so predict/evaluate give the same
# replacements for the same input; training draws from a SeedGenerator.
_INFERENCE_SEED = 1337


def generator_shape(hidden_dim, generator_size):
    """`(hidden, heads, intermediate)` of the generator for a discriminator
    of `hidden_dim`, as the original's `get_generator_config`: hidden
    `generator_size` times the discriminator's, 64-wide heads (at least
    one; fewer when 64 does not divide it), a 4x feed-forward layer."""
    hidden = max(1, int(round(hidden_dim * generator_size)))
    heads = max(1, hidden // 64)
    while hidden % heads:
        heads -= 1
    return hidden, heads, 4 * hidden


class ReplacementSampler(keras.layers.Layer):
    """Samples a token at every mask from the generator's softmax and puts
    it in place: `(logits (batch, masks, vocab), token_ids (batch, seq),
    mask_positions (batch, masks))` -> `(sampled ids (batch, masks),
    corrupted token ids (batch, seq))`. No gradient flows through the draw
    (the original's `stop_gradient`): the generator learns from its MLM
    loss only."""

    def __init__(self, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, logits, token_ids, mask_positions, training=False):
        shape = ops.shape(logits)
        flat = ops.reshape(ops.stop_gradient(logits), (-1, shape[-1]))
        seed = self.seed_generator if training else _INFERENCE_SEED
        sampled = ops.reshape(inverse_cdf_draw(flat, seed), shape[:-1])
        return sampled, replace_at_positions(token_ids, mask_positions,
                                             sampled)

    def compute_output_spec(self, logits, token_ids, mask_positions,
                            training=False):
        # Token ids, not the layer's float compute dtype.
        return (keras.KerasTensor(logits.shape[:-1], dtype="int32"),
                keras.KerasTensor(token_ids.shape, dtype="int32"))

    def get_config(self):
        return {**super().get_config(), "seed": self.seed}


def inverse_cdf_draw(logits, seed):
    """One draw per row of `(rows, vocab)` logits from their softmax, by
    inverting the cumulative distribution with one uniform number per row.

    `keras.random.categorical` adds Gumbel noise to every logit on JAX: a
    threefry draw per vocabulary entry (30,522 per mask for ELECTRA), which
    was most of an ELECTRA pretraining step on CPU. A cumulative sum and a
    count cost a pass over the vocabulary each, on every backend."""
    probs = ops.softmax(ops.cast(logits, "float32"), axis=-1)
    cdf = ops.cumsum(probs, axis=-1)
    u = keras.random.uniform((ops.shape(cdf)[0], 1), seed=seed) * cdf[:, -1:]
    below = ops.sum(ops.cast(ops.less_equal(cdf, u), "int32"), axis=-1)
    return ops.minimum(below, ops.shape(cdf)[-1] - 1)


def scatter_slots(values, positions, length):
    """`(batch, slots)` values at `(batch, slots)` positions -> `(batch,
    length)` float32, 0 elsewhere (and at slots whose value is 0). Token
    ids pass exactly: float32 holds every integer below 2**24."""
    one_hot = ops.one_hot(ops.cast(positions, "int32"), length,
                          dtype="float32")
    values = ops.expand_dims(ops.cast(values, "float32"), -1)
    return ops.sum(one_hot * values, axis=1)


def replace_at_positions(token_ids, positions, replacements):
    """`token_ids` with `replacements` at `positions` (slots at position 0,
    the [CLS] that masking never selects, are empty and change nothing)."""
    length = ops.shape(token_ids)[1]
    used = ops.cast(ops.greater(positions, 0), "int32")
    where = scatter_slots(used, positions, length)
    values = ops.cast(scatter_slots(ops.multiply(replacements, used),
                                    positions, length),
                      "int32")
    return ops.where(ops.greater(where, 0), values, token_ids)


@register
class ElectraPretrainer(Task):
    """Replaced-token detection, ELECTRA's pretraining, from raw text.

    The preprocessor masks 15% of the tokens; a small generator (a masked
    LM) predicts them and a token is sampled from its softmax at every
    mask; the discriminator (this task's backbone) sees the text with those
    samples in place and labels every real token replaced (1) or original
    (0); a sample equal to the original counts as original. The loss is
    the generator's MLM loss plus `discriminator_weight` times the
    discriminator's (binary cross-entropy averaged over the real tokens).

    The generator shares the discriminator's token, position and
    token-type embedding tables (one variable each); it has its own
    embedding LayerNorm, projection (when its hidden size differs from the
    embedding size), blocks and head (`generator_predictions`, the
    original's MLM head, tied to the shared word embeddings).

    Outputs: `{"generator": (batch, masks, vocab) logits, "discriminator":
    (batch, seq) logits, "sampled_ids": (batch, masks) the sampled
    tokens}`. Training samples with a seed generator; predict and evaluate
    with a fixed seed (the same input gives the same replacements).

    Args:
        backbone: the discriminator, an `ElectraBackbone`.
        preprocessor: an `ElectraMaskedLMPreprocessor`, or None.
        generator_size: the generator's hidden size as a fraction of the
            discriminator's (the paper: 1/4 small and large, 1/3 base);
            its heads are 64 wide, its feed-forward 4x, its depth the
            discriminator's.
        discriminator_weight: lambda, the discriminator loss' weight (50).
        seed: seed of the replacement draws in training.

    Example:
    ```python
    from kzoo import datasets
    texts = datasets.austen_paragraphs("persuasion")[:16]
    pretrainer = kzoo.ElectraPretrainer.from_preset(
        "electra_small_discriminator_en_uncased", load_weights=False,
        sequence_length=64)
    pretrainer.fit(texts, epochs=1)   # raw strings: no labels
    pretrainer.backbone.save_to_preset("my_electra")
    ```
    """

    backbone_cls = ElectraBackbone
    preprocessor_cls = ElectraMaskedLMPreprocessor
    extra_input_names = ("mask_positions",)
    pretrained_heads = ("discriminator_predictions",)
    argument_spec = {"generator_size": Real(0.0, 1.0, low_open=True),
                     "discriminator_weight": POSITIVE_FLOAT,
                     "seed": Optional(Integer(minimum=0))}

    def __init__(self, backbone, preprocessor=None, generator_size=0.25,
                 discriminator_weight=50.0, seed=None, **kwargs):
        hidden, heads, intermediate = generator_shape(backbone.hidden_dim,
                                                      generator_size)
        tables = embedding_tables(backbone)
        dtype = backbone.dtype_policy
        # === Layers ===
        generator_head = MaskedLMHead(
            tables[0], activation="gelu",
            layer_norm_epsilon=backbone.layer_norm_epsilon,
            kernel_initializer=backbone.kernel_initializer(), dtype=dtype,
            name="generator_predictions")
        sampler = ReplacementSampler(seed, name="replacement_sampler")
        discriminator_head = replaced_token_head(backbone)
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone,
                                              self.extra_input_names)
        positions = inputs["mask_positions"]
        # The generator, on the masked text, through the shared tables.
        generated, _ = post_ln_encoder(
            electra_embeddings(tables, inputs["token_ids"],
                               inputs["segment_ids"]),
            inputs["padding_mask"], num_layers=backbone.num_layers,
            num_heads=heads, hidden_dim=hidden,
            intermediate_dim=intermediate, dropout=backbone.dropout,
            attention_dropout=backbone.attention_dropout,
            activation=backbone.activation,
            layer_norm_epsilon=backbone.layer_norm_epsilon,
            kernel_initializer=backbone.kernel_initializer(), dtype=dtype,
            pooler=False, project_embeddings=hidden != backbone.embedding_width,
            name_prefix="generator_")
        generator_logits = generator_head(generated, positions)
        # The discriminator, on the text with the samples in place.
        sampled, corrupted = sampler(generator_logits, inputs["token_ids"],
                                     positions)
        outputs = backbone({**backbone_inputs, "token_ids": corrupted})
        logits = {
            "generator": generator_logits,
            "discriminator": discriminator_head(outputs["sequence_output"]),
            "sampled_ids": sampled,
        }
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.generator_predictions = generator_head
        self.discriminator_predictions = discriminator_head
        # === Config ===
        self.generator_size = float(generator_size)
        self.discriminator_weight = float(discriminator_weight)
        self.seed = seed
        # === Losses and their trackers ===
        self._generator_loss = token_loss()
        self._discriminator_loss = ReplacedTokenLoss()
        self.generator_loss_tracker = keras.metrics.Mean(
            name="generator_loss")
        self.discriminator_loss_tracker = keras.metrics.Mean(
            name="discriminator_loss")
        self.generator_accuracy = keras.metrics.SparseCategoricalAccuracy(
            name="generator_accuracy")
        self.discriminator_accuracy = keras.metrics.BinaryAccuracy(
            threshold=0.0, name="discriminator_accuracy")

    def task_config(self):
        return {"generator_size": self.generator_size,
                "discriminator_weight": self.discriminator_weight,
                "seed": self.seed}

    def default_compile_args(self):
        # The loss is the task's own (compute_loss): no compiled loss.
        return {"optimizer": default_optimizer(learning_rate=5e-4)}

    def replaced_labels(self, mask_positions, original_ids, sampled_ids,
                        mask_weights, length):
        """`(batch, length)` float: 1 where a real mask's sample differs
        from the original token, else 0."""
        replaced = ops.cast(ops.not_equal(sampled_ids, original_ids),
                            "float32") * ops.cast(mask_weights, "float32")
        return scatter_slots(replaced, mask_positions, length)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        if y is None or sample_weight is None:
            raise ValueError(
                "ElectraPretrainer trains on the ElectraMaskedLMPreprocessor's "
                "(x, original ids, mask weights); fit it on raw text.")
        weights = ops.cast(sample_weight, "float32")
        generator_loss = self._generator_loss(
            y, y_pred["generator"], sample_weight=weights)
        disc_logits = y_pred["discriminator"]
        labels = self.replaced_labels(
            x["mask_positions"], ops.cast(y, "int32"),
            ops.cast(y_pred["sampled_ids"], "int32"), weights,
            ops.shape(disc_logits)[1])
        real = ops.cast(x["padding_mask"], "float32")
        discriminator_loss = self._discriminator_loss(
            labels, disc_logits, sample_weight=real)
        self.generator_loss_tracker.update_state(generator_loss)
        self.discriminator_loss_tracker.update_state(discriminator_loss)
        self.generator_accuracy.update_state(y, y_pred["generator"],
                                             sample_weight=weights)
        self.discriminator_accuracy.update_state(
            ops.expand_dims(labels, -1), ops.expand_dims(disc_logits, -1),
            sample_weight=real)
        loss = generator_loss + self.discriminator_weight * discriminator_loss
        losses = self.losses  # regularisers, if any
        if losses:
            loss = loss + ops.sum(losses)
        return loss
