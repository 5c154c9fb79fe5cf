"""kzoo vs Hugging Face `transformers` ALBERT on the same random
checkpoints (odd shapes, two groups of two shared blocks, embeddings
narrower than hidden, odd head counts, non-default epsilon): every output
within 1e-5 on the backend KERAS_BACKEND names; kzoo -> HF gives back the
original tensors bit for bit and transformers loads the export with the
same outputs; the exported tokenizer is the same tokenizer to
transformers."""

import pytest

import kzoo
from kzoo.convert import export_hf
from parity_harness import (assert_round_trip_keeps_weights,
                            assert_tokenizes_as_transformers, check_conversion,
                            save_checkpoints)
from albert_testing import ALBERT_PRESET, CONFIGS, HARD_TEXTS

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
KZOO_CLASS = {"AlbertModel": "AlbertBackbone",
              "AlbertForMaskedLM": "AlbertMaskedLM",
              "AlbertForPreTraining": "AlbertPretrainer",
              "AlbertForSequenceClassification": "AlbertTextClassifier"}
CASES = [(arch, config) for config in CONFIGS for arch in KZOO_CLASS]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    return save_checkpoints(tmp_path_factory.mktemp("hf_albert"), CASES,
                            CONFIGS)


@pytest.mark.parametrize("arch,config", CASES)
def test_parity_and_round_trip(checkpoints, arch, config, tmp_path):
    model, hf_config, out, exported = check_conversion(
        checkpoints[arch, config], KZOO_CLASS[arch], tmp_path,
        tied={"predictions.decoder.weight", "predictions.decoder.bias"})
    assert_round_trip_keeps_weights(type(model), out, exported,
                                    tmp_path / "again")

    backbone = getattr(model, "backbone", model)
    assert (backbone.embedding_dim, backbone.num_groups,
            backbone.num_inner_repetitions) == (
        hf_config.embedding_size, hf_config.num_hidden_groups,
        hf_config.inner_group_num)
    assert backbone.layer_norm_epsilon == hf_config.layer_norm_eps
    assert backbone.activation == hf_config.hidden_act
    if arch in ("AlbertForSequenceClassification", "AlbertForPreTraining"):
        assert model.dropout == hf_config.classifier_dropout_prob


def test_shared_blocks_are_one_set_of_variables(checkpoints):
    _, folder, _, _ = checkpoints["AlbertModel", "groups"]
    backbone = kzoo.AlbertBackbone.from_preset(str(folder))
    # 2 groups x 2 distinct blocks, whatever the 5 layers: 4 blocks' worth
    # of variables, each stored once.
    blocks = [layer for layer in backbone.layers
              if layer.name.startswith("transformer_layer_")]
    assert len(blocks) == 4
    paths = [w.path for w in backbone.weights]
    assert len(paths) == len(set(paths))
    assert sum(w.path.startswith("transformer_layer_")
               for w in backbone.weights) == 4 * 16
    hf = transformers.AlbertModel.from_pretrained(folder)
    assert backbone.count_params() == sum(
        p.numel() for p in hf.parameters())


def test_exported_tokenizer_is_the_same_tokenizer(tmp_path):
    """A classifier with the stand-in tokenizer: transformers'
    AutoTokenizer reads the export and tokenizes and packs as kzoo
    does."""
    preprocessor = kzoo.AlbertPreprocessor.from_preset(ALBERT_PRESET,
                                                       sequence_length=24)
    task = kzoo.AlbertTextClassifier(
        kzoo.AlbertBackbone(vocabulary_size=1002, num_layers=1,
                            num_heads=2, hidden_dim=8, intermediate_dim=16,
                            embedding_dim=4, max_sequence_length=24),
        num_classes=2, preprocessor=preprocessor)
    out = export_hf(task, tmp_path / "exported", verbose=False)
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    assert_tokenizes_as_transformers(preprocessor, hf_tokenizer, HARD_TEXTS)
