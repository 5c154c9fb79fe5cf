"""GPT-2's input packing, for classification and for causal-LM training and
generation."""

import keras
import keras_hub
import numpy as np
import tensorflow as tf

from kzoo.models.gpt2.tokenizer import END_OF_TEXT, GPT2Tokenizer
from kzoo.models.preprocessor import Preprocessor, to_string_tensor
from kzoo.models.registry import register

# Packers pad with this id first, so the padding mask can be read off the
# packed ids even though GPT-2 pads with a real token (<|endoftext|>).
_PAD_MARK = -1


def _id_lists(token_ids):
    """Ragged/dense tf tensors, arrays or lists -> lists of Python ints."""
    if isinstance(token_ids, tf.RaggedTensor):
        return token_ids.to_list()
    if tf.is_tensor(token_ids):
        token_ids = token_ids.numpy()
    if not isinstance(token_ids, (list, tuple)):
        token_ids = keras.ops.convert_to_numpy(token_ids)
    return [[int(t) for t in ids] for ids in token_ids]


@register
class GPT2Preprocessor(Preprocessor):
    """Raw text -> `token_ids`, `padding_mask` (right-padded), the way the
    GPT recipe feeds a classifier: `text`, or for sentence pairs
    `text_a <delimiter> text_b`; the classifier reads the hidden state of
    the last real token, the only one that has seen the whole input.

    GPT-1 appended a learned "extract" token; GPT-2 has no spare special
    token, and Hugging Face's `GPT2ForSequenceClassification` reads the last
    token that is not `<|endoftext|>`, so by default nothing is appended
    and a converted classifier agrees with it. `add_end_token=True` appends
    `<|endoftext|>` as the extract token (then a Hugging Face export reads
    the token before it).

    Args:
        tokenizer: a `GPT2Tokenizer`.
        sequence_length: packed length; longer inputs are truncated
            (`truncate`: "round_robin" trims the longer text first).
        delimiter: the token between the texts of a pair; GPT-2 has one
            special token, so `<|endoftext|>` is the default.
        add_start_token: put `<|endoftext|>` first.
        add_end_token: put `<|endoftext|>` last (see above).

    Example:
    ```python
    preprocessor = kzoo.GPT2Preprocessor.from_preset("gpt2",
                                                     sequence_length=32)
    preprocessor(["A sentence."])
    preprocessor((["The premise."], ["A hypothesis."]))
    ```
    """

    tokenizer_cls = GPT2Tokenizer

    def __init__(self, tokenizer, sequence_length=1024, delimiter=END_OF_TEXT,
                 add_start_token=False, add_end_token=False,
                 truncate="round_robin", **kwargs):
        super().__init__(tokenizer, **kwargs)
        self.sequence_length = int(sequence_length)
        self.delimiter = delimiter
        self.add_start_token = bool(add_start_token)
        self.add_end_token = bool(add_end_token)
        self.truncate = truncate
        delimiter_ids = _id_lists(tokenizer([delimiter]))[0]
        if not delimiter_ids:
            raise ValueError(f"delimiter {delimiter!r} tokenizes to nothing.")
        self.delimiter_ids = delimiter_ids
        self.packer = keras_hub.layers.MultiSegmentPacker(
            sequence_length=self.sequence_length,
            start_value=tokenizer.start_token_id,
            end_value=tokenizer.end_token_id,
            sep_value=delimiter_ids,
            pad_value=_PAD_MARK,
            truncate=truncate,
            _allow_python_workflow=False,
        )

    def pack(self, x):
        segments = x if isinstance(x, tuple) else (x,)
        if len(segments) > 2:
            raise ValueError("GPT2Preprocessor takes one text or a pair.")
        segments = tuple(self.tokenizer(to_string_tensor(s)) for s in segments)
        token_ids, _ = self.packer(
            segments, add_start_value=self.add_start_token,
            add_end_value=self.add_end_token)
        padding_mask = tf.not_equal(token_ids, _PAD_MARK)
        token_ids = tf.where(padding_mask, token_ids,
                             self.tokenizer.pad_token_id)
        return {"token_ids": tf.cast(token_ids, "int32"),
                "padding_mask": tf.cast(padding_mask, "int32")}

    def call(self, x, y=None, sample_weight=None):
        return keras.utils.pack_x_y_sample_weight(self.pack(x), y,
                                                  sample_weight)

    def get_config(self):
        config = super().get_config()
        config.update({
            "sequence_length": self.sequence_length,
            "delimiter": self.delimiter,
            "add_start_token": self.add_start_token,
            "add_end_token": self.add_end_token,
            "truncate": self.truncate,
        })
        return config


@register
class GPT2CausalLMPreprocessor(Preprocessor):
    """Raw text -> next-token prediction batches, and prompts for
    `generate`.

    `call(texts)` returns `(x, y, sample_weight)`:
        x: `token_ids`, `padding_mask`, both `(batch, sequence_length)`:
           `<|endoftext|> text <|endoftext|>`, truncated, right-padded.
        y: the same ids shifted left by one (the next token).
        sample_weight: 0 where `y` is padding, so padding adds no loss.

    Args:
        tokenizer: a `GPT2Tokenizer`.
        sequence_length: model input length.
        add_start_token: start each text with `<|endoftext|>` (GPT-2 saw
            it between documents, so it reads as "a new text begins").
        add_end_token: end each training text with `<|endoftext|>`.

    Example:
    ```python
    preprocessor = kzoo.GPT2CausalLMPreprocessor.from_preset(
        "gpt2", sequence_length=128)
    x, y, sample_weight = preprocessor(["The quick brown fox."])
    ```
    """

    tokenizer_cls = GPT2Tokenizer

    def __init__(self, tokenizer, sequence_length=1024, add_start_token=True,
                 add_end_token=True, **kwargs):
        super().__init__(tokenizer, **kwargs)
        self.sequence_length = int(sequence_length)
        self.add_start_token = bool(add_start_token)
        self.add_end_token = bool(add_end_token)
        self.packer = keras_hub.layers.StartEndPacker(
            sequence_length=self.sequence_length + 1,
            start_value=tokenizer.start_token_id,
            end_value=tokenizer.end_token_id,
            pad_value=_PAD_MARK,
            _allow_python_workflow=False,
        )

    def call(self, x, y=None, sample_weight=None):
        if y is not None or sample_weight is not None:
            raise ValueError(
                "GPT2CausalLMPreprocessor makes its own labels (the next "
                "token); pass texts only.")
        token_ids = self.packer(
            self.tokenizer(to_string_tensor(x)),
            add_start_value=self.add_start_token,
            add_end_value=self.add_end_token)
        padding_mask = tf.not_equal(token_ids, _PAD_MARK)
        token_ids = tf.cast(tf.where(padding_mask, token_ids,
                                     self.tokenizer.pad_token_id), "int32")
        padding_mask = tf.cast(padding_mask, "int32")
        x = {"token_ids": token_ids[..., :-1],
             "padding_mask": padding_mask[..., :-1]}
        y = token_ids[..., 1:]
        sample_weight = tf.cast(padding_mask[..., 1:], "float32")
        return x, y, sample_weight

    # ------------------------------------------------------------------
    # Generation (eager, outside tf.data)
    # ------------------------------------------------------------------
    def generate_preprocess(self, texts):
        """Prompts -> lists of token ids (with the start token, no end
        token: generation continues the text)."""
        id_lists = _id_lists(self.tokenizer(to_string_tensor(list(texts))))
        if self.add_start_token:
            id_lists = [[self.tokenizer.start_token_id] + ids
                        for ids in id_lists]
        return id_lists

    def generate_postprocess(self, id_lists, stop_token_ids=(),
                             strip_start=True):
        """Generated id lists -> strings, without the start token and stop
        tokens."""
        drop = set(int(t) for t in stop_token_ids)
        texts = []
        for ids in id_lists:
            ids = [int(t) for t in np.asarray(ids).reshape(-1)]
            if strip_start and self.add_start_token and ids and \
                    ids[0] == self.tokenizer.start_token_id:
                ids = ids[1:]
            while ids and ids[-1] in drop:
                ids = ids[:-1]
            texts.append(self._detokenize(ids))
        return texts

    def _detokenize(self, ids):
        if not ids:
            return ""
        text = self.tokenizer.detokenize([ids])
        if isinstance(text, (list, tuple)):
            text = text[0]
        elif tf.is_tensor(text):
            text = text.numpy()
            text = text[0] if getattr(text, "ndim", 0) else text
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        return str(text)

    def get_config(self):
        config = super().get_config()
        config.update({
            "sequence_length": self.sequence_length,
            "add_start_token": self.add_start_token,
            "add_end_token": self.add_end_token,
        })
        return config
