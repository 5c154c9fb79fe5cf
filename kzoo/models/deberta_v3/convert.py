"""DeBERTa-v3 <-> Hugging Face `transformers` (model_type `deberta-v2`:
`DebertaV2Model`, `DebertaV2ForMaskedLM`,
`DebertaV2ForSequenceClassification`).

    HF (without the "deberta." prefix)       kzoo
    embeddings.word_embeddings               token_embedding
    embeddings.LayerNorm                     embeddings_layer_norm
    encoder.rel_embeddings                   relative_embedding/embeddings
    encoder.LayerNorm                        relative_embedding/layer_norm
    encoder.layer.i.attention.self.          transformer_layer_i/attention/
      query_proj, key_proj, value_proj         query, key, value
      pos_key_proj, pos_query_proj             pos_key, pos_query
                                               (share_att_key false only)
    encoder.layer.i.attention.output.dense         .../attention/output
    encoder.layer.i.attention.output.LayerNorm     .../attention_layer_norm
    encoder.layer.i.intermediate.dense             .../intermediate_dense
    encoder.layer.i.output.dense                   .../output_dense
    encoder.layer.i.output.LayerNorm               .../output_layer_norm
    cls.predictions.transform.dense                mlm_head/transform
      (or the original's lm_predictions.lm_head.dense)
    cls.predictions.transform.LayerNorm            mlm_head/layer_norm
      (lm_predictions.lm_head.LayerNorm)
    cls.predictions.bias (lm_predictions.lm_head.bias)  mlm_head/bias
    cls.predictions.decoder.{weight,bias}          (tied to the token embedding
                                                   and the bias)
    pooler.dense                                   pooler_dense
    classifier                                     classifier

Exports write the head as `cls.predictions` (transformers' default,
`legacy: true`). Options kzoo does not implement are refused by name.
"""

import json
import shutil
from pathlib import Path

from kzoo.convert.base import (
    BERT_BLOCK_NAMES, Converter, WeightSpec, classifier_kwargs, embedding,
    layer_norm, linear, register_converter, transformer_block_specs)
from kzoo.models.bert.convert import _ACTIVATIONS, BertLayout
from kzoo.convert.errors import ConversionError

# transformers' DebertaV2Config defaults (and the `getattr` defaults its
# modeling code reads for fields the config class does not declare).
HF_DEFAULTS = {
    "vocab_size": 128100, "hidden_size": 1536, "num_hidden_layers": 24,
    "num_attention_heads": 24, "intermediate_size": 6144,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 512,
    "type_vocab_size": 0, "initializer_range": 0.02, "layer_norm_eps": 1e-7,
    "relative_attention": False, "max_relative_positions": -1,
    "pad_token_id": 0, "position_biased_input": True, "pos_att_type": None,
    "pooler_dropout": 0.0, "pooler_hidden_act": "gelu", "legacy": True,
    "position_buckets": -1, "share_att_key": False, "norm_rel_ebd": "none",
    "conv_kernel_size": 0,
}

_SPECIAL_TOKENS = {"bos_token": "[CLS]", "eos_token": "[SEP]",
                   "unk_token": "[UNK]", "sep_token": "[SEP]",
                   "pad_token": "[PAD]", "cls_token": "[CLS]",
                   "mask_token": "[MASK]"}

# The two heads' names: transformers' legacy one (its default) and the
# original DeBERTa's, which the released checkpoints carry.
_MLM_HEADS = {
    "legacy": ("cls.predictions.transform.dense",
               "cls.predictions.transform.LayerNorm", "cls.predictions.bias"),
    "original": ("lm_predictions.lm_head.dense",
                 "lm_predictions.lm_head.LayerNorm",
                 "lm_predictions.lm_head.bias"),
}

# A block's modules after its attention projections (which are DeBERTa's
# own: query_proj, ..., pos_query_proj) are named as BERT's.
_AFTER_ATTENTION = {part: name for part, name in BERT_BLOCK_NAMES.items()
                    if part not in ("query", "key", "value")}


def _terms(value):
    if value is None:
        return []
    if isinstance(value, str):
        value = value.lower().split("|")
    return sorted(str(v).strip() for v in value)


@register_converter
class DebertaV3Converter(Converter):
    family = "deberta_v3"
    backbone_class = "DebertaV3Backbone"
    base_model_prefix = "deberta"
    hf_defaults = HF_DEFAULTS
    config_fields = {
        "vocabulary_size": "vocab_size",
        "num_layers": "num_hidden_layers",
        "num_heads": "num_attention_heads",
        "hidden_dim": "hidden_size",
        "intermediate_dim": "intermediate_size",
        "dropout": "hidden_dropout_prob",
        "attention_dropout": "attention_probs_dropout_prob",
        "max_sequence_length": "max_position_embeddings",
        "layer_norm_epsilon": "layer_norm_eps",
        "initializer_range": "initializer_range",
        "pad_token_id": "pad_token_id",
    }
    generic_heads = True
    architectures = {
        "DebertaV2Model": None,
        "DebertaV2ForMaskedLM": "DebertaV3MaskedLM",
        "DebertaV2ForSequenceClassification": "DebertaV3TextClassifier",
        "DebertaV2ForQuestionAnswering": "QuestionAnswerer",
    }
    backbone_tensor_prefixes = ("embeddings.", "encoder.")
    pretraining_tasks = (
        ("DebertaV3MaskedLM", ("cls.predictions.transform.dense.weight",)),
        ("DebertaV3MaskedLM", ("lm_predictions.lm_head.dense.weight",)),
    )
    skipped_tensors = {
        r"embeddings\.position_ids": "a buffer (0..max_len-1), not a weight",
        # The released checkpoints keep an absolute position table that
        # position_biased_input false never reads (transformers ignores
        # it on load too).
        r"embeddings\.position_embeddings\.weight":
            "absolute positions, unused with position_biased_input false",
    }

    # ------------------------------------------------------------------
    # Import
    # ------------------------------------------------------------------
    def backbone_kwargs(self, config):
        value = lambda key: self.hf_value(config, key)  # noqa: E731
        refusals = [
            (not value("relative_attention"), "relative_attention=false",
             "absolute positions only (DeBERTa-v1 style)"),
            (value("position_biased_input"), "position_biased_input=true",
             "absolute position embeddings added to the input"),
            ((value("type_vocab_size") or 0) > 0,
             f"type_vocab_size={value('type_vocab_size')}",
             "token type embeddings"),
            ((value("conv_kernel_size") or 0) > 0,
             f"conv_kernel_size={value('conv_kernel_size')}",
             "the convolution after the first layer (DeBERTa-v2 xlarge/"
             "xxlarge)"),
            (config.get("embedding_size") not in (None, value("hidden_size")),
             f"embedding_size={config.get('embedding_size')}",
             "an embedding width other than hidden_size (embed_proj)"),
            ("layer_norm" not in _terms(value("norm_rel_ebd")),
             f"norm_rel_ebd={value('norm_rel_ebd')!r}",
             "relative embeddings without their LayerNorm"),
            (_terms(value("pos_att_type")) != ["c2p", "p2c"],
             f"pos_att_type={value('pos_att_type')!r}",
             "position terms other than c2p and p2c together"),
        ]
        heads, hidden = value("num_attention_heads"), value("hidden_size")
        head_size = config.get("attention_head_size")
        if head_size is not None and isinstance(heads, int) and heads > 0:
            refusals.append((head_size * heads != hidden,
                             f"attention_head_size={head_size}",
                             "heads narrower or wider than hidden_size / "
                             "num_attention_heads"))
        for refused, setting, what in refusals:
            if refused:
                raise ConversionError(
                    f"{setting}: kzoo's DebertaV3Backbone does not implement "
                    f"{what}; it is DeBERTa-v3 (relative_attention, "
                    "position_biased_input false, type_vocab_size 0, "
                    "norm_rel_ebd layer_norm, pos_att_type p2c|c2p).")
        act = value("hidden_act")
        if act not in _ACTIVATIONS:
            raise ConversionError(
                f"hidden_act={act!r} has no exact kzoo equivalent (known: "
                f"{', '.join(sorted(_ACTIVATIONS))}).")
        kwargs = self.mapped_kwargs(config)
        buckets = value("position_buckets")
        max_relative = value("max_relative_positions")
        if not isinstance(max_relative, int) or max_relative < 1:
            max_relative = value("max_position_embeddings")
        return {**kwargs, "activation": _ACTIVATIONS[act],
                "position_buckets": buckets if buckets > 0 else 0,
                "max_relative_positions": max_relative,
                "share_att_key": bool(value("share_att_key"))}

    def task_kwargs(self, task_name, config, checkpoint=None):
        if task_name != "DebertaV3TextClassifier":
            return {}
        size = config.get("pooler_hidden_size")
        if size is not None and size != self.hf_value(config, "hidden_size"):
            raise ConversionError(
                f"pooler_hidden_size={size}: the original's pooler must be "
                "hidden_size wide (its classifier reads hidden_size).")
        act = self.hf_value(config, "pooler_hidden_act")
        if _ACTIVATIONS.get(act) != "gelu":
            raise ConversionError(
                f"pooler_hidden_act={act!r}: kzoo's DebertaV3TextClassifier "
                "pools with the original's GELU.")
        dropout = config.get("cls_dropout")
        return {**classifier_kwargs(config),
                "dropout": None if dropout is None else float(dropout),
                "pooler_dropout": float(self.hf_value(config,
                                                      "pooler_dropout"))}

    def backbone_specs(self, backbone, config):
        relative = backbone.get_layer("relative_embedding")
        specs = [
            embedding("embeddings.word_embeddings.weight",
                      backbone.get_layer("token_embedding")),
            *layer_norm("embeddings.LayerNorm",
                        backbone.get_layer("embeddings_layer_norm"),
                        group="embeddings"),
            WeightSpec("encoder.rel_embeddings.weight", relative.embeddings,
                       group="embeddings"),
            *layer_norm("encoder.LayerNorm", relative.norm,
                        group="embeddings"),
        ]
        for i in range(backbone.num_layers):
            block = backbone.get_layer(f"transformer_layer_{i}")
            hf, group = f"encoder.layer.{i}", f"layer {i}"
            attention = block.attention
            projections = [("query_proj", attention.query_dense),
                           ("key_proj", attention.key_dense),
                           ("value_proj", attention.value_dense),
                           ("pos_key_proj", attention.pos_key_dense),
                           ("pos_query_proj", attention.pos_query_dense)]
            for name, dense in projections:
                if dense is not None:
                    specs += linear(f"{hf}.attention.self.{name}", dense,
                                    group)
            specs += transformer_block_specs(hf, block, group,
                                             _AFTER_ATTENTION)
        return specs

    def head_specs(self, task, task_name, config):
        if task_name == "DebertaV3MaskedLM":
            head = task.mlm_head
            # The export writes transformers' default head; an import
            # takes either.
            legacy = self.hf_value(config, "legacy")
            ours, other = ((_MLM_HEADS["legacy"], _MLM_HEADS["original"])
                           if legacy else
                           (_MLM_HEADS["original"], _MLM_HEADS["legacy"]))
            return [
                WeightSpec(f"{ours[0]}.weight", head.transform.kernel,
                           transpose=True, part="head", group="mlm head",
                           alternatives=(f"{other[0]}.weight",)),
                WeightSpec(f"{ours[0]}.bias", head.transform.bias,
                           part="head", group="mlm head",
                           alternatives=(f"{other[0]}.bias",)),
                WeightSpec(f"{ours[1]}.weight", head.layer_norm.gamma,
                           part="head", group="mlm head",
                           alternatives=(f"{other[1]}.weight",)),
                WeightSpec(f"{ours[1]}.bias", head.layer_norm.beta,
                           part="head", group="mlm head",
                           alternatives=(f"{other[1]}.bias",)),
                WeightSpec(ours[2], head.bias, part="head", group="mlm head",
                           alternatives=(other[2],
                                         "cls.predictions.decoder.bias")),
            ]
        if task_name == "DebertaV3TextClassifier":
            return [
                *linear("pooler.dense", task.get_layer("pooler_dense"),
                        "classifier", part="head"),
                *linear("classifier", task.get_layer("classifier"),
                        "classifier", part="head"),
            ]
        return []

    def tied_tensors(self, task_name):
        if task_name == "DebertaV3MaskedLM":
            return {"cls.predictions.decoder.weight":
                    "embeddings.word_embeddings.weight",
                    "cls.predictions.decoder.bias": "cls.predictions.bias"}
        return {}

    # ------------------------------------------------------------------
    # Tokenizer
    # ------------------------------------------------------------------
    def write_tokenizer(self, checkpoint, preset_dir, report):
        from kzoo.models.deberta_v3.tokenizer import DebertaV3Tokenizer
        path = self.copied_tokenizer_file(checkpoint, preset_dir, report,
                                          "spm.model")
        if path is None:
            return None
        report.notes.append("tokenizer: spm.model")
        return self.checked_tokenizer(checkpoint,
                                      lambda: DebertaV3Tokenizer(str(path)))

    def preprocessor(self, task_name, tokenizer, config, checkpoint=None):
        if tokenizer is None:
            return None
        from kzoo.models.deberta_v3.preprocessor import DebertaV3Preprocessor
        length = int(self.hf_value(config, "max_position_embeddings"))
        return DebertaV3Preprocessor(tokenizer, sequence_length=length)

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def hf_config(self, model, architecture, tokenizer=None):
        # BERT's fields (shape, activation, dropouts, epsilon, labels),
        # then DeBERTa-v3's own.
        config = BertLayout.hf_config(self, model, architecture, tokenizer)
        backbone = getattr(model, "backbone", model)
        del config["position_embedding_type"]
        config.pop("classifier_dropout", None)
        config.update({
            "model_type": "deberta-v2",
            "type_vocab_size": 0,
            "relative_attention": True,
            "position_buckets": backbone.position_buckets or -1,
            "max_relative_positions": backbone.max_relative_positions,
            "norm_rel_ebd": "layer_norm",
            "share_att_key": backbone.share_att_key,
            "pos_att_type": "p2c|c2p",
            "position_biased_input": False,
            "pad_token_id": backbone.pad_token_id,
            "legacy": True,
        })
        if architecture.endswith("ForSequenceClassification"):
            config.update({"pooler_hidden_size": backbone.hidden_dim,
                           "pooler_hidden_act": "gelu",
                           "pooler_dropout": model.pooler_dropout,
                           "cls_dropout": model.dropout})
        return config

    def export_tokenizer(self, tokenizer, dest, config):
        dest = Path(dest)
        shutil.copyfile(tokenizer.asset_paths["proto"], dest / "spm.model")
        tokenizer_config = {
            "tokenizer_class": "DebertaV2Tokenizer",
            "do_lower_case": False,
            "split_by_punct": False,
            "model_max_length": config["max_position_embeddings"],
            **_SPECIAL_TOKENS,
        }
        (dest / "tokenizer_config.json").write_text(
            json.dumps(tokenizer_config, indent=2) + "\n", encoding="utf-8")
        (dest / "special_tokens_map.json").write_text(
            json.dumps(_SPECIAL_TOKENS, indent=2) + "\n", encoding="utf-8")
