"""XLM-R with its masked-LM head."""

from kzoo.core.registry import register
from kzoo.models.roberta.masked_lm import RobertaMaskedLM
from kzoo.models.xlm_roberta.backbone import XLMRobertaBackbone
from kzoo.models.xlm_roberta.preprocessor import \
    XLMRobertaMaskedLMPreprocessor


@register
class XLMRobertaMaskedLM(RobertaMaskedLM):
    """Masked-LM (continued) pretraining of XLM-R, and `fill_mask`: RoBERTa's
    head (dense, GELU, LayerNorm, logits through the tied token embedding
    plus a bias) on XLM-R's encoder.

    Example:
    ```python
    from kzoo import datasets
    # xlm_roberta_base_multi's sentencepiece.bpe.model comes with its
    # weights (downloaded once). Offline: a small one in XLM-R's layout.
    tokenizer = kzoo.XLMRobertaTokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spm.model",
        vocabulary_size=300)
    backbone = kzoo.XLMRobertaBackbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1,
        num_heads=2, hidden_dim=16, intermediate_dim=32)
    # from_preset("xlm_roberta_base_multi") is the released model.
    mlm = kzoo.XLMRobertaMaskedLM(
        backbone, preprocessor=kzoo.XLMRobertaMaskedLMPreprocessor(
            tokenizer, sequence_length=16))
    [candidates] = mlm.fill_mask("Paris est la <mask> de la France.")[0]
    assert len(candidates) == 5   # (token, probability), most likely first
    ```
    """

    backbone_cls = XLMRobertaBackbone
    preprocessor_cls = XLMRobertaMaskedLMPreprocessor
