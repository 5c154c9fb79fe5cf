"""SpanBERT's pretraining on any encoder: masked LM + span boundary
objective, on span-masked text."""

import keras
import tensorflow as tf

from kzoo.layers.span_boundary_head import SpanBoundaryHead
from kzoo.core.arguments import POSITIVE_INT, ArgumentError, describe
from kzoo.core.backbone import Backbone
from kzoo.tasks.masked_lm_preprocessor import (SPAN_INPUTS,
                                               MaskedLMPreprocessor)
from kzoo.core.family import (checked_family_task, family_preprocessor,
                                masked_lm_family)
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import (MaskedLM, masked_lm_compile_args,
                                     masked_lm_head, task_inputs)
from kzoo.training.losses import token_loss


@register
class SpanBoundaryPretrainer(Task):
    """SpanBERT's pretraining (Joshi et al., 2020) on any encoder family
    that has a masked LM (BERT, RoBERTa, ...): the masked-LM loss plus the
    span boundary objective (SBO), which predicts every masked token from
    the two tokens just outside its span and its offset inside it
    (`kzoo.layers.SpanBoundaryHead`); loss = MLM + SBO, each averaged over
    its real targets (`kzoo.training.losses.token_loss`).

    Its preprocessor is the family's masked-LM preprocessor with
    `masking="span"` (spans of whole words, geometric lengths; fresh masks
    every epoch), which also gives each mask slot its span's boundaries.
    SBO targets are the MLM targets, but for two kinds, which carry no SBO
    loss, as in SpanBERT: a span whose boundary is no text token ([CLS],
    [SEP], padding, or beyond the row: SpanBERT keeps a span's pair only
    when it lies inside its block of text, `start > 0 and end < len - 1`),
    and the tokens `max_span_length` or more into their span (SpanBERT's
    `max_pair_targets`).

    Outputs `{"mlm": (batch, masks, vocab), "sbo": (batch, masks, vocab)}`
    logits. The MLM head is the family's (loaded from a preset that has
    one); the SBO head starts random.

    Args:
        backbone: an encoder backbone whose family has a masked LM.
        preprocessor: that family's masked-LM preprocessor with
            `masking="span"`, or None to feed input dicts.
        max_span_length: rows of the SBO head's offset table (SpanBERT: 20).
        position_embedding_dim: width of the offset embedding (200).

    Example:
    ```python
    from kzoo import datasets
    # SpanBERT: e.g. from_preset("roberta_base_en"); offline, a random
    # tiny BERT.
    pretrainer = kzoo.SpanBoundaryPretrainer.from_preset(
        "bert_tiny_en_uncased", load_weights=False, sequence_length=32)
    texts = datasets.austen_passages("emma", words=24)[:4]
    history = pretrainer.fit(texts, epochs=1, verbose=0)  # raw strings
    assert history.history["loss"][0] > 0
    ```
    """

    backbone_cls = Backbone  # any encoder with a masked-LM family
    preprocessor_cls = MaskedLMPreprocessor  # the family's subclass
    extra_input_names = ("mask_positions",) + SPAN_INPUTS
    pretrained_heads = ("mlm_head",)
    argument_spec = {"max_span_length": POSITIVE_INT,
                     "position_embedding_dim": POSITIVE_INT}

    @classmethod
    def check_argument_values(cls, values):
        super().check_argument_values(values)  # a Backbone; lengths, vocab
        backbone = values.get("backbone")
        family = checked_family_task(cls.__name__, backbone, MaskedLM,
                                     "a masked LM")
        preprocessor = values.get("preprocessor")
        if preprocessor is not None:
            expected = family.preprocessor_cls
            if not isinstance(preprocessor, expected):
                raise ArgumentError(
                    f"{cls.__name__} on a {type(backbone).__name__} needs a "
                    f"{expected.__name__} as its preprocessor (or None); got "
                    f"{describe(preprocessor)}.")
            if preprocessor.masking != "span":
                raise ArgumentError(
                    f"{cls.__name__} needs span masking: its preprocessor "
                    f"has masking={preprocessor.masking!r}. Build it with "
                    f'{expected.__name__}.from_preset(..., masking="span").')

    def __init__(self, backbone, preprocessor=None, max_span_length=20,
                 position_embedding_dim=200, **kwargs):
        family = masked_lm_family(type(backbone))
        # === Layers ===
        mlm_head = masked_lm_head(backbone, family.head_activation)
        sbo_head = SpanBoundaryHead(
            backbone.token_embedding,
            activation=family.head_activation or backbone.activation,
            layer_norm_epsilon=backbone.layer_norm_epsilon,
            max_span_length=max_span_length,
            position_embedding_dim=position_embedding_dim,
            kernel_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name="sbo_head")
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone,
                                              self.extra_input_names)
        sequence = backbone(backbone_inputs)["sequence_output"]
        logits = {
            "mlm": mlm_head(sequence, inputs["mask_positions"]),
            "sbo": sbo_head(sequence, *(inputs[n] for n in SPAN_INPUTS)),
        }
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.mlm_head = mlm_head
        self.sbo_head = sbo_head
        # === Config ===
        self.max_span_length = int(max_span_length)
        self.position_embedding_dim = int(position_embedding_dim)

    @classmethod
    def preprocessor_for(cls, preset, **kwargs):
        """The preset family's masked-LM preprocessor, span-masking."""
        return family_preprocessor(cls.__name__, preset, MaskedLM,
                                   "masked LM",
                                   **{"masking": "span", **kwargs})

    def adapt_batches(self, dataset):
        return dataset.map(self.span_targets)

    def span_targets(self, x, y=None, sample_weight=None):
        """A span-masking preprocessor's `(x, ids, weights)` -> targets and
        weights for both outputs; an SBO target needs both boundaries on
        text tokens (the preprocessor reports a boundary on [CLS], [SEP]
        or padding as outside the row: -1 or the length) and an offset
        within the head's table."""
        if y is None:
            return x
        length = tf.shape(x["token_ids"])[-1]
        scored = (x["span_left"] >= 0) & (x["span_right"] < length) & \
            (x["span_relative_positions"] < self.max_span_length)
        sbo_weight = sample_weight * tf.cast(scored, sample_weight.dtype)
        return (x, {"mlm": y, "sbo": y},
                {"mlm": sample_weight, "sbo": sbo_weight})

    def task_config(self):
        return {"max_span_length": self.max_span_length,
                "position_embedding_dim": self.position_embedding_dim}

    def default_compile_args(self):
        args = masked_lm_compile_args(learning_rate=1e-4)
        accuracy = keras.metrics.SparseCategoricalAccuracy
        return {
            "optimizer": args["optimizer"],
            # Summed: loss = MLM + SBO, each over its own real targets.
            "loss": {"mlm": args["loss"], "sbo": token_loss()},
            # Keras prefixes the output: "mlm_accuracy", "sbo_accuracy".
            "weighted_metrics": {"mlm": [accuracy(name="accuracy")],
                                 "sbo": [accuracy(name="accuracy")]},
        }
