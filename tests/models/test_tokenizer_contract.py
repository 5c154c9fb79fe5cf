"""Every registered tokenizer: bad text, bad ids and missing or corrupt
asset files each give one clear error naming the argument and the value;
eager outputs are Python lists (ragged ids), backend tensors (one text's
ids) and Python strings, as keras-hub's."""

import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf

from kzoo.core.tokenizer import TokenizerAssetError
from text_testing import (TEXTS, is_backend_tensor, make_tokenizer,
                          registered_tokenizers)

TOKENIZERS = registered_tokenizers()


@pytest.fixture(scope="module")
def built():
    cache = {}

    def get(tokenizer_cls):
        if tokenizer_cls not in cache:
            cache[tokenizer_cls] = make_tokenizer(tokenizer_cls)
        return cache[tokenizer_cls]
    return get


@pytest.mark.parametrize("tokenizer_cls", TOKENIZERS)
def test_eager_output_types(tokenizer_cls, built):
    tokenizer = built(tokenizer_cls)
    batch = tokenizer(TEXTS)
    assert isinstance(batch, list) and len(batch) == len(TEXTS)
    assert all(isinstance(i, int) for row in batch for i in row)
    one = tokenizer(TEXTS[1])
    assert is_backend_tensor(one) and len(one.shape) == 1
    assert keras.ops.convert_to_numpy(one).tolist() == batch[1]
    assert tokenizer.detokenize(batch[1]) == tokenizer.detokenize(
        [batch[1]])[0]
    assert isinstance(tokenizer.detokenize(batch), list)
    # A backend tensor of ids detokenizes too.
    assert tokenizer.detokenize(one) == tokenizer.detokenize(batch[1])


# Inside tf.data a tokenizer is TensorFlow whatever the Keras backend: one
# pass checks it (the first use inside a trace, where a tokenizer sets
# itself up, runs on every backend in test_preprocessor_contract.py).
@pytest.mark.once
@pytest.mark.parametrize("tokenizer_cls", TOKENIZERS)
def test_tf_data_gives_tf_values(tokenizer_cls, built):
    tokenizer = built(tokenizer_cls)
    dataset = tf.data.Dataset.from_tensor_slices(TEXTS).batch(3)
    ids = next(iter(dataset.map(tokenizer)))
    assert isinstance(ids, tf.RaggedTensor)
    assert ids.to_list() == tokenizer(TEXTS)


@pytest.mark.parametrize("tokenizer_cls", TOKENIZERS)
@pytest.mark.parametrize("bad, message", [
    ([], "is an empty batch"),
    (None, "is None"),
    (5, r"got 5 \(int\)"),
    ([b"ok", 5], r"holds 5 \(int\)"),
    (np.array([[1, 2]]), "not token ids"),
])
def test_bad_text(tokenizer_cls, bad, message, built):
    with pytest.raises(ValueError, match=message) as error:
        built(tokenizer_cls)(bad)
    assert tokenizer_cls.__name__ in str(error.value)


@pytest.mark.parametrize("tokenizer_cls", TOKENIZERS)
def test_text_that_is_not_unicode(tokenizer_cls, built):
    with pytest.raises(ValueError, match="not valid Unicode.*surrogate"):
        built(tokenizer_cls)(["a lone surrogate \ud800"])


@pytest.mark.parametrize("tokenizer_cls", TOKENIZERS)
def test_ids_outside_the_vocabulary(tokenizer_cls, built):
    tokenizer = built(tokenizer_cls)
    size = tokenizer.vocabulary_size
    for bad in (size, -1):
        with pytest.raises(ValueError, match=(
                f"token id {bad} is outside the vocabulary "
                rf"\[0, {size - 1}\]")):
            tokenizer.detokenize([[1, bad]])


def _copy_assets(tokenizer, folder):
    folder.mkdir()
    tokenizer.save_assets(folder)
    return {argument: folder / filename
            for argument, filename in tokenizer.asset_files.items()}


@pytest.mark.parametrize("tokenizer_cls", TOKENIZERS)
def test_missing_asset_file(tokenizer_cls, built, tmp_path):
    paths = _copy_assets(built(tokenizer_cls), tmp_path / "assets")
    for argument, path in paths.items():
        given = {**paths, argument: tmp_path / "nowhere" / path.name}
        with pytest.raises(TokenizerAssetError, match=(
                f"{argument}='.*nowhere.*' does not exist.*from_preset")):
            tokenizer_cls(**given)
        if len(paths) > 1:  # only some of the files
            with pytest.raises(TokenizerAssetError, match="together"):
                tokenizer_cls(**{argument: path})


@pytest.mark.parametrize("tokenizer_cls", TOKENIZERS)
@pytest.mark.parametrize("corruption", ["binary", "empty"])
def test_corrupt_asset_file(tokenizer_cls, corruption, built, tmp_path):
    tokenizer = built(tokenizer_cls)
    good = _copy_assets(tokenizer, tmp_path / "good")
    for argument, path in good.items():
        folder = tmp_path / f"{corruption}_{argument}"
        shutil.copytree(tmp_path / "good", folder)
        bad = folder / path.name
        bad.write_bytes({"binary": b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x01",
                         "empty": b""}[corruption])
        with pytest.raises(TokenizerAssetError) as error:
            tokenizer_cls(**{a: folder / p.name for a, p in good.items()})
        message = str(error.value)
        assert str(bad) in message, message
        assert tokenizer_cls.__name__ in message or "Vocabulary" in message


@pytest.mark.parametrize("tokenizer_cls", TOKENIZERS)
def test_asset_path_of_the_wrong_type(tokenizer_cls):
    argument = next(iter(tokenizer_cls.asset_files))
    others = {a: "x" for a in tokenizer_cls.asset_files if a != argument}
    with pytest.raises(TokenizerAssetError, match=(
            f"`{argument}` must be the path of a .*got 3 \\(int\\)")):
        tokenizer_cls(**{argument: 3, **others})


@pytest.mark.parametrize("tokenizer_cls", TOKENIZERS)
def test_used_before_its_files_arrive(tokenizer_cls):
    tokenizer = tokenizer_cls()
    for use in (lambda: tokenizer(["text"]), lambda: tokenizer.vocabulary_size):
        with pytest.raises(TokenizerAssetError, match=(
                f"{tokenizer_cls.__name__} has no .* yet.*from_preset.*"
                "load_model")):
            use()


@pytest.mark.parametrize("tokenizer_cls", TOKENIZERS)
def test_truncated_file_in_a_preset(tokenizer_cls, tmp_path):
    """A truncated vocabulary can still parse; a named preset records each
    file's sha256, so loading it refuses the damaged copy."""
    from kzoo import presets
    from text_testing import preset_for_tokenizer
    source = presets.resolve(preset_for_tokenizer(tokenizer_cls))
    assert source.metadata.get("tokenizer"), "the preset records no sha256"
    for filename in tokenizer_cls.asset_files.values():
        folder = tmp_path / filename
        shutil.copytree(source.path, folder)
        data = (folder / filename).read_bytes()
        (folder / filename).write_bytes(data[:len(data) * 3 // 4])
        with pytest.raises(TokenizerAssetError, match=(
                f"{folder / filename} is not the {filename} that preset .* "
                "records.*corrupt or truncated")):
            tokenizer_cls.from_preset(folder)
