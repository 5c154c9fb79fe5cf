"""ELECTRA's pretraining: replaced-token detection (Clark et al., 2020)."""

import inspect
import warnings

import keras
from keras import ops

from kzoo import presets
from kzoo.layers import MaskedLMHead
from kzoo.layers.dropout import Dropout
from kzoo.layers.encoder_stack import padding_attention_mask, transformer_stack
from kzoo.core.arguments import POSITIVE_FLOAT, Optional, Real, Integer
from kzoo.models.electra.backbone import (ElectraBackbone, electra_embeddings,
                                          embedding_tables)
from kzoo.models.electra.discriminator import (ReplacedTokenLoss,
                                               replaced_token_head)
from kzoo.models.electra.masked_lm import ElectraMaskedLM
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


def generator_encoder(backbone, embeddings, padding_mask, hidden, heads,
                      intermediate):
    """The generator's encoder on the summed embeddings `(batch, seq,
    embedding width)` -> `(batch, seq, hidden)`.

    The embedding LayerNorm is the discriminator's own layer: in the
    original both models build their embeddings in one variable scope
    ("electra/embeddings", `model/modeling.py`), LayerNorm included. The
    dropout, the projection (when `hidden` differs from the embedding
    width), the blocks (as deep as the discriminator's) are the
    generator's."""
    dtype = backbone.dtype_policy
    x = backbone.get_layer("embeddings_layer_norm")(embeddings)
    x = Dropout(backbone.dropout, dtype=dtype,
                name="generator_embeddings_dropout")(x)
    if hidden != backbone.embedding_width:
        x = keras.layers.Dense(
            hidden, kernel_initializer=backbone.kernel_initializer(),
            dtype=dtype, name="generator_embeddings_project")(x)
    attention_mask = padding_attention_mask(padding_mask)
    for block in transformer_stack(
            backbone.num_layers, heads, intermediate, name_prefix="generator_",
            activation=backbone.activation, dropout=backbone.dropout,
            attention_dropout=backbone.attention_dropout,
            layer_norm_epsilon=backbone.layer_norm_epsilon,
            kernel_initializer=backbone.kernel_initializer(), dtype=dtype):
        x = block(x, attention_mask=attention_mask)
    return x


def generator_preset_name(preset):
    """The folder name a discriminator preset's generator has: its own
    with "generator" for "discriminator" (the released pairs:
    `electra_base_discriminator_en_uncased`,
    `electra_base_generator_en_uncased`), or None."""
    name = preset.path.name
    if "discriminator" not in name:
        return None
    return name.replace("discriminator", "generator")


def matching_generator_preset(preset):
    """The generator preset that goes with discriminator `preset`: the
    ELECTRA preset folder beside it named as `generator_preset_name` says
    (the named presets sit side by side, so `electra_base` finds
    `electra_base_generator_en_uncased`), or None."""
    name = generator_preset_name(preset)
    if name is None:
        return None
    folder = preset.path.parent / name
    if not (folder / "config.json").is_file():
        return None
    found = presets.resolve(str(folder))
    return found if _holds_electra(found) else None


def _holds_electra(preset):
    return preset.json("config.json")["class_name"] == \
        ElectraBackbone.__name__


def _backbone_config(preset):
    """A preset's `ElectraBackbone` arguments, defaults filled in."""
    defaults = {name: p.default for name, p in inspect.signature(
        ElectraBackbone.__init__).parameters.items()
        if p.default is not inspect.Parameter.empty}
    config = {**defaults, **preset.json("config.json")["config"]}
    config["embedding_size"] = config["embedding_size"] or config["hidden_dim"]
    return config


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

    The generator shares the discriminator's embeddings, as the
    original's (`untied_generator_embeddings=False`, its default): the
    token, position and token-type tables and their LayerNorm (one
    variable each). It has its own projection (when its hidden size
    differs from the embedding size), blocks and head
    (`generator_predictions`, the original's MLM head, whose output matrix
    is the shared word embeddings). The masking is ELECTRA's
    (`ElectraMaskedLMPreprocessor`: 85% [MASK], 15% unchanged).

    `from_preset` on a discriminator preset starts the generator from the
    released generator that goes with it (`electra_base` ->
    `electra_base_generator_en_uncased`), or warns
    (`kzoo.presets.RandomHeadWarning`) that it is random; see
    `from_preset` and `load_generator`.

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
    # From random weights (load_weights=True: the released discriminator
    # and generator).
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
        # Sampling stays in float32 under any policy: a bfloat16 softmax
        # would distort the generator's token probabilities.
        sampler = ReplacementSampler(seed, dtype="float32",
                                     name="replacement_sampler")
        discriminator_head = replaced_token_head(backbone)
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone,
                                              self.extra_input_names)
        positions = inputs["mask_positions"]
        # The generator, on the masked text, through the shared embeddings.
        generated = generator_encoder(
            backbone, electra_embeddings(tables, inputs["token_ids"],
                                         inputs["segment_ids"]),
            inputs["padding_mask"], hidden, heads, intermediate)
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

    @classmethod
    def from_preset(cls, preset, load_weights=True, generator_preset="auto",
                    **kwargs):
        """The pretrainer on a discriminator preset, its generator loaded
        from the matching generator preset.

        ELECTRA's checkpoints come in pairs: the generator is saved beside
        the discriminator it trained. With `load_weights=True` the
        generator's blocks, projection and MLM head come from
        `generator_preset`, and `generator_size` (unless given) is that
        generator's hidden size over the discriminator's; its embeddings
        are the discriminator's (shared, see the class). A preset saved
        from an `ElectraPretrainer` holds its generator already.

        Args:
            preset, load_weights, **kwargs: as `Task.from_preset`'s.
            generator_preset: "auto": the preset named as `preset` with
                "generator" for "discriminator", in the same folder (a
                named preset's is the named generator); when there is none,
                a `kzoo.presets.RandomHeadWarning` says the generator is
                random. A preset name or folder: that generator (an error
                when it does not fit). None: a random generator, no
                warning (pretraining from scratch).
        """
        preset = presets.resolve(preset)
        auto = isinstance(generator_preset, str) and generator_preset == "auto"
        saved = preset.has("task.json") and (
            preset.json("task.json")["class_name"] == cls.__name__)
        if not load_weights or generator_preset is None or (auto and saved):
            return super().from_preset(preset, load_weights=load_weights,
                                       **kwargs)
        generator = (matching_generator_preset(preset) if auto
                     else presets.resolve(generator_preset))
        if generator is None:
            task = super().from_preset(preset, **kwargs)
            name = generator_preset_name(preset)
            looked = (f"there is no ELECTRA preset {name!r} beside it"
                      if name else 'its name has no "discriminator" to '
                                   "find its generator's by")
            _random_generator_warning(
                f"preset {preset.name!r} has no matching generator preset "
                f"({looked})")
            return task
        if _holds_electra(generator) and _holds_electra(preset):
            kwargs.setdefault("generator_size",
                              _backbone_config(generator)["hidden_dim"]
                              / _backbone_config(preset)["hidden_dim"])
        task = super().from_preset(preset, **kwargs)
        problem = task.generator_mismatch(generator)
        if problem is None:
            task.load_generator(generator)
        elif auto:
            _random_generator_warning(problem)
        else:
            raise ValueError(f"ElectraPretrainer.from_preset: {problem}.")
        return task

    def generator_mismatch(self, generator_preset):
        """Why the generator of `generator_preset` (an `ElectraBackbone`
        preset) cannot be this pretrainer's generator, or None when it
        can."""
        preset = presets.resolve(generator_preset)
        if not _holds_electra(preset):
            return (f"preset {preset.name!r} holds no ElectraBackbone, so it "
                    "is no ELECTRA generator")
        theirs = _backbone_config(preset)
        backbone = self.backbone
        tables = ("vocabulary_size", "embedding_size", "max_sequence_length",
                  "num_segments")
        ours = {"vocabulary_size": backbone.vocabulary_size,
                "embedding_size": backbone.embedding_width,
                "max_sequence_length": backbone.max_sequence_length,
                "num_segments": backbone.num_segments}
        if any(theirs[key] != ours[key] for key in tables):
            return (f"preset {preset.name!r} has embedding tables "
                    f"{[theirs[key] for key in tables]} ({', '.join(tables)}"
                    f"), the discriminator {[ours[key] for key in tables]}: "
                    "the generator shares the discriminator's")
        hidden, heads, intermediate = generator_shape(backbone.hidden_dim,
                                                      self.generator_size)
        shape = (backbone.num_layers, hidden, heads, intermediate)
        their_shape = (theirs["num_layers"], theirs["hidden_dim"],
                       theirs["num_heads"], theirs["intermediate_dim"])
        if their_shape != shape:
            def describe(shape):
                return ("{} layers, {} hidden, {} heads, {} intermediate"
                        .format(*shape))
            return (f"generator_size={self.generator_size:g} makes a "
                    f"generator of {describe(shape)}; preset {preset.name!r} "
                    f"holds {describe(their_shape)}")
        for key in ("activation", "layer_norm_epsilon"):
            if theirs[key] != getattr(backbone, key):
                return (f"preset {preset.name!r} has {key}={theirs[key]!r}; "
                        f"the generator uses the discriminator's, "
                        f"{getattr(backbone, key)!r}")
        return None

    def load_generator(self, generator_preset):
        """Load the generator's weights from an ELECTRA generator preset
        (`electra_base_generator_en_uncased`, or a saved `ElectraMaskedLM`):
        its blocks, projection and MLM head. Its embeddings are not read:
        the generator shares the discriminator's (in the released pairs
        they are the same weights: both were converted from the original
        checkpoint's one "electra/embeddings" scope). A preset that does
        not fit (`generator_mismatch`) is an error."""
        problem = self.generator_mismatch(generator_preset)
        if problem is not None:
            raise ValueError(f"ElectraPretrainer.load_generator: {problem}.")
        source = ElectraMaskedLM.from_preset(generator_preset,
                                             preprocessor=None)
        pairs = [(f"generator_transformer_layer_{i}", f"transformer_layer_{i}")
                 for i in range(self.backbone.num_layers)]
        if source.backbone.embedding_width != source.backbone.hidden_dim:
            pairs.append(("generator_embeddings_project",
                          "embeddings_project"))
        for ours, theirs in pairs:
            self.get_layer(ours).set_weights(
                source.backbone.get_layer(theirs).get_weights())
        # The head's own weights; its output matrix is the shared table.
        head, their_head = self.generator_predictions, source.mlm_head
        head.transform.set_weights(their_head.transform.get_weights())
        head.layer_norm.set_weights(their_head.layer_norm.get_weights())
        head.bias.assign(ops.convert_to_numpy(their_head.bias))

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


def _random_generator_warning(why):
    warnings.warn(
        f"ElectraPretrainer's generator is randomly initialised: {why}. Its "
        "replacements mean nothing until it trains, and the discriminator "
        "learns from them. Pass generator_preset= (an ELECTRA generator "
        "preset, e.g. electra_base_generator_en_uncased) to start from one, "
        "or generator_preset=None to pretrain from scratch without this "
        "warning.", presets.RandomHeadWarning, stacklevel=3)
