"""RoBERTa's input packing: <s> a </s> (</s> b </s>), padding."""

from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.tasks.segment_preprocessor import SegmentPreprocessor
from kzoo.core.registry import register
from kzoo.models.roberta.tokenizer import RobertaTokenizer


@register
class RobertaPreprocessor(SegmentPreprocessor):
    """Raw text (one string per example, or a tuple of two lists for
    sentence pairs) -> `token_ids`, `padding_mask`, packed as the original:
    `<s> A </s>` and `<s> A </s></s> B </s>`, padded with `<pad>`.

    BERT's packing with RoBERTa's tokens (`<s>` for [CLS], `</s>` for
    [SEP], two of them between the texts) and no segment ids: RoBERTa has
    one token type.

    Args:
        tokenizer: a `RobertaTokenizer`.
        sequence_length: packed length; longer inputs are truncated. At
            least 2 (`<s>`, `</s>`); 4 for pairs.
        truncate: `"round_robin"` (trim the longer text first, one token at
            a time) or `"waterfall"`.

    Example:
    ```python
    import json
    from kzoo import presets
    # roberta_base_en's vocab.json comes with its weights (downloaded
    # once). Offline: GPT-2's BPE (kzoo ships it) in RoBERTa's layout.
    gpt2 = presets.resolve("gpt2")
    tokens = ["<s>", "<pad>", "</s>", "<unk>",
              *json.loads(gpt2.file("vocab.json").read_text()), "<mask>"]
    with open("vocab.json", "w") as f:
        json.dump({token: i for i, token in enumerate(tokens)}, f)
    tokenizer = kzoo.RobertaTokenizer("vocab.json", gpt2.file("merges.txt"))
    preprocessor = kzoo.RobertaPreprocessor(tokenizer, sequence_length=16)
    x = preprocessor((["The fox."], ["It jumped."]))   # or single texts
    print(tokenizer.detokenize(x["token_ids"][0]))
    # <s>The fox.</s></s>It jumped.</s><pad><pad>...
    ```
    """

    tokenizer_cls = RobertaTokenizer
    separators_between = 2
    segment_input = False  # one token type: no segment input


@register
class RobertaMaskedLMPreprocessor(RobertaPreprocessor,
                                  MaskedLMPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights, for
    RoBERTa's masked LM: RoBERTa's packing, then BERT's masking (15% of
    the tokens selected, 80% `<mask>`, 10% random, 10% kept; never a
    special token). Masks are drawn afresh on every call, so every epoch
    sees new ones: RoBERTa's dynamic masking.

    x: `token_ids` (masked), `padding_mask`, `mask_positions`.
    y: the original ids at `mask_positions`.
    sample_weight: 1 for real selections, 0 where fewer were selected.

    Args: `RobertaPreprocessor`'s, and `masking` (`"token"`,
    `"whole_word"`: words begin at a `Ġ` token, or `"span"`: SpanBERT's
    spans of whole words; dynamic in every mode), `mask_selection_rate`,
    `mask_selection_length`, `mask_token_rate`, `random_token_rate` (see
    `kzoo.tasks.MaskedLMPreprocessor`).

    Example:
    ```python
    # Setup: the example of kzoo.RobertaPreprocessor (tokenizer).
    preprocessor = kzoo.RobertaMaskedLMPreprocessor(
        tokenizer, sequence_length=32, masking="whole_word")
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert x["token_ids"].shape == (1, 32)
    assert y.shape == x["mask_positions"].shape   # the ids behind masks
    ```
    """
