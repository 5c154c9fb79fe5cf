"""fastai's AWD-LSTM checkpoints (ULMFiT) <-> kzoo.

A fastai language model is a `.pth` state dict (`torch.save` of
`SequentialRNN(AWD_LSTM, LinearDecoder)`; a `Learner.save` file holds it
under "model") and its vocabulary, the `itos` list (`itos_wt103.pkl`, a
pickled list of strings). AWD-LSTM predates Hugging Face: there is no
`model_type`, so a folder holding one `.pth` and an `itos` file is
recognised by its files (`is_original_folder`: the family declares
`original_format="fastai"`, which `kzoo.convert.base.original_format_module`
reads), and `hf_to_preset` / `kzoo convert` send it here.

Nothing here executes code from a file: the state dict is read with
`torch.load(..., weights_only=True)`, and the `itos` pickle with an
unpickler that refuses every global (a list of strings needs none).

The names (fastai's `text/models/awdlstm.py` and `core.py`):

    fastai                                 kzoo
    0.encoder.weight                       token_embedding (also the tied
    0.encoder_dp.emb.weight                decoder; every copy must agree)
    1.decoder.weight
    0.rnns.{i}.module.weight_ih_l0         lstm_{i}.kernel (transposed)
    0.rnns.{i}.weight_hh_l0_raw            lstm_{i}.recurrent_kernel
                                           (transposed; `WeightDropout`'s
                                           raw copy is the weight)
    0.rnns.{i}.module.bias_ih_l0           lstm_{i}.bias = their sum
    0.rnns.{i}.module.bias_hh_l0
    1.decoder.bias                         lm_head.bias

PyTorch's LSTM orders its gates i, f, g, o, as the shared `ProjectedLSTM`
does: the blocks keep their order. torch keeps two biases where kzoo
keeps one: importing adds them (one float32 rounding); exporting writes
kzoo's as `bias_ih_l0` and zeros as `bias_hh_l0`, so kzoo -> fastai ->
kzoo is bit-exact. Older fastai files also hold `0.rnns.{i}.module.
weight_hh_l0`, a copy of the raw weight that `WeightDropout` overwrites
on every call: it is read past, never used.
"""

import pickle
import re
import tempfile
from pathlib import Path

import numpy as np

from kzoo.convert.errors import ConversionError

ITOS_FILES = ("itos.pkl", "itos_wt103.pkl", "itos.txt", "vocab.txt")
# fastai's LM config (`awd_lstm_lm_config`): the dropouts a converted
# language model trains with.
LM_DROPOUTS = {"embedding_dropout": 0.02, "input_dropout": 0.25,
               "hidden_dropout": 0.15, "weight_dropout": 0.2}
LM_OUTPUT_DROPOUT = 0.1
_STALE_COPY = re.compile(r"0\.rnns\.\d+\.module\.weight_hh_l0")
_EMBEDDING_COPIES = ("0.encoder_dp.emb.weight", "1.decoder.weight")


# ----------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------
def _checkpoints(folder):
    return sorted(Path(folder).glob("*.pth"))


def _itos_file(folder):
    folder = Path(folder)
    found = [folder / n for n in ITOS_FILES if (folder / n).is_file()]
    found += [p for p in sorted(folder.glob("itos*.pkl")) if p not in found]
    return found[0] if found else None


def is_original_folder(path):
    """A folder with one fastai `.pth` and an `itos` vocabulary."""
    return len(_checkpoints(path)) == 1 and _itos_file(path) is not None


class _NoGlobals(pickle.Unpickler):
    """Unpickles plain data only: any class or function is refused, so no
    code can run (a list of strings needs none)."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(
            f"refusing {module}.{name}: an itos file holds strings only")


def read_itos(path):
    """fastai's vocabulary: a pickled list of strings (`itos*.pkl`, read
    without running code) or a text file, one token per line."""
    path = Path(path)
    try:
        if path.suffix == ".pkl":
            with open(path, "rb") as f:
                itos = _NoGlobals(f).load()
        else:
            itos = path.read_text(encoding="utf-8").split("\n")
            itos = itos[:-1] if itos and itos[-1] == "" else itos
    except (OSError, pickle.UnpicklingError, EOFError, ValueError,
            UnicodeDecodeError) as e:
        raise ConversionError(
            f"Cannot read the vocabulary {path}: {e}. It must be fastai's "
            "itos (a pickled list of strings) or one token per line.") \
            from None
    if not isinstance(itos, list) or not all(isinstance(t, str)
                                             for t in itos):
        raise ConversionError(f"{path} is not a list of strings (fastai's "
                              "itos).")
    return itos


def write_vocabulary(itos, path):
    """`itos` as the tokenizer's `vocab.txt` (one token per line)."""
    bad = [t for t in itos if not t or t != t.strip() or "\n" in t]
    if bad or len(set(itos)) != len(itos):
        raise ConversionError(
            f"The vocabulary cannot be one token per line: "
            f"{'repeated tokens' if not bad else f'token {bad[0]!r}'}.")
    Path(path).write_text("".join(t + "\n" for t in itos), encoding="utf-8")


def read_state_dict(path):
    """A fastai `.pth` -> `{name: float32 numpy array}`, loaded with
    `torch.load(weights_only=True)` (no code runs)."""
    import torch
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds for a bad file
        raise ConversionError(
            f"Cannot read the fastai checkpoint {path}: {type(e).__name__}: "
            f"{e}. It must be a state dict saved with torch.save (a "
            "Learner.save file holds it under 'model').") from None
    if isinstance(state, dict) and isinstance(state.get("model"), dict):
        state = state["model"]  # Learner.save: {"model": ..., "opt": ...}
    if not isinstance(state, dict) or not all(
            isinstance(v, torch.Tensor) for v in state.values()):
        raise ConversionError(f"{path} holds no state dict of tensors.")
    return {k: v.detach().float().numpy() for k, v in state.items()}


# ----------------------------------------------------------------------
# Config and weights
# ----------------------------------------------------------------------
def backbone_kwargs(state):
    """The `AwdLstmBackbone` shape a state dict describes."""
    if "0.encoder.weight" not in state:
        raise ConversionError("Not a fastai AWD-LSTM state dict: no "
                              "0.encoder.weight.")
    vocabulary_size, embedding_dim = state["0.encoder.weight"].shape
    num_layers = 0
    while f"0.rnns.{num_layers}.weight_hh_l0_raw" in state:
        num_layers += 1
    if num_layers == 0:
        raise ConversionError("Not a fastai AWD-LSTM state dict: no "
                              "0.rnns.0.weight_hh_l0_raw.")
    lstm_dim = state["0.rnns.0.weight_hh_l0_raw"].shape[1] \
        if num_layers > 1 else embedding_dim
    return {"vocabulary_size": int(vocabulary_size),
            "embedding_dim": int(embedding_dim), "lstm_dim": int(lstm_dim),
            "num_layers": num_layers}


def _lstm_names(i):
    return {"kernel": f"0.rnns.{i}.module.weight_ih_l0",
            "recurrent_kernel": f"0.rnns.{i}.weight_hh_l0_raw",
            "bias_ih": f"0.rnns.{i}.module.bias_ih_l0",
            "bias_hh": f"0.rnns.{i}.module.bias_hh_l0"}


def to_state_dict(model):
    """A kzoo `AwdLstmBackbone` or `AwdLstmLanguageModel` -> fastai's state
    dict (numpy float32; `save_checkpoint` writes it as torch tensors)."""
    backbone = getattr(model, "backbone", model)
    embedding = np.asarray(backbone.token_embedding.embeddings)
    state = {"0.encoder.weight": embedding,
             "0.encoder_dp.emb.weight": embedding.copy()}
    for i, lstm in enumerate(backbone.lstm_layers):
        names = _lstm_names(i)
        bias = np.asarray(lstm.bias)
        state[names["kernel"]] = np.asarray(lstm.kernel).T.copy()
        state[names["recurrent_kernel"]] = \
            np.asarray(lstm.recurrent_kernel).T.copy()
        state[names["bias_ih"]] = bias
        state[names["bias_hh"]] = np.zeros_like(bias)
    if model is not backbone:
        state["1.decoder.weight"] = embedding.copy()
        state["1.decoder.bias"] = np.asarray(model.lm_head.bias)
    return state


def load_state_dict(model, state):
    """Fill an `AwdLstmBackbone` or `AwdLstmLanguageModel` from fastai's
    state dict: every tensor is named and shape-checked, and the tied
    copies compared, before any is assigned; one not used is an error."""
    backbone = getattr(model, "backbone", model)
    is_lm = model is not backbone
    values, problems = {}, []

    def take(name, variable, value):
        if tuple(variable.shape) != value.shape:
            problems.append(f"{name} {value.shape} does not fit "
                            f"{variable.path} {tuple(variable.shape)}")
        values[variable.path] = (variable, value)

    expected = set(to_state_dict(model))
    missing = sorted(expected - set(state))
    unexpected = sorted(n for n in set(state) - expected
                        if not _STALE_COPY.fullmatch(n)
                        and not (n == "1.decoder.bias" and not is_lm))
    if "1.decoder.weight" in missing and not is_lm:
        missing.remove("1.decoder.weight")
    if missing or unexpected:
        lines = ([f"missing: {n}" for n in missing]
                 + [f"unexpected: {n}" for n in unexpected])
        raise ConversionError(
            f"The state dict does not match the {type(model).__name__}:\n"
            "  - " + "\n  - ".join(lines))
    embedding = state["0.encoder.weight"]
    take("0.encoder.weight", backbone.token_embedding.embeddings, embedding)
    for copy in _EMBEDDING_COPIES:
        if copy in state and not np.array_equal(state[copy], embedding):
            problems.append(
                f"{copy} differs from 0.encoder.weight: kzoo ties the "
                "decoder and the embedding dropout to the embedding, so "
                "the checkpoint must too (fastai's tie_weights=True)")
    for i, lstm in enumerate(backbone.lstm_layers):
        names = _lstm_names(i)
        take(names["kernel"], lstm.kernel, state[names["kernel"]].T)
        take(names["recurrent_kernel"], lstm.recurrent_kernel,
             state[names["recurrent_kernel"]].T)
        take(names["bias_ih"], lstm.bias,
             state[names["bias_ih"]] + state[names["bias_hh"]])
    if is_lm:
        take("1.decoder.bias", model.lm_head.bias, state["1.decoder.bias"])
    if problems:
        raise ConversionError(
            f"The state dict does not match the {type(model).__name__}:\n"
            "  - " + "\n  - ".join(problems))
    for variable, value in values.values():
        variable.assign(value)
    return sorted(state)


def save_checkpoint(model, path):
    """Write `model` as a fastai `.pth` state dict (torch tensors)."""
    import torch
    state = {k: torch.from_numpy(np.array(v, "float32"))
             for k, v in to_state_dict(model).items()}
    torch.save(state, path)


def language_model_from_folder(folder, **overrides):
    """An `AwdLstmLanguageModel` (with its tokenizer and preprocessor)
    from a folder holding a fastai `.pth` and its `itos`; `overrides` go
    to the backbone (e.g. other dropouts)."""
    from kzoo.models.awd_lstm import (AwdLstmBackbone, AwdLstmLanguageModel,
                                      AwdLstmLanguageModelPreprocessor,
                                      AwdLstmTokenizer)
    from kzoo.core.tokenizer import _keep_copy as keep_copy
    folder = Path(folder)
    checkpoints = _checkpoints(folder)
    if len(checkpoints) != 1:
        raise ConversionError(
            f"{folder} must hold exactly one fastai .pth; found "
            f"{[p.name for p in checkpoints] or 'none'}.")
    state = read_state_dict(checkpoints[0])
    itos = read_itos(_itos_file(folder))
    kwargs = backbone_kwargs(state)
    if len(itos) != kwargs["vocabulary_size"]:
        raise ConversionError(
            f"The vocabulary has {len(itos)} tokens but the embedding "
            f"{kwargs['vocabulary_size']} rows: they are not one model's.")
    pad = itos.index("xxpad") if "xxpad" in itos else 1
    backbone = AwdLstmBackbone(**{**kwargs, **LM_DROPOUTS,
                                  "pad_token_id": pad, **overrides})
    lm = AwdLstmLanguageModel(backbone, output_dropout=LM_OUTPUT_DROPOUT)
    load_state_dict(lm, state)
    # The tokenizer reads its file by path: a copy kept in kzoo's cache
    # (by content, as `.keras` loading keeps one) outlives this call.
    with tempfile.TemporaryDirectory() as scratch:
        vocabulary = Path(scratch) / "vocab.txt"
        write_vocabulary(itos, vocabulary)
        tokenizer = AwdLstmTokenizer(vocabulary=keep_copy(vocabulary))
    lm.preprocessor = AwdLstmLanguageModelPreprocessor(tokenizer)
    return lm


def to_preset(src, dest, overwrite=False, verbose=True, source=None,
              metadata=None, **unused):
    """Convert a fastai folder (`.pth` + `itos`) into a kzoo preset (an
    `AwdLstmLanguageModel` with its tokenizer), whole or not at all."""
    from kzoo.core.preset_writer import update_metadata
    src, dest = Path(src), Path(dest)
    if dest.exists() and any(dest.iterdir()) and not overwrite:
        raise ConversionError(
            f"{dest} exists and is not empty; pass overwrite=True "
            "(`--overwrite`) to replace it.")
    lm = language_model_from_folder(src)
    from kzoo.presets import staged_folder
    # One staging folder for the preset and its metadata: dest is replaced
    # only when both are written.
    with staged_folder(dest) as staging:
        lm.save_to_preset(dest)
        update_metadata(staging, source=source or str(src),
                        heads=["lm_head"],
                        converted_from={"format": "fastai", "checkpoint":
                                        _checkpoints(src)[0].name},
                        **(metadata or {}))
    if verbose:
        import sys
        print(f"Wrote kzoo preset {dest} from fastai folder {src}",
              file=sys.stderr)
    return lm
