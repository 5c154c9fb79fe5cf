"""XLM-R's input packing: RoBERTa's, with XLM-R's tokenizer."""

from kzoo.models.bert.masked_lm_preprocessor import BertMaskedLMPreprocessor
from kzoo.models.registry import register
from kzoo.models.roberta.preprocessor import RobertaPreprocessor
from kzoo.models.xlm_roberta.tokenizer import XLMRobertaTokenizer


@register
class XLMRobertaPreprocessor(RobertaPreprocessor):
    """Raw text (one string per example, or a tuple of two lists for
    sentence pairs) -> `token_ids`, `padding_mask`: `<s> A </s>` and
    `<s> A </s></s> B </s>`, padded with `<pad>`, as the original.
    Arguments: see `kzoo.RobertaPreprocessor` (`tokenizer` an
    `XLMRobertaTokenizer`).

    Example:
    ```python
    preprocessor = kzoo.XLMRobertaPreprocessor.from_preset(
        "xlm_roberta_base_multi", sequence_length=16)
    preprocessor(["Le renard brun.", "狐狸跳了。"])
    ```
    """

    tokenizer_cls = XLMRobertaTokenizer


@register
class XLMRobertaMaskedLMPreprocessor(XLMRobertaPreprocessor,
                                     BertMaskedLMPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights, for
    XLM-R's masked LM: XLM-R's packing, then BERT's masking drawn afresh
    on every call (dynamic masking, as RoBERTa's). Arguments and outputs:
    see `kzoo.RobertaMaskedLMPreprocessor`.
    """
