"""GPT-2 <-> Hugging Face `transformers` (`GPT2Model`, `GPT2LMHeadModel`,
`GPT2ForSequenceClassification`).

Every tensor is named below. GPT-2 keeps OpenAI's `Conv1D` layout, whose
weights are `(in, out)` like Keras `Dense` kernels, so nothing is
transposed except the classifier's `score` (a torch `Linear`). The fused
`c_attn` (`(hidden, 3 * hidden)`: query, key, value side by side) fills
kzoo's three projections (`split_axis`).

    HF (without the "transformer." prefix)   kzoo
    wte.weight                   (V, H)      token_embedding/embeddings
    wpe.weight                   (P, H)      position_embedding/embeddings
    h.i.ln_1.{weight,bias}                   transformer_layer_i/attention_layer_norm
    h.i.attn.c_attn.{weight,bias} (H, 3H)    transformer_layer_i/attention/{query,key,value}
    h.i.attn.c_proj.{weight,bias}            transformer_layer_i/attention/output
    h.i.ln_2.{weight,bias}                   transformer_layer_i/output_layer_norm
    h.i.mlp.c_fc.{weight,bias}   (H, I)      transformer_layer_i/intermediate_dense
    h.i.mlp.c_proj.{weight,bias} (I, H)      transformer_layer_i/output_dense
    ln_f.{weight,bias}                       layer_norm
    lm_head.weight                           (tied to wte.weight)
    score.weight                 (C, H)      classifier/kernel (transposed)
    h.i.attn.bias, h.i.attn.masked_bias      causal-mask buffers: skipped
"""

import json
import shutil
from pathlib import Path

from kzoo.convert.base import (
    Converter, WeightSpec, classifier_kwargs, embedding, layer_norm,
    register_converter)
from kzoo.convert.errors import ConversionError
from kzoo.core.classification import hf_config_fields

END_OF_TEXT = "<|endoftext|>"

# Hugging Face GPT2Config defaults, for configs that leave a field out.
HF_DEFAULTS = {
    "vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12,
    "n_head": 12, "activation_function": "gelu_new",
    "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1,
    "layer_norm_epsilon": 1e-5, "initializer_range": 0.02,
}
_ACTIVATIONS = ("gelu_new", "gelu_pytorch_tanh", "gelu", "relu", "silu",
                "swish", "tanh")
# Options of GPT2Config that change the computation in ways kzoo's
# GPT2Backbone does not reproduce, with the value kzoo implements.
_FIXED_OPTIONS = {
    "scale_attn_weights": True,
    "scale_attn_by_inverse_layer_idx": False,
    "reorder_and_upcast_attn": False,
    "add_cross_attention": False,
}



@register_converter
class GPT2Converter(Converter):
    hf_defaults = HF_DEFAULTS
    config_fields = {
        "vocabulary_size": "vocab_size",
        "num_layers": "n_layer",
        "num_heads": "n_head",
        "hidden_dim": "n_embd",
        "dropout": "resid_pdrop",
        "attention_dropout": "attn_pdrop",
        "max_sequence_length": "n_positions",
        "layer_norm_epsilon": "layer_norm_epsilon",
        "initializer_range": "initializer_range",
    }
    family = "gpt2"
    generates = True
    backbone_class = "GPT2Backbone"
    base_model_prefix = "transformer"
    architectures = {
        "GPT2Model": None,
        "GPT2LMHeadModel": "GPT2CausalLM",
        "GPT2ForSequenceClassification": "GPT2Classifier",
    }
    backbone_tensor_prefixes = ("wte.", "wpe.", "h.", "ln_f.")
    skipped_tensors = {
        r"h\.\d+\.attn\.(bias|masked_bias)":
            "the causal-mask buffer older checkpoints store; not a weight",
    }

    # ------------------------------------------------------------------
    # Import
    # ------------------------------------------------------------------
    def backbone_kwargs(self, config):
        for key, supported in _FIXED_OPTIONS.items():
            if key in config and bool(config[key]) != supported:
                raise ConversionError(
                    f"GPT-2 config has {key}={config[key]!r}; kzoo's "
                    f"GPT2Backbone implements only {key}={supported}.")
        activation = self.hf_value(config, "activation_function")
        if activation not in _ACTIVATIONS:
            raise ConversionError(
                f"GPT-2 config has activation_function={activation!r}; kzoo "
                f"reproduces {', '.join(_ACTIVATIONS)}.")
        if float(self.hf_value(config, "resid_pdrop")) != float(
                self.hf_value(config, "embd_pdrop")):
            raise ConversionError(
                "GPT-2 config has resid_pdrop != embd_pdrop; kzoo's "
                "GPT2Backbone has one `dropout` for both.")
        n_inner = config.get("n_inner")  # null: 4 * n_embd
        hidden = self.hf_value(config, "n_embd")
        return {**self.mapped_kwargs(config), "activation": activation,
                "intermediate_dim": n_inner if n_inner is not None
                else 4 * hidden}

    def task_kwargs(self, task_name, config, checkpoint=None):
        if task_name == "GPT2Classifier":
            return classifier_kwargs(config)
        return {}

    def backbone_specs(self, backbone, config):
        specs = [
            embedding("wte.weight", backbone.get_layer("token_embedding")),
            embedding("wpe.weight", backbone.get_layer("position_embedding")),
        ]
        for i in range(backbone.num_layers):
            block = backbone.get_layer(f"transformer_layer_{i}")
            attention = block.attention
            hf, group = f"h.{i}", f"layer {i}"
            qkv = (attention.query_dense, attention.key_dense,
                   attention.value_dense)
            specs += [
                *layer_norm(f"{hf}.ln_1", block.attention_layer_norm, group),
                WeightSpec(f"{hf}.attn.c_attn.weight",
                           [d.kernel for d in qkv], split_axis=1, group=group),
                WeightSpec(f"{hf}.attn.c_attn.bias",
                           [d.bias for d in qkv], split_axis=0, group=group),
                *_conv1d(f"{hf}.attn.c_proj", attention.output_dense, group),
                *layer_norm(f"{hf}.ln_2", block.output_layer_norm, group),
                *_conv1d(f"{hf}.mlp.c_fc", block.intermediate_dense, group),
                *_conv1d(f"{hf}.mlp.c_proj", block.output_dense, group),
            ]
        specs += layer_norm("ln_f", backbone.get_layer("layer_norm"),
                            "final layer norm")
        return specs

    def head_specs(self, task, task_name, config):
        if task_name == "GPT2Classifier":
            return [WeightSpec("score.weight",
                               task.get_layer("classifier").kernel,
                               transpose=True, part="head",
                               group="classifier")]
        return []

    def tied_tensors(self, task_name):
        if task_name == "GPT2CausalLM":
            return {"lm_head.weight": "wte.weight"}
        return {}

    # ------------------------------------------------------------------
    # Tokenizer
    # ------------------------------------------------------------------
    def write_tokenizer(self, checkpoint, preset_dir, report):
        from kzoo.models.gpt2.tokenizer import GPT2Tokenizer
        return write_bpe_tokenizer(self, checkpoint, preset_dir, report,
                                   GPT2Tokenizer)

    def preprocessor(self, task_name, tokenizer, config, checkpoint=None):
        if tokenizer is None:
            return None
        from kzoo.models.gpt2.preprocessor import (
            GPT2CausalLMPreprocessor, GPT2Preprocessor)
        length = int(self.hf_value(config, "n_positions"))
        if task_name == "GPT2Classifier":
            return GPT2Preprocessor(tokenizer, sequence_length=length)
        return GPT2CausalLMPreprocessor(tokenizer, sequence_length=length)

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def hf_config(self, model, architecture, tokenizer=None):
        backbone = getattr(model, "backbone", model)
        end_id = (tokenizer.end_token_id if tokenizer is not None
                  else backbone.vocabulary_size - 1)
        config = {
            "architectures": [architecture],
            "model_type": "gpt2",
            "vocab_size": backbone.vocabulary_size,
            "n_positions": backbone.max_sequence_length,
            "n_embd": backbone.hidden_dim,
            "n_layer": backbone.num_layers,
            "n_head": backbone.num_heads,
            "n_inner": backbone.intermediate_dim,
            "activation_function": backbone.activation,
            "resid_pdrop": backbone.dropout,
            "embd_pdrop": backbone.dropout,
            "attn_pdrop": backbone.attention_dropout,
            "layer_norm_epsilon": backbone.layer_norm_epsilon,
            "initializer_range": backbone.initializer_range,
            "scale_attn_weights": True,
            "bos_token_id": end_id,
            "eos_token_id": end_id,
            "tie_word_embeddings": True,
            "dtype": "float32",
        }
        if architecture == "GPT2ForSequenceClassification":
            config.update(hf_config_fields(model.num_classes,
                                           model.problem_type))
            # Hugging Face finds each row's last real token through it.
            config["pad_token_id"] = end_id
        return config

    def export_tokenizer(self, tokenizer, dest, config):
        dest = Path(dest)
        shutil.copyfile(tokenizer.vocabulary, dest / "vocab.json")
        shutil.copyfile(tokenizer.merges, dest / "merges.txt")
        special = {"bos_token": END_OF_TEXT, "eos_token": END_OF_TEXT,
                   "unk_token": END_OF_TEXT}
        tokenizer_config = {
            "tokenizer_class": "GPT2Tokenizer",
            "add_prefix_space": False,
            "model_max_length": config["n_positions"],
            **special,
        }
        (dest / "tokenizer_config.json").write_text(
            json.dumps(tokenizer_config, indent=2) + "\n", encoding="utf-8")
        (dest / "special_tokens_map.json").write_text(
            json.dumps(special, indent=2) + "\n", encoding="utf-8")


def write_bpe_files(checkpoint, preset_dir, report):
    """Write a byte-level BPE checkpoint's `vocab.json` and `merges.txt`
    into `preset_dir` (copied, or taken from a BPE `tokenizer.json`);
    returns their paths as strings, or None (noted in the report) when the
    checkpoint has neither."""
    preset_dir = Path(preset_dir)
    vocab_path = preset_dir / "vocab.json"
    merges_path = preset_dir / "merges.txt"
    if checkpoint.has("vocab.json") and checkpoint.has("merges.txt"):
        shutil.copyfile(checkpoint.file("vocab.json"), vocab_path)
        shutil.copyfile(checkpoint.file("merges.txt"), merges_path)
        source = "vocab.json + merges.txt"
    else:
        model = (checkpoint.json("tokenizer.json") or {}).get("model") or {}
        if model.get("type") != "BPE" or not isinstance(
                model.get("vocab"), dict):
            report.notes.append(
                "no vocab.json/merges.txt or BPE tokenizer.json: the "
                "preset has no tokenizer")
            return None
        vocab_path.write_text(json.dumps(model["vocab"]), encoding="utf-8")
        merges = [m if isinstance(m, str) else " ".join(m)
                  for m in model.get("merges") or []]
        merges_path.write_text("#version: 0.2\n" + "\n".join(merges)
                               + "\n", encoding="utf-8")
        source = "tokenizer.json"
    report.notes.append(f"tokenizer: byte-level BPE from {source}")
    return str(vocab_path), str(merges_path)


def write_bpe_tokenizer(converter, checkpoint, preset_dir, report,
                        tokenizer_cls):
    """`write_bpe_files`, then the `tokenizer_cls` (a byte-level BPE
    tokenizer class) on them, checked by `converter` against the
    checkpoint's own tokenizer; None where the checkpoint has none."""
    paths = write_bpe_files(checkpoint, preset_dir, report)
    if paths is None:
        return None
    return converter.checked_tokenizer(checkpoint,
                                       lambda: tokenizer_cls(*paths))


def _conv1d(prefix, dense, group):
    """The two specs of GPT-2's `Conv1D` (weight `(in, out)`, no transpose)
    <-> a Keras `Dense`."""
    return [WeightSpec(f"{prefix}.weight", dense.kernel, group=group),
            WeightSpec(f"{prefix}.bias", dense.bias, group=group)]
