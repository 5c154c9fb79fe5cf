"""The presets the field asks for (issue 49): multilingual BERT, SciBERT,
BioBERT, LEGAL-BERT, AfriBERTa and AfroXLM-R. Each preset's metadata
(source, licence, heads, remote tokenizer files), and its conversion:
the hub repository's config.json (written here as the hub holds it) maps
through the family's converter to exactly the preset's config, which is
the check a download must pass before a weight is read; and a random
`transformers` checkpoint of that config converts to the preset's
architecture with the heads it promises, its hidden states equal to
`transformers`' (the real widths: `large`; the real vocabulary, positions
and token types on a narrow, one-layer body by default)."""

import numpy as np
import pytest

import kzoo
from kzoo.convert import converter_for_model_type, hf_to_preset
from kzoo.core.registry import get_class

import torch
import transformers

# Conversion runs in one backend's pass only (KZOO_ONCE_BACKEND), as the
# other parity tests.
pytestmark = pytest.mark.once

BERT_BASE = dict(
    model_type="bert", hidden_size=768, num_hidden_layers=12,
    num_attention_heads=12, intermediate_size=3072, hidden_act="gelu",
    hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
    max_position_embeddings=512, type_vocab_size=2, initializer_range=0.02,
    layer_norm_eps=1e-12, pad_token_id=0)
XLMR = dict(
    model_type="xlm-roberta", hidden_act="gelu", hidden_dropout_prob=0.1,
    attention_probs_dropout_prob=0.1, max_position_embeddings=514,
    type_vocab_size=1, initializer_range=0.02, layer_norm_eps=1e-5,
    pad_token_id=1, bos_token_id=0, eos_token_id=2)

# The hub repositories' config.json (the fields that set the
# architecture), and the architecture their weights file holds.
HUB = {
    "bert_base_multi": (
        "google-bert/bert-base-multilingual-cased", "BertForPreTraining",
        dict(BERT_BASE, vocab_size=119547)),
    "scibert_base_en_uncased": (
        "allenai/scibert_scivocab_uncased", "BertForPreTraining",
        dict(BERT_BASE, vocab_size=31090)),
    "biobert_base_en_cased": (
        "dmis-lab/biobert-base-cased-v1.2", "BertForMaskedLM",
        dict(BERT_BASE, vocab_size=28996)),
    "legal_bert_base_en_uncased": (
        "nlpaueb/legal-bert-base-uncased", "BertForPreTraining",
        dict(BERT_BASE, vocab_size=30522)),
    "afriberta_base_multi": (
        "castorini/afriberta_base", "XLMRobertaForMaskedLM",
        dict(XLMR, vocab_size=70006, hidden_size=768, num_hidden_layers=8,
             num_attention_heads=6, intermediate_size=3072)),
    "afro_xlm_roberta_base_multi": (
        "Davlan/afro-xlmr-base", "XLMRobertaForMaskedLM",
        dict(XLMR, vocab_size=250002, hidden_size=768, num_hidden_layers=12,
             num_attention_heads=12, intermediate_size=3072)),
}

LICENSES = {
    "bert_base_multi": "Apache-2.0",
    "scibert_base_en_uncased": "Apache-2.0",
    "legal_bert_base_en_uncased": "CC-BY-SA-4.0",
    "afriberta_base_multi": "MIT",
    "afro_xlm_roberta_base_multi": "MIT",
}
# The kzoo heads each architecture's checkpoint brings.
HEADS = {"BertForPreTraining": ["mlm_head", "nsp_head"],
         "BertForMaskedLM": ["mlm_head"],
         "XLMRobertaForMaskedLM": ["mlm_head"]}
TOKENIZER_FILE = {"bert": "vocab.txt",
                  "xlm_roberta": "sentencepiece.bpe.model"}
# Narrow and shallow, with the real vocabulary, positions and token types.
NARROW = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
              intermediate_size=24)


def preset_config(name):
    config = dict(kzoo.presets.resolve(name).json("config.json")["config"])
    for key in ("name", "trainable", "dtype"):
        config.pop(key)
    return config


@pytest.mark.parametrize("name", sorted(HUB))
def test_metadata_names_source_licence_heads_and_remote_tokenizer(name):
    preset = kzoo.presets.resolve(name)
    repo, architecture, _ = HUB[name]
    metadata = preset.metadata
    assert metadata["source"]["huggingface"] == repo
    assert metadata["source"]["url"] == f"https://huggingface.co/{repo}"
    assert metadata["heads"] == HEADS[architecture]
    if name in LICENSES:
        assert metadata["license"] == LICENSES[name]
    else:  # BioBERT's hub repository states no licence: said so
        assert metadata["license"].startswith("unknown")
    # Its own tokenizer file, not shipped: it comes with the weights.
    filename = TOKENIZER_FILE[metadata["family"]]
    assert metadata["tokenizer"][filename]["remote"] is True
    assert not preset.has(filename)
    for alias in metadata["aliases"]:
        assert kzoo.presets.resolve(alias).name == name


@pytest.mark.parametrize("name", sorted(HUB))
def test_hub_config_maps_to_the_preset_config(name):
    # What `from_preset`'s download checks (`expected_config`) before it
    # reads a weight: every field of the preset's config, from the hub's.
    _, _, hub_config = HUB[name]
    converter = converter_for_model_type(hub_config["model_type"])
    kwargs = converter.backbone_kwargs(hub_config)
    expected = preset_config(name)
    assert {key: kwargs.get(key) for key in expected} == expected


def random_checkpoint(name, folder, **overrides):
    """A `transformers` model of the hub's config (with `overrides`), its
    weights random, saved as the hub holds it (no tokenizer)."""
    _, architecture, hub_config = HUB[name]
    family = "Bert" if hub_config["model_type"] == "bert" else "XLMRoberta"
    config = getattr(transformers, f"{family}Config")(
        **{**hub_config, **overrides})
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = getattr(transformers, architecture)(config).eval()
    model.save_pretrained(folder)
    return model


def check_conversion(name, tmp_path, **overrides):
    model = random_checkpoint(name, tmp_path / "hub", **overrides)
    # As the download converts it: the pretraining task, the config
    # checked against the preset's (widths put back where narrowed).
    expected = preset_config(name)
    if overrides:
        expected.update(converter_for_model_type(
            model.config.model_type).backbone_kwargs(model.config.to_dict()))
    hf_to_preset(tmp_path / "hub", tmp_path / "kzoo", task="pretraining",
                 verbose=False, expected_config=expected)
    converted = kzoo.presets.resolve(str(tmp_path / "kzoo"))
    assert converted.metadata["heads"] == \
        kzoo.presets.resolve(name).metadata["heads"]

    backbone_cls = get_class(converted.metadata["class_name"])
    backbone = backbone_cls.from_preset(str(tmp_path / "kzoo"))
    rng = np.random.default_rng(0)
    ids = rng.integers(3, model.config.vocab_size, (2, 9)).astype("int32")
    ids[:, -1] = model.config.vocab_size - 1  # the last row of the table
    mask = np.ones_like(ids)
    mask[1, 6:] = 0
    inputs = {"token_ids": ids, "padding_mask": mask}
    if "segment_ids" in backbone.input_names:
        inputs["segment_ids"] = np.ones_like(ids)
    with torch.no_grad():
        base = getattr(model, model.base_model_prefix)
        expected_states = base(
            input_ids=torch.tensor(ids).long(),
            attention_mask=torch.tensor(mask).long(),
            token_type_ids=torch.tensor(
                inputs.get("segment_ids", np.zeros_like(ids))).long(),
        ).last_hidden_state.numpy()
    got = np.asarray(backbone.predict_on_batch(inputs)["sequence_output"])
    real = mask.astype(bool)
    np.testing.assert_allclose(got[real], expected_states[real], atol=1e-4)


@pytest.mark.parametrize("name", sorted(HUB))
def test_a_random_checkpoint_of_the_real_vocabulary_converts(name, tmp_path):
    check_conversion(name, tmp_path, **NARROW)


@pytest.mark.large
@pytest.mark.parametrize("name", sorted(HUB))
def test_a_random_checkpoint_of_the_real_config_converts(name, tmp_path):
    check_conversion(name, tmp_path)
