"""The named MobileBERT preset: google/mobilebert-uncased's metadata
(source, licence, heads, the vocabulary that comes with the weights), its
config as the hub's config.json maps through the converter (what a
download is checked against before a weight is read), and its parameter
count as transformers' MobileBertModel has it."""

import kzoo
from helpers import check_preset
from kzoo.convert import converter_for_model_type

NAME = "mobilebert_en_uncased"
# google/mobilebert-uncased's config.json (the fields that set the
# architecture), as the hub holds it.
HUB_CONFIG = dict(
    model_type="mobilebert", architectures=["MobileBertForPreTraining"],
    attention_probs_dropout_prob=0.1, classifier_activation=False,
    embedding_size=128, hidden_act="relu", hidden_dropout_prob=0.0,
    hidden_size=512, initializer_range=0.02, intermediate_size=512,
    intra_bottleneck_size=128, key_query_shared_bottleneck=True,
    layer_norm_eps=1e-12, max_position_embeddings=512,
    normalization_type="no_norm", num_attention_heads=4,
    num_feedforward_networks=4, num_hidden_layers=24, pad_token_id=0,
    trigram_input=True, true_hidden_size=128, type_vocab_size=2,
    use_bottleneck=True, use_bottleneck_attention=False, vocab_size=30522)


def mobilebert_model_params(v, e, h, b, i, ffns, layers, positions, types):
    """transformers' MobileBertModel without a pooler dense, module by
    module (NoNorm: a weight and a bias per feature)."""
    embeddings = (v * e + (3 * e * h + h) + positions * h + types * h
                  + 2 * h)
    bottlenecks = 2 * (h * b + b + 2 * b)        # input, attention
    attention = 2 * (b * b + b) + (h * b + b) + (b * b + b) + 2 * b
    feed_forward = ffns * ((b * i + i) + (i * b + b) + 2 * b)
    output_bottleneck = b * h + h + 2 * h
    block = bottlenecks + attention + feed_forward + output_bottleneck
    return embeddings + layers * block


def test_metadata_names_source_licence_heads_and_remote_vocabulary():
    preset = check_preset(NAME, kzoo.MobileBertBackbone, build=False)
    metadata = preset.metadata
    assert metadata["source"]["huggingface"] == "google/mobilebert-uncased"
    assert metadata["license"] == "Apache-2.0"
    assert metadata["heads"] == ["mlm_head"]
    assert metadata["tokenizer"]["vocab.txt"]["remote"] is True
    assert not preset.has("vocab.txt")
    assert kzoo.presets.resolve("mobilebert").name == NAME
    assert metadata["params"] == mobilebert_model_params(
        30522, 128, 512, 128, 512, 4, 24, 512, 2) == 24_581_888


def test_hub_config_maps_to_the_preset_config():
    converter = converter_for_model_type("mobilebert")
    kwargs = converter.backbone_kwargs(HUB_CONFIG)
    expected = dict(kzoo.presets.resolve(NAME).json("config.json")["config"])
    for key in ("name", "trainable", "dtype"):
        expected.pop(key)
    assert {key: kwargs.get(key) for key in expected} == expected
    assert converter.architectures["MobileBertForPreTraining"] == \
        "MobileBertMaskedLM"
