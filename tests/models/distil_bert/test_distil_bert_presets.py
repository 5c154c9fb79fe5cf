"""The named DistilBERT presets: registered, aliased, the released configs
and Hugging Face's parameter counts, the uncased vocabulary shared with
bert_base_en_uncased, the multilingual one declared remote."""

import pytest

import kzoo
from helpers import check_preset
from kzoo.core.tokenizer import TokenizerAssetError
from test_distil_bert_backbone import hf_parameter_count

DISTIL_BERT_PRESETS = {
    "distil_bert_base_en_uncased": ("distil_bert_base", 30522, True),
    "distil_bert_base_multi": ("distil_bert_multi", 119547, False),
}


def test_list_has_the_presets_with_hugging_face_counts():
    rows = {row["name"]: row
            for row in kzoo.presets.list(family="distil_bert")}
    assert set(rows) == set(DISTIL_BERT_PRESETS)
    for name, (alias, vocabulary, _) in DISTIL_BERT_PRESETS.items():
        assert alias in rows[name]["aliases"]
        assert kzoo.presets.resolve(alias).name == name
        assert rows[name]["params"] == hf_parameter_count(
            vocabulary, 768, 3072, 512, 6)
    # Hugging Face's published counts of the two models.
    assert rows["distil_bert_base_en_uncased"]["params"] == 66_362_880
    assert rows["distil_bert_base_multi"]["params"] == 134_734_080


@pytest.mark.parametrize("name", sorted(DISTIL_BERT_PRESETS))
def test_released_configs(name):
    preset = check_preset(name, kzoo.DistilBertBackbone, build=False)
    c = preset.json("config.json")["config"]
    assert (c["num_layers"], c["num_heads"], c["hidden_dim"],
            c["intermediate_dim"], c["max_sequence_length"],
            c["vocabulary_size"], c["layer_norm_epsilon"], c["activation"],
            c["sinusoidal_position_embeddings"]) == (
        6, 12, 768, 3072, 512, DISTIL_BERT_PRESETS[name][1], 1e-12, "gelu",
        False)
    assert preset.metadata["heads"] == ["mlm_head"]
    lowercase = preset.json("tokenizer.json")["config"]["lowercase"]
    assert lowercase is DISTIL_BERT_PRESETS[name][2]


def test_uncased_shares_bert_base_vocabulary():
    preset = kzoo.presets.resolve("distil_bert_base_en_uncased")
    assert not preset.has("vocab.txt")  # stored once, in bert_base
    assert preset.json("tokenizer.json")["assets_from"] == \
        "bert_base_en_uncased"
    tokenizer = kzoo.DistilBertTokenizer.from_preset("distil_bert_base")
    bert = kzoo.BertTokenizer.from_preset("bert_base_en_uncased")
    assert type(tokenizer) is kzoo.DistilBertTokenizer
    assert tokenizer.vocabulary_size == 30522 and tokenizer.lowercase
    assert tokenizer.asset_paths["vocabulary"] == \
        bert.asset_paths["vocabulary"]


def test_multilingual_vocabulary_is_remote(monkeypatch):
    preset = kzoo.presets.resolve("distil_bert_base_multi")
    assert preset.metadata["tokenizer"]["vocab.txt"]["remote"]
    declared = {f["name"] for f in preset.metadata["source"]["files"]}
    assert {"vocab.txt", "model.safetensors"} <= declared
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    with pytest.raises(TokenizerAssetError, match=(
            r"(?s)preset 'distil_bert_base_multi' does not ship its "
            r"vocab.txt.*distilbert-base-multilingual-cased"
            r".*load_weights=False")):
        kzoo.DistilBertTokenizer.from_preset("distil_bert_multi")


def test_builds_offline_without_weights():
    # The named preset's config, shrunk (building 66M-135M random
    # parameters is `large`, below).
    backbone = kzoo.DistilBertBackbone.from_preset(
        "distil_bert_base_multi", load_weights=False, num_layers=1,
        hidden_dim=16, num_heads=2, intermediate_dim=32)
    assert backbone.vocabulary_size == 119547
    task = kzoo.DistilBertTextClassifier(backbone, num_classes=2)
    assert task.preprocessor is None and task.dropout == 0.2


@pytest.mark.large
@pytest.mark.parametrize("name", sorted(DISTIL_BERT_PRESETS))
def test_large_presets_build(name):
    check_preset(name, kzoo.DistilBertBackbone)
