"""BERT's masked-LM pretraining input: BERT's packing, then masking."""

from kzoo.core.registry import register
from kzoo.models.bert.preprocessor import BertPreprocessor
from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor


@register
class BertMaskedLMPreprocessor(BertPreprocessor, MaskedLMPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights.

    Outputs, masking modes (`"token"`, `"whole_word"`, `"span"`) and rates:
    see `kzoo.tasks.MaskedLMPreprocessor`; fresh masks on every call.

    Example:
    ```python
    preprocessor = kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_base_en_uncased", sequence_length=64, masking="whole_word")
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert x["token_ids"].shape == (1, 64)
    ```
    """
