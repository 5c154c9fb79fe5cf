"""DeBERTa-v3 for text (and text-pair) classification."""

import keras

from kzoo.layers import get_activation
from kzoo.layers.dropout import Dropout
from kzoo.core.arguments import FRACTION, Optional
from kzoo.core.classification import SINGLE_LABEL
from kzoo.models.deberta_v3.backbone import DebertaV3Backbone
from kzoo.models.deberta_v3.preprocessor import DebertaV3Preprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import SequenceClassifier


@register
class DebertaV3TextClassifier(SequenceClassifier):
    """The original's head (Hugging Face's `ContextPooler` and
    classifier): the first token's vector -> dropout (`pooler_dropout`)
    -> dense + GELU (`pooler_dense`) -> dropout (`dropout`) ->
    dense(num_classes) (`classifier`).

    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    sentence pairs. Arguments: see
    `kzoo.tasks.task_wiring.SequenceClassifier` (`num_classes`,
    `dropout`: the original's `cls_dropout`, by default the backbone's
    dropout; `problem_type`), and `pooler_dropout` (0.0, the original's
    default).

    Example:
    ```python
    from kzoo import datasets
    # deberta_v3_base_en's spm.model comes with its weights (downloaded
    # once). Offline: a small one in DeBERTa-v3's layout.
    tokenizer = kzoo.DebertaV3Tokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spm.model",
        vocabulary_size=300)
    backbone = kzoo.DebertaV3Backbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1,
        num_heads=2, hidden_dim=16, intermediate_dim=32)
    # from_preset("deberta_v3_base_en", num_classes=2) starts from the
    # released encoder; then classifier.fit(texts, labels).
    classifier = kzoo.DebertaV3TextClassifier(
        backbone, num_classes=2,
        preprocessor=kzoo.DebertaV3Preprocessor(tokenizer, sequence_length=16))
    assert classifier.predict(["a fine film"], verbose=0).shape == (1, 2)
    ```
    """

    backbone_cls = DebertaV3Backbone
    preprocessor_cls = DebertaV3Preprocessor
    argument_spec = {**SequenceClassifier.argument_spec,
                     "pooler_dropout": Optional(FRACTION)}

    def __init__(self, backbone, num_classes, preprocessor=None, dropout=None,
                 problem_type=SINGLE_LABEL, pooler_dropout=0.0, **kwargs):
        pooler_dropout = float(pooler_dropout or 0.0)
        # Hugging Face's ContextPooler, made before the base class's graph
        # uses it (`pool`).
        context_pooler = (
            Dropout(pooler_dropout, dtype=backbone.dtype_policy,
                    name="pooler_dropout"),
            keras.layers.Dense(
                backbone.hidden_dim,
                kernel_initializer=backbone.kernel_initializer(),
                dtype=backbone.dtype_policy, name="pooler_dense"))
        super().__init__(backbone, num_classes, preprocessor=preprocessor,
                         dropout=dropout, problem_type=problem_type,
                         pooling_layers=context_pooler, **kwargs)
        self.pooler_dropout = pooler_dropout

    def pool(self, inputs, backbone_outputs, pooler_dropout, pooler_dense):
        first = backbone_outputs["sequence_output"][:, 0, :]
        return get_activation("gelu")(pooler_dense(pooler_dropout(first)))

    def task_config(self):
        return {**super().task_config(), "pooler_dropout": self.pooler_dropout}
