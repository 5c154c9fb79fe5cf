"""kzoo's QuestionAnswerer vs `transformers`' `*ForQuestionAnswering` on
random odd checkpoints of every encoder family: start and end logits
within 1e-5 on the backend KERAS_BACKEND names; the `qa_outputs` head
converts in (no tensor left unused) and back out bit for bit, and
transformers loads the export with the same logits."""

import numpy as np
import pytest

import kzoo
from kzoo.convert import export_hf
from convert_helpers import check_exported_weights, max_abs_differences

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
# One odd checkpoint per family: head widths 12, 7 and 5, non-default
# epsilons and activations, factorised embeddings where the family has
# them. num_labels=2: start and end.
FAMILIES = {
    "Bert": ("BertConfig", dict(
        vocab_size=99, hidden_size=36, num_hidden_layers=2,
        num_attention_heads=3, intermediate_size=50,
        max_position_embeddings=40, type_vocab_size=3, layer_norm_eps=1e-7,
        hidden_act="gelu_new")),
    "Roberta": ("RobertaConfig", dict(
        vocab_size=61, hidden_size=35, num_hidden_layers=2,
        num_attention_heads=5, intermediate_size=9,
        max_position_embeddings=24, type_vocab_size=1, layer_norm_eps=1e-5,
        hidden_act="relu", pad_token_id=3)),
    "XLMRoberta": ("XLMRobertaConfig", dict(
        vocab_size=83, hidden_size=39, num_hidden_layers=2,
        num_attention_heads=3, intermediate_size=45,
        max_position_embeddings=31, type_vocab_size=1, layer_norm_eps=1e-6,
        hidden_act="gelu_new", pad_token_id=1)),
    "DistilBert": ("DistilBertConfig", dict(
        vocab_size=99, dim=36, n_layers=2, n_heads=3, hidden_dim=50,
        max_position_embeddings=40, activation="gelu_new")),
    "Albert": ("AlbertConfig", dict(
        vocab_size=99, embedding_size=10, hidden_size=36,
        num_hidden_layers=3, num_hidden_groups=1, inner_group_num=1,
        num_attention_heads=3, intermediate_size=50,
        max_position_embeddings=40, type_vocab_size=2, layer_norm_eps=1e-7,
        hidden_act="gelu_new")),
    "Electra": ("ElectraConfig", dict(
        vocab_size=99, embedding_size=20, hidden_size=36,
        num_hidden_layers=2, num_attention_heads=3, intermediate_size=50,
        max_position_embeddings=40, type_vocab_size=3, layer_norm_eps=1e-7,
        hidden_act="gelu_new")),
    "DebertaV2": ("DebertaV2Config", dict(
        relative_attention=True, position_biased_input=False,
        type_vocab_size=0, norm_rel_ebd="layer_norm",
        pos_att_type="p2c|c2p", vocab_size=71, hidden_size=35,
        num_hidden_layers=2, num_attention_heads=5, intermediate_size=23,
        max_position_embeddings=64, position_buckets=8,
        max_relative_positions=16, share_att_key=True, layer_norm_eps=1e-6,
        hidden_act="gelu")),
}


def make_hf_qa(family, seed=0):
    """A transformers `<family>ForQuestionAnswering` with every parameter
    randomised (LayerNorm scales too)."""
    config_cls, fields = FAMILIES[family]
    config = getattr(transformers, config_cls)(**fields, num_labels=2)
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = getattr(transformers, f"{family}ForQuestionAnswering")(
        config).eval()
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            scale = name.endswith(("LayerNorm.weight", "layer_norm.weight"))
            parameter.copy_(1.0 + 0.2 * noise if scale else 0.2 * noise)
    return model


def random_inputs(model, batch=3, seq=11, seed=0):
    """Random ids (none the padding id), segment ids where the family has
    token types, one right-padded row."""
    config = model.config
    rng = np.random.default_rng(seed)
    pad = config.pad_token_id or 0
    ids = rng.integers(0, config.vocab_size, (batch, seq)).astype("int32")
    ids[ids == pad] = pad + 1
    mask = np.ones((batch, seq), "int32")
    mask[1, seq - 4:] = 0
    ids[mask == 0] = pad
    inputs = {"token_ids": ids, "padding_mask": mask}
    types = getattr(config, "type_vocab_size", 0) or 0
    if types > 1:
        inputs["segment_ids"] = rng.integers(0, types,
                                             (batch, seq)).astype("int32")
    return inputs


def hf_logits(model, inputs):
    kwargs = {"input_ids": torch.tensor(inputs["token_ids"]).long(),
              "attention_mask": torch.tensor(inputs["padding_mask"]).long()}
    if "segment_ids" in inputs:
        kwargs["token_type_ids"] = torch.tensor(inputs["segment_ids"]).long()
    with torch.no_grad():
        out = model(**kwargs)
    return {"start_logits": out.start_logits.numpy(),
            "end_logits": out.end_logits.numpy()}


def kzoo_logits(model, inputs):
    import keras
    feed = {name: inputs.get(name, np.zeros_like(inputs["token_ids"]))
            for name in model.input_names}
    return {k: keras.ops.convert_to_numpy(v) for k, v in model(feed).items()}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_qa_logits_parity_and_round_trip(family, tmp_path):
    hf_model = make_hf_qa(family)
    folder = tmp_path / "hf"
    hf_model.save_pretrained(folder)
    inputs = random_inputs(hf_model)
    expected = hf_logits(hf_model, inputs)

    model = kzoo.QuestionAnswerer.from_preset(str(folder), preprocessor=None)
    assert type(model) is kzoo.QuestionAnswerer
    differences = max_abs_differences(kzoo_logits(model, inputs), expected)
    print(f"{family}ForQuestionAnswering: max abs {differences}")
    for name, difference in differences.items():
        assert difference <= ATOL, (name, difference)

    # kzoo -> HF: the same tensors, bit for bit; transformers loads it.
    out = export_hf(model, tmp_path / "exported", verbose=False)
    original = {k: v.numpy() for k, v in hf_model.state_dict().items()}
    check_exported_weights(out, original)
    reloaded = getattr(transformers, f"{family}ForQuestionAnswering") \
        .from_pretrained(out, attn_implementation="eager").eval()
    again = hf_logits(reloaded, inputs)
    for name, value in expected.items():
        np.testing.assert_array_equal(again[name], value, err_msg=name)


def test_qa_head_tensors_are_used_not_reported_unused(tmp_path):
    """Before, a `*ForQuestionAnswering` checkpoint converted to its
    backbone and reported `qa_outputs` unused; now the head is loaded."""
    from kzoo.convert import hf_to_preset
    hf_model = make_hf_qa("Bert")
    hf_model.save_pretrained(tmp_path / "hf")
    report = hf_to_preset(tmp_path / "hf", tmp_path / "preset",
                          verbose=False)
    assert report.model_class == "QuestionAnswerer"
    assert {"qa_outputs.weight", "qa_outputs.bias"} <= set(report.used)
    assert not report.unused
