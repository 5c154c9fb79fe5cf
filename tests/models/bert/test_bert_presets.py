"""The named BERT presets: registered, aliased, complete, consistent."""

import pytest

import kzoo
from helpers import check_preset

BERT_PRESETS = {
    "bert_tiny_en_uncased": "bert_tiny",
    "bert_small_en_uncased": "bert_small",
    "bert_base_en_uncased": "bert_base",
    "bert_large_en_uncased": "bert_large",
}


def test_list_has_the_bert_presets_with_aliases():
    rows = {row["name"]: row for row in kzoo.presets.list()}
    for name, alias in BERT_PRESETS.items():
        assert name in rows, name
        assert alias in rows[name]["aliases"]
        assert rows[name]["family"] == "bert"
        assert rows[name]["description"]
        assert rows[name]["params"] > 1_000_000
    only_bert = kzoo.presets.list(family="bert")
    assert {row["name"] for row in only_bert} >= set(BERT_PRESETS)
    assert all(row["family"] == "bert" for row in only_bert)


@pytest.mark.parametrize("name", sorted(BERT_PRESETS))
def test_alias_resolves(name):
    assert kzoo.presets.resolve(BERT_PRESETS[name]).name == name
    assert kzoo.presets.resolve(name).name == name


@pytest.mark.parametrize("name", ["bert_tiny_en_uncased",
                                  "bert_small_en_uncased"])
def test_small_presets(name):
    check_preset(name, kzoo.BertBackbone, kzoo.BertTokenizer)


@pytest.mark.large
@pytest.mark.parametrize("name", ["bert_base_en_uncased",
                                  "bert_large_en_uncased"])
def test_large_presets(name):
    check_preset(name, kzoo.BertBackbone, kzoo.BertTokenizer)


@pytest.mark.parametrize("name", ["bert_base_en_uncased",
                                  "bert_large_en_uncased"])
def test_large_presets_without_building(name):
    # Files and metadata only; building 110M/335M parameters is `large`.
    check_preset(name, kzoo.BertBackbone, kzoo.BertTokenizer, build=False)


def test_preset_shapes_are_the_published_ones():
    shapes = {name: kzoo.presets.resolve(name).json("config.json")["config"]
              for name in BERT_PRESETS}
    def shape(c):
        return (c["num_layers"], c["num_heads"], c["hidden_dim"],
                c["intermediate_dim"], c["vocabulary_size"],
                c["max_sequence_length"])
    assert shape(shapes["bert_tiny_en_uncased"]) == (2, 2, 128, 512, 30522, 512)
    assert shape(shapes["bert_small_en_uncased"]) == (4, 8, 512, 2048, 30522, 512)
    assert shape(shapes["bert_base_en_uncased"]) == (12, 12, 768, 3072, 30522, 512)
    assert shape(shapes["bert_large_en_uncased"]) == (24, 16, 1024, 4096, 30522, 512)


@pytest.mark.once
def test_named_presets_follow_their_metadata_files(monkeypatch, tmp_path):
    """The table of named presets is read once and again whenever a
    metadata.json appears or changes (names and aliases resolve at once)."""
    import json
    import os
    monkeypatch.setattr(kzoo.presets, "builtin_presets_dir", lambda: tmp_path)

    def write(name, aliases):
        (tmp_path / name).mkdir(exist_ok=True)
        path = tmp_path / name / "metadata.json"
        path.write_text(json.dumps({"family": "bert", "aliases": aliases}))
        os.utime(path, ns=(0, path.stat().st_mtime_ns + 10 ** 9))

    write("first_preset", ["first"])
    assert kzoo.presets.resolve("first").name == "first_preset"
    write("second_preset", [])
    assert kzoo.presets.resolve("second_preset").name == "second_preset"
    write("first_preset", ["renamed"])
    assert kzoo.presets.resolve("renamed").name == "first_preset"
    with pytest.raises(kzoo.presets.PresetError, match="Unknown preset"):
        kzoo.presets.resolve("first")
    rows = kzoo.presets.list()
    rows[0]["aliases"].append("changed by the caller")
    assert "changed by the caller" not in kzoo.presets.list()[0]["aliases"]
