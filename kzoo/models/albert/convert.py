"""ALBERT <-> Hugging Face `transformers` (`AlbertModel`,
`AlbertForMaskedLM`, `AlbertForPreTraining`,
`AlbertForSequenceClassification`).

Every tensor is named below (backbone tensors without the "albert."
prefix). A shared block is one kzoo layer and one Hugging Face module, so
each of its tensors is named once, however many layers run it.

    HF                                          kzoo
    embeddings.word_embeddings.weight           token_embedding/embeddings
    embeddings.position_embeddings.weight       position_embedding/embeddings
    embeddings.token_type_embeddings.weight     segment_embedding/embeddings
    embeddings.LayerNorm                        embeddings_layer_norm
    encoder.embedding_hidden_mapping_in         embedding_projection
    encoder.albert_layer_groups.G.albert_layers.J.          transformer_layer_K,
                                                K = G * num_inner_repetitions + J:
        attention.{query,key,value}             .../attention/{query,key,value}
        attention.dense                         .../attention/output
        attention.LayerNorm                     .../attention_layer_norm
        ffn                                     .../intermediate_dense
        ffn_output                              .../output_dense
        full_layer_layer_norm                   .../output_layer_norm
    pooler                                      pooler
    predictions.dense                           mlm_head/transform
    predictions.LayerNorm                       mlm_head/layer_norm
    predictions.bias                            mlm_head/bias
    predictions.decoder.{weight,bias}           (tied to the token embedding
                                                and predictions.bias)
    sop_classifier.classifier                   sop_head (0 = in order, as HF)
    classifier                                  classifier
"""

import json
import shutil
from pathlib import Path

from kzoo.convert.base import (
    classifier_kwargs, embedding, layer_norm, linear,
    masked_lm_head, register_converter, transformer_block_specs)
from kzoo.models.bert.convert import _EXPORT_ACTIVATIONS, BertLayout
from kzoo.core.classification import hf_config_fields

# Hugging Face AlbertConfig defaults (albert-xxlarge's shape), for configs
# that leave a field out.
HF_DEFAULTS = {
    "vocab_size": 30000, "embedding_size": 128, "hidden_size": 4096,
    "num_hidden_layers": 12, "num_hidden_groups": 1,
    "num_attention_heads": 64, "intermediate_size": 16384,
    "inner_group_num": 1, "hidden_act": "gelu_new",
    "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0,
    "max_position_embeddings": 512, "type_vocab_size": 2,
    "initializer_range": 0.02, "layer_norm_eps": 1e-12,
    "classifier_dropout_prob": 0.1, "position_embedding_type": "absolute",
}

_SPECIAL_TOKENS = {"bos_token": "[CLS]", "eos_token": "[SEP]",
                   "unk_token": "<unk>", "sep_token": "[SEP]",
                   "pad_token": "<pad>", "cls_token": "[CLS]",
                   "mask_token": "[MASK]"}

_HEAD_TASKS = ("AlbertMaskedLM", "AlbertPretrainer")
# transformers' names for the modules of a shared block
# (`transformer_block_specs`).
_BLOCK_NAMES = {
    "query": "attention.query", "key": "attention.key",
    "value": "attention.value", "attention_output": "attention.dense",
    "attention_norm": "attention.LayerNorm", "intermediate": "ffn",
    "output": "ffn_output", "output_norm": "full_layer_layer_norm",
}
_DROPOUT_ARCHITECTURES = ("AlbertForPreTraining",
                          "AlbertForSequenceClassification")


@register_converter
class AlbertConverter(BertLayout):
    # BERT's import checks (absolute positions, an encoder, a known
    # activation), buffers and backbone prefixes; ALBERT's own fields,
    # tensors, heads and tokenizer.
    family = "albert"
    backbone_class = "AlbertBackbone"
    base_model_prefix = "albert"
    hf_defaults = HF_DEFAULTS
    config_fields = {
        **BertLayout.config_fields,
        "embedding_dim": "embedding_size",
        "num_groups": "num_hidden_groups",
        "num_inner_repetitions": "inner_group_num",
    }
    architectures = {
        "AlbertModel": None,
        "AlbertForMaskedLM": "AlbertMaskedLM",
        "AlbertForPreTraining": "AlbertPretrainer",
        "AlbertForSequenceClassification": "AlbertTextClassifier",
        "AlbertForQuestionAnswering": "QuestionAnswerer",
    }
    no_pooler_architectures = ("AlbertForMaskedLM",
                               "AlbertForTokenClassification",
                               "AlbertForQuestionAnswering")
    pretraining_tasks = (
        ("AlbertPretrainer", ("predictions.dense.weight",
                              "sop_classifier.classifier.weight")),
        ("AlbertMaskedLM", ("predictions.dense.weight",)),
    )

    # ------------------------------------------------------------------
    # Import
    # ------------------------------------------------------------------
    def task_kwargs(self, task_name, config, checkpoint=None):
        dropout = float(self.hf_value(config, "classifier_dropout_prob"))
        if task_name == "AlbertTextClassifier":
            return {**classifier_kwargs(config), "dropout": dropout}
        if task_name == "AlbertPretrainer":
            return {"dropout": dropout}
        return {}

    def backbone_specs(self, backbone, config):
        layer = backbone.get_layer
        specs = [
            embedding("embeddings.word_embeddings.weight",
                      layer("token_embedding")),
            embedding("embeddings.position_embeddings.weight",
                      layer("position_embedding")),
            embedding("embeddings.token_type_embeddings.weight",
                      layer("segment_embedding")),
            *layer_norm("embeddings.LayerNorm",
                        layer("embeddings_layer_norm"), group="embeddings"),
            *linear("encoder.embedding_hidden_mapping_in",
                    layer("embedding_projection"), "embeddings"),
        ]
        for g in range(backbone.num_groups):
            for j in range(backbone.num_inner_repetitions):
                specs += transformer_block_specs(
                    f"encoder.albert_layer_groups.{g}.albert_layers.{j}",
                    backbone.shared_block(g, j), f"group {g} layer {j}",
                    _BLOCK_NAMES)
        return specs + self.pooler_specs("pooler", layer("pooler"), config)

    def head_specs(self, task, task_name, config):
        specs = []
        if task_name in _HEAD_TASKS:
            specs += masked_lm_head(
                task.mlm_head, "predictions.dense", "predictions.LayerNorm",
                "predictions.bias", decoder_bias="predictions.decoder.bias")
        if task_name == "AlbertPretrainer":
            specs += linear("sop_classifier.classifier", task.sop_head,
                            "sop head", part="head")
        if task_name == "AlbertTextClassifier":
            specs += linear("classifier", task.get_layer("classifier"),
                            "classifier", part="head")
        return specs

    def tied_tensors(self, task_name):
        if task_name in _HEAD_TASKS:
            return {"predictions.decoder.weight":
                    "embeddings.word_embeddings.weight",
                    "predictions.decoder.bias": "predictions.bias"}
        return {}

    # ------------------------------------------------------------------
    # Tokenizer
    # ------------------------------------------------------------------
    def write_tokenizer(self, checkpoint, preset_dir, report):
        from kzoo.models.albert.tokenizer import AlbertTokenizer
        path = self.copied_tokenizer_file(checkpoint, preset_dir, report,
                                          "spiece.model")
        if path is None:
            return None
        settings = checkpoint.json("tokenizer_config.json") or {}
        lowercase = bool(settings.get("do_lower_case", True))
        keep_accents = bool(settings.get("keep_accents", False))
        report.notes.append(
            f"tokenizer: spiece.model, lowercase={lowercase}, "
            f"keep_accents={keep_accents} (tokenizer_config.json, or "
            "AlbertTokenizer's defaults)")
        return self.checked_tokenizer(checkpoint, lambda: AlbertTokenizer(
            str(path), lowercase=lowercase, keep_accents=keep_accents))

    def preprocessor(self, task_name, tokenizer, config, checkpoint=None):
        if tokenizer is None:
            return None
        from kzoo.models.albert.preprocessor import AlbertPreprocessor
        # The masked-LM and pretrainer preprocessors take this config too.
        length = min(int(self.hf_value(config, "max_position_embeddings")),
                     512)
        return AlbertPreprocessor(tokenizer, sequence_length=length)

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def hf_config(self, model, architecture, tokenizer=None):
        backbone = getattr(model, "backbone", model)
        config = {
            "architectures": [architecture],
            "model_type": "albert",
            "vocab_size": backbone.vocabulary_size,
            "embedding_size": backbone.embedding_dim,
            "hidden_size": backbone.hidden_dim,
            "num_hidden_layers": backbone.num_layers,
            "num_hidden_groups": backbone.num_groups,
            "inner_group_num": backbone.num_inner_repetitions,
            "num_attention_heads": backbone.num_heads,
            "intermediate_size": backbone.intermediate_dim,
            "hidden_act": _EXPORT_ACTIVATIONS.get(backbone.activation,
                                                  backbone.activation),
            "hidden_dropout_prob": backbone.dropout,
            "attention_probs_dropout_prob": backbone.attention_dropout,
            "max_position_embeddings": backbone.max_sequence_length,
            "type_vocab_size": backbone.num_segments,
            "initializer_range": backbone.initializer_range,
            "layer_norm_eps": backbone.layer_norm_epsilon,
            # The tasks with a dropout before their classifier keep their
            # own; the others export transformers' default.
            "classifier_dropout_prob": (
                model.dropout if architecture in _DROPOUT_ARCHITECTURES
                else HF_DEFAULTS["classifier_dropout_prob"]),
            "pad_token_id": (tokenizer.pad_token_id if tokenizer is not None
                             else 0),
            "bos_token_id": (tokenizer.cls_token_id if tokenizer is not None
                             else 2),
            "eos_token_id": (tokenizer.sep_token_id if tokenizer is not None
                             else 3),
            "tie_word_embeddings": True,
            "dtype": "float32",
        }
        if architecture == "AlbertForSequenceClassification":
            config.update(hf_config_fields(model.num_classes,
                                           model.problem_type))
        return config

    def export_tokenizer(self, tokenizer, dest, config):
        dest = Path(dest)
        shutil.copyfile(tokenizer.proto, dest / "spiece.model")
        tokenizer_config = {
            "tokenizer_class": "AlbertTokenizer",
            "do_lower_case": tokenizer.lowercase,
            "keep_accents": tokenizer.keep_accents,
            "model_max_length": config["max_position_embeddings"],
            **_SPECIAL_TOKENS,
        }
        (dest / "tokenizer_config.json").write_text(
            json.dumps(tokenizer_config, indent=2) + "\n", encoding="utf-8")
        (dest / "special_tokens_map.json").write_text(
            json.dumps(_SPECIAL_TOKENS, indent=2) + "\n", encoding="utf-8")

    def export_extras(self, model, dest, config):
        pass  # no sentence-transformers layout (BERT's embedder only)
