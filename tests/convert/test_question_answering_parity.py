"""kzoo's QuestionAnswerer vs `transformers`' `*ForQuestionAnswering` on
random odd checkpoints of every encoder family: start and end logits
within 1e-5 on the backend KERAS_BACKEND names; the `qa_outputs` head
converts in (no tensor left unused) and back out bit for bit, and
transformers loads the export with the same logits."""

import pytest

import kzoo
from parity_harness import (assert_close_to_reference, assert_export_reloads,
                            hf_outputs, make_hf_model, random_inputs)

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
# One odd checkpoint per family: head widths 12, 7 and 5, non-default
# epsilons and activations, factorised embeddings where the family has
# them (make_hf_model gives the head its two labels: start and end).
FAMILIES = {
    "Bert": dict(
        vocab_size=99, hidden_size=36, num_hidden_layers=2,
        num_attention_heads=3, intermediate_size=50,
        max_position_embeddings=40, type_vocab_size=3, layer_norm_eps=1e-7,
        hidden_act="gelu_new"),
    "Roberta": dict(
        vocab_size=61, hidden_size=35, num_hidden_layers=2,
        num_attention_heads=5, intermediate_size=9,
        max_position_embeddings=24, type_vocab_size=1, layer_norm_eps=1e-5,
        hidden_act="relu", pad_token_id=3),
    "XLMRoberta": dict(
        vocab_size=83, hidden_size=39, num_hidden_layers=2,
        num_attention_heads=3, intermediate_size=45,
        max_position_embeddings=31, type_vocab_size=1, layer_norm_eps=1e-6,
        hidden_act="gelu_new", pad_token_id=1),
    "DistilBert": dict(
        vocab_size=99, dim=36, n_layers=2, n_heads=3, hidden_dim=50,
        max_position_embeddings=40, activation="gelu_new"),
    "Albert": dict(
        vocab_size=99, embedding_size=10, hidden_size=36,
        num_hidden_layers=3, num_hidden_groups=1, inner_group_num=1,
        num_attention_heads=3, intermediate_size=50,
        max_position_embeddings=40, type_vocab_size=2, layer_norm_eps=1e-7,
        hidden_act="gelu_new"),
    "Electra": dict(
        vocab_size=99, embedding_size=20, hidden_size=36,
        num_hidden_layers=2, num_attention_heads=3, intermediate_size=50,
        max_position_embeddings=40, type_vocab_size=3, layer_norm_eps=1e-7,
        hidden_act="gelu_new"),
    "DebertaV2": dict(
        relative_attention=True, position_biased_input=False,
        type_vocab_size=0, norm_rel_ebd="layer_norm",
        pos_att_type="p2c|c2p", vocab_size=71, hidden_size=35,
        num_hidden_layers=2, num_attention_heads=5, intermediate_size=23,
        max_position_embeddings=64, position_buckets=8,
        max_relative_positions=16, share_att_key=True, layer_norm_eps=1e-6,
        hidden_act="gelu"),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_qa_logits_parity_and_round_trip(family, tmp_path):
    architecture = f"{family}ForQuestionAnswering"
    hf_model = make_hf_model(architecture, FAMILIES[family])
    folder = tmp_path / "hf"
    hf_model.save_pretrained(folder)
    inputs = random_inputs(hf_model.config)
    expected = hf_outputs(hf_model, inputs)

    model = kzoo.QuestionAnswerer.from_preset(str(folder), preprocessor=None)
    assert type(model) is kzoo.QuestionAnswerer
    assert_close_to_reference(model, inputs, expected, ATOL, architecture)
    # kzoo -> HF: the same tensors, bit for bit; transformers loads it.
    assert_export_reloads(model, hf_model, architecture, inputs, expected,
                          tmp_path / "exported")


def test_qa_head_tensors_are_used_not_reported_unused(tmp_path):
    """Before, a `*ForQuestionAnswering` checkpoint converted to its
    backbone and reported `qa_outputs` unused; now the head is loaded."""
    from kzoo.convert import hf_to_preset
    hf_model = make_hf_model("BertForQuestionAnswering", FAMILIES["Bert"])
    hf_model.save_pretrained(tmp_path / "hf")
    report = hf_to_preset(tmp_path / "hf", tmp_path / "preset",
                          verbose=False)
    assert report.model_class == "QuestionAnswerer"
    assert {"qa_outputs.weight", "qa_outputs.bias"} <= set(report.used)
    assert not report.unused
