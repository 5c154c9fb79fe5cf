"""Shared AWD-LSTM test data: tiny configs, padded inputs, and fastai-layout
checkpoints built with plain PyTorch."""

import numpy as np

from helpers import DATA_DIR

VOCABULARY = DATA_DIR / "awd_lstm" / "vocab.txt"
STAND_IN = str(DATA_DIR / "presets" / "awd_lstm_wt103_en")
# Odd sizes, no dropout (tests that need dropout turn it on).
TINY = dict(vocabulary_size=37, embedding_dim=7, lstm_dim=11, num_layers=3,
            embedding_dropout=0.0, input_dropout=0.0, hidden_dropout=0.0,
            weight_dropout=0.0)


def padded_inputs(lengths=(9, 4, 7, 1), vocabulary_size=37, seed=0,
                  pad=1):
    """Random ids (never `xxpad`), right padded to the longest length."""
    rng = np.random.default_rng(seed)
    width = max(lengths)
    token_ids = rng.integers(2, vocabulary_size, (len(lengths), width))
    mask = (np.arange(width)[None] < np.array(lengths)[:, None])
    token_ids = np.where(mask, token_ids, pad).astype("int32")
    return {"token_ids": token_ids, "padding_mask": mask.astype("int32")}


def fastai_state_dict(vocabulary_size=37, embedding_dim=7, lstm_dim=11,
                      num_layers=3, seed=0, stale_copies=False):
    """fastai's `SequentialRNN(AWD_LSTM, LinearDecoder)` state dict, made
    with torch modules under fastai's names: tied encoder/decoder, the
    raw hidden-to-hidden weights of `WeightDropout`, two biases per LSTM
    (random, so the fold is tested). Returns (state dict, the modules)."""
    import torch
    torch.manual_seed(seed)
    encoder = torch.nn.Embedding(vocabulary_size, embedding_dim)
    torch.nn.init.uniform_(encoder.weight, -0.1, 0.1)
    lstms = []
    for i in range(num_layers):
        width_in = embedding_dim if i == 0 else lstm_dim
        width = embedding_dim if i == num_layers - 1 else lstm_dim
        lstm = torch.nn.LSTM(width_in, width, 1, batch_first=True)
        with torch.no_grad():
            for bias in (lstm.bias_ih_l0, lstm.bias_hh_l0):
                bias.uniform_(-0.5, 0.5)
        lstms.append(lstm)
    decoder_bias = torch.empty(vocabulary_size).uniform_(-0.2, 0.2)
    state = {"0.encoder.weight": encoder.weight.detach().clone(),
             "0.encoder_dp.emb.weight": encoder.weight.detach().clone()}
    for i, lstm in enumerate(lstms):
        state[f"0.rnns.{i}.weight_hh_l0_raw"] = lstm.weight_hh_l0.detach()
        state[f"0.rnns.{i}.module.weight_ih_l0"] = lstm.weight_ih_l0.detach()
        state[f"0.rnns.{i}.module.bias_ih_l0"] = lstm.bias_ih_l0.detach()
        state[f"0.rnns.{i}.module.bias_hh_l0"] = lstm.bias_hh_l0.detach()
        if stale_copies:
            state[f"0.rnns.{i}.module.weight_hh_l0"] = \
                lstm.weight_hh_l0.detach().clone()
    state["1.decoder.weight"] = encoder.weight.detach().clone()
    state["1.decoder.bias"] = decoder_bias
    return state, (encoder, lstms, decoder_bias)


def torch_reference(modules, token_ids, lengths):
    """The fastai network in eval mode, in plain torch, one row at a time
    at its real length: (every layer's outputs, logits), numpy, each a
    list over rows."""
    import torch
    encoder, lstms, decoder_bias = modules
    layers, logits = [], []
    with torch.no_grad():
        for row, length in zip(token_ids, lengths):
            x = encoder(torch.as_tensor(row[None, :length], dtype=torch.long))
            outputs = []
            for lstm in lstms:
                x, _ = lstm(x)
                outputs.append(x[0].numpy())
            layers.append(outputs)
            logits.append((x[0] @ encoder.weight.T + decoder_bias).numpy())
    return layers, logits
