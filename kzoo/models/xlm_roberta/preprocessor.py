"""XLM-R's input packing: RoBERTa's, with XLM-R's tokenizer."""

from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.core.registry import register
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
    from kzoo import datasets
    # xlm_roberta_base_multi's sentencepiece.bpe.model comes with its
    # weights (downloaded once). Offline: a small one in XLM-R's layout.
    tokenizer = kzoo.XLMRobertaTokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spm.model",
        vocabulary_size=300)
    preprocessor = kzoo.XLMRobertaPreprocessor(tokenizer, sequence_length=16)
    x = preprocessor((["The fox."], ["It jumped."]))   # or single texts
    ids = np.asarray(x["token_ids"][0]).tolist()   # <s> A </s></s> B </s>
    assert ids[0] == tokenizer.start_token_id
    assert ids.count(tokenizer.end_token_id) == 3
    ```
    """

    tokenizer_cls = XLMRobertaTokenizer


@register
class XLMRobertaMaskedLMPreprocessor(XLMRobertaPreprocessor,
                                     MaskedLMPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights, for
    XLM-R's masked LM: XLM-R's packing, then BERT's masking drawn afresh
    on every call (dynamic masking, as RoBERTa's). Arguments and outputs:
    see `kzoo.RobertaMaskedLMPreprocessor`.

    Example:
    ```python
    # Setup: the example of kzoo.XLMRobertaPreprocessor (tokenizer).
    preprocessor = kzoo.XLMRobertaMaskedLMPreprocessor(tokenizer,
                                                       sequence_length=32)
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert x["token_ids"].shape == (1, 32)
    assert y.shape == x["mask_positions"].shape   # the ids behind masks
    ```
    """
