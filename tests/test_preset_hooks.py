"""The hooks of kzoo.presets that other code registers: a reference
resolver is asked about a reference that names no preset (not only
hf:// and Hugging Face folders), after the named presets."""

import pytest

from kzoo import presets


@pytest.mark.once
def test_a_resolver_is_asked_about_an_unknown_reference(monkeypatch,
                                                        tmp_path):
    monkeypatch.setattr(presets, "_REFERENCE_RESOLVERS",
                        dict(presets._REFERENCE_RESOLVERS))
    asked = []

    @presets.register_reference_resolver
    def shelf(text):
        asked.append(text)
        if text.startswith("shelf:"):
            return presets.Preset(tmp_path / text[6:])
        return None

    preset = presets.resolve("shelf:tiny")
    assert preset.path == tmp_path / "tiny"
    # A named preset is never shadowed; an unknown name still fails.
    assert presets.resolve("bert_tiny_en_uncased").name == \
        "bert_tiny_en_uncased"
    assert "bert_tiny_en_uncased" not in asked
    with pytest.raises(presets.PresetError, match="Unknown preset"):
        presets.resolve("bert_bsae")
    assert "bert_bsae" in asked
