"""The parity check every encoder family's conversion test runs against
`transformers` (a test dependency only): a reference model with every
parameter randomised, each checkpoint saved once with its reference
outputs, kzoo's outputs within a tolerance of them, and kzoo's export back
to transformers checked tensor for tensor. A family's test keeps only what
is its own: its configs, its inputs, and the config fields that must come
across."""

import os
from pathlib import Path

import numpy as np

from kzoo.convert import export_hf
from kzoo.convert.safetensors import load_file

# Scales drawn around 1 and everything else around 0, so that a swapped
# LayerNorm gamma/beta (or any two tensors of one shape) cannot pass.
LAYER_NORM_SCALES = ("LayerNorm.weight", "layer_norm.weight")


def randomise_parameters(model, seed=0, fixed=None):
    """Draws every parameter of the torch `model` anew. `fixed(name,
    parameter)` may set a parameter itself (e.g. a sinusoidal table) and
    return True to keep it out of the draw; the draws of the others do not
    depend on it. Ties the model's tied weights again."""
    import torch
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            if fixed is not None and fixed(name, parameter):
                continue
            scale = name.endswith(LAYER_NORM_SCALES)
            parameter.copy_(1.0 + 0.2 * noise if scale else 0.2 * noise)
    model.tie_weights()
    return model


def make_hf_model(config, architecture, seed=0, fixed=None, eager=True):
    """A transformers `architecture` of `config`, randomised (above), in
    eval mode. `eager` picks the reference attention implementation."""
    import torch
    import transformers
    if eager:
        config._attn_implementation = "eager"
    torch.manual_seed(seed)
    model = getattr(transformers, architecture)(config).eval()
    return randomise_parameters(model, seed, fixed)


def kzoo_outputs(model, inputs):
    """kzoo's outputs as numpy arrays, named as the reference's: a task
    that reads `mask_positions` predicts at every position, a dict keeps
    its names, a single output is `logits`."""
    import keras
    if "mask_positions" in getattr(model, "extra_input_names", ()):
        batch, seq = inputs["token_ids"].shape
        positions = np.tile(np.arange(seq, dtype="int32"), (batch, 1))
        inputs = {**inputs, "mask_positions": positions}
    out = model(inputs)
    if isinstance(out, dict):
        return {k: keras.ops.convert_to_numpy(v) for k, v in out.items()}
    return {"logits": keras.ops.convert_to_numpy(out)}


def save_checkpoints(root, cases, make, inputs_for, hf_outputs, save=None):
    """Each (architecture, config) case made by `make(architecture,
    config)`, saved once under `root` (by `save(model, folder)`, default
    `save_pretrained`), with inputs from `inputs_for(model.config)` and the
    reference outputs for them: {case: (model, folder, inputs,
    expected)}."""
    made = {}
    for architecture, config in cases:
        model = make(architecture, config)
        folder = root / f"{architecture}-{config}"
        if save is None:
            model.save_pretrained(folder)
        else:
            save(model, folder)
        inputs = inputs_for(model.config)
        made[architecture, config] = (model, folder, inputs,
                                      hf_outputs(model, inputs))
    return made


def assert_close_to_reference(model, inputs, expected, atol, label,
                              outputs=kzoo_outputs):
    """Every output of `model` within `atol` of the reference's."""
    differences = max_abs_differences(outputs(model, inputs), expected)
    print(f"{label}: max abs {differences}")
    for name, difference in differences.items():
        assert difference <= atol, (label, name, difference)


def assert_export_reloads(model, hf_model, architecture, inputs, expected,
                          hf_outputs, folder, tied=(), skipped=(),
                          atol=0.0):
    """kzoo -> transformers: the export holds exactly the reference's
    tensors (less the `tied` ones transformers writes once and the
    `skipped` buffers by name suffix), bit for bit, and transformers loads
    it as `architecture` with the reference outputs (exactly, or within
    `atol` where torch's kernels round a fresh copy differently). Returns
    the exported folder and tensors."""
    import transformers
    out = export_hf(model, folder, verbose=False)
    original = {k: v.numpy() for k, v in hf_model.state_dict().items()
                if not (skipped and k.endswith(tuple(skipped)))}
    exported = check_exported_weights(out, original, tied)
    reloaded = getattr(transformers, architecture).from_pretrained(
        out, attn_implementation="eager").eval()
    again = hf_outputs(reloaded, inputs)
    for name, value in expected.items():
        np.testing.assert_allclose(again[name], value, atol=atol, rtol=0,
                                   err_msg=name)
    return out, exported, reloaded


def assert_round_trip_keeps_weights(cls, exported_folder, exported, folder,
                                    **kwargs):
    """transformers -> kzoo -> transformers once more: every tensor bit
    for bit (compared through a second export, since a pooler no head
    uses is not in a checkpoint and starts random in kzoo)."""
    back = cls.from_preset(str(exported_folder), **kwargs)
    again = load_file(export_hf(back, folder, verbose=False)
                      / "model.safetensors")
    assert set(again) == set(exported)
    for name, value in again.items():
        np.testing.assert_array_equal(value, exported[name], err_msg=name)
    return back


def max_abs_differences(actual, expected):
    assert sorted(actual) == sorted(expected), (sorted(actual), sorted(expected))
    differences = {k: float(np.max(np.abs(actual[k] - expected[k])))
                   for k in expected}
    _log_parity(differences)
    return differences


def _log_parity(differences):
    """With KZOO_PARITY_LOG=<file>, append each comparison's figures (test,
    backend, output, max abs difference): what `scripts/parity_report.py`
    sums up per family and backend for a release note."""
    path = os.environ.get("KZOO_PARITY_LOG")
    if not path:
        return
    test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
    backend = os.environ.get("KERAS_BACKEND", "?")
    with open(path, "a", encoding="utf-8") as log:
        for output, difference in differences.items():
            log.write(f"{test}\t{backend}\t{output}\t{difference:.3g}\n")


def check_exported_weights(folder, original, tied=()):
    """The Hugging Face checkpoint exported to `folder` holds exactly the
    tensors of `original` (a name -> array dict), less the `tied` ones HF
    lists twice and writes once, each bit for bit. Returns the exported
    tensors."""
    exported = load_file(Path(folder) / "model.safetensors")
    assert set(exported) == set(original) - set(tied)
    for name, value in exported.items():
        np.testing.assert_array_equal(value, original[name], err_msg=name)
    return exported
