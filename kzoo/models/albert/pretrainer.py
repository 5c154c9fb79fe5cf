"""ALBERT's full pretraining: masked LM and sentence-order prediction."""

from kzoo.models.albert.backbone import AlbertBackbone
from kzoo.models.albert.preprocessor import AlbertMaskedLMPreprocessor
from kzoo.core.arguments import FRACTION
from kzoo.models.bert.pretrainer import (BertPretrainer,
                                         BertPretrainerPreprocessor)
from kzoo.core.registry import register

SOP_LABELS = "sentence-order labels (0 = in order, 1 = swapped)"


@register
class AlbertPretrainerPreprocessor(AlbertMaskedLMPreprocessor,
                                   BertPretrainerPreprocessor):
    """Sentence pairs + sentence-order labels -> masked inputs and both
    targets.

    x: `(first_sentences, second_sentences)`; y: SOP labels (0 = in
    order, 1 = swapped, as Hugging Face's `AlbertForPreTraining`; build
    them with `kzoo.preprocessing.sentence_order_pairs`). Returns
    y = {"mlm": original ids, "sop": labels} and sample weights
    {"mlm": mask weights, "sop": 1}.

    Example:
    ```python
    from kzoo import datasets
    # albert_base_en_uncased's spiece.model comes with its weights
    # (downloaded once). Offline: a small one in ALBERT's layout.
    tokenizer = kzoo.AlbertTokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spiece.model",
        vocabulary_size=300)
    first, second, labels = kzoo.preprocessing.sentence_order_pairs(
        datasets.austen_paragraphs("emma")[:4], seed=0)
    preprocessor = kzoo.AlbertPretrainerPreprocessor(tokenizer,
                                                     sequence_length=32)
    x, y, sample_weight = preprocessor((first, second), labels)
    assert set(y) == {"mlm", "sop"}
    ```
    """

    segments_hint = ("Build them with "
                     "kzoo.preprocessing.sentence_order_pairs(documents).")
    sentence_task = "sop"


@register
class AlbertPretrainer(BertPretrainer):
    """Masked LM + sentence-order prediction, trained jointly (ALBERT's
    pretraining). Outputs `{"mlm": (batch, masks, vocab) logits,
    "sop": (batch, 2) logits}`.

    The heads are the original's (Hugging Face's `predictions` and
    `sop_classifier`): the MLM head of `AlbertMaskedLM`, and pooled output
    -> dropout (`classifier_dropout_prob`) -> dense(2).

    Args:
        backbone: an `AlbertBackbone`.
        preprocessor: an `AlbertPretrainerPreprocessor`, or None.
        dropout: the dropout before the SOP classifier (0.1).

    Example:
    ```python
    # Setup: the example of kzoo.AlbertPretrainerPreprocessor (tokenizer;
    # the sentence pairs first, second, labels).
    backbone = kzoo.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=2,
        num_heads=2, hidden_dim=16, intermediate_dim=32, embedding_dim=8)
    pretrainer = kzoo.AlbertPretrainer(
        backbone, preprocessor=kzoo.AlbertPretrainerPreprocessor(
            tokenizer, sequence_length=32))
    history = pretrainer.fit((first, second), labels, epochs=1, verbose=0)
    assert history.history["loss"][0] > 0   # masked LM + sentence order
    ```
    """

    backbone_cls = AlbertBackbone
    preprocessor_cls = AlbertPretrainerPreprocessor
    pretrained_heads = ("mlm_head", "sop_head")
    sentence_task = "sop"
    sentence_labels = SOP_LABELS
    argument_spec = {"dropout": FRACTION}

    def __init__(self, backbone, preprocessor=None, dropout=0.1, **kwargs):
        self._build_pretrainer(backbone, preprocessor, float(dropout),
                               **kwargs)
        self.dropout = float(dropout)

    def task_config(self):
        return {"dropout": self.dropout}
