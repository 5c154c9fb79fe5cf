"""BART <-> Hugging Face `transformers` (`BartModel`,
`BartForConditionalGeneration`, `BartForSequenceClassification`).

Every tensor is named below; every projection is a torch `Linear` with a
bias (`(out, in)`, transposed into Keras kernels).

    HF                                       kzoo
    shared.weight                (V, H)      token_embedding/embeddings
    {encoder,decoder}.embed_tokens.weight    (tied to shared.weight)
    S.embed_positions.weight     (P + 2, H)  S_position_embedding (the same
                                             table, BART's two unused rows
                                             included)
    S.layernorm_embedding                    S_embeddings_layer_norm
    S.layers.i.self_attn.{q,k,v,out}_proj    S_transformer_layer_i/attention/{query,key,value,output}
    S.layers.i.self_attn_layer_norm          .../attention_layer_norm
    decoder.layers.i.encoder_attn.*_proj     .../cross_attention/...
    decoder.layers.i.encoder_attn_layer_norm .../cross_attention_layer_norm
    S.layers.i.fc1, fc2                      .../intermediate_dense, output_dense
    S.layers.i.final_layer_norm              .../output_layer_norm
    final_logits_bias            (1, V)      lm_head/bias (V,)
    lm_head.weight               (V, H)      (tied to shared.weight)
    classification_head.dense                classifier_dense
    classification_head.out_proj             classifier

(S is `encoder` or `decoder`; the task checkpoint keeps them under
"model.".)
"""

import numpy as np

from kzoo.convert.base import (Converter, WeightSpec, classifier_kwargs,
                               embedding, layer_norm, linear,
                               register_converter)
from kzoo.models.bert.convert import _ACTIVATIONS, _EXPORT_ACTIVATIONS
from kzoo.convert.errors import ConversionError
from kzoo.models.gpt2.convert import write_bpe_tokenizer
from kzoo.models.roberta.convert import RobertaConverter
from kzoo.core.classification import hf_config_fields
from kzoo.core.registry import get_class

# transformers' BartConfig defaults, for configs that leave a field out.
HF_DEFAULTS = {
    "vocab_size": 50265, "max_position_embeddings": 1024,
    "encoder_layers": 12, "encoder_ffn_dim": 4096,
    "encoder_attention_heads": 16, "decoder_layers": 12,
    "decoder_ffn_dim": 4096, "decoder_attention_heads": 16,
    "activation_function": "gelu", "d_model": 1024, "dropout": 0.1,
    "attention_dropout": 0.0, "activation_dropout": 0.0, "init_std": 0.02,
    "scale_embedding": False, "pad_token_id": 1, "bos_token_id": 0,
    "eos_token_id": 2, "decoder_start_token_id": 2,
    "classifier_dropout": 0.0,
}
# torch's LayerNorm default: BART's config has no epsilon.
LAYER_NORM_EPSILON = 1e-5
# Options of fairseq-era configs (mBART's layout) that kzoo's BART does not
# reproduce, with the value BART has.
_BART_ONLY = {"normalize_before": False, "add_final_layer_norm": False,
              "normalize_embedding": True, "static_position_embeddings": False,
              "add_bias_logits": False}


class RowSpec(WeightSpec):
    """A `(1, V)` tensor <-> a `(V,)` variable (`final_logits_bias`)."""

    @property
    def hf_shape(self):
        return (1,) + tuple(self.variables[0].shape)

    def to_kzoo(self, array):
        return [np.asarray(array).reshape(-1)]

    def to_hf(self, arrays):
        return np.ascontiguousarray(arrays[0].reshape(1, -1))


def _attention_specs(prefix, attention, group):
    specs = []
    for hf, dense in (("q_proj", attention.query_dense),
                      ("k_proj", attention.key_dense),
                      ("v_proj", attention.value_dense),
                      ("out_proj", attention.output_dense)):
        specs += linear(f"{prefix}.{hf}", dense, group)
    return specs


@register_converter
class BartConverter(Converter):
    family = "bart"
    generates = True
    backbone_class = "BartBackbone"
    base_model_prefix = "model"
    hf_defaults = HF_DEFAULTS
    config_fields = {
        "vocabulary_size": "vocab_size",
        "num_layers": "encoder_layers",
        "num_heads": "encoder_attention_heads",
        "hidden_dim": "d_model",
        "intermediate_dim": "encoder_ffn_dim",
        "max_sequence_length": "max_position_embeddings",
        "num_decoder_layers": "decoder_layers",
        "num_decoder_heads": "decoder_attention_heads",
        "decoder_intermediate_dim": "decoder_ffn_dim",
        "dropout": "dropout",
        "attention_dropout": "attention_dropout",
        "activation_dropout": "activation_dropout",
        "scale_embedding": "scale_embedding",
        "initializer_range": "init_std",
    }
    architectures = {
        "BartModel": None,
        "BartForConditionalGeneration": "BartSeq2SeqLM",
        "BartForSequenceClassification": "BartTextClassifier",
    }
    backbone_tensor_prefixes = ("shared.", "encoder.", "decoder.")
    # The released checkpoints (`BartModel`) hold everything the LM needs:
    # its head is the embedding (final_logits_bias is zeros if absent).
    pretraining_tasks = (("BartSeq2SeqLM", ("shared.weight",)),)

    # ------------------------------------------------------------------
    # Import
    # ------------------------------------------------------------------
    def backbone_kwargs(self, config):
        for key, value in _BART_ONLY.items():
            if key in config and config[key] is not None and \
                    bool(config[key]) != value:
                raise ConversionError(
                    f"{key}={config[key]!r}: kzoo's BartBackbone is BART's "
                    f"post-LN layout ({key}={value}); this checkpoint is "
                    "another model's (mBART-style).")
        act = self.hf_value(config, "activation_function")
        if act not in _ACTIVATIONS:
            raise ConversionError(
                f"activation_function={act!r} has no exact kzoo equivalent "
                f"(known: {', '.join(sorted(_ACTIVATIONS))}).")
        return {**self.mapped_kwargs(config),
                "activation": _ACTIVATIONS[act],
                "layer_norm_epsilon": LAYER_NORM_EPSILON}

    def backbone_specs(self, backbone, config):
        specs = [embedding("shared.weight", backbone.token_embedding)]
        for side in ("encoder", "decoder"):
            specs.append(embedding(
                f"{side}.embed_positions.weight",
                backbone.get_layer(f"{side}_position_embedding"),
                group=f"{side} positions"))
            specs += layer_norm(
                f"{side}.layernorm_embedding",
                backbone.get_layer(f"{side}_embeddings_layer_norm"),
                f"{side} embeddings")
            blocks = (backbone.encoder_blocks if side == "encoder"
                      else backbone.decoder_blocks)
            for i, block in enumerate(blocks):
                hf, group = f"{side}.layers.{i}", f"{side} layer {i}"
                specs += _attention_specs(f"{hf}.self_attn", block.attention,
                                          group)
                specs += layer_norm(f"{hf}.self_attn_layer_norm",
                                    block.attention_layer_norm, group)
                if side == "decoder":
                    specs += _attention_specs(f"{hf}.encoder_attn",
                                              block.cross_attention, group)
                    specs += layer_norm(f"{hf}.encoder_attn_layer_norm",
                                        block.cross_attention_layer_norm,
                                        group)
                specs += linear(f"{hf}.fc1", block.intermediate_dense, group)
                specs += linear(f"{hf}.fc2", block.output_dense, group)
                specs += layer_norm(f"{hf}.final_layer_norm",
                                    block.output_layer_norm, group)
        return specs

    def task_kwargs(self, task_name, config, checkpoint=None):
        if task_name == "BartTextClassifier":
            return {**classifier_kwargs(config), "dropout": float(
                self.hf_value(config, "classifier_dropout"))}
        return {}

    def head_specs(self, task, task_name, config):
        if task_name == "BartTextClassifier":
            return [
                *linear("classification_head.dense",
                        task.get_layer("classifier_dense"), "classifier",
                        part="head"),
                *linear("classification_head.out_proj",
                        task.get_layer("classifier"), "classifier",
                        part="head"),
            ]
        if task_name == "BartSeq2SeqLM":
            return [RowSpec(
                "final_logits_bias", task.lm_head.bias, part="head",
                group="lm head",
                optional="transformers starts it at zeros when a "
                         "checkpoint (BartModel) has none")]
        return []

    def tied_tensors(self, task_name):
        tied = {"encoder.embed_tokens.weight": "shared.weight",
                "decoder.embed_tokens.weight": "shared.weight"}
        if task_name == "BartSeq2SeqLM":
            tied["lm_head.weight"] = "shared.weight"
        return tied

    # ------------------------------------------------------------------
    # Tokenizer (RoBERTa's files: GPT-2's merges, fairseq ids)
    # ------------------------------------------------------------------
    def write_tokenizer(self, checkpoint, preset_dir, report):
        return write_bpe_tokenizer(self, checkpoint, preset_dir, report,
                                   get_class("BartTokenizer"))

    def preprocessor(self, task_name, tokenizer, config, checkpoint=None):
        if tokenizer is None:
            return None
        length = self.hf_value(config, "max_position_embeddings")
        name = ("BartPreprocessor" if task_name == "BartTextClassifier"
                else "BartSeq2SeqLMPreprocessor")
        return get_class(name)(tokenizer, sequence_length=length)

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def hf_config(self, model, architecture, tokenizer=None):
        backbone = getattr(model, "backbone", model)
        if backbone.layer_norm_epsilon != LAYER_NORM_EPSILON:
            raise ConversionError(
                f"layer_norm_epsilon={backbone.layer_norm_epsilon}: "
                "transformers' BART has torch's LayerNorm epsilon "
                f"({LAYER_NORM_EPSILON}) and no field for another.")
        activation = _EXPORT_ACTIVATIONS.get(backbone.activation,
                                             backbone.activation)
        ids = {"pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}
        if tokenizer is not None:
            ids = {"pad_token_id": tokenizer.pad_token_id,
                   "bos_token_id": tokenizer.start_token_id,
                   "eos_token_id": tokenizer.end_token_id}
        config = {
            "architectures": [architecture],
            "model_type": "bart",
            "vocab_size": backbone.vocabulary_size,
            "d_model": backbone.hidden_dim,
            "encoder_layers": backbone.num_layers,
            "encoder_attention_heads": backbone.num_heads,
            "encoder_ffn_dim": backbone.intermediate_dim,
            "decoder_layers": backbone.num_decoder_layers,
            "decoder_attention_heads": backbone.num_decoder_heads,
            "decoder_ffn_dim": backbone.decoder_intermediate_dim,
            "max_position_embeddings": backbone.max_sequence_length,
            "dropout": backbone.dropout,
            "attention_dropout": backbone.attention_dropout,
            "activation_dropout": backbone.activation_dropout,
            "activation_function": activation,
            "scale_embedding": backbone.scale_embedding,
            "init_std": backbone.initializer_range,
            "encoder_layerdrop": 0.0,
            "decoder_layerdrop": 0.0,
            "is_encoder_decoder": True,
            "tie_word_embeddings": True,
            **ids,
            "decoder_start_token_id": ids["eos_token_id"],
            "forced_eos_token_id": ids["eos_token_id"],
            "dtype": "float32",
        }
        if architecture == "BartForSequenceClassification":
            config.update(hf_config_fields(model.num_classes,
                                           model.problem_type))
            config["classifier_dropout"] = model.dropout
        return config

    # RoBERTa's tokenizer files, under transformers' BART class.
    hf_tokenizer_class = "BartTokenizer"
    hf_tokenizer_options = {"add_prefix_space": False}
    export_tokenizer_files = RobertaConverter.export_tokenizer_files

    def export_tokenizer(self, tokenizer, dest, config):
        # RoBERTa's writer derives model_max_length from its positions
        # after the padding index; BART's table is max_position_embeddings
        # long from position 0, so hand it that length in RoBERTa's terms.
        pad = config["pad_token_id"]
        roberta_like = {**config, "max_position_embeddings":
                        config["max_position_embeddings"] + pad + 1}
        RobertaConverter.export_tokenizer(self, tokenizer, dest,
                                          roberta_like)
