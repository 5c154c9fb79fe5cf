"""The packing every BERT-like encoder shares: [CLS] a [SEP] (b [SEP]),
segment ids, padding. A family's preprocessor names its tokenizer and, where
it differs from BERT's, how many separators stand between two texts and
whether its backbone reads segment ids."""

import keras_hub

from kzoo.core.preprocessor import PAD_MARK, Preprocessor, split_padding
from kzoo.core.text_tensors import as_tf, eager_outputs

TRUNCATE_MODES = ("round_robin", "waterfall")


def segment_packer(tokenizer, sequence_length, truncate,
                   separators_between=1):
    """keras-hub's packer of `[CLS] a [SEP] (b [SEP])` with the
    tokenizer's ids, padded with `PAD_MARK` (`split_padding` turns it into
    the pad id and the padding mask)."""
    return keras_hub.layers.MultiSegmentPacker(
        start_value=tokenizer.cls_token_id,
        end_value=tokenizer.sep_token_id,
        sep_value=[tokenizer.sep_token_id] * separators_between,
        pad_value=PAD_MARK,
        truncate=truncate,
        sequence_length=sequence_length,
    )


class SegmentPreprocessor(Preprocessor):
    """Raw text (one string per example, or a tuple of segments for
    sentence pairs) -> `token_ids`, `segment_ids`, `padding_mask`, packed
    with the tokenizer's `[CLS]`-like start and `[SEP]`-like separator.

    Args:
        tokenizer: the family's tokenizer (`tokenizer_cls`).
        sequence_length: packed length; longer inputs are truncated. At
            least 2 ([CLS] and [SEP]); 3 for pairs.
        truncate: `"round_robin"` (trim the longest segment first, one token
            at a time, as BERT's own `_truncate_seq_pair`) or `"waterfall"`.

    Example:
    ```python
    preprocessor = kzoo.BertPreprocessor.from_preset("bert_tiny_en_uncased",
                                                     sequence_length=16)
    assert isinstance(preprocessor, kzoo.tasks.SegmentPreprocessor)
    x = preprocessor((["The fox."], ["It jumped."]))   # pairs
    assert x["token_ids"].shape == x["segment_ids"].shape == (1, 16)
    ```
    """

    max_segments = 2
    # Separator tokens between two texts: BERT's one [SEP]; families that
    # pack the same way with two (RoBERTa's </s></s>) say so.
    separators_between = 1
    # Whether the backbone takes `segment_ids` (families with one token
    # type, RoBERTa's, DistilBERT's, DeBERTa-v3's, have no segment input).
    segment_input = True

    def __init__(self, tokenizer, sequence_length=512, truncate="round_robin",
                 **kwargs):
        super().__init__(tokenizer, sequence_length, **kwargs)
        if truncate not in TRUNCATE_MODES:
            raise ValueError(
                f"{type(self).__name__}: truncate must be one of "
                f"{TRUNCATE_MODES}; got {truncate!r}.")
        self.truncate = truncate

    def special_token_count(self, num_segments):
        # [CLS], a [SEP] after every text, and the extra separators.
        return 1 + num_segments + \
            (self.separators_between - 1) * (num_segments - 1)

    def setup(self):
        self.pad_token_id = self.tokenizer.pad_token_id
        self.packer = segment_packer(self.tokenizer, self.sequence_length,
                                     self.truncate, self.separators_between)

    def pack(self, x):
        """Tokenize and pack segments into the backbone's input dict
        (backend tensors when called eagerly, as `__call__`)."""
        return eager_outputs(self._pack(x))

    def _pack(self, x):
        segments = tuple(self.tokenizer.tokenize_tf(s)
                         for s in self.text_segments(x))
        return self.pack_ids(segments)

    def pack_ids(self, segments):
        """Token ids already tokenized (a tuple of ragged tf batches, one
        per text of an example) -> the backbone's input dict, packed as
        `_pack` packs text (the token classifier tokenizes word by word)."""
        self._ensure_setup()
        packed, segment_ids = as_tf(self.packer(tuple(segments)))
        token_ids, padding_mask = split_padding(packed, self.pad_token_id)
        inputs = {"token_ids": token_ids, "padding_mask": padding_mask}
        if self.segment_input:
            inputs["segment_ids"] = segment_ids
        return inputs

    def get_config(self):
        config = super().get_config()
        config.update({"truncate": self.truncate})
        return config
