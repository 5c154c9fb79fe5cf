"""The parity check every encoder family's conversion test runs against
`transformers` (a test dependency only): a reference model of a config's
fields with every parameter randomised, random inputs padded on the left,
on the right and inside the text, each checkpoint saved once with its
reference outputs named as kzoo names them, kzoo's outputs within a
tolerance of them, and kzoo's export back to transformers checked tensor
for tensor. A family's test keeps only what is its own: its configs and
the config fields that must come across."""

import os
import re
from pathlib import Path

import numpy as np

from kzoo.convert import export_hf
from kzoo.convert.safetensors import load_file

# Scales drawn around 1 and everything else around 0, so that a swapped
# LayerNorm gamma/beta (or any two tensors of one shape) cannot pass.
LAYER_NORM_SCALES = ("LayerNorm.weight", "layer_norm.weight",
                     "layernorm_embedding.weight")
# Buffers a checkpoint stores as learned values, drawn after the
# parameters (BART's final_logits_bias).
LEARNED_BUFFERS = ("final_logits_bias",)
# Parameters a formula fixes, kept as transformers computes them: {config
# flag: parameter name suffix} (DistilBERT's sinusoidal position table).
FORMULA_TABLES = {"sinusoidal_pos_embds": "position_embeddings.weight"}
# Heads with two outputs whatever `num_labels` says: question answering's
# start and end, a pretraining head's sentence-pair classes.
TWO_LABEL_HEADS = ("ForQuestionAnswering", "ForPreTraining")

# kzoo's input names -> transformers'; transformers' outputs -> kzoo's.
HF_INPUT_NAMES = {"token_ids": "input_ids", "segment_ids": "token_type_ids",
                  "padding_mask": "attention_mask",
                  "encoder_token_ids": "input_ids",
                  "encoder_padding_mask": "attention_mask",
                  "decoder_token_ids": "decoder_input_ids",
                  "decoder_padding_mask": "decoder_attention_mask"}
KZOO_OUTPUT_NAMES = {
    "last_hidden_state": "sequence_output", "pooler_output": "pooled_output",
    "logits": "logits", "start_logits": "start_logits",
    "end_logits": "end_logits", "prediction_logits": "mlm",
    "seq_relationship_logits": "nsp", "sop_logits": "sop"}


def randomise_parameters(model, seed=0, fixed=None):
    """Draws every parameter of the torch `model` anew, then its learned
    buffers. `fixed(name, parameter)` may set a parameter itself (e.g. a
    sinusoidal table) and return True to keep it out of the draw; the
    draws of the others do not depend on it. Ties the model's tied
    weights again."""
    import torch
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator)
            if fixed is not None and fixed(name, parameter):
                continue
            scale = name.endswith(LAYER_NORM_SCALES)
            parameter.copy_(1.0 + 0.2 * noise if scale else 0.2 * noise)
        for name, buffer in model.named_buffers():
            if name.endswith(LEARNED_BUFFERS):
                buffer.copy_(0.2 * torch.randn(buffer.shape,
                                               generator=generator))
    model.tie_weights()
    return model


def make_hf_model(architecture, fields, seed=0):
    """transformers' `architecture` (e.g. "AlbertForMaskedLM") of a config
    of `fields`, made by its family's config class (AlbertConfig),
    randomised (above) but for the tables a formula fixes, in eval mode,
    with the reference ("eager") attention."""
    import torch
    import transformers
    family = re.sub(r"(Model|For\w+)$", "", architecture)
    config = getattr(transformers, f"{family}Config")(**fields)
    if architecture.endswith(TWO_LABEL_HEADS):
        config.num_labels = 2
    config._attn_implementation = "eager"
    formula = tuple(suffix for flag, suffix in FORMULA_TABLES.items()
                    if getattr(config, flag, False))
    torch.manual_seed(seed)
    model = getattr(transformers, architecture)(config).eval()
    return randomise_parameters(
        model, seed, fixed=lambda name, _: name.endswith(formula))


def random_inputs(config, batch=3, seq=11, seed=0,
                  pad_rows=("left", "right", "inside")):
    """Random inputs for a `transformers` encoder `config`, in kzoo's
    names: ids that are never the padding id in the text; a padding mask
    with row i padded as `pad_rows[i]` says ("left": its first 3 tokens,
    "right": its last 4, at most all but one; "inside": a padding id at
    its middle that is attended to, which RoBERTa's position numbering
    skips; None: none); segment ids over every token type where the
    config has token types."""
    pad = config.pad_token_id or 0
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, config.vocab_size, (batch, seq)).astype("int32")
    ids[ids == pad] = pad + 1
    inputs = {"token_ids": ids}
    types = getattr(config, "type_vocab_size", 0) or 0
    if types:
        inputs["segment_ids"] = rng.integers(0, types,
                                             (batch, seq)).astype("int32")
    mask = np.ones((batch, seq), "int32")
    for row, padding in enumerate(pad_rows):
        if padding == "left":
            mask[row, :min(3, seq - 1)] = 0
        elif padding == "right":
            mask[row, seq - min(4, seq - 1):] = 0
        elif padding == "inside":
            ids[row, seq // 2] = pad
    ids[mask == 0] = pad
    inputs["padding_mask"] = mask
    return inputs


def hf_forward(model, inputs):
    """The `transformers` `model` run on kzoo's `inputs` (named as
    HF_INPUT_NAMES maps them), its output as transformers returns it."""
    import torch
    with torch.no_grad():
        return model(**{HF_INPUT_NAMES[name]: torch.tensor(value).long()
                        for name, value in inputs.items()})


def hf_outputs(model, inputs):
    """The outputs of the `transformers` `model` for kzoo's `inputs`,
    named as kzoo names them (KZOO_OUTPUT_NAMES)."""
    return {KZOO_OUTPUT_NAMES[name]: value.numpy()
            for name, value in hf_forward(model, inputs).items()
            if name in KZOO_OUTPUT_NAMES}


def kzoo_outputs(model, inputs):
    """kzoo's outputs as numpy arrays, named as the reference's: the
    model reads the inputs it takes (a task that reads `mask_positions`
    predicts at every position); a dict keeps its names, a single output
    is `logits`."""
    import keras
    batch, seq = inputs["token_ids"].shape
    positions = np.tile(np.arange(seq, dtype="int32"), (batch, 1))
    inputs = {**inputs, "mask_positions": positions}
    out = model({name: inputs[name] for name in model.input_names})
    if isinstance(out, dict):
        return {k: keras.ops.convert_to_numpy(v) for k, v in out.items()}
    return {"logits": keras.ops.convert_to_numpy(out)}


def save_checkpoints(root, cases, configs, inputs_for=random_inputs,
                     save=None):
    """Each (architecture, config name) case made from `configs[name]`
    (make_hf_model), saved once under `root` (by `save(model, folder)`,
    default `save_pretrained`), with inputs from `inputs_for(model.config)`
    and the reference outputs for them: {case: (model, folder, inputs,
    expected)}."""
    made = {}
    for architecture, config in cases:
        model = make_hf_model(architecture, configs[config])
        folder = root / f"{architecture}-{config}"
        if save is None:
            model.save_pretrained(folder)
        else:
            save(model, folder)
        inputs = inputs_for(model.config)
        made[architecture, config] = (model, folder, inputs,
                                      hf_outputs(model, inputs))
    return made


def from_checkpoint(cls, folder):
    """`cls.from_preset` of a transformers checkpoint folder with no
    tokenizer (a task gets no preprocessor); it must make a `cls`."""
    from kzoo.core.backbone import Backbone
    kwargs = {} if issubclass(cls, Backbone) else {"preprocessor": None}
    model = cls.from_preset(str(folder), **kwargs)
    assert type(model) is cls, (type(model), cls)
    return model


def check_conversion(case, kzoo_class, folder, atol=1e-5, tied=(),
                     skipped=(), reload_atol=0.0):
    """One saved case of `save_checkpoints` both ways: transformers ->
    kzoo as the registered class `kzoo_class`, every output within `atol`
    of the reference's; kzoo -> transformers under `folder`, every tensor
    bit for bit and transformers' outputs of the export within
    `reload_atol` of the reference's (assert_export_reloads). Returns the
    kzoo model, the reference's config, the exported folder and its
    tensors, for the family's own checks."""
    from kzoo.core.registry import get_class
    hf_model, checkpoint, inputs, expected = case
    model = from_checkpoint(get_class(kzoo_class), checkpoint)
    assert_close_to_reference(model, inputs, expected, atol, checkpoint.name)
    out, exported, _ = assert_export_reloads(
        model, hf_model, type(hf_model).__name__, inputs, expected,
        Path(folder) / "exported", tied=tied, skipped=skipped,
        atol=reload_atol)
    return model, hf_model.config, out, exported


def assert_close_to_reference(model, inputs, expected, atol, label):
    """Every output of `model` within `atol` of the reference's."""
    differences = max_abs_differences(kzoo_outputs(model, inputs), expected)
    print(f"{label}: max abs {differences}")
    for name, difference in differences.items():
        assert difference <= atol, (label, name, difference)


def assert_export_reloads(model, hf_model, architecture, inputs, expected,
                          folder, tied=(), skipped=(), atol=0.0):
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


def assert_round_trip_keeps_weights(cls, exported_folder, exported, folder):
    """transformers -> kzoo -> transformers once more: every tensor bit
    for bit (compared through a second export, since a pooler no head
    uses is not in a checkpoint and starts random in kzoo)."""
    back = from_checkpoint(cls, exported_folder)
    again = load_file(export_hf(back, folder, verbose=False)
                      / "model.safetensors")
    assert set(again) == set(exported)
    for name, value in again.items():
        np.testing.assert_array_equal(value, exported[name], err_msg=name)
    return back


def assert_tokenizes_as_transformers(preprocessor, hf_tokenizer, texts):
    """transformers' `hf_tokenizer` (e.g. AutoTokenizer of kzoo's export)
    tokenizes each of `texts` as the kzoo `preprocessor`'s tokenizer does,
    and packs the first half of them (up to 4) with as many after as the
    preprocessor does at its sequence length: the same ids, and the same
    segment ids where the preprocessor gives them."""
    tokenizer = preprocessor.tokenizer
    for text in texts:
        assert tokenizer([text])[0] == hf_tokenizer(
            text, add_special_tokens=False)["input_ids"], text
    half = min(4, len(texts) // 2)
    firsts, seconds = list(texts[:half]), list(texts[half:2 * half])
    packed = preprocessor((firsts, seconds))
    segments = "segment_ids" in packed
    expected = hf_tokenizer(firsts, seconds, padding="max_length",
                            truncation=True,
                            max_length=preprocessor.sequence_length,
                            return_token_type_ids=segments)
    np.testing.assert_array_equal(np.asarray(packed["token_ids"]),
                                  expected["input_ids"])
    if segments:
        np.testing.assert_array_equal(np.asarray(packed["segment_ids"]),
                                      expected["token_type_ids"])


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
