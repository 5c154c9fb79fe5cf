"""fastai's AWD-LSTM checkpoint layout -> kzoo: the same network as plain
PyTorch (`torch.nn.LSTM`, eval mode) on every backend; kzoo -> fastai ->
kzoo bit-exact; the folder converts through `kzoo convert`'s dispatch;
nothing in a checkpoint can run code."""

import pickle

import numpy as np
import pytest
import torch

import kzoo
from awd_lstm_testing import (TINY, fastai_state_dict, padded_inputs,
                              torch_reference)
from helpers import assert_weights_identical, to_numpy
from kzoo.convert import ConversionError, hf_to_preset
from kzoo.models.awd_lstm import convert

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

ATOL = 1e-5
LENGTHS = (9, 4, 7, 1)


def tiny_lm():
    return kzoo.AwdLstmLanguageModel(kzoo.AwdLstmBackbone(**TINY),
                                     output_dropout=0.0)


def numpy_state(state):
    return {k: v.numpy() for k, v in state.items()}


def test_outputs_match_pytorch_lstms():
    state, modules = fastai_state_dict(stale_copies=True)
    lm = tiny_lm()
    convert.load_state_dict(lm, numpy_state(state))
    inputs = padded_inputs(LENGTHS)
    logits = to_numpy(lm(inputs, training=False))
    layers = to_numpy(lm.backbone(inputs, training=False))
    expected_layers, expected_logits = torch_reference(
        modules, inputs["token_ids"], LENGTHS)
    worst = 0.0
    for row, length in enumerate(LENGTHS):
        for i in range(TINY["num_layers"]):
            got = layers[f"lstm_{i}_output"][row, :length]
            worst = max(worst, np.abs(got - expected_layers[row][i]).max())
            # Padding: zeros, and the state is not advanced by it.
            assert not layers[f"lstm_{i}_output"][row, length:].any()
        worst = max(worst, np.abs(logits[row, :length] -
                                  expected_logits[row]).max())
    print(f"max |kzoo - torch| = {worst:.2e}")
    assert worst <= ATOL


def test_kzoo_fastai_kzoo_is_bit_exact(tmp_path):
    lm = tiny_lm()
    path = tmp_path / "lm.pth"
    convert.save_checkpoint(lm, path)
    state = convert.read_state_dict(path)
    again = tiny_lm()
    convert.load_state_dict(again, state)
    assert_weights_identical(again, lm)
    # Tied: one matrix under fastai's three names.
    assert np.array_equal(state["1.decoder.weight"],
                          state["0.encoder.weight"])


def test_fastai_names_arrive_unchanged_except_the_bias_fold():
    state, _ = fastai_state_dict()
    state = numpy_state(state)
    lm = tiny_lm()
    convert.load_state_dict(lm, state)
    back = convert.to_state_dict(lm)
    for name, value in state.items():
        if "bias_" in name:
            continue
        assert np.array_equal(back[name], value), name
    for i in range(3):
        folded = state[f"0.rnns.{i}.module.bias_ih_l0"] + \
            state[f"0.rnns.{i}.module.bias_hh_l0"]
        assert np.array_equal(back[f"0.rnns.{i}.module.bias_ih_l0"], folded)
        assert not back[f"0.rnns.{i}.module.bias_hh_l0"].any()


def write_fastai_folder(folder, state, itos):
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"model": state, "opt": {}}, folder / "lm.pth")
    with open(folder / "itos_wt103.pkl", "wb") as f:
        pickle.dump(itos, f)
    return folder


def test_folder_converts_through_the_dispatch(tmp_path):
    state, modules = fastai_state_dict()
    itos = ["xxunk", "xxpad", "xxbos", "xxeos", "xxfld", "xxrep", "xxwrep",
            "xxup", "xxmaj"] + [f"w{i}" for i in range(28)]
    src = write_fastai_folder(tmp_path / "fastai", state, itos)
    assert convert.is_original_folder(src)
    hf_to_preset(src, tmp_path / "preset", verbose=False)
    lm = kzoo.AwdLstmLanguageModel.from_preset(tmp_path / "preset")
    assert lm.backbone.get_config()["vocabulary_size"] == 37
    assert lm.backbone.hidden_dropout == convert.LM_DROPOUTS["hidden_dropout"]
    inputs = padded_inputs(LENGTHS)
    logits = to_numpy(lm(inputs, training=False))
    _, expected = torch_reference(modules, inputs["token_ids"], LENGTHS)
    for row, length in enumerate(LENGTHS):
        np.testing.assert_allclose(logits[row, :length], expected[row],
                                   atol=ATOL)
    assert lm.preprocessor.tokenizer.get_vocabulary() == itos
    # A classifier starts from the converted encoder.
    classifier = kzoo.AwdLstmTextClassifier.from_preset(
        tmp_path / "preset", num_classes=2)
    assert_weights_identical(classifier.backbone, lm.backbone)


def test_a_pickle_that_would_run_code_is_refused(tmp_path):
    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))
    path = tmp_path / "itos.pkl"
    with open(path, "wb") as f:
        pickle.dump(["xxunk", Evil()], f)
    with pytest.raises(ConversionError, match="refusing builtins.print"):
        convert.read_itos(path)


def test_mismatches_are_named_before_anything_is_assigned():
    state, _ = fastai_state_dict()
    state = numpy_state(state)
    lm = tiny_lm()
    before = [np.array(w) for w in lm.get_weights()]
    bad = dict(state)
    bad["1.decoder.weight"] = bad["1.decoder.weight"] + 1
    with pytest.raises(ConversionError, match="1.decoder.weight differs"):
        convert.load_state_dict(lm, bad)
    bad = dict(state)
    del bad["0.rnns.1.weight_hh_l0_raw"]
    bad["0.rnns.9.module.weight_ih_l0"] = np.zeros(3, "float32")
    with pytest.raises(ConversionError, match=r"missing: 0\.rnns\.1\.weight_"
                                              r"hh_l0_raw[\s\S]*unexpected"):
        convert.load_state_dict(lm, bad)
    with pytest.raises(ConversionError, match="does not fit"):
        convert.load_state_dict(
            kzoo.AwdLstmLanguageModel(kzoo.AwdLstmBackbone(
                **{**TINY, "lstm_dim": 12})), state)
    for got, want in zip(lm.get_weights(), before):
        assert np.array_equal(got, want)
