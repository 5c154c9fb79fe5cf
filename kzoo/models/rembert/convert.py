"""RemBERT <-> Hugging Face `transformers` (`RemBertModel`,
`RemBertForMaskedLM`, `RemBertForSequenceClassification`,
`RemBertForQuestionAnswering`, and the generic token-classification and
multiple-choice heads; model_type "rembert").

The encoder's tensors are BERT's under the prefix "rembert." (so
`BertLayout` names them: embeddings, blocks, pooler), with the
embeddings at `input_embedding_size`. Every other tensor:

    HF                                          kzoo
    encoder.embedding_hidden_mapping_in         embeddings_project
    cls.predictions.dense                       mlm_head/transform
    cls.predictions.LayerNorm                   mlm_head/layer_norm
    cls.predictions.decoder.weight              output_embedding/embeddings
                                                (untied: the head's own)
    cls.predictions.decoder.bias                mlm_head/bias
    classifier                                  classifier

The tokenizer is `sentencepiece.model`, copied as it is both ways.
"""

import json
import shutil
from pathlib import Path

from kzoo.convert.base import (
    WeightSpec, classifier_kwargs, embedding, layer_norm, linear,
    register_converter)
from kzoo.models.bert.convert import _EXPORT_ACTIVATIONS, BertLayout
from kzoo.core.classification import hf_config_fields

# transformers' RemBertConfig defaults (google/rembert's shape), for
# configs that leave a field out. RemBERT has absolute positions only.
HF_DEFAULTS = {
    "vocab_size": 250300, "hidden_size": 1152, "num_hidden_layers": 32,
    "num_attention_heads": 18, "input_embedding_size": 256,
    "output_embedding_size": 1664, "intermediate_size": 4608,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.0,
    "attention_probs_dropout_prob": 0.0, "classifier_dropout_prob": 0.1,
    "max_position_embeddings": 512, "type_vocab_size": 2,
    "initializer_range": 0.02, "layer_norm_eps": 1e-12,
    "position_embedding_type": "absolute",
}

SPM_FILE = "sentencepiece.model"
_SPECIAL_TOKENS = {"bos_token": "[CLS]", "eos_token": "[SEP]",
                   "unk_token": "<unk>", "sep_token": "[SEP]",
                   "pad_token": "<pad>", "cls_token": "[CLS]",
                   "mask_token": "[MASK]"}
_MASKED_LM = "RemBertMaskedLM"
_CLASSIFIER = "RemBertTextClassifier"
# The architectures whose head has a dropout of classifier_dropout_prob.
_DROPOUT_ARCHITECTURES = ("RemBertForSequenceClassification",
                          "RemBertForMultipleChoice",
                          "RemBertForTokenClassification")


@register_converter
class RemBertConverter(BertLayout):
    # BERT's import checks (absolute positions, an encoder, a known
    # activation), buffers, backbone prefixes and encoder tensors;
    # RemBERT's own fields, projection, head and tokenizer.
    family = "rembert"
    backbone_class = "RemBertBackbone"
    base_model_prefix = "rembert"
    hf_defaults = HF_DEFAULTS
    config_fields = {
        **BertLayout.config_fields,
        "input_embedding_dim": "input_embedding_size",
        "output_embedding_dim": "output_embedding_size",
    }
    architectures = {
        "RemBertModel": None,
        "RemBertForMaskedLM": _MASKED_LM,
        "RemBertForSequenceClassification": _CLASSIFIER,
        "RemBertForQuestionAnswering": "QuestionAnswerer",
    }
    no_pooler_architectures = ("RemBertForMaskedLM", "RemBertForCausalLM",
                               "RemBertForTokenClassification",
                               "RemBertForQuestionAnswering")
    pretraining_tasks = ((_MASKED_LM, ("cls.predictions.dense.weight",)),)
    tokenizer_class = "RemBertTokenizer"
    preprocessor_class = "RemBertPreprocessor"
    hf_tokenizer_class = "RemBertTokenizer"

    # ------------------------------------------------------------------
    # Import
    # ------------------------------------------------------------------
    def task_kwargs(self, task_name, config, checkpoint=None):
        if task_name == _CLASSIFIER:
            return {**classifier_kwargs(config), "dropout": float(
                self.hf_value(config, "classifier_dropout_prob"))}
        return {}

    def backbone_specs(self, backbone, config):
        # BERT's embeddings, blocks and pooler, and the projection between
        # the embeddings' width and the blocks'.
        return super().backbone_specs(backbone, config) + linear(
            "encoder.embedding_hidden_mapping_in",
            backbone.get_layer("embeddings_project"), "embeddings")

    def head_specs(self, task, task_name, config):
        if task_name == _MASKED_LM:
            head, group = task.mlm_head, "mlm head"
            return [
                *linear("cls.predictions.dense", head.transform, group,
                        part="head"),
                *layer_norm("cls.predictions.LayerNorm", head.layer_norm,
                            group, part="head"),
                # The head's own output embedding: (vocabulary, width), as
                # torch's Linear(width, vocabulary) stores its weight.
                embedding("cls.predictions.decoder.weight",
                          head.token_embedding, group=group, part="head"),
                WeightSpec("cls.predictions.decoder.bias", head.bias,
                           part="head", group=group),
            ]
        if task_name == _CLASSIFIER:
            return linear("classifier", task.get_layer("classifier"),
                          "classifier", part="head")
        return []

    def tied_tensors(self, task_name):
        return {}  # RemBERT ties nothing

    # ------------------------------------------------------------------
    # Tokenizer
    # ------------------------------------------------------------------
    def write_tokenizer(self, checkpoint, preset_dir, report):
        from kzoo.models.rembert.tokenizer import RemBertTokenizer
        path = self.copied_tokenizer_file(checkpoint, preset_dir, report,
                                          SPM_FILE)
        if path is None:
            return None
        settings = checkpoint.json("tokenizer_config.json") or {}
        lowercase = bool(settings.get("do_lower_case", False))
        keep_accents = bool(settings.get("keep_accents", True))
        report.notes.append(
            f"tokenizer: {SPM_FILE}, lowercase={lowercase}, "
            f"keep_accents={keep_accents} (tokenizer_config.json, or "
            "RemBertTokenizer's defaults)")
        return self.checked_tokenizer(checkpoint, lambda: RemBertTokenizer(
            str(path), lowercase=lowercase, keep_accents=keep_accents))

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def hf_config(self, model, architecture, tokenizer=None):
        backbone = getattr(model, "backbone", model)
        config = {
            "architectures": [architecture],
            "model_type": "rembert",
            "vocab_size": backbone.vocabulary_size,
            "hidden_size": backbone.hidden_dim,
            "num_hidden_layers": backbone.num_layers,
            "num_attention_heads": backbone.num_heads,
            "input_embedding_size": backbone.input_embedding_dim,
            "output_embedding_size": backbone.output_embedding_dim,
            "intermediate_size": backbone.intermediate_dim,
            "hidden_act": _EXPORT_ACTIVATIONS.get(backbone.activation,
                                                  backbone.activation),
            "hidden_dropout_prob": backbone.dropout,
            "attention_probs_dropout_prob": backbone.attention_dropout,
            # The heads with a dropout keep their own; the others export
            # transformers' default.
            "classifier_dropout_prob": (
                model.dropout if architecture in _DROPOUT_ARCHITECTURES
                else HF_DEFAULTS["classifier_dropout_prob"]),
            "max_position_embeddings": backbone.max_sequence_length,
            "type_vocab_size": backbone.num_segments,
            "initializer_range": backbone.initializer_range,
            "layer_norm_eps": backbone.layer_norm_epsilon,
            "pad_token_id": (tokenizer.pad_token_id if tokenizer is not None
                             else 0),
            "bos_token_id": (tokenizer.cls_token_id if tokenizer is not None
                             else 312),
            "eos_token_id": (tokenizer.sep_token_id if tokenizer is not None
                             else 313),
            "tie_word_embeddings": False,
            "dtype": "float32",
        }
        if architecture == "RemBertForSequenceClassification":
            config.update(hf_config_fields(model.num_classes,
                                           model.problem_type))
        return config

    def export_tokenizer(self, tokenizer, dest, config):
        dest = Path(dest)
        shutil.copyfile(tokenizer.proto, dest / SPM_FILE)
        tokenizer_config = {
            "tokenizer_class": self.hf_tokenizer_class,
            "do_lower_case": tokenizer.lowercase,
            "keep_accents": tokenizer.keep_accents,
            "remove_space": True,
            "model_max_length": config["max_position_embeddings"],
            **_SPECIAL_TOKENS,
        }
        (dest / "tokenizer_config.json").write_text(
            json.dumps(tokenizer_config, indent=2) + "\n", encoding="utf-8")
        (dest / "special_tokens_map.json").write_text(
            json.dumps(_SPECIAL_TOKENS, indent=2) + "\n", encoding="utf-8")
