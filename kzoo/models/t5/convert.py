"""T5 <-> Hugging Face `transformers` (`T5Model`,
`T5ForConditionalGeneration`).

Every tensor is named below. Every projection is a bias-free torch
`Linear` (`(out, in)`, transposed into Keras kernels); norms are RMSNorm
scales; each stack's relative position table lives in its first block.

    HF                                              kzoo
    shared.weight                       (V, H)      token_embedding/embeddings
    {encoder,decoder}.embed_tokens.weight           (tied to shared.weight)
    S.block.0.layer.0.SelfAttention
      .relative_attention_bias.weight   (B, heads)  S_position_bias/embeddings
    S.block.i.layer.0.SelfAttention.{q,k,v,o}       S_transformer_layer_i/attention/{query,key,value,output}
    S.block.i.layer.0.layer_norm                    .../attention_layer_norm
    decoder.block.i.layer.1.EncDecAttention.{q,k,v,o}  .../cross_attention/...
    decoder.block.i.layer.1.layer_norm              .../cross_attention_layer_norm
    S.block.i.layer.F.DenseReluDense.wi (v1.0)      .../intermediate_dense
    S.block.i.layer.F.DenseReluDense.wi_0, wi_1     .../intermediate_dense, intermediate_linear_dense
    S.block.i.layer.F.DenseReluDense.wo             .../output_dense
    S.block.i.layer.F.layer_norm                    .../output_layer_norm
    S.final_layer_norm.weight                       S_layer_norm/scale
    lm_head.weight                      (V, H)      lm_head/kernel (v1.1), or tied to shared.weight (v1.0)

(S is `encoder` or `decoder`; F is 1 in the encoder, 2 in the decoder.)
"""

from kzoo.convert.base import (Converter, WeightSpec, embedding,
                               register_converter)
from kzoo.convert.errors import ConversionError

# transformers' T5Config defaults, for configs that leave a field out.
HF_DEFAULTS = {
    "vocab_size": 32128, "d_model": 512, "d_kv": 64, "d_ff": 2048,
    "num_layers": 6, "num_heads": 8, "relative_attention_num_buckets": 32,
    "relative_attention_max_distance": 128, "dropout_rate": 0.1,
    "layer_norm_epsilon": 1e-6, "initializer_factor": 1.0,
    "feed_forward_proj": "relu",
}
# Hugging Face's feed_forward_proj activation -> kzoo's; `gated-gelu`
# is the tanh approximation (transformers maps it to `gelu_new`).
_GATED_ACTIVATIONS = {"gelu": "gelu_new", "relu": "relu", "silu": "silu",
                      "gelu_new": "gelu_new"}
_ACTIVATIONS = {"relu": "relu", "gelu": "gelu", "gelu_new": "gelu_new",
                "silu": "silu"}


def feed_forward_kwargs(feed_forward_proj):
    """`feed_forward_proj` ("relu", "gated-gelu", ...) -> `activation` and
    `gated_feed_forward`."""
    parts = str(feed_forward_proj).split("-")
    gated = len(parts) == 2 and parts[0] == "gated"
    table = _GATED_ACTIVATIONS if gated else _ACTIVATIONS
    if len(parts) > 2 or (len(parts) == 2 and not gated) or \
            parts[-1] not in table:
        raise ConversionError(
            f"T5 config has feed_forward_proj={feed_forward_proj!r}; kzoo "
            f"reproduces {sorted(_ACTIVATIONS)} and gated-"
            f"{{{', '.join(sorted(_GATED_ACTIVATIONS))}}}.")
    return {"activation": table[parts[-1]], "gated_feed_forward": gated}


def feed_forward_proj(backbone):
    """The inverse of `feed_forward_kwargs`."""
    if backbone.gated_feed_forward:
        names = {"gelu_new": "gated-gelu", "gelu_tanh": "gated-gelu",
                 "gelu_pytorch_tanh": "gated-gelu", "relu": "gated-relu",
                 "silu": "gated-silu", "swish": "gated-silu"}
    else:
        names = {"relu": "relu", "gelu": "gelu", "gelu_exact": "gelu",
                 "gelu_new": "gelu_new", "silu": "silu", "swish": "silu"}
    if backbone.activation not in names:
        raise ConversionError(
            f"T5 with activation={backbone.activation!r} and "
            f"gated_feed_forward={backbone.gated_feed_forward} has no "
            "Hugging Face feed_forward_proj.")
    return names[backbone.activation]


def ties_embeddings(hf_config):
    """Whether the checkpoint is v1.0-style (LM head = embedding, decoder
    output scaled by d_model ** -0.5). transformers 5 writes the scaling
    as `scale_decoder_outputs`; older configs say `tie_word_embeddings`."""
    scale = hf_config.get("scale_decoder_outputs")
    if scale is None:
        scale = hf_config.get("tie_word_embeddings")
    return True if scale is None else bool(scale)


def _linear(name, dense, group, part="backbone"):
    return WeightSpec(f"{name}.weight", dense.kernel, transpose=True,
                      group=group, part=part)


def _norm(name, norm, group):
    return WeightSpec(f"{name}.weight", norm.scale, group=group)


def _attention_specs(prefix, attention, group):
    return [_linear(f"{prefix}.{hf}", dense, group) for hf, dense in (
        ("q", attention.query_dense), ("k", attention.key_dense),
        ("v", attention.value_dense), ("o", attention.output_dense))]


def _feed_forward_specs(prefix, block, group):
    if block.gated_feed_forward:
        specs = [_linear(f"{prefix}.wi_0", block.intermediate_dense, group),
                 _linear(f"{prefix}.wi_1", block.intermediate_linear_dense,
                         group)]
    else:
        specs = [_linear(f"{prefix}.wi", block.intermediate_dense, group)]
    return specs + [_linear(f"{prefix}.wo", block.output_dense, group)]


@register_converter
class T5Converter(Converter):
    hf_defaults = HF_DEFAULTS
    config_fields = {
        "vocabulary_size": "vocab_size",
        "num_layers": "num_layers",
        "num_heads": "num_heads",
        "hidden_dim": "d_model",
        "intermediate_dim": "d_ff",
        "key_value_dim": "d_kv",
        "dropout": "dropout_rate",
        "relative_attention_num_buckets": "relative_attention_num_buckets",
        "relative_attention_max_distance": "relative_attention_max_distance",
        "layer_norm_epsilon": "layer_norm_epsilon",
        "initializer_factor": "initializer_factor",
    }
    family = "t5"
    generates = True
    backbone_class = "T5Backbone"
    base_model_prefix = ""
    architectures = {
        "T5Model": None,
        "T5ForConditionalGeneration": "T5Seq2SeqLM",
    }
    backbone_tensor_prefixes = ("shared.", "encoder.", "decoder.")
    skipped_tensors = {
        r"decoder\.block\.0\.layer\.1\.EncDecAttention\."
        r"relative_attention_bias\.weight":
            "a cross-attention position table some old checkpoints carry; "
            "T5 never uses it (transformers ignores it too)",
    }

    # ------------------------------------------------------------------
    # Import
    # ------------------------------------------------------------------
    def backbone_kwargs(self, config):
        num_decoder_layers = config.get("num_decoder_layers")
        return {**self.mapped_kwargs(config),
                **feed_forward_kwargs(self.hf_value(config,
                                                    "feed_forward_proj")),
                "num_decoder_layers": (
                    self.hf_value(config, "num_layers")
                    if num_decoder_layers is None else num_decoder_layers),
                "tie_word_embeddings": ties_embeddings(config)}

    def backbone_specs(self, backbone, config):
        specs = [embedding("shared.weight", backbone.token_embedding)]
        for side in ("encoder", "decoder"):
            specs.append(embedding(
                f"{side}.block.0.layer.0.SelfAttention."
                "relative_attention_bias.weight",
                backbone.get_layer(f"{side}_position_bias"),
                group=f"{side} positions"))
            blocks = (backbone.encoder_blocks if side == "encoder"
                      else backbone.decoder_blocks)
            for i, block in enumerate(blocks):
                hf, group = f"{side}.block.{i}.layer", f"{side} layer {i}"
                specs += _attention_specs(f"{hf}.0.SelfAttention",
                                          block.attention, group)
                specs.append(_norm(f"{hf}.0.layer_norm",
                                   block.attention_layer_norm, group))
                ffn = 1
                if side == "decoder":
                    ffn = 2
                    specs += _attention_specs(f"{hf}.1.EncDecAttention",
                                              block.cross_attention, group)
                    specs.append(_norm(f"{hf}.1.layer_norm",
                                       block.cross_attention_layer_norm,
                                       group))
                specs += _feed_forward_specs(f"{hf}.{ffn}.DenseReluDense",
                                             block, group)
                specs.append(_norm(f"{hf}.{ffn}.layer_norm",
                                   block.output_layer_norm, group))
            specs.append(_norm(f"{side}.final_layer_norm",
                               backbone.get_layer(f"{side}_layer_norm"),
                               f"{side} final norm"))
        return specs

    def head_specs(self, task, task_name, config):
        if task_name == "T5Seq2SeqLM" and \
                not task.backbone.tie_word_embeddings:
            return [_linear("lm_head", task.lm_head, "lm head", part="head")]
        return []

    def tied_tensors(self, task_name):
        tied = {"encoder.embed_tokens.weight": "shared.weight",
                "decoder.embed_tokens.weight": "shared.weight"}
        if task_name == "T5Seq2SeqLM":
            # Only a tied (v1.0) model leaves lm_head.weight to this table
            # (an untied one loads it through head_specs).
            tied["lm_head.weight"] = "shared.weight"
        return tied

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def hf_config(self, model, architecture, tokenizer=None):
        backbone = getattr(model, "backbone", model)
        return {
            "architectures": [architecture],
            "model_type": "t5",
            "vocab_size": backbone.vocabulary_size,
            "d_model": backbone.hidden_dim,
            "d_kv": backbone.key_value_dim,
            "d_ff": backbone.intermediate_dim,
            "num_layers": backbone.num_layers,
            "num_decoder_layers": backbone.num_decoder_layers,
            "num_heads": backbone.num_heads,
            "relative_attention_num_buckets":
                backbone.relative_attention_num_buckets,
            "relative_attention_max_distance":
                backbone.relative_attention_max_distance,
            "dropout_rate": backbone.dropout,
            "layer_norm_epsilon": backbone.layer_norm_epsilon,
            "initializer_factor": backbone.initializer_factor,
            "feed_forward_proj": feed_forward_proj(backbone),
            "tie_word_embeddings": backbone.tie_word_embeddings,
            "scale_decoder_outputs": backbone.tie_word_embeddings,
            "is_encoder_decoder": True,
            "pad_token_id": 0,
            "eos_token_id": 1,
            "decoder_start_token_id": 0,
            "dtype": "float32",
        }
