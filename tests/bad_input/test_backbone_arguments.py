"""Backbone constructor arguments and preset configs: every registered
backbone, every argument its spec declares, every value the spec refuses.

The cases come from the classes themselves (`argument_spec`,
`argument_rules`, `kzoo.core.arguments`), so a new family is covered as
soon as it is registered and declares its spec."""

import inspect
import json
import re
import shutil

import pytest

from kzoo import presets
from kzoo.core.arguments import ArgumentError
from kzoo.core.backbone import Backbone
from kzoo.presets import PresetError
from text_testing import TINY, preset_for, registered

BACKBONES = registered(Backbone)
# Constructor parameters that are Keras' own, not the family's.
NOT_DECLARED = ("self", "dtype", "kwargs")


def tiny_config(backbone_cls):
    """A valid, tiny config of `backbone_cls`, from its smallest preset."""
    config = presets.resolve(preset_for(backbone_cls)).json(
        "config.json")["config"]
    config = {k: v for k, v in config.items()
              if k not in ("name", "trainable", "dtype")}
    return {**config, **{k: v for k, v in TINY.items() if k in config}}


def declared(backbone_cls):
    parameters = inspect.signature(backbone_cls.__init__).parameters
    return {name: constraint for name, constraint in
            backbone_cls.argument_spec.items() if name in parameters}


def spec_cases():
    cases = []
    for cls in BACKBONES:
        for name, constraint in declared(cls).items():
            for bad in constraint.bad_examples:
                cases.append(pytest.param(
                    cls, name, bad, id=f"{cls.__name__}-{name}={bad!r}"))
    return cases


@pytest.mark.parametrize("backbone_cls", BACKBONES,
                         ids=lambda c: c.__name__)
def test_every_argument_is_declared(backbone_cls):
    """A family declares what each of its arguments must be, so none goes
    unchecked."""
    parameters = inspect.signature(backbone_cls.__init__).parameters
    undeclared = [name for name in parameters if name not in NOT_DECLARED
                  and name not in backbone_cls.argument_spec]
    assert not undeclared, (
        f"{backbone_cls.__name__}: declare {undeclared} in argument_spec "
        "(kzoo.core.arguments)")


@pytest.mark.parametrize("backbone_cls,argument,bad", spec_cases())
def test_bad_argument_value(backbone_cls, argument, bad):
    config = {**tiny_config(backbone_cls), argument: bad}
    with pytest.raises(ArgumentError) as error:
        backbone_cls(**config)
    message = str(error.value)
    assert message.startswith(f"{backbone_cls.__name__}: ")
    assert f"{argument} must be" in message
    assert repr(bad)[:20] in message


@pytest.mark.parametrize("backbone_cls", BACKBONES,
                         ids=lambda c: c.__name__)
def test_rules_across_arguments(backbone_cls):
    config = tiny_config(backbone_cls)
    for rule in backbone_cls.argument_rules:
        bad = {**config, **rule.bad_example(config)}
        with pytest.raises(ArgumentError, match="must be divisible by"):
            backbone_cls(**bad)


@pytest.mark.parametrize("backbone_cls", BACKBONES,
                         ids=lambda c: c.__name__)
def test_unknown_argument_suggests_the_right_one(backbone_cls):
    config = tiny_config(backbone_cls)
    right = "hidden_dim" if "hidden_dim" in config else \
        required_arguments(backbone_cls)[0]
    wrong = right[:2] + right[3:]  # "hiden_dim"
    config[wrong] = config.pop(right)
    with pytest.raises(ArgumentError,
                       match=f"unknown argument '{wrong}'.*Did you mean "
                             f"'{right}'"):
        backbone_cls(**config)


@pytest.mark.parametrize("backbone_cls", BACKBONES,
                         ids=lambda c: c.__name__)
def test_missing_argument(backbone_cls):
    config = tiny_config(backbone_cls)
    first = required_arguments(backbone_cls)[0]  # vocabulary_size, mostly
    del config[first]
    with pytest.raises(ArgumentError, match="missing a required argument: "
                                            f"'{first}'"):
        backbone_cls(**config)


def required_arguments(backbone_cls):
    """The constructor arguments without a default, in order."""
    parameters = inspect.signature(backbone_cls).parameters.values()
    return [p.name for p in parameters if p.default is p.empty
            and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


# ----------------------------------------------------------------------
# The same values in a preset's config.json: the error names the file
# ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def saved_presets(tmp_path_factory):
    """One tiny saved preset per registered backbone (no weights needed:
    config errors come before any weights are looked for)."""
    folders = {}
    for cls in BACKBONES:
        folder = tmp_path_factory.mktemp(cls.__name__)
        (folder / "config.json").write_text(json.dumps(
            {"class_name": cls.__name__, "config": tiny_config(cls)}))
        (folder / "metadata.json").write_text(json.dumps(
            {"name": f"tiny_{cls.__name__}"}))
        folders[cls] = folder
    return folders


def with_config(folder, tmp_path, **changes):
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    entry = json.loads((copy / "config.json").read_text())
    entry["config"].update(changes)
    (copy / "config.json").write_text(json.dumps(entry))
    return copy


def config_cases():
    return [pytest.param(cls, name, constraint.bad_examples[0],
                         id=f"{cls.__name__}-{name}")
            for cls in BACKBONES for name, constraint in declared(cls).items()]


@pytest.mark.parametrize("backbone_cls,argument,bad", config_cases())
def test_bad_value_in_config_json(backbone_cls, argument, bad,
                                  saved_presets, tmp_path):
    folder = with_config(saved_presets[backbone_cls], tmp_path,
                         **{argument: bad})
    with pytest.raises(ArgumentError) as error:
        backbone_cls.from_preset(folder)  # weights would be looked for last
    message = str(error.value)
    assert f"{argument} must be" in message
    assert str(folder / "config.json") in message
    assert f"from_preset(..., {argument}=...)" in message


def test_negative_num_layers_in_config_json(saved_presets, tmp_path):
    """The case that once built an empty backbone."""
    cls = BACKBONES[0]
    folder = with_config(saved_presets[cls], tmp_path, num_layers=-2)
    with pytest.raises(ArgumentError, match=re.escape(
            f"{cls.__name__}: num_layers must be a positive integer; got -2 "
            f"(int) (from config.json of preset 'tiny_{cls.__name__}'")):
        cls.from_preset(folder, load_weights=False)
    # Overridden by the caller, the bad value in the file does no harm.
    backbone = cls.from_preset(folder, load_weights=False, num_layers=1)
    assert backbone.num_layers == 1


def test_typo_in_config_json(saved_presets, tmp_path):
    cls = BACKBONES[0]
    folder = with_config(saved_presets[cls], tmp_path, num_layer=2)
    with pytest.raises(ArgumentError, match=r"unknown argument 'num_layer'.*"
                       r"Did you mean 'num_layers'"):
        cls.from_preset(folder, load_weights=False)


def test_bad_override_in_from_preset():
    cls = BACKBONES[0]
    with pytest.raises(ArgumentError, match="dropout must be a fraction"):
        cls.from_preset(preset_for(cls), load_weights=False, dropout=1.5)


@pytest.mark.parametrize("content,phrase", [
    ("{bad", r"is not valid JSON \(Expecting property name"),
    ("", "is empty"),
    ("[1, 2]", "holds a JSON list, not an object"),
    ('{"config": {}}', 'lacks a "class_name"'),
], ids=["corrupt", "empty", "a_list", "no_class_name"])
def test_damaged_config_json(content, phrase, saved_presets, tmp_path):
    cls = BACKBONES[0]
    folder = tmp_path / "damaged"
    shutil.copytree(saved_presets[cls], folder)
    (folder / "config.json").write_text(content)
    with pytest.raises(PresetError) as error:
        cls.from_preset(folder, load_weights=False)
    message = str(error.value)
    assert re.search(phrase, message), message
    assert str(folder / "config.json") in message
    assert "save the preset again" in message


def test_damaged_metadata_json(saved_presets, tmp_path):
    folder = tmp_path / "damaged"
    shutil.copytree(saved_presets[BACKBONES[0]], folder)
    (folder / "metadata.json").write_bytes(b"\xff\xfe garbage")
    with pytest.raises(PresetError, match=r"metadata.json is not a JSON "
                                          r"file: it is not UTF-8"):
        presets.resolve(folder)
