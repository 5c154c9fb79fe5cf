"""Keras' own `.keras` format, in safe mode, for every registered task,
backbone, preprocessor and tokenizer: the tokenizer's files travel inside
the archive (configs name no file), and what loads predicts the same.
Presets keep their own format (checked in check_task_preset and here)."""

import json
import shutil
import zipfile

import keras
import numpy as np
import pytest

from helpers import assert_all_close, to_numpy, without_names
from kzoo import presets
from kzoo.core.preprocessor import Preprocessor
from kzoo.core.task import Task
from kzoo.core.tokenizer import TokenizerAssetError
from text_testing import (TEXTS, example_labels, example_texts,
                          make_preprocessor, make_task, make_tokenizer,
                          model_inputs, params, preset_for,
                          registered_backbones, registered_tokenizers,
                          task_backbone_cls, tiny_backbone)

# The Keras format is backend-neutral (weights as arrays): saved and
# loaded in one backend's pass (KZOO_ONCE_BACKEND); tests/models/test_training_cross_backend.py
# loads every task saved there on the two other backends.
pytestmark = pytest.mark.once


def _copied_preset(name, tmp_path):
    """A named preset copied to `tmp_path` (its tokenizer files too), so a
    test can delete it and see that nothing still reads it."""
    preset = presets.resolve(name)
    entry = preset.json("tokenizer.json")
    source = presets.resolve(entry.get("assets_from") or name)
    dest = tmp_path / preset.path.name  # a name, or a stand-in folder
    shutil.copytree(preset.path, dest)
    for filename in source.path.iterdir():
        if not (dest / filename.name).exists():
            shutil.copy(filename, dest / filename.name)
    entry.pop("assets_from", None)
    (dest / "tokenizer.json").write_text(json.dumps(entry))
    return dest


def _archive_config(path):
    with zipfile.ZipFile(path) as archive:
        return archive.read("config.json").decode("utf-8"), \
            archive.namelist()


@pytest.mark.parametrize("task_cls", params(Task))
def test_task_round_trips_through_keras_format(task_cls, tmp_path):
    # Eager calls throughout: the equality is the point here, and tracing
    # predict functions five times per task (once per model object) made
    # this the suite's slowest test; `fit`/`predict` run in the family
    # task tests.
    preset_dir = _copied_preset(preset_for(task_backbone_cls(task_cls)),
                                tmp_path)
    preprocessor = task_cls.preprocessor_for(preset_dir, sequence_length=12)
    preprocessor_cls = type(preprocessor)
    task = make_task(task_cls, preprocessor=preprocessor)
    x = example_texts(preprocessor_cls)
    inputs = model_inputs(preprocessor(x))
    inputs = {k: inputs[k] for k in task.input_names}
    expected = to_numpy(task(inputs))

    path = tmp_path / "task.keras"
    task.save(path)
    config, names = _archive_config(path)
    for argument, asset in preprocessor.tokenizer.asset_paths.items():
        assert str(asset) not in config and str(preset_dir) not in config
        assert any(n.endswith("/" + asset.name) for n in names), names
    # Nothing outside the archive is read back.
    shutil.rmtree(preset_dir)

    loaded = keras.models.load_model(path)  # safe_mode=True, the default
    assert type(loaded) is task_cls
    assert type(loaded.preprocessor) is preprocessor_cls
    assert without_names(loaded.preprocessor.get_config()) == \
        without_names(preprocessor.get_config())
    assert_all_close(loaded(inputs), expected, atol=0.0,
                     what="outputs after save/load_model")
    # The loaded preprocessor reads raw text with the archive's files.
    from_text, fresh = to_numpy(loaded.preprocessor(x)), to_numpy(
        preprocessor(x))
    if preprocessor.draws_per_call:  # random noise: only the structure
        keras.tree.assert_same_structure(from_text, fresh)
    else:
        assert_all_close(from_text, fresh, atol=0.0,
                         what="preprocessed raw text after load_model")
    # Loading kept its own copy of the files (Keras deleted its folder).
    for path in loaded.preprocessor.tokenizer.asset_paths.values():
        assert path.is_file()
        assert presets.cache_dir() / "assets" in path.parents
    # And the loaded task saves again, as a preset too.
    loaded.save(tmp_path / "again.keras")
    loaded.save_to_preset(tmp_path / "again_preset")
    again = task_cls.from_preset(tmp_path / "again_preset")
    assert_all_close(again(inputs), expected, atol=0.0,
                     what="outputs after .keras -> preset")


@pytest.mark.parametrize("backbone_cls", registered_backbones())
def test_backbone_round_trips_through_keras_format(backbone_cls, tmp_path):
    backbone = tiny_backbone(backbone_cls)
    # (2, 5) per input, with the backbone's own fixed trailing sizes
    # (ELMo's 50 characters per token).
    shapes = {t.name: tuple(t.shape[2:]) for t in backbone.inputs}
    inputs = {name: np.ones((2, 5) + shapes[name], "int32")
              for name in backbone.input_names}
    path = tmp_path / "backbone.keras"
    backbone.save(path)
    loaded = keras.models.load_model(path)
    assert type(loaded) is backbone_cls
    assert_all_close(loaded(inputs), backbone(inputs), atol=0.0)


@pytest.mark.parametrize("preprocessor_cls", params(Preprocessor))
def test_preprocessor_deserializes_in_safe_mode(preprocessor_cls, tmp_path):
    """A preprocessor on its own: its config (with its tokenizer's, never a
    file path) rebuilds it; the files arrive afterwards, by load_assets."""
    preprocessor = make_preprocessor(preprocessor_cls)
    x = example_texts(preprocessor_cls)
    config = keras.saving.serialize_keras_object(preprocessor)
    for path in preprocessor.tokenizer.asset_paths.values():
        assert str(path) not in json.dumps(config)
    assets = tmp_path / "assets"
    assets.mkdir()
    preprocessor.tokenizer.save_assets(assets)

    rebuilt = keras.saving.deserialize_keras_object(config, safe_mode=True)
    assert type(rebuilt) is preprocessor_cls
    # Until its files arrive, a clear error (not an AttributeError).
    with pytest.raises(TokenizerAssetError, match="has no .* yet.*"
                       "from_preset"):
        rebuilt(x)
    rebuilt.tokenizer.load_assets(assets)
    shutil.rmtree(assets)
    y = example_labels(preprocessor_cls)
    out, expected = to_numpy(rebuilt(x, y)), to_numpy(preprocessor(x, y))
    keras.tree.assert_same_structure(out, expected)
    if not preprocessor.draws_per_call:
        assert_all_close(out, expected, atol=0.0)


@pytest.mark.parametrize("tokenizer_cls", registered_tokenizers())
def test_tokenizer_config_names_no_file(tokenizer_cls, tmp_path):
    tokenizer = make_tokenizer(tokenizer_cls)
    config = tokenizer.get_config()
    for argument in tokenizer_cls.asset_files:
        assert argument not in config
    # A preset still gets the files beside tokenizer.json, and loads.
    tokenizer.save_to_preset(tmp_path)
    entry = json.loads((tmp_path / "tokenizer.json").read_text())
    assert entry == {"class_name": tokenizer_cls.__name__, "config": config}
    (tmp_path / "metadata.json").write_text('{"name": "saved"}')
    loaded = tokenizer_cls.from_preset(tmp_path)
    for argument, filename in tokenizer_cls.asset_files.items():
        assert loaded.asset_paths[argument] == tmp_path / filename
    assert loaded.tokenize(TEXTS) == tokenizer.tokenize(TEXTS)


@pytest.mark.parametrize("tokenizer_cls", registered_tokenizers())
def test_loaded_copies_are_shared_by_content(tokenizer_cls, tmp_path):
    tokenizer = make_tokenizer(tokenizer_cls)
    for round_ in ("a", "b"):
        folder = tmp_path / round_
        folder.mkdir()
        tokenizer.save_assets(folder)
        rebuilt = tokenizer_cls.from_config(tokenizer.get_config())
        rebuilt.load_assets(folder)
        shutil.rmtree(folder)
        if round_ == "a":
            first = rebuilt.asset_paths
    assert rebuilt.asset_paths == first  # one copy per content
    assert rebuilt.tokenize(TEXTS) == tokenizer.tokenize(TEXTS)


@pytest.mark.parametrize("tokenizer_cls", registered_tokenizers())
def test_archive_without_the_files_is_a_clear_error(tokenizer_cls, tmp_path):
    tokenizer = make_tokenizer(tokenizer_cls)
    rebuilt = tokenizer_cls.from_config(tokenizer.get_config())
    filename = next(iter(tokenizer_cls.asset_files.values()))
    with pytest.raises(TokenizerAssetError, match=(
            f"saved model has no {filename}.*save the model again")):
        rebuilt.load_assets(tmp_path)
