"""The `rembert_multi` preset (google/rembert): its metadata (source,
licence, no trained heads and why, the remote SentencePiece model), the
hub's config.json mapping through the converter to exactly the preset's
config (what a download must match before a weight is read), and the
parameter count the preset states."""

import kzoo
from kzoo.convert import converter_for_model_type

from script_loading import load_script

# google/rembert's config.json: the fields that set the architecture
# (transformers' RemBertConfig defaults are these values).
HUB_CONFIG = dict(
    model_type="rembert", architectures=["RemBertForMaskedLM"],
    vocab_size=250300, hidden_size=1152, num_hidden_layers=32,
    num_attention_heads=18, input_embedding_size=256,
    output_embedding_size=1664, intermediate_size=4608, hidden_act="gelu",
    hidden_dropout_prob=0, attention_probs_dropout_prob=0,
    max_position_embeddings=512, type_vocab_size=2, initializer_range=0.02,
    layer_norm_eps=1e-12, pad_token_id=0, bos_token_id=312,
    eos_token_id=313, tie_word_embeddings=False)


def preset_config(name):
    config = dict(kzoo.presets.resolve(name).json("config.json")["config"])
    for key in ("name", "trainable", "dtype"):
        config.pop(key)
    return config


def test_metadata_names_source_licence_and_no_trained_head():
    preset = kzoo.presets.resolve("rembert")
    assert preset.name == "rembert_multi"
    metadata = preset.metadata
    assert metadata["family"] == "rembert"
    assert metadata["source"]["huggingface"] == "google/rembert"
    assert metadata["source"]["url"] == "https://huggingface.co/google/rembert"
    assert metadata["license"] == "Apache-2.0"
    # The output embedding was dropped after pretraining: no head, and
    # the download converts the encoder alone.
    assert metadata["heads"] == []
    assert "discarded" in metadata["heads_note"]
    assert metadata["tokenizer"]["sentencepiece.model"]["remote"] is True
    assert not preset.has("sentencepiece.model")


def test_hub_config_maps_to_the_preset_config():
    converter = converter_for_model_type("rembert")
    kwargs = converter.backbone_kwargs(HUB_CONFIG)
    expected = preset_config("rembert_multi")
    assert {key: kwargs.get(key) for key in expected} == expected
    # A config that leaves the RemBERT fields out reads transformers'
    # defaults, which are google/rembert's.
    bare = {"model_type": "rembert"}
    assert {key: converter.backbone_kwargs(bare).get(key)
            for key in expected} == expected


def test_the_stated_parameter_count_is_the_backbones():
    table = load_script("scripts/preset_table.py")
    small = dict(vocabulary_size=57, num_layers=2, num_heads=2, hidden_dim=12,
                 intermediate_dim=20, input_embedding_dim=6,
                 output_embedding_dim=9, max_sequence_length=16,
                 num_segments=3)
    built = kzoo.RemBertBackbone(**small).count_params()
    assert table.rembert_params(small) == built
    config = preset_config("rembert_multi")
    assert kzoo.presets.resolve("rembert").metadata["params"] == \
        table.rembert_params(config) == 575_920_384
