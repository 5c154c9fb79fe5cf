"""ULMFiT's classifier trains as fastai's does (issue 48, item 3): fastai's
`SentenceEncoder` feeds a document to `AWD_LSTM` in chunks, and
`AWD_LSTM.forward` keeps the state for the next chunk detached
(`self.hidden = to_detach(new_hidden)`), so the gradient of each chunk's
outputs stops at the chunk's start. One SGD step of kzoo's backbone with
`gradient_chunk` (on this backend) moves every weight by the gradient
that rule gives, computed here with torch.nn.LSTMs run chunk by chunk,
the state detached between chunks; the same rule without the cut gives
another gradient, so the test sees the cut."""

import keras
import numpy as np
import pytest
import torch

import kzoo
from awd_lstm_testing import TINY
from helpers import to_numpy
from kzoo.recipes import ulmfit
from test_ulmfit_reading import torch_lstm_stack

CHUNK = 8
LENGTHS = (20, 13)  # 2.5 chunks, and a right-padded row of 1.6


def fastai_chunked(embedding, lstms, ids, chunk):
    """fastai's SentenceEncoder over AWD_LSTM (dropout off): the LSTMs
    over `chunk` tokens at a time, each chunk starting from the state the
    last one left, detached."""
    states = [None] * len(lstms)
    outputs = []
    for start in range(0, len(ids), chunk):
        x = embedding[ids[start:start + chunk]][None]
        for i, lstm in enumerate(lstms):
            x, state = lstm(x, states[i])
            states[i] = tuple(s.detach() for s in state)
        outputs.append(x[0])
    return torch.cat(outputs)


def reference_gradients(backbone, ids_rows, targets, chunk):
    """d loss / d (embedding, and each LSTM's kernel, recurrent kernel,
    bias) in Keras' layouts, loss = the mean squared error over every
    (row, token, feature) of the padded batch (padding outputs 0)."""
    embedding = torch.tensor(
        to_numpy(backbone.token_embedding.embeddings), requires_grad=True)
    lstms = torch_lstm_stack(backbone)
    loss = 0.0
    for ids, target in zip(ids_rows, targets):
        out = fastai_chunked(embedding, lstms, torch.from_numpy(ids), chunk)
        loss = loss + ((out - torch.from_numpy(target[:len(ids)])) ** 2
                       ).sum()
    (loss / targets.size).backward()
    gradients = [embedding.grad.numpy()]
    for lstm in lstms:
        gradients += [lstm.weight_ih_l0.grad.numpy().T,
                      lstm.weight_hh_l0.grad.numpy().T,
                      lstm.bias_ih_l0.grad.numpy()]
    return gradients


def test_one_step_follows_fastais_chunked_gradient():
    keras.utils.set_random_seed(3)
    backbone = kzoo.AwdLstmBackbone(**TINY, gradient_chunk=CHUNK)
    rng = np.random.default_rng(0)
    width, length = max(LENGTHS), TINY["embedding_dim"]
    ids_rows = [rng.integers(2, TINY["vocabulary_size"], n).astype("int32")
                for n in LENGTHS]
    token_ids = np.ones((len(LENGTHS), width), "int32")
    mask = np.zeros((len(LENGTHS), width), "int32")
    targets = np.zeros((len(LENGTHS), width, length), "float32")
    for row, ids in enumerate(ids_rows):
        token_ids[row, :len(ids)] = ids
        mask[row, :len(ids)] = 1
        targets[row, :len(ids)] = rng.normal(size=(len(ids), length))
    want = reference_gradients(backbone, ids_rows, targets, CHUNK)
    # Without the cut (fastai's rule over one chunk) the gradient differs.
    whole = reference_gradients(backbone, ids_rows, targets, width)
    assert max(np.abs(a - b).max() for a, b in zip(want, whole)) > 1e-3

    inputs = {"token_ids": keras.Input((None,), dtype="int32",
                                       name="token_ids"),
              "padding_mask": keras.Input((None,), dtype="int32",
                                          name="padding_mask")}
    model = keras.Model(inputs, backbone(inputs)["sequence_output"])
    model.compile(optimizer=keras.optimizers.SGD(1.0), loss="mse")
    variables = [backbone.token_embedding.embeddings] + [
        w for lstm in backbone.lstm_layers for w in lstm.weights]
    before = [to_numpy(v) for v in variables]
    model.train_on_batch({"token_ids": token_ids, "padding_mask": mask},
                         targets)
    for old, variable, gradient in zip(before, variables, want):
        np.testing.assert_allclose(old - to_numpy(variable), gradient,
                                   rtol=1e-4, atol=1e-7,
                                   err_msg=variable.path)


@pytest.mark.once
def test_the_classifier_cuts_at_fastais_72_token_chunks():
    lm = kzoo.AwdLstmLanguageModel(kzoo.AwdLstmBackbone(**TINY))
    assert ulmfit.classifier_from_language_model(
        lm, num_classes=2).backbone.gradient_chunk == 72
    whole = ulmfit.classifier_from_language_model(lm, num_classes=2,
                                                  gradient_chunk=None)
    assert whole.backbone.gradient_chunk is None
    assert all(lstm.gradient_chunk is None
               for lstm in whole.backbone.lstm_layers)
