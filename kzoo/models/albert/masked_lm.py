"""ALBERT with its masked-LM head."""

from kzoo.models.albert.backbone import AlbertBackbone
from kzoo.models.albert.preprocessor import AlbertMaskedLMPreprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import MaskedLM


@register
class AlbertMaskedLM(MaskedLM):
    """Masked-LM (continued) pretraining of ALBERT, and `fill_mask`.

    The head is the original's (Hugging Face's `AlbertMLMHead`): dense
    from the hidden width down to the embedding width, the backbone's
    activation (`gelu_new` in the released models), LayerNorm at the
    embedding width, then logits through the tied token embedding plus a
    bias. Fit on raw strings: the preprocessor masks afresh every call.

    Example:
    ```python
    from kzoo import datasets
    # albert_base_en_uncased's spiece.model comes with its weights
    # (downloaded once). Offline: a small one in ALBERT's layout.
    tokenizer = kzoo.AlbertTokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spiece.model",
        vocabulary_size=300)
    backbone = kzoo.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=2,
        num_heads=2, hidden_dim=16, intermediate_dim=32, embedding_dim=8)
    # from_preset("albert_base_en_uncased") is the released model.
    mlm = kzoo.AlbertMaskedLM(
        backbone, preprocessor=kzoo.AlbertMaskedLMPreprocessor(
            tokenizer, sequence_length=16))
    [candidates] = mlm.fill_mask("The capital of France is [MASK].")[0]
    assert len(candidates) == 5   # (token, probability), most likely first
    ```
    """

    backbone_cls = AlbertBackbone
    preprocessor_cls = AlbertMaskedLMPreprocessor
