"""BERT's input packing: [CLS] a [SEP] (b [SEP]), segment ids, padding."""

import keras
import keras_hub
import tensorflow as tf

from kzoo.models.bert.tokenizer import BertTokenizer
from kzoo.models.preprocessor import Preprocessor, to_string_tensor
from kzoo.models.registry import register


@register
class BertPreprocessor(Preprocessor):
    """Raw text (one string per example, or a tuple of segments for
    sentence pairs) -> `token_ids`, `segment_ids`, `padding_mask`.

    Args:
        tokenizer: a `BertTokenizer`.
        sequence_length: packed length; longer inputs are truncated.
        truncate: `"round_robin"` (trim the longest segment first, one token
            at a time, as BERT's own `_truncate_seq_pair`) or `"waterfall"`.

    Example:
    ```python
    preprocessor = kzoo.BertPreprocessor.from_preset("bert_base",
                                                     sequence_length=16)
    preprocessor(["The quick brown fox."])            # single texts
    preprocessor((["The fox."], ["It jumped."]))      # pairs
    ```
    """

    tokenizer_cls = BertTokenizer

    def __init__(self, tokenizer, sequence_length=512, truncate="round_robin",
                 **kwargs):
        super().__init__(tokenizer, **kwargs)
        self.sequence_length = int(sequence_length)
        self.truncate = truncate
        self.packer = keras_hub.layers.MultiSegmentPacker(
            start_value=tokenizer.cls_token_id,
            end_value=tokenizer.sep_token_id,
            pad_value=tokenizer.pad_token_id,
            truncate=truncate,
            sequence_length=self.sequence_length,
        )

    def pack(self, x):
        """Tokenize and pack segments into the backbone's input dict."""
        segments = x if isinstance(x, tuple) else (x,)
        segments = tuple(self.tokenizer(to_string_tensor(s)) for s in segments)
        token_ids, segment_ids = self.packer(segments)
        return {
            "token_ids": token_ids,
            "segment_ids": segment_ids,
            "padding_mask": tf.cast(
                token_ids != self.tokenizer.pad_token_id, "int32"),
        }

    def call(self, x, y=None, sample_weight=None):
        return keras.utils.pack_x_y_sample_weight(self.pack(x), y,
                                                  sample_weight)

    def get_config(self):
        config = super().get_config()
        config.update({"sequence_length": self.sequence_length,
                       "truncate": self.truncate})
        return config
