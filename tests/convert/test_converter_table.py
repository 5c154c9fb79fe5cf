"""Converters are found through the explicit model_type table: every entry
names a converter that reads that model_type, every converter's
model_types are in the table, and a model_type outside it (even one that
names a kzoo.convert module) is refused without importing anything."""

import sys

import pytest

from kzoo.convert import ConversionError
from kzoo.convert.base import (
    FAMILY_MODULES, MODEL_TYPE_MODULES, converter_for_model_type,
    known_model_types)

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once


@pytest.mark.parametrize("model_type", sorted(MODEL_TYPE_MODULES))
def test_every_table_entry_has_its_converter(model_type):
    converter = converter_for_model_type(model_type)
    assert model_type in converter.model_types
    assert FAMILY_MODULES[converter.family] == \
        MODEL_TYPE_MODULES[model_type]
    assert set(converter.model_types) <= set(known_model_types())


@pytest.mark.once
def test_a_family_registered_outside_the_table_exports():
    """A family developed outside kzoo (guides/adding_a_family.py) registers
    its converter with `register_converter`; export (by the backbone's
    family) finds it without an entry in FAMILY_MODULES."""
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


@pytest.mark.parametrize("model_type", ["api", "hub", "../x", "not_a_family", 3,
                                        None])
def test_other_model_types_are_refused(model_type):
    before = set(sys.modules)
    with pytest.raises(ConversionError, match="Unknown model_type"):
        converter_for_model_type(model_type)
    assert not {m for m in set(sys.modules) - before
                if m.startswith("kzoo.")}


def test_a_registered_converter_is_found_by_its_model_type(monkeypatch):
    # register_converter is public: a user's converter for a model_type
    # outside the table is found (it was imported by the user's code).
    from kzoo.convert import base, register_converter
    from kzoo.convert.bert import BertConverter
    monkeypatch.setattr(base, "_CONVERTERS", dict(base._CONVERTERS))

    @register_converter
    class RenamedBertConverter(BertConverter):
        model_types = ("renamed-bert",)
        family = None

    assert isinstance(converter_for_model_type("renamed-bert"),
                      RenamedBertConverter)
    with pytest.raises(ConversionError, match="Unknown model_type"):
        converter_for_model_type("renamed-bert-2")
