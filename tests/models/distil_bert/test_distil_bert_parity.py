"""kzoo vs Hugging Face `transformers` DistilBERT on the same random
checkpoints (odd shapes, head counts and activations, a sinusoidal
position table; padding on the left, the right and none): every output
within 1e-5 on the backend KERAS_BACKEND names; kzoo -> HF gives back the
original tensors bit for bit and transformers loads the export with the
same outputs; the exported tokenizer is the same tokenizer to
transformers. (Hugging Face's DistilBERT fixes LayerNorm epsilon at
1e-12: no other value can be tested, and one is refused on export.)"""

import numpy as np
import pytest

import kzoo
from kzoo.convert import ConversionError, export_hf
from kzoo.layers import sinusoidal_position_table
from parity_harness import (assert_tokenizes_as_transformers, check_conversion,
                            save_checkpoints)
from distil_bert_testing import CONFIGS, HARD_TEXTS, make_tiny_distil_bert

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
KZOO_CLASS = {"DistilBertModel": "DistilBertBackbone",
              "DistilBertForMaskedLM": "DistilBertMaskedLM",
              "DistilBertForSequenceClassification":
                  "DistilBertTextClassifier"}
CASES = [(arch, config) for config in CONFIGS for arch in KZOO_CLASS]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    return save_checkpoints(tmp_path_factory.mktemp("hf_distil_bert"), CASES,
                            CONFIGS)


@pytest.mark.parametrize("arch,config", CASES)
def test_parity_and_round_trip(checkpoints, arch, config, tmp_path):
    model, hf_config, out, exported = check_conversion(
        checkpoints[arch, config], KZOO_CLASS[arch], tmp_path,
        tied={"vocab_projector.weight"})

    backbone = getattr(model, "backbone", model)
    assert backbone.max_sequence_length == hf_config.max_position_embeddings
    assert backbone.activation == hf_config.activation
    assert backbone.sinusoidal_position_embeddings == \
        hf_config.sinusoidal_pos_embds
    assert backbone.get_layer("position_embedding").trainable == \
        (not hf_config.sinusoidal_pos_embds)
    if arch == "DistilBertForSequenceClassification":
        assert model.num_classes == hf_config.num_labels
        assert model.dropout == hf_config.seq_classif_dropout


def test_sinusoidal_table_is_transformers_one():
    config = transformers.DistilBertConfig(**CONFIGS["odd35"])
    torch.manual_seed(0)
    model = transformers.DistilBertModel(config)
    table = model.embeddings.position_embeddings.weight.detach().numpy()
    np.testing.assert_array_equal(sinusoidal_position_table(24, 35), table)
    backbone = make_tiny_distil_bert(sinusoidal_position_embeddings=True)
    layer = backbone.get_layer("position_embedding")
    np.testing.assert_array_equal(
        np.asarray(layer.embeddings.value),
        sinusoidal_position_table(*layer.embeddings.shape))
    assert all(w is not layer.embeddings
               for w in backbone.trainable_weights)


def test_exported_tokenizer_is_the_same_tokenizer(tmp_path):
    """transformers' AutoTokenizer reads the export (a DistilBertTokenizer)
    and tokenizes and packs as kzoo does."""
    preprocessor = kzoo.DistilBertPreprocessor.from_preset(
        "distil_bert_base_en_uncased", sequence_length=24)
    task = kzoo.DistilBertTextClassifier(
        make_tiny_distil_bert(max_sequence_length=24), num_classes=2,
        preprocessor=preprocessor)
    out = export_hf(task, tmp_path / "exported", verbose=False)
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    assert type(hf_tokenizer).__name__.startswith("DistilBertTokenizer")
    assert_tokenizes_as_transformers(preprocessor, hf_tokenizer, HARD_TEXTS)


def test_other_epsilon_is_refused_on_export(tmp_path):
    backbone = make_tiny_distil_bert(layer_norm_epsilon=1e-5)
    with pytest.raises(ConversionError, match="fixes every LayerNorm "
                                              "epsilon at 1e-12"):
        export_hf(backbone, tmp_path / "out", verbose=False)


def test_unknown_activation_is_refused(tmp_path):
    config = transformers.DistilBertConfig(**{**CONFIGS["odd36"],
                                              "activation": "gelu_10"})
    transformers.DistilBertModel(config).save_pretrained(tmp_path / "m")
    with pytest.raises(ConversionError, match="activation='gelu_10'"):
        kzoo.DistilBertBackbone.from_preset(str(tmp_path / "m"))
