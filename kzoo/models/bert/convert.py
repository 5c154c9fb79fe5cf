"""BERT <-> Hugging Face `transformers` (`BertModel`, `BertForMaskedLM`,
`BertForPreTraining`, `BertForSequenceClassification`, and
sentence-transformers folders built on `BertModel`).

Every tensor is named below. Hugging Face `Linear` weights are `(out, in)`
and Keras `Dense` kernels `(in, out)`, hence `transpose=True` on each
`.weight` of a dense layer; embeddings and LayerNorm tensors map as they
are.

    HF (without the "bert." prefix)             kzoo
    embeddings.word_embeddings.weight           token_embedding/embeddings
    embeddings.position_embeddings.weight       position_embedding/embeddings
    embeddings.token_type_embeddings.weight     segment_embedding/embeddings
    embeddings.LayerNorm.{weight,bias}          embeddings_layer_norm/{gamma,beta}
    encoder.layer.i.attention.self.{query,key,value}   transformer_layer_i/attention/{query,key,value}
    encoder.layer.i.attention.output.dense      transformer_layer_i/attention/output
    encoder.layer.i.attention.output.LayerNorm  transformer_layer_i/attention_layer_norm
    encoder.layer.i.intermediate.dense          transformer_layer_i/intermediate_dense
    encoder.layer.i.output.dense                transformer_layer_i/output_dense
    encoder.layer.i.output.LayerNorm            transformer_layer_i/output_layer_norm
    pooler.dense                                pooler
    cls.predictions.transform.dense             mlm_head/transform
    cls.predictions.transform.LayerNorm         mlm_head/layer_norm
    cls.predictions.bias                        mlm_head/bias
    cls.predictions.decoder.weight              (tied to the token embedding)
    cls.seq_relationship                        nsp_head   (0 = IsNext, as HF)
    classifier                                  classifier
"""

import json
import shutil
from pathlib import Path

import keras
import numpy as np

from kzoo.convert.base import (
    Converter, classifier_kwargs, embedding, layer_norm, linear,
    masked_lm_head, register_converter, transformer_block_specs)
from kzoo.convert.errors import ConversionError
from kzoo.convert.safetensors import save_file
from kzoo.core.classification import hf_config_fields
from kzoo.core.registry import get_class

# Hugging Face activation names kzoo reproduces exactly. (HF's "gelu" is
# the exact erf form; "gelu_new" / "gelu_pytorch_tanh" the tanh form.)
_ACTIVATIONS = {
    "gelu": "gelu", "gelu_python": "gelu", "gelu_new": "gelu_new",
    "gelu_pytorch_tanh": "gelu_pytorch_tanh", "relu": "relu",
    "silu": "silu", "swish": "swish", "tanh": "tanh",
}
_EXPORT_ACTIVATIONS = {"gelu_exact": "gelu", "gelu_tanh": "gelu_pytorch_tanh"}

# Hugging Face BertConfig defaults, for configs that leave a field out.
HF_DEFAULTS = {
    "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
    "num_attention_heads": 12, "intermediate_size": 3072,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 512,
    "type_vocab_size": 2, "initializer_range": 0.02,
    "layer_norm_eps": 1e-12, "position_embedding_type": "absolute",
}

# Architectures whose BertModel is built with add_pooling_layer=False.
_NO_POOLER = ("BertForMaskedLM", "BertLMHeadModel",
              "BertForTokenClassification", "BertForQuestionAnswering")

# sentence-transformers' Dense module: its folder (`<index>_Dense`, third
# in the modules kzoo converts) and the activations (its config's
# activation_function) kzoo's BertTextEmbedder reproduces.
DENSE_FOLDER = "2_Dense"
_DENSE_ACTIVATIONS = {"torch.nn.modules.activation.Tanh": "tanh",
                      "torch.nn.modules.linear.Identity": "linear"}

_SPECIAL_TOKENS = {"unk_token": "[UNK]", "sep_token": "[SEP]",
                   "pad_token": "[PAD]", "cls_token": "[CLS]",
                   "mask_token": "[MASK]"}


class BertLayout(Converter):
    """BERT's Hugging Face checkpoint layout: its config fields, tensor
    names, WordPiece tokenizer files and the MLM, NSP and classifier heads.
    The families converted as BERT (RoBERTa, ALBERT, DistilBERT, ELECTRA,
    DeBERTa-v3, ...) subclass this, not `BertConverter`: BERT's own task
    detection (sentence-transformers folders -> `BertTextEmbedder`) is
    BERT's alone, so no subclass has it to skip."""

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
        "num_segments": "type_vocab_size",
        "layer_norm_epsilon": "layer_norm_eps",
        "initializer_range": "initializer_range",
    }
    generic_heads = True  # every family converted as BERT has them
    # The WordPiece tokenizer classes, kzoo's and the one an export names
    # (families that reuse BERT's tokenizer name their own).
    tokenizer_class = "BertTokenizer"
    hf_tokenizer_class = "BertTokenizer"
    base_model_prefix = "bert"
    backbone_tensor_prefixes = ("embeddings.", "encoder.", "pooler.")
    no_pooler_architectures = _NO_POOLER
    skipped_tensors = {
        r"embeddings\.position_ids": "a buffer (0..max_len-1), not a weight",
        r"embeddings\.token_type_ids": "a buffer (zeros), not a weight",
    }

    # ------------------------------------------------------------------
    # Import
    # ------------------------------------------------------------------
    def backbone_kwargs(self, config):
        if self.hf_value(config, "position_embedding_type") != "absolute":
            raise ConversionError(
                "position_embedding_type="
                f"{config['position_embedding_type']!r}: kzoo's BERT has "
                "absolute position embeddings only.")
        if config.get("is_decoder") or config.get("add_cross_attention"):
            raise ConversionError(
                "is_decoder / add_cross_attention: this is a BERT decoder "
                "(causal or cross-attending); kzoo's BertBackbone is the "
                "bidirectional encoder.")
        act = self.hf_value(config, "hidden_act")
        if act not in _ACTIVATIONS:
            raise ConversionError(
                f"hidden_act={act!r} has no exact kzoo equivalent (known: "
                f"{', '.join(sorted(_ACTIVATIONS))}).")
        return {**self.mapped_kwargs(config), "activation": _ACTIVATIONS[act]}

    def task_kwargs(self, task_name, config, checkpoint=None):
        if task_name == "BertTextClassifier":
            return self.text_classifier_kwargs(config)
        return {}

    def text_classifier_kwargs(self, config):
        """A `*ForSequenceClassification` checkpoint's classifier: its
        classes and problem type, and `classifier_dropout` (None: the
        backbone's hidden dropout, as transformers falls back)."""
        dropout = config.get("classifier_dropout")
        return {**classifier_kwargs(config),
                "dropout": None if dropout is None else float(dropout)}

    def backbone_specs(self, backbone, config):
        return self.encoder_specs(backbone) + self.pooler_specs(
            "pooler.dense", backbone.get_layer("pooler"), config)

    def pooler_specs(self, name, pooler, config):
        """The pooler's specs: optional on import, and not exported, for
        an architecture that has none (`no_pooler_architectures`)."""
        no_pooler = any(a in self.no_pooler_architectures
                        for a in config.get("architectures") or [])
        return linear(
            name, pooler, "pooler",
            optional=("the checkpoint's architecture has no pooler; "
                      "pooled_output is untrained") if no_pooler else None,
            export=not no_pooler)

    def encoder_specs(self, backbone):
        """The embeddings' and the blocks' specs (BERT's encoder without
        the pooler; ELECTRA's converter adds its projection instead)."""
        layer = backbone.get_layer
        specs = [
            embedding("embeddings.word_embeddings.weight",
                      layer("token_embedding")),
            embedding("embeddings.position_embeddings.weight",
                      layer("position_embedding")),
            embedding("embeddings.token_type_embeddings.weight",
                      layer("segment_embedding")),
            *layer_norm("embeddings.LayerNorm",
                        backbone.get_layer("embeddings_layer_norm"),
                        group="embeddings"),
        ]
        for i in range(backbone.num_layers):
            specs += transformer_block_specs(
                f"encoder.layer.{i}",
                backbone.get_layer(f"transformer_layer_{i}"), f"layer {i}")
        return specs

    def head_specs(self, task, task_name, config):
        specs = []
        if task_name in ("BertMaskedLM", "BertPretrainer"):
            specs += masked_lm_head(
                task.mlm_head, "cls.predictions.transform.dense",
                "cls.predictions.transform.LayerNorm", "cls.predictions.bias",
                decoder_bias="cls.predictions.decoder.bias")
        if task_name == "BertPretrainer":
            specs += linear("cls.seq_relationship", task.nsp_head,
                            "nsp head", part="head")
        if task_name == "BertTextClassifier":
            specs += linear("classifier", task.get_layer("classifier"),
                            "classifier", part="head")
        return specs

    def tied_tensors(self, task_name):
        if task_name in ("BertMaskedLM", "BertPretrainer"):
            return {"cls.predictions.decoder.weight":
                    "embeddings.word_embeddings.weight",
                    "cls.predictions.decoder.bias": "cls.predictions.bias"}
        return {}

    # ------------------------------------------------------------------
    # Tokenizer
    # ------------------------------------------------------------------
    # The kzoo classes a converted preset's tokenizer and preprocessor
    # are, and the class an exported tokenizer_config.json names
    # (families with BERT's WordPiece set their own).
    tokenizer_class = "BertTokenizer"
    preprocessor_class = "BertPreprocessor"
    hf_tokenizer_class = "BertTokenizer"

    def write_tokenizer(self, checkpoint, preset_dir, report):
        tokenizer_cls = get_class(self.tokenizer_class)
        vocab_path = Path(preset_dir) / "vocab.txt"
        if checkpoint.has("vocab.txt"):
            shutil.copyfile(checkpoint.file("vocab.txt"), vocab_path)
            source = "vocab.txt"
        else:
            tokens = _wordpiece_vocab_from_tokenizer_json(checkpoint)
            if tokens is None:
                report.notes.append(
                    "no vocab.txt or WordPiece tokenizer.json: the preset "
                    "has no tokenizer")
                return None
            vocab_path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
            source = "tokenizer.json"
        lowercase, why = _lowercase_setting(checkpoint)
        report.notes.append(f"tokenizer: vocabulary from {source}, "
                            f"lowercase={lowercase} ({why})")
        return self.checked_tokenizer(checkpoint, lambda: tokenizer_cls(
            str(vocab_path), lowercase=lowercase))

    def preprocessor(self, task_name, tokenizer, config, checkpoint=None):
        if tokenizer is None:
            return None
        preprocessor_cls = get_class(self.preprocessor_class)
        limits = [int(self.hf_value(config, "max_position_embeddings")), 512]
        if checkpoint is not None:
            st_config = checkpoint.json("sentence_bert_config.json") or {}
            if st_config.get("max_seq_length"):
                limits.append(int(st_config["max_seq_length"]))
        return preprocessor_cls(tokenizer, sequence_length=min(limits))

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def hf_config(self, model, architecture, tokenizer=None):
        backbone = getattr(model, "backbone", model)
        activation = _EXPORT_ACTIVATIONS.get(backbone.activation,
                                             backbone.activation)
        config = {
            "architectures": [architecture],
            "model_type": "bert",
            "vocab_size": backbone.vocabulary_size,
            "hidden_size": backbone.hidden_dim,
            "num_hidden_layers": backbone.num_layers,
            "num_attention_heads": backbone.num_heads,
            "intermediate_size": backbone.intermediate_dim,
            "hidden_act": activation,
            "hidden_dropout_prob": backbone.dropout,
            "attention_probs_dropout_prob": backbone.attention_dropout,
            "max_position_embeddings": backbone.max_sequence_length,
            # (Families with one token type have no num_segments.)
            "type_vocab_size": getattr(backbone, "num_segments", 1),
            "initializer_range": backbone.initializer_range,
            "layer_norm_eps": backbone.layer_norm_epsilon,
            "position_embedding_type": "absolute",
            "pad_token_id": (tokenizer.pad_token_id if tokenizer is not None
                             else 0),
            "tie_word_embeddings": True,
            "dtype": "float32",
        }
        # (RoBERTa's converter and its subclasses start from this config.)
        if architecture.endswith("ForSequenceClassification"):
            config.update(hf_config_fields(model.num_classes,
                                           model.problem_type))
            config["classifier_dropout"] = (
                None if model.dropout == backbone.dropout else model.dropout)
        return config

    def export_tokenizer(self, tokenizer, dest, config):
        dest = Path(dest)
        shutil.copyfile(tokenizer.vocabulary, dest / "vocab.txt")
        tokenizer_config = {
            "tokenizer_class": self.hf_tokenizer_class,
            "do_lower_case": tokenizer.lowercase,
            "strip_accents": None,  # follows do_lower_case, as in kzoo
            "tokenize_chinese_chars": True,
            "model_max_length": config["max_position_embeddings"],
            **_SPECIAL_TOKENS,
        }
        (dest / "tokenizer_config.json").write_text(
            json.dumps(tokenizer_config, indent=2) + "\n", encoding="utf-8")
        (dest / "special_tokens_map.json").write_text(
            json.dumps(_SPECIAL_TOKENS, indent=2) + "\n", encoding="utf-8")


@register_converter
class BertConverter(BertLayout):
    """BERT's own checkpoints: `BertModel`, its task models, and
    sentence-transformers folders built on `BertModel` (->
    `BertTextEmbedder`)."""

    family = "bert"
    backbone_class = "BertBackbone"
    architectures = {
        "BertModel": None,
        "BertForMaskedLM": "BertMaskedLM",
        "BertForPreTraining": "BertPretrainer",
        "BertForSequenceClassification": "BertTextClassifier",
        "BertForQuestionAnswering": "QuestionAnswerer",
    }
    pretraining_tasks = (
        ("BertPretrainer", ("cls.predictions.transform.dense.weight",
                            "cls.seq_relationship.weight")),
        ("BertMaskedLM", ("cls.predictions.transform.dense.weight",)),
    )

    def task_kwargs(self, task_name, config, checkpoint=None):
        if task_name == "BertTextEmbedder":
            return self._sentence_transformers(checkpoint) or {}
        return super().task_kwargs(task_name, config, checkpoint)

    def headless_task(self, checkpoint):
        if self._sentence_transformers(checkpoint):
            return "BertTextEmbedder"
        return super().headless_task(checkpoint)

    def task_names(self):
        return sorted(super().task_names() + ["BertTextEmbedder"])

    @staticmethod
    def _sentence_transformers(checkpoint):
        """BertTextEmbedder's arguments for a sentence-transformers folder
        whose modules are exactly Transformer -> Pooling (-> Dense, in
        2_Dense/ as sentence-transformers names it) (-> Normalize); else
        None."""
        if checkpoint is None:
            return None
        modules = checkpoint.json("modules.json")
        if not isinstance(modules, list):
            return None
        kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
        if kinds[:2] != ["Transformer", "Pooling"] or kinds[2:] not in (
                [], ["Normalize"], ["Dense"], ["Dense", "Normalize"]):
            return None
        paths = [str(m.get("path", "")) for m in modules[1:3]]
        if any(".." in path or path.startswith(("/", "\\"))
               for path in paths) or not paths[0]:
            return None
        path = paths[0]
        pooling = checkpoint.json(f"{path}/config.json") or {}
        modes = [mode for key, mode in (
            ("pooling_mode_mean_tokens", "mean"),
            ("pooling_mode_cls_token", "cls"),
            ("pooling_mode_max_tokens", "max"),
            ("pooling_mode_mean_sqrt_len_tokens", "mean_sqrt"),
            ("pooling_mode_weightedmean_tokens", "weightedmean"),
            ("pooling_mode_lasttoken", "lasttoken")) if pooling.get(key)]
        if len(modes) != 1 or modes[0] not in ("mean", "cls", "max"):
            return None
        found = {"pooling": modes[0], "normalize": kinds[-1] == "Normalize"}
        if kinds[2:3] == ["Dense"]:
            dense = checkpoint.json(f"{paths[1]}/config.json") or {}
            activation = _DENSE_ACTIVATIONS.get(
                dense.get("activation_function"))
            if activation is None or dense.get("bias") is False or \
                    not isinstance(dense.get("out_features"), int) or \
                    paths[1].strip("/") != DENSE_FOLDER:
                return None
            found.update(dense_dim=dense["out_features"],
                         dense_activation=activation)
        return found

    def head_specs(self, task, task_name, config):
        specs = super().head_specs(task, task_name, config)
        if task_name == "BertTextEmbedder" and task.dense_dim is not None:
            # sentence-transformers' Dense module: its own folder's
            # `linear` (kzoo.convert.checkpoint reads it as
            # `<folder>/linear.*`); export_extras writes it back.
            specs += linear(f"{DENSE_FOLDER}/linear", task.get_layer("dense"),
                            "dense", part="head", export=False)
        return specs

    def hf_architecture(self, model):
        if type(model).__name__ == "BertTextEmbedder":
            return "BertModel"
        return super().hf_architecture(model)

    def export_extras(self, model, dest, config):
        if type(model).__name__ != "BertTextEmbedder":
            return
        # A sentence-transformers folder: Transformer -> Pooling (-> Normalize).
        dest = Path(dest)
        modules = [
            {"idx": 0, "name": "0", "path": "",
             "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling",
             "type": "sentence_transformers.models.Pooling"},
        ]
        if model.dense_dim is not None:
            modules.append({"idx": 2, "name": "2", "path": DENSE_FOLDER,
                            "type": "sentence_transformers.models.Dense"})
            _export_dense(model, dest / DENSE_FOLDER)
        if model.normalize:
            index = len(modules)
            modules.append({"idx": index, "name": str(index),
                            "path": f"{index}_Normalize",
                            "type": "sentence_transformers.models.Normalize"})
            (dest / f"{index}_Normalize").mkdir(exist_ok=True)
        (dest / "1_Pooling").mkdir(exist_ok=True)
        pooling = {
            "word_embedding_dimension": model.backbone.hidden_dim,
            "pooling_mode_cls_token": model.pooling == "cls",
            "pooling_mode_mean_tokens": model.pooling == "mean",
            "pooling_mode_max_tokens": model.pooling == "max",
            "pooling_mode_mean_sqrt_len_tokens": False,
        }
        sequence_length = config["max_position_embeddings"]
        if model.preprocessor is not None:
            sequence_length = model.preprocessor.sequence_length
        for path, data in (
                ("modules.json", modules),
                ("1_Pooling/config.json", pooling),
                ("sentence_bert_config.json",
                 {"max_seq_length": sequence_length, "do_lower_case": False})):
            (dest / path).write_text(json.dumps(data, indent=2) + "\n",
                                     encoding="utf-8")


def _export_dense(model, folder):
    """sentence-transformers' Dense module of a BertTextEmbedder: its
    config and its `linear` (torch's (out, in) weight)."""
    folder.mkdir(exist_ok=True)
    dense = model.get_layer("dense")
    activation = {kzoo: torch for torch, kzoo in _DENSE_ACTIVATIONS.items()}
    config = {"in_features": model.backbone.hidden_dim,
              "out_features": model.dense_dim, "bias": True,
              "activation_function": activation[model.dense_activation]}
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n",
                                        encoding="utf-8")
    kernel = keras.ops.convert_to_numpy(dense.kernel.value)
    save_file({"linear.weight": np.ascontiguousarray(kernel.T),
               "linear.bias": keras.ops.convert_to_numpy(dense.bias.value)},
              folder / "model.safetensors")


def _wordpiece_vocab_from_tokenizer_json(checkpoint):
    data = checkpoint.json("tokenizer.json")
    model = (data or {}).get("model") or {}
    if model.get("type") != "WordPiece" or not isinstance(
            model.get("vocab"), dict):
        return None
    by_id = {}
    for token, index in model["vocab"].items():
        by_id[int(index)] = token
    if sorted(by_id) != list(range(len(by_id))):
        raise ConversionError(
            f"{checkpoint.path / 'tokenizer.json'}: WordPiece ids are not "
            f"0..{len(by_id) - 1} without gaps.")
    return [by_id[i] for i in range(len(by_id))]


def _find_bert_normalizer(normalizer):
    if not isinstance(normalizer, dict):
        return None
    if normalizer.get("type") == "BertNormalizer":
        return normalizer
    for inner in normalizer.get("normalizers") or []:
        found = _find_bert_normalizer(inner)
        if found:
            return found
    return None


def _lowercase_setting(checkpoint):
    """(lowercase, where that came from). Hugging Face's BertTokenizer lets
    `do_lower_case` in tokenizer_config.json override tokenizer.json."""
    config = checkpoint.json("tokenizer_config.json") or {}
    if "do_lower_case" in config:
        return bool(config["do_lower_case"]), "tokenizer_config.json"
    normalizer = _find_bert_normalizer(
        (checkpoint.json("tokenizer.json") or {}).get("normalizer"))
    if normalizer is not None and "lowercase" in normalizer:
        return bool(normalizer["lowercase"]), "tokenizer.json normalizer"
    return True, "not stated; BertTokenizer's default"
