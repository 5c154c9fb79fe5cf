"""AwdLstmBackbone: the shared contract, exact padding, and its dropouts:
off in inference, on in training, with variational masks constant over
time and one DropConnect mask per call."""

import keras
import numpy as np
import pytest

import kzoo
from awd_lstm_testing import TINY, padded_inputs
from helpers import check_backbone, to_numpy
from kzoo.core.arguments import ArgumentError

DROPOUTS = dict(embedding_dropout=0.3, input_dropout=0.4,
                hidden_dropout=0.4, weight_dropout=0.5)


def test_backbone_contract(tmp_path):
    backbone = kzoo.AwdLstmBackbone(**{**TINY, **DROPOUTS})
    check_backbone(backbone, padded_inputs(), tmp_path, lengths=[1, 5, 9],
                   expected_shapes={"sequence_output": (4, 9, 7),
                                    "lstm_0_output": (4, 9, 11),
                                    "lstm_1_output": (4, 9, 11),
                                    "lstm_2_output": (4, 9, 7)})


def test_padded_rows_get_what_they_get_alone():
    backbone = kzoo.AwdLstmBackbone(**TINY)
    inputs = padded_inputs((9, 4, 7, 1))
    batch = to_numpy(backbone(inputs, training=False))
    for row, length in enumerate((9, 4, 7, 1)):
        alone = to_numpy(backbone(
            {k: v[row:row + 1, :length] for k, v in inputs.items()},
            training=False))
        for name, value in alone.items():
            np.testing.assert_allclose(batch[name][row, :length], value[0],
                                       atol=1e-6)
            assert not batch[name][row, length:].any()


def test_dropouts_off_in_inference_on_in_training():
    backbone = kzoo.AwdLstmBackbone(**{**TINY, **DROPOUTS})
    inputs = padded_inputs()
    first = to_numpy(backbone(inputs, training=False))
    second = to_numpy(backbone(inputs, training=False))
    for name in first:
        np.testing.assert_array_equal(first[name], second[name])
    trained = [to_numpy(backbone(inputs, training=True))["sequence_output"]
               for _ in range(2)]
    assert np.abs(trained[0] - first["sequence_output"]).max() > 1e-4
    assert np.abs(trained[0] - trained[1]).max() > 1e-4  # fresh masks
    # Padding stays exact in training too.
    assert not trained[0][inputs["padding_mask"] == 0].any()


def _intermediate(backbone, name):
    return keras.Model(backbone.input, backbone.get_layer(name).output)


def test_variational_masks_are_constant_over_time():
    # No embedding dropout here: it could drop the one word used.
    backbone = kzoo.AwdLstmBackbone(
        **{**TINY, **DROPOUTS, "embedding_dropout": 0.0})
    # One word repeated: every step embeds the same vector, so a mask that
    # is the same at every step gives the same vector at every step.
    inputs = {"token_ids": np.full((6, 12), 5, "int32"),
              "padding_mask": np.ones((6, 12), "int32")}
    dropped = to_numpy(_intermediate(backbone, "input_dropout")(
        inputs, training=True))  # (6, 12, 7)
    raw = to_numpy(backbone.token_embedding(inputs["token_ids"]))[0, 0]
    zero_pattern = dropped == 0
    assert (zero_pattern == zero_pattern[:, :1]).all()
    assert zero_pattern.any() and not zero_pattern.all()
    # ...and differs between sequences (one mask per sequence).
    assert not (zero_pattern == zero_pattern[:1]).all()
    kept = dropped[~zero_pattern]
    scale = 1 - DROPOUTS["input_dropout"]
    expected = np.broadcast_to(raw / scale, dropped.shape)[~zero_pattern]
    np.testing.assert_allclose(kept, expected, rtol=1e-6)
    # Between layers: lstm_0's outputs vary over time; the dropout's zeros
    # sit in the same features at every step.
    hidden = to_numpy(_intermediate(backbone, "hidden_dropout_0")(
        inputs, training=True))
    zeros = hidden == 0
    assert (zeros == zeros[:, :1]).all() and zeros.any()


def test_embedding_dropout_drops_whole_rows():
    embedding = kzoo.layers.RowDropoutEmbedding(50, 4, row_dropout=0.5,
                                                seed=3)
    ids = np.tile(np.arange(50, dtype="int32"), (3, 2))  # each id 6 times
    out = to_numpy(embedding(ids, training=True))
    table = to_numpy(embedding.embeddings)
    for word in range(50):
        vectors = out[ids == word]
        # All positions of a word share its fate, across rows too.
        assert np.allclose(vectors, 0) or np.allclose(
            vectors, table[word] * 2.0, rtol=1e-6)
    dropped = [np.allclose(out[ids == w], 0) for w in range(50)]
    assert 5 < sum(dropped) < 45
    np.testing.assert_array_equal(to_numpy(embedding(ids, training=False)),
                                  table[ids])


def test_weight_drop_is_one_mask_per_call():
    # The training call equals an inference call of an LSTM whose
    # recurrent kernel is the dropped one: a single mask for every step
    # and row of the batch.
    lstm = kzoo.layers.ProjectedLSTM(6, recurrent_kernel_dropout=0.5,
                                     seed=1)
    x = np.random.default_rng(0).normal(size=(3, 8, 4)).astype("float32")
    lstm(x)
    state = to_numpy(lstm.seed_generator.state)
    kernel = to_numpy(lstm.dropped_recurrent_kernel(training=True))
    lstm.seed_generator.state.assign(state)
    trained, _ = lstm(x, training=True)
    assert 0.3 < (kernel == 0).mean() < 0.7
    plain = kzoo.layers.ProjectedLSTM(6)
    plain(x)
    plain.set_weights([to_numpy(lstm.kernel), kernel, to_numpy(lstm.bias)])
    expected, _ = plain(x)
    np.testing.assert_allclose(to_numpy(trained), to_numpy(expected),
                               atol=1e-6)
    inference, _ = lstm(x, training=False)
    plain.set_weights([to_numpy(w) for w in lstm.weights[:3]])
    np.testing.assert_allclose(to_numpy(inference), to_numpy(plain(x)[0]),
                               atol=1e-6)


def test_layer_groups_are_ulmfits():
    backbone = kzoo.AwdLstmBackbone(**TINY)
    assert backbone.layer_groups() == [["token_embedding"], ["lstm_0"],
                                       ["lstm_1"], ["lstm_2"]]


def test_parameter_count_and_widths():
    v, e, h = 37, 7, 11
    lstm = lambda i, o: 4 * o * (i + o + 1)  # noqa: E731
    backbone = kzoo.AwdLstmBackbone(**TINY)
    assert backbone.count_params() == v * e + lstm(e, h) + lstm(h, h) + \
        lstm(h, e)
    assert backbone.hidden_dim == 7


def test_bad_pad_id_is_named():
    with pytest.raises(ArgumentError, match="pad_token_id=40"):
        kzoo.AwdLstmBackbone(**{**TINY, "pad_token_id": 40})
