"""GPT-2's input packing, for classification and for causal-LM training and
generation."""

import keras_hub
import tensorflow as tf

from kzoo.models.gpt2.tokenizer import END_OF_TEXT, GPT2Tokenizer
from kzoo.core.preprocessor import (PAD_MARK, Preprocessor, append_id,
                                      generated_text_ids, ragged_ids,
                                      split_padding)
from kzoo.core.registry import register
from kzoo.core.text_tensors import as_tf, eager_outputs, text_tensor

TRUNCATE_MODES = ("round_robin", "waterfall")


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
        add_end_token: put `<|endoftext|>` last (see above), after a text
            that fits; a text truncated at `sequence_length` gets none.

    Example:
    ```python
    preprocessor = kzoo.GPT2Preprocessor.from_preset("gpt2",
                                                     sequence_length=32)
    preprocessor(["A sentence."])
    preprocessor((["The premise."], ["A hypothesis."]))
    ```
    """

    tokenizer_cls = GPT2Tokenizer
    max_segments = 2

    def __init__(self, tokenizer, sequence_length=1024, delimiter=END_OF_TEXT,
                 add_start_token=False, add_end_token=False,
                 truncate="round_robin", **kwargs):
        super().__init__(tokenizer, sequence_length, **kwargs)
        name = type(self).__name__
        if not isinstance(delimiter, str) or not delimiter:
            raise ValueError(
                f"{name}: delimiter must be a non-empty string (the text "
                f"put between the texts of a pair); got {delimiter!r}.")
        if truncate not in TRUNCATE_MODES:
            raise ValueError(f"{name}: truncate must be one of "
                             f"{TRUNCATE_MODES}; got {truncate!r}.")
        self.delimiter = delimiter
        self.add_start_token = bool(add_start_token)
        self.add_end_token = bool(add_end_token)
        self.truncate = truncate

    def special_token_count(self, num_segments):
        # The end token takes no reserved room: a truncated text gets none.
        count = int(self.add_start_token)
        if num_segments > 1:
            self._ensure_setup()  # the delimiter's ids need the vocabulary
            count += (num_segments - 1) * len(self.delimiter_ids)
        return count

    def setup(self):
        tokenizer = self.tokenizer
        delimiter_ids = tokenizer.tokenize_tf(
            tf.constant([self.delimiter])).to_list()[0]
        if not delimiter_ids:
            raise ValueError(
                f"{type(self).__name__}: delimiter {self.delimiter!r} "
                "tokenizes to nothing; pick text that has tokens.")
        self.delimiter_ids = delimiter_ids
        self.packer = keras_hub.layers.MultiSegmentPacker(
            sequence_length=self.sequence_length,
            start_value=tokenizer.start_token_id,
            end_value=tokenizer.end_token_id,
            sep_value=delimiter_ids,
            pad_value=PAD_MARK,
            truncate=self.truncate,
        )

    def pack(self, x):
        """Tokenize and pack texts into the backbone's input dict (backend
        tensors when called eagerly, as `__call__`)."""
        return eager_outputs(self._pack(x))

    def _pack(self, x):
        token_ids = [self.tokenizer.tokenize_tf(s)
                     for s in self.text_segments(x)]
        if self.add_end_token:
            # Only a text that really ends gets <|endoftext|>: it joins the
            # last text before packing, so truncation cuts it off with the
            # text rather than placing it after the cut.
            token_ids[-1] = append_id(token_ids[-1],
                                      self.tokenizer.end_token_id)
        packed, _ = as_tf(self.packer(
            tuple(token_ids), add_start_value=self.add_start_token,
            add_end_value=False))
        token_ids, padding_mask = split_padding(packed,
                                                self.tokenizer.pad_token_id)
        return {"token_ids": token_ids, "padding_mask": padding_mask}

    def get_config(self):
        config = super().get_config()
        config.update({
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
        add_end_token: end each training text with `<|endoftext|>`; a text
            truncated at `sequence_length` did not end there and gets none.
        prompt_start_token: put `<|endoftext|>` before each text prompt
            of `generate`. Off by default: `transformers`' tokenizer and
            OpenAI's conditional sampler condition on the prompt alone, and
            so does kzoo. An empty prompt always starts with it (as
            unconditional sampling does), since generation needs a token
            to condition on.

    Example:
    ```python
    preprocessor = kzoo.GPT2CausalLMPreprocessor.from_preset(
        "gpt2", sequence_length=16)
    x, y, sample_weight = preprocessor(["The quick brown fox."])
    assert x["token_ids"].shape == y.shape == (1, 16)  # y: x shifted by one
    ```
    """

    tokenizer_cls = GPT2Tokenizer
    takes_labels = False

    def __init__(self, tokenizer, sequence_length=1024, add_start_token=True,
                 add_end_token=True, prompt_start_token=False, **kwargs):
        super().__init__(tokenizer, sequence_length, **kwargs)
        self.add_start_token = bool(add_start_token)
        self.add_end_token = bool(add_end_token)
        self.prompt_start_token = bool(prompt_start_token)

    # The packed row is sequence_length + 1 long (inputs and labels are
    # the same ids shifted by one), so the start token always fits and the
    # base class's special_token_count (none) holds.

    def setup(self):
        tokenizer = self.tokenizer
        self.packer = keras_hub.layers.StartEndPacker(
            sequence_length=self.sequence_length + 1,
            start_value=tokenizer.start_token_id,
            pad_value=PAD_MARK,
        )

    def call(self, x, y=None, sample_weight=None):
        (texts,) = self.text_segments(x)
        token_ids = self.tokenizer.tokenize_tf(texts)
        if self.add_end_token:
            # Before packing, so that a text truncated at sequence_length
            # does not end in <|endoftext|> as if it ended there.
            token_ids = append_id(token_ids, self.tokenizer.end_token_id)
        packed = as_tf(self.packer(token_ids,
                                   add_start_value=self.add_start_token,
                                   add_end_value=False))
        token_ids, padding_mask = split_padding(packed,
                                                self.tokenizer.pad_token_id)
        x = {"token_ids": token_ids[..., :-1],
             "padding_mask": padding_mask[..., :-1]}
        y = token_ids[..., 1:]
        sample_weight = tf.cast(padding_mask[..., 1:], "float32")
        return x, y, sample_weight

    # ------------------------------------------------------------------
    # Generation (eager, outside tf.data)
    # ------------------------------------------------------------------
    def generate_preprocess(self, texts):
        """Prompts -> lists of token ids: the prompt's tokens alone (the
        start token first with `prompt_start_token`, or for an empty
        prompt), no end token: generation continues the text."""
        texts = text_tensor(list(texts), type(self).__name__, "prompts")
        return self.generate_preprocess_tf(texts).to_list()

    def generate_preprocess_tf(self, texts):
        """`generate_preprocess` in tf ops: strings `(batch,)` -> ragged
        int32 ids (an exported generator's graph runs it)."""
        ids = tf.cast(self.tokenizer.tokenize_tf(texts), "int32")
        starts = tf.ones_like(ids.row_lengths(), "int32")
        if not self.prompt_start_token:
            starts = tf.cast(tf.equal(ids.row_lengths(), 0), "int32")
        start = tf.RaggedTensor.from_row_lengths(
            tf.fill([tf.reduce_sum(starts)],
                    tf.constant(self.tokenizer.start_token_id, "int32")),
            tf.cast(starts, ids.row_splits.dtype))
        return tf.concat([start, ids], axis=1)

    def generate_postprocess(self, id_lists, stop_token_ids=(),
                             strip_start=True):
        """Generated id lists -> strings, without a leading start token
        (the one `generate_preprocess` put first; so a prompt that begins
        with the text `<|endoftext|>` loses it too) and stop tokens."""
        return list(self.generate_postprocess_tf(
            ragged_ids(id_lists), stop_token_ids, strip_start))

    def generate_postprocess_tf(self, token_ids, stop_token_ids=(),
                                strip_start=True):
        """`generate_postprocess` in tf ops: ragged ids -> strings
        `(batch,)`."""
        start = self.tokenizer.start_token_id if strip_start else None
        token_ids = generated_text_ids(token_ids, first=start,
                                       trailing=tuple(stop_token_ids))
        return self.tokenizer.detokenize(token_ids)

    def get_config(self):
        config = super().get_config()
        config.update({
            "add_start_token": self.add_start_token,
            "add_end_token": self.add_end_token,
            "prompt_start_token": self.prompt_start_token,
        })
        return config
