"""BERT's full pretraining: masked LM and next-sentence prediction."""

import keras
import tensorflow as tf

from kzoo.models.bert.backbone import BertBackbone
from kzoo.models.bert.masked_lm_preprocessor import BertMaskedLMPreprocessor
from kzoo.models import labels
from kzoo.models.registry import register
from kzoo.models.task import Task
from kzoo.models.task_wiring import (
    masked_lm_compile_args, masked_lm_head, task_inputs)


@register
class BertPretrainerPreprocessor(BertMaskedLMPreprocessor):
    """Sentence pairs + NSP labels -> masked inputs and both targets.

    x: `(first_sentences, second_sentences)`; y: NSP labels (0 = IsNext,
    1 = NotNext; build them with `kzoo.preprocessing.next_sentence_pairs`).
    Returns y = {"mlm": original ids, "nsp": labels} and sample weights
    {"mlm": mask weights, "nsp": 1}.
    """

    min_segments = max_segments = 2
    segments_hint = ("Build them with "
                     "kzoo.preprocessing.next_sentence_pairs(documents).")

    def call(self, x, y=None, sample_weight=None):
        x, mask_ids, weights = self._mask(self._pack(x))
        if y is None:
            return x
        targets = {"mlm": mask_ids, "nsp": y}
        weights = {"mlm": weights,
                   "nsp": tf.ones_like(y, dtype="float32")}
        return x, targets, weights


@register
class BertPretrainer(Task):
    """Masked LM + next-sentence prediction, trained jointly (BERT's
    pretraining). Outputs `{"mlm": (batch, masks, vocab) logits,
    "nsp": (batch, 2) logits}`.

    Example:
    ```python
    first, second, labels = kzoo.preprocessing.next_sentence_pairs(docs)
    pretrainer = kzoo.BertPretrainer.from_preset("bert_tiny_en_uncased",
                                                  load_weights=False)
    pretrainer.fit((first, second), labels, epochs=1)
    ```
    """

    backbone_cls = BertBackbone
    preprocessor_cls = BertPretrainerPreprocessor
    extra_input_names = ("mask_positions",)
    pretrained_heads = ("mlm_head", "nsp_head")

    def __init__(self, backbone, preprocessor=None, **kwargs):
        # === Layers ===
        mlm_head = masked_lm_head(backbone)
        nsp_head = keras.layers.Dense(
            2, kernel_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name="nsp_head")
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone,
                                              self.extra_input_names)
        outputs = backbone(backbone_inputs)
        logits = {
            "mlm": mlm_head(outputs["sequence_output"],
                            inputs["mask_positions"]),
            "nsp": nsp_head(outputs["pooled_output"]),
        }
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.mlm_head = mlm_head
        self.nsp_head = nsp_head

    def label_spec(self):
        return labels.ClassIds(
            2, what="next-sentence labels (0 = IsNext, 1 = NotNext)")

    def default_compile_args(self):
        args = masked_lm_compile_args(learning_rate=1e-4)
        loss = args["loss"]
        accuracy = keras.metrics.SparseCategoricalAccuracy
        return {
            "optimizer": args["optimizer"],
            "loss": {"mlm": loss,
                     "nsp": keras.losses.SparseCategoricalCrossentropy(
                         from_logits=True)},
            "weighted_metrics": {"mlm": [accuracy(name="mlm_accuracy")],
                                 "nsp": [accuracy(name="nsp_accuracy")]},
        }
