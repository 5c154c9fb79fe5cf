"""Tokenizers and preprocessors: every registered class gets the same bad
text, bad ids and bad sequence lengths."""

import numpy as np
import pytest

from bad_input_models import shared_preprocessor
from kzoo.core.preprocessor import Preprocessor
from kzoo.core.tokenizer import Tokenizer, TokenizerAssetError
from text_testing import example_texts, make_tokenizer, registered

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

TOKENIZERS = registered(Tokenizer)
PREPROCESSORS = registered(Preprocessor)

BAD_TEXT = {
    "none": (None, "is None"),
    "an_int": (5, r"got 5 \(int\)"),
    "empty_list": ([], "empty batch"),
    "ints": ([1, 2], r"it holds 1 \(int\)"),
    "token_id_array": (np.array([[1, 2]]), "numpy array of int64"),
    "nested_lists": ([["a"], ["b", "c"]], r"it holds \['a'\]"),
    "lone_surrogate": (["bad \ud800 text"], "not valid Unicode"),
}


@pytest.fixture(scope="module", params=TOKENIZERS, ids=lambda c: c.__name__)
def tokenizer(request):
    return make_tokenizer(request.param)


@pytest.mark.parametrize("case", sorted(BAD_TEXT))
def test_tokenizer_bad_text(tokenizer, case):
    bad, phrase = BAD_TEXT[case]
    with pytest.raises(ValueError, match=phrase):
        tokenizer(bad)


def test_detokenize_ids_outside_the_vocabulary(tokenizer):
    size = tokenizer.vocabulary_size
    with pytest.raises(ValueError, match=rf"token id {size} is outside the "
                       rf"vocabulary \[0, {size - 1}\]"):
        tokenizer.detokenize([[1, size]])
    with pytest.raises(ValueError, match="token id -1 is outside"):
        tokenizer.detokenize([-1])


def test_tokenizer_asset_path_that_does_not_exist(tokenizer, tmp_path):
    cls = type(tokenizer)
    paths = {argument: str(tmp_path / "nowhere" / filename)
             for argument, filename in cls.asset_files.items()}
    with pytest.raises(TokenizerAssetError, match="does not exist"):
        cls(**paths)


def test_tokenizer_asset_file_that_is_corrupt(tokenizer, tmp_path):
    cls = type(tokenizer)
    paths = {}
    for argument, filename in cls.asset_files.items():
        (tmp_path / filename).write_bytes(b"\xff\xfe\x00 not a vocabulary")
        paths[argument] = str(tmp_path / filename)
    with pytest.raises(TokenizerAssetError, match="corrupt or truncated"):
        cls(**paths)


# ----------------------------------------------------------------------
# Preprocessors
# ----------------------------------------------------------------------
@pytest.fixture(scope="module", params=PREPROCESSORS,
                ids=lambda c: c.__name__)
def preprocessor(request):
    return shared_preprocessor(request.param)


@pytest.mark.parametrize("case", sorted(BAD_TEXT))
def test_preprocessor_bad_text(preprocessor, case):
    bad, phrase = BAD_TEXT[case]
    if preprocessor.min_segments >= 2:
        bad = (bad, bad)
    if case == "nested_lists" and takes_words(preprocessor):
        # Lists of words are a word tagger's input: accepted.
        assert preprocessor(bad)["padding_mask"].shape[0] == 2
        return
    with pytest.raises(ValueError, match=phrase):
        preprocessor(bad)


def takes_words(preprocessor):
    return getattr(preprocessor, "takes_words", False)


def test_preprocessor_wrong_number_of_texts(preprocessor):
    texts = example_texts(type(preprocessor), 2)
    too_many = tuple(texts if isinstance(texts, tuple) else (texts,)) * 2 \
        + (["x", "y"],)
    with pytest.raises(ValueError, match="texts per example|takes"):
        preprocessor(too_many)


@pytest.mark.parametrize("length,phrase", [
    (0, "sequence_length must be a positive integer"),
    (-3, "sequence_length must be a positive integer"),
    (2.5, "sequence_length must be a positive integer"),
    ("128", "sequence_length must be a positive integer"),
    (None, "sequence_length must be a positive integer"),
], ids=["zero", "negative", "a_float", "a_string", "none"])
def test_bad_sequence_length(preprocessor, length, phrase):
    with pytest.raises(ValueError, match=phrase):
        type(preprocessor)(preprocessor.tokenizer, sequence_length=length)


def test_sequence_length_shorter_than_the_special_tokens(preprocessor):
    cls = type(preprocessor)
    needed = preprocessor.special_token_count(cls.min_segments)
    if needed < 2:
        pytest.skip(f"{cls.__name__} adds fewer than 2 special tokens, so "
                    "sequence_length=1 holds a token")
    with pytest.raises(ValueError, match=r"sequence_length=1 is too short"):
        cls(preprocessor.tokenizer, sequence_length=1)


def test_preprocessor_with_a_tokenizer_of_another_family(preprocessor):
    cls = type(preprocessor)
    others = [t for t in TOKENIZERS if not issubclass(t, cls.tokenizer_cls)]
    if not others:
        # A preprocessor for any encoder family's tokenizer (question
        # answering's windows) refuses one that cannot pack text pairs.
        from kzoo.models.gpt2.tokenizer import GPT2Tokenizer
        with pytest.raises(ValueError, match=rf"{cls.__name__} needs the "
                           r"tokenizer of an encoder family.*GPT2Tokenizer"):
            cls(make_tokenizer(GPT2Tokenizer), sequence_length=8)
        return
    with pytest.raises(ValueError, match=rf"{cls.__name__} needs a "
                       rf"{cls.tokenizer_cls.__name__} as its tokenizer"):
        cls(make_tokenizer(others[0]), sequence_length=8)


@pytest.mark.parametrize("cls", [c for c in PREPROCESSORS
                                 if not c.takes_labels],
                         ids=lambda c: c.__name__)
def test_labels_for_a_preprocessor_that_makes_its_own(cls):
    preprocessor = shared_preprocessor(cls)
    with pytest.raises(ValueError, match="makes its own labels"):
        preprocessor(example_texts(cls, 2), np.zeros(2))
