"""Property tests (Hypothesis) for every registered tokenizer and
preprocessor: arbitrary Unicode never crashes them, eager and tf.data agree,
byte-level BPE round-trips, and outputs always have the requested shape.

Tokenizers and preprocessors are TensorFlow and numpy whatever the Keras
backend (their eager outputs' conversion is checked on every backend in
test_preprocessor_contract), so these run once per suite.

Kept fast: few examples, no deadline (the first call of a layer builds its
tables), no example database written into the checkout.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kzoo
from helpers import to_numpy
from kzoo.models.elmo.backbone import NUM_CHARACTERS
from kzoo.core.preprocessor import Preprocessor
from text_testing import (make_preprocessor, make_tokenizer, model_inputs,
                          params, registered_tokenizers)

pytestmark = pytest.mark.once

PROPERTY = settings(max_examples=10, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

# Any Unicode (Hypothesis leaves out lone surrogates, which have no UTF-8;
# those are refused with a clear error, see test_tokenizer_contract), plus
# the strings tokenizers treat specially.
SPECIAL = ["[MASK]", "[PAD]", "<|endoftext|>", " ", "\n\t", "\x00", "\u200d",
           "e\u0301", "\U0001f9d1\u200d\U0001f4bb", "'t 's"]
TEXT = st.one_of(st.text(max_size=40), st.sampled_from(SPECIAL),
                 st.lists(st.sampled_from(SPECIAL + ["a", "Z", "9"]),
                          max_size=8).map("".join))
TEXTS = st.lists(TEXT, min_size=1, max_size=4)

_BUILT = {}


def built(cls, *args):
    key = (cls, args)
    if key not in _BUILT:
        _BUILT[key] = (make_tokenizer(cls) if not args else
                       make_preprocessor(cls, sequence_length=args[0]))
    return _BUILT[key]


def graph_function(fn):
    """`fn` over a batch of strings, traced once (keras-hub's tf path)."""
    return tf.function(fn, input_signature=[tf.TensorSpec([None], tf.string)])


@pytest.mark.parametrize("tokenizer_cls", registered_tokenizers())
def test_tokenizers_never_crash_and_agree_with_tf_data(tokenizer_cls):
    tokenizer = built(tokenizer_cls)
    size = tokenizer.vocabulary_size
    in_graph = graph_function(lambda t: tokenizer.tokenize_tf(t).to_tensor(-1))

    @PROPERTY
    @given(texts=TEXTS)
    def check(texts):
        ids = tokenizer(texts)
        assert len(ids) == len(texts)
        assert all(0 <= i < size for row in ids for i in row)
        graph_ids = [[i for i in row if i >= 0]
                     for row in in_graph(tf.constant(texts)).numpy().tolist()]
        assert graph_ids == ids
        decoded = tokenizer.detokenize(ids)
        assert len(decoded) == len(texts)
        assert all(isinstance(text, str) for text in decoded)

    check()


def test_byte_level_bpe_round_trips():
    tokenizer = built(kzoo.GPT2Tokenizer)
    in_graph = graph_function(
        lambda t: tokenizer.detokenize(tokenizer.tokenize_tf(t)))

    @PROPERTY
    @given(texts=TEXTS)
    def check(texts):
        assert tokenizer.detokenize(tokenizer(texts)) == texts
        for text in texts:
            assert tokenizer.detokenize(tokenizer(text)) == text
        decoded = [t.decode("utf-8") for t in
                   in_graph(tf.constant(texts)).numpy().tolist()]
        assert decoded == texts

    check()


@pytest.mark.parametrize("preprocessor_cls", params(Preprocessor))
def test_preprocessor_outputs_have_the_requested_shape(preprocessor_cls):
    probe = built(preprocessor_cls, 16)
    shortest = max(1, probe.special_token_count(
        preprocessor_cls.max_segments))
    lengths = sorted({shortest, 7, 16})
    pairs = preprocessor_cls.max_segments >= 2
    size = probe.tokenizer.vocabulary_size

    @PROPERTY
    @given(texts=TEXTS, other=TEXTS, length=st.sampled_from(lengths),
           as_pairs=st.booleans())
    def check(texts, other, length, as_pairs):
        preprocessor = built(preprocessor_cls, length)
        other = (other * len(texts))[:len(texts)]
        if getattr(preprocessor_cls, "takes_words", False):
            x = [text.split() for text in texts]  # words
        elif preprocessor_cls.__name__ == "MultipleChoicePreprocessor":
            x = (texts, [[choice, choice + "a"] for choice in other])
        elif preprocessor_cls.min_segments >= 2 or (pairs and as_pairs):
            x = (texts, other)
        else:
            x = texts
        outputs = to_numpy(preprocessor(x))
        inputs = model_inputs(outputs)
        # An encoder-decoder's encoder inputs are checked as any encoder's.
        if "encoder_token_ids" in inputs:
            inputs = {"token_ids": inputs["encoder_token_ids"],
                      "padding_mask": inputs["encoder_padding_mask"]}
        # Token ids, or a word's character ids (ELMo: one more axis).
        name, limit = (("token_ids", size) if "token_ids" in inputs
                       else ("character_ids", NUM_CHARACTERS))
        # (batch, seq); multiple choice: (batch, choices, seq).
        mask = inputs["padding_mask"]
        assert mask.shape[0] == len(texts) and mask.shape[-1] == length
        assert inputs[name].shape[:mask.ndim] == mask.shape
        assert set(np.unique(inputs["padding_mask"])) <= {0, 1}
        assert inputs[name].min() >= 0
        assert inputs[name].max() < limit
        for value in keras.tree.flatten(outputs):
            assert value.shape[0] == len(texts)
            assert np.all(np.isfinite(value))

    check()
