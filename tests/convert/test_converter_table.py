"""Converters are found through the families' declarations, read from
kzoo.core.families' static list: every declared model_type has its
converter in its family's folder, each model_type belongs to one family,
every family with a converter exports, and a model_type outside the
declarations (even one that names a kzoo module) is refused without
importing anything."""

import importlib
import sys

import pytest

from kzoo.convert import ConversionError
from kzoo.convert.base import (converter_for_model,
                               converter_for_model_type, known_model_types)
from kzoo.core import families
from kzoo.core.registry import get_class

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

HF_FAMILIES = [f for f in families.FAMILIES
               if families.declared(f).model_types]


@pytest.mark.parametrize("model_type", known_model_types())
def test_every_declared_model_type_has_its_converter(model_type):
    converter = converter_for_model_type(model_type)
    family = families.family_of_model_type(model_type)
    assert type(converter).__module__ == f"kzoo.models.{family}.convert"
    assert converter.family == family
    assert converter.model_types == families.declared(family).model_types


def test_each_model_type_belongs_to_one_family():
    declared = [t for f in families.FAMILIES
                for t in families.declared(f).model_types]
    assert len(declared) == len(set(declared)) == len(known_model_types())


@pytest.mark.parametrize("family", HF_FAMILIES)
def test_every_family_with_a_converter_exports(family):
    converter = converter_for_model_type(
        families.declared(family).model_types[0])
    backbone_cls = get_class(converter.backbone_class)
    assert backbone_cls.family == family

    class Backbone:  # what converter_for_model reads of a backbone
        pass
    Backbone.family = family
    assert converter_for_model(Backbone()) is converter


@pytest.mark.parametrize("family", families.original_format_families())
def test_original_formats_are_recognised_and_converted(family, tmp_path):
    module = importlib.import_module(families.converter_module(family))
    assert callable(module.to_preset)
    assert module.is_original_folder(tmp_path) is False  # an empty folder


@pytest.mark.once
def test_a_family_registered_outside_the_table_exports():
    """A family developed outside kzoo (guides/adding_a_family.py) registers
    its converter with `register_converter`; export (by the backbone's
    family) finds it though kzoo.core.families does not list it."""
    from kzoo.convert import base

    @base.register_converter
    class OutsideConverter(base.Converter):
        family = "kzoo_test_outside"

    class Backbone:
        family = "kzoo_test_outside"

    try:
        assert isinstance(base.converter_for_model(Backbone()),
                          OutsideConverter)
    finally:
        base._BY_FAMILY.pop("kzoo_test_outside", None)
    with pytest.raises(ConversionError, match="No Hugging Face exporter"):
        base.converter_for_model(Backbone())


@pytest.mark.parametrize("model_type", ["api", "hub", "../x", "not_a_family",
                                        "convert", "xlm_roberta", 3, None])
def test_other_model_types_are_refused(model_type):
    before = set(sys.modules)
    with pytest.raises(ConversionError, match="Unknown model_type"):
        converter_for_model_type(model_type)
    assert not {m for m in set(sys.modules) - before
                if m.startswith("kzoo.")}


def test_a_registered_converter_is_found_by_its_model_type(monkeypatch):
    # register_converter is public: a user's converter for a model_type
    # no family declares is found (it was imported by the user's code).
    from kzoo.convert import base, register_converter
    from kzoo.models.bert.convert import BertConverter
    monkeypatch.setattr(base, "_CONVERTERS", dict(base._CONVERTERS))

    @register_converter
    class RenamedBertConverter(BertConverter):
        model_types = ("renamed-bert",)
        family = None

    assert isinstance(converter_for_model_type("renamed-bert"),
                      RenamedBertConverter)
    with pytest.raises(ConversionError, match="Unknown model_type"):
        converter_for_model_type("renamed-bert-2")
