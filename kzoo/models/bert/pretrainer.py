"""BERT's full pretraining: masked LM and next-sentence prediction."""

import keras
import tensorflow as tf

from kzoo.layers.dropout import Dropout
from kzoo.models.bert.backbone import BertBackbone
from kzoo.models.bert.masked_lm_preprocessor import BertMaskedLMPreprocessor
from kzoo.core import labels
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import (
    masked_lm_compile_args, masked_lm_head, task_inputs)


@register
class BertPretrainerPreprocessor(BertMaskedLMPreprocessor):
    """Sentence pairs + NSP labels -> masked inputs and both targets.

    x: `(first_sentences, second_sentences)`; y: NSP labels (0 = IsNext,
    1 = NotNext; build them with `kzoo.preprocessing.next_sentence_pairs`).
    Returns y = {"mlm": original ids, "nsp": labels} and sample weights
    {"mlm": mask weights, "nsp": 1}.

    Example:
    ```python
    from kzoo import datasets
    first, second, labels = kzoo.preprocessing.next_sentence_pairs(
        datasets.austen_paragraphs("emma")[:10], seed=0)
    preprocessor = kzoo.BertPretrainerPreprocessor.from_preset(
        "bert_tiny_en_uncased", sequence_length=64)
    x, y, sample_weight = preprocessor((first, second), labels)
    assert set(y) == {"mlm", "nsp"}
    ```
    """

    min_segments = max_segments = 2
    segments_hint = ("Build them with "
                     "kzoo.preprocessing.next_sentence_pairs(documents).")
    # The sentence-level task's output name (ALBERT's is "sop").
    sentence_task = "nsp"
    # Its labels are the sentence task's (the masked LM makes its own).
    takes_labels = True

    def draw(self, x, y=None, sample_weight=None):
        x, mask_ids, weights = self._mask(x)
        if y is None:
            return x
        targets = {"mlm": mask_ids, self.sentence_task: y}
        weights = {"mlm": weights,
                   self.sentence_task: tf.ones_like(y, dtype="float32")}
        return x, targets, weights


@register
class BertPretrainer(Task):
    """Masked LM + next-sentence prediction, trained jointly (BERT's
    pretraining). Outputs `{"mlm": (batch, masks, vocab) logits,
    "nsp": (batch, 2) logits}`.

    Example:
    ```python
    from kzoo import datasets
    paragraphs = datasets.austen_paragraphs("emma")[:20]
    first, second, labels = kzoo.preprocessing.next_sentence_pairs(
        paragraphs, seed=0)
    pretrainer = kzoo.BertPretrainer.from_preset(
        "bert_tiny_en_uncased", load_weights=False, sequence_length=64)
    pretrainer.fit((first, second), labels, epochs=1)
    ```
    """

    backbone_cls = BertBackbone
    preprocessor_cls = BertPretrainerPreprocessor
    extra_input_names = ("mask_positions",)
    pretrained_heads = ("mlm_head", "nsp_head")
    # The sentence-level task: its output name (the head is
    # "<name>_head") and what its labels mean. ALBERT's sentence-order
    # prediction configures these.
    sentence_task = "nsp"
    sentence_labels = "next-sentence labels (0 = IsNext, 1 = NotNext)"

    def __init__(self, backbone, preprocessor=None, **kwargs):
        self._build_pretrainer(backbone, preprocessor, None, **kwargs)

    def _build_pretrainer(self, backbone, preprocessor, sentence_dropout,
                          **kwargs):
        """Build the two heads on `backbone`; `sentence_dropout`: a
        dropout rate before the sentence head (ALBERT's SOP head has one,
        BERT's NSP head none: None)."""
        task = self.sentence_task
        # === Layers ===
        mlm_head = masked_lm_head(backbone)
        sentence_head = keras.layers.Dense(
            2, kernel_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name=f"{task}_head")
        dropout = None
        if sentence_dropout is not None:
            dropout = Dropout(
                sentence_dropout, dtype=backbone.dtype_policy,
                name=f"{task}_dropout")
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone,
                                              self.extra_input_names)
        outputs = backbone(backbone_inputs)
        pooled = outputs["pooled_output"]
        if dropout is not None:
            pooled = dropout(pooled)
        logits = {
            "mlm": mlm_head(outputs["sequence_output"],
                            inputs["mask_positions"]),
            task: sentence_head(pooled),
        }
        Task.__init__(self, inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.mlm_head = mlm_head
        setattr(self, f"{task}_head", sentence_head)

    def label_spec(self):
        # Without a preprocessor the labels are the model's own dict of
        # both objectives' targets (from a preprocessor run elsewhere),
        # not the sentence labels a user gives with raw text.
        if self.preprocessor is None:
            return None
        return labels.ClassIds(2, what=self.sentence_labels)

    def default_compile_args(self):
        args = masked_lm_compile_args(learning_rate=1e-4)
        task = self.sentence_task
        loss = args["loss"]
        accuracy = keras.metrics.SparseCategoricalAccuracy
        return {
            "optimizer": args["optimizer"],
            "loss": {"mlm": loss,
                     task: keras.losses.SparseCategoricalCrossentropy(
                         from_logits=True)},
            "weighted_metrics": {"mlm": [accuracy(name="mlm_accuracy")],
                                 task: [accuracy(name=f"{task}_accuracy")]},
        }
