"""GPT-2: Hugging Face `transformers` checkpoints <-> `GPT2Backbone`.

Every tensor is named here, one line each. Hugging Face keeps GPT-2's
original `Conv1D` layout (kernels are `(in, out)`, like Keras `Dense`) and
fuses the query/key/value projections into one `c_attn` of width
`3 * hidden`; kzoo has three `Dense` layers, so `c_attn` is split in three
on import and concatenated on export. Nothing else is transposed.

    Hugging Face (GPT2Model / GPT2LMHeadModel)   kzoo GPT2Backbone
    wte.weight                        (V, H)     token_embedding/embeddings
    wpe.weight                        (P, H)     position_embedding/embeddings
    h.{i}.ln_1.{weight,bias}                     transformer_layer_{i}/attention_layer_norm
    h.{i}.attn.c_attn.{weight,bias}   (H, 3H)    .../attention/{query,key,value}
    h.{i}.attn.c_proj.{weight,bias}   (H, H)     .../attention/output
    h.{i}.ln_2.{weight,bias}                     .../output_layer_norm
    h.{i}.mlp.c_fc.{weight,bias}      (H, I)     .../intermediate_dense
    h.{i}.mlp.c_proj.{weight,bias}    (I, H)     .../output_dense
    ln_f.{weight,bias}                           layer_norm

Names may carry a `transformer.` prefix (GPT2LMHeadModel); `lm_head.weight`
is the tied token embedding (checked equal when present, never loaded).

Functions:
    backbone_config(hf_config) / hf_config(backbone): the configs.
    load_state_dict(backbone, state): put HF tensors into a backbone.
    state_dict(backbone): the backbone's weights under HF names.
    backbone_from_hf(folder): config + weights of a checkpoint folder.
"""

import keras
import numpy as np

from kzoo.convert.errors import ConversionError

MODEL_TYPE = "gpt2"
ARCHITECTURES = ("GPT2LMHeadModel", "GPT2Model", "GPT2ForSequenceClassification",
                 "GPT2DoubleHeadsModel")

# Buffers older checkpoints store beside the weights (the causal mask and
# its fill value); they carry no learned values.
_BUFFER_SUFFIXES = (".attn.bias", ".attn.masked_bias")


# ----------------------------------------------------------------------
# Configs
# ----------------------------------------------------------------------
def backbone_config(hf_config):
    """A `GPT2Backbone` config from a Hugging Face `config.json` dict."""
    model_type = hf_config.get("model_type", MODEL_TYPE)
    if model_type != MODEL_TYPE:
        raise ConversionError(
            f"Expected a GPT-2 checkpoint (model_type 'gpt2'), got "
            f"{model_type!r}.")
    unsupported = {
        "scale_attn_by_inverse_layer_idx": False,
        "reorder_and_upcast_attn": False,
        "scale_attn_weights": True,
        "add_cross_attention": False,
    }
    for key, supported in unsupported.items():
        if key in hf_config and bool(hf_config[key]) != supported:
            raise ConversionError(
                f"GPT-2 config has {key}={hf_config[key]!r}; kzoo's "
                f"GPT2Backbone supports only {key}={supported}.")
    hidden = int(hf_config["n_embd"])
    return {
        "vocabulary_size": int(hf_config["vocab_size"]),
        "num_layers": int(hf_config["n_layer"]),
        "num_heads": int(hf_config["n_head"]),
        "hidden_dim": hidden,
        "intermediate_dim": int(hf_config.get("n_inner") or 4 * hidden),
        "dropout": float(hf_config.get("resid_pdrop", 0.1)),
        "attention_dropout": float(hf_config.get("attn_pdrop", 0.1)),
        "max_sequence_length": int(hf_config.get("n_positions", 1024)),
        "activation": hf_config.get("activation_function", "gelu_new"),
        "layer_norm_epsilon": float(hf_config.get("layer_norm_epsilon", 1e-5)),
        "initializer_range": float(hf_config.get("initializer_range", 0.02)),
    }


def hf_config(backbone):
    """The Hugging Face `config.json` dict of a `GPT2Backbone`."""
    return {
        "model_type": MODEL_TYPE,
        "architectures": ["GPT2LMHeadModel"],
        "vocab_size": backbone.vocabulary_size,
        "n_layer": backbone.num_layers,
        "n_head": backbone.num_heads,
        "n_embd": backbone.hidden_dim,
        "n_inner": backbone.intermediate_dim,
        "n_positions": backbone.max_sequence_length,
        "n_ctx": backbone.max_sequence_length,
        "activation_function": backbone.activation,
        "resid_pdrop": backbone.dropout,
        "embd_pdrop": backbone.dropout,
        "attn_pdrop": backbone.attention_dropout,
        "layer_norm_epsilon": backbone.layer_norm_epsilon,
        "initializer_range": backbone.initializer_range,
        "bos_token_id": 50256,
        "eos_token_id": 50256,
        "tie_word_embeddings": True,
    }


# ----------------------------------------------------------------------
# The name map
# ----------------------------------------------------------------------
def _weight_map(backbone):
    """`[(hf_name, [keras variables], kind)]`; kind says how the HF tensor
    maps onto the variables: "same", or "split3" (c_attn -> q, k, v)."""
    entries = [
        ("wte.weight", [backbone.get_layer("token_embedding").embeddings],
         "same"),
        ("wpe.weight", [backbone.get_layer("position_embedding").embeddings],
         "same"),
    ]
    for i in range(backbone.num_layers):
        block = backbone.get_layer(f"transformer_layer_{i}")
        attention = block.attention
        prefix = f"h.{i}."
        qkv = (attention.query_dense, attention.key_dense,
               attention.value_dense)
        entries += [
            (prefix + "ln_1.weight", [block.attention_layer_norm.gamma], "same"),
            (prefix + "ln_1.bias", [block.attention_layer_norm.beta], "same"),
            (prefix + "attn.c_attn.weight", [d.kernel for d in qkv], "split3"),
            (prefix + "attn.c_attn.bias", [d.bias for d in qkv], "split3"),
            (prefix + "attn.c_proj.weight", [attention.output_dense.kernel],
             "same"),
            (prefix + "attn.c_proj.bias", [attention.output_dense.bias],
             "same"),
            (prefix + "ln_2.weight", [block.output_layer_norm.gamma], "same"),
            (prefix + "ln_2.bias", [block.output_layer_norm.beta], "same"),
            (prefix + "mlp.c_fc.weight", [block.intermediate_dense.kernel],
             "same"),
            (prefix + "mlp.c_fc.bias", [block.intermediate_dense.bias], "same"),
            (prefix + "mlp.c_proj.weight", [block.output_dense.kernel], "same"),
            (prefix + "mlp.c_proj.bias", [block.output_dense.bias], "same"),
        ]
    layer_norm = backbone.get_layer("layer_norm")
    entries += [("ln_f.weight", [layer_norm.gamma], "same"),
                ("ln_f.bias", [layer_norm.beta], "same")]
    return entries


def _strip_prefix(name):
    return name[len("transformer."):] if name.startswith("transformer.") \
        else name


# ----------------------------------------------------------------------
# HF -> kzoo
# ----------------------------------------------------------------------
def load_state_dict(backbone, state, source="the checkpoint"):
    """Assign HF-named tensors (`{name: array}`, or anything with `keys()`
    and `[name]`) to `backbone`.

    Every backbone weight must be present with its exact shape and every
    checkpoint tensor must be used (bar known buffers and the tied
    `lm_head.weight`): a silent mismatch cannot happen. Shapes are all
    checked before any variable is assigned.
    """
    names = {_strip_prefix(name): name for name in state.keys()}
    entries = _weight_map(backbone)
    expected = {hf_name for hf_name, _, _ in entries}

    unused = sorted(
        name for name in names
        if name not in expected and name != "lm_head.weight"
        and not name.endswith(_BUFFER_SUFFIXES))
    missing = sorted(expected - set(names))
    if missing or unused:
        raise ConversionError(
            f"{source} does not match GPT2Backbone("
            f"num_layers={backbone.num_layers}): missing "
            f"{missing[:8]}{' ...' if len(missing) > 8 else ''}; unexpected "
            f"{unused[:8]}{' ...' if len(unused) > 8 else ''}.")

    def shape_of(name):
        value = state[names[name]]
        return tuple(value.shape)

    for hf_name, variables, kind in entries:
        want = tuple(variables[0].shape)
        if kind == "split3":
            want = want[:-1] + (3 * want[-1],)
        got = shape_of(hf_name)
        if got != want:
            raise ConversionError(
                f"{source}: tensor {hf_name!r} has shape {got}, but "
                f"GPT2Backbone expects {want} (is the config right?).")

    for hf_name, variables, kind in entries:
        value = _as_numpy(state[names[hf_name]])
        if kind == "same":
            variables[0].assign(value.astype(variables[0].dtype))
        else:
            for variable, part in zip(variables,
                                      np.split(value, 3, axis=-1)):
                variable.assign(part.astype(variable.dtype))

    if "lm_head.weight" in names:
        lm_head = _as_numpy(state[names["lm_head.weight"]])
        wte = _as_numpy(state[names["wte.weight"]])
        if lm_head.shape != wte.shape or not np.array_equal(lm_head, wte):
            raise ConversionError(
                f"{source}: lm_head.weight differs from wte.weight; kzoo's "
                "GPT-2 ties the output projection to the token embedding.")
    return backbone


def _as_numpy(value):
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach"):  # a torch tensor
        return value.detach().cpu().float().numpy() \
            if str(value.dtype) == "torch.bfloat16" \
            else value.detach().cpu().numpy()
    return np.asarray(value)


# ----------------------------------------------------------------------
# kzoo -> HF
# ----------------------------------------------------------------------
def state_dict(backbone, prefix="transformer.", include_lm_head=True):
    """The backbone's weights as `{hf_name: np.ndarray}`, the layout
    `GPT2LMHeadModel.load_state_dict` takes (with `prefix="transformer."`)
    or `GPT2Model`'s (`prefix=""`, `include_lm_head=False`)."""
    state = {}
    for hf_name, variables, kind in _weight_map(backbone):
        values = [keras.ops.convert_to_numpy(v) for v in variables]
        value = values[0] if kind == "same" else np.concatenate(values, -1)
        state[prefix + hf_name] = value
    if include_lm_head:
        state["lm_head.weight"] = state[prefix + "wte.weight"]
    return state


# ----------------------------------------------------------------------
# A checkpoint folder
# ----------------------------------------------------------------------
def backbone_from_hf(folder_or_checkpoint, **config_overrides):
    """A `GPT2Backbone` with the config and weights of a Hugging Face GPT-2
    checkpoint folder (`config.json` + `model.safetensors` or
    `pytorch_model.bin`)."""
    from kzoo.convert.checkpoint import HFCheckpoint
    from kzoo.models.gpt2.backbone import GPT2Backbone

    checkpoint = folder_or_checkpoint
    owned = not isinstance(checkpoint, HFCheckpoint)
    if owned:
        checkpoint = HFCheckpoint(checkpoint)
    try:
        config = {**backbone_config(checkpoint.config), **config_overrides}
        backbone = GPT2Backbone(**config)
        tensors = checkpoint.tensors

        class _Lazy:
            def keys(self):
                return tensors.names()

            def __getitem__(self, name):
                return _LazyTensor(tensors, name)

        load_state_dict(backbone, _Lazy(), source=str(checkpoint.path))
        return backbone
    finally:
        if owned:
            checkpoint.close()


class _LazyTensor:
    """A checkpoint tensor whose shape is known before its data is read."""

    def __init__(self, tensors, name):
        self._tensors, self._name = tensors, name
        self.shape = tuple(tensors.shape(name))

    def __array__(self, dtype=None, copy=None):
        from kzoo.convert.checkpoint import as_float32
        value = as_float32(self._tensors.get(self._name))
        return value if dtype is None else value.astype(dtype)
