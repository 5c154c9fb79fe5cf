"""DistilBERT <-> Hugging Face `transformers` (`DistilBertModel`,
`DistilBertForMaskedLM`, `DistilBertForSequenceClassification`).

Every tensor is named below (Hugging Face `Linear` weights are `(out, in)`,
hence `transpose=True` on each dense `.weight`):

    HF (without the "distilbert." prefix)        kzoo
    embeddings.word_embeddings                   token_embedding
    embeddings.position_embeddings               position_embedding (learned,
                                                 or the fixed sinusoidal table)
    embeddings.LayerNorm                         embeddings_layer_norm
    transformer.layer.i.attention.{q,k,v}_lin    transformer_layer_i/attention/{query,key,value}
    transformer.layer.i.attention.out_lin        transformer_layer_i/attention/output
    transformer.layer.i.sa_layer_norm            transformer_layer_i/attention_layer_norm
    transformer.layer.i.ffn.lin1                 transformer_layer_i/intermediate_dense
    transformer.layer.i.ffn.lin2                 transformer_layer_i/output_dense
    transformer.layer.i.output_layer_norm        transformer_layer_i/output_layer_norm
    vocab_transform                              mlm_head/transform
    vocab_layer_norm                             mlm_head/layer_norm
    vocab_projector.bias                         mlm_head/bias
    vocab_projector.weight                       (tied to the token embedding)
    pre_classifier                               classifier_dense
    classifier                                   classifier

The tokenizer is BERT's WordPiece (`vocab.txt`), so the tokenizer half of
`BertLayout` is reused with DistilBERT's class names.
"""

from kzoo.convert.base import (
    classifier_kwargs, embedding, layer_norm, linear,
    masked_lm_head, register_converter, transformer_block_specs)
from kzoo.models.bert.convert import (_ACTIVATIONS, _EXPORT_ACTIVATIONS,
                                     BertLayout)
from kzoo.convert.errors import ConversionError
from kzoo.core.classification import hf_config_fields

# Hugging Face DistilBertConfig defaults, for configs that leave a field out.
HF_DEFAULTS = {
    "vocab_size": 30522, "max_position_embeddings": 512,
    "sinusoidal_pos_embds": False, "n_layers": 6, "n_heads": 12, "dim": 768,
    "hidden_dim": 3072, "dropout": 0.1, "attention_dropout": 0.1,
    "activation": "gelu", "initializer_range": 0.02, "qa_dropout": 0.1,
    "seq_classif_dropout": 0.2, "pad_token_id": 0,
}
# Every LayerNorm of Hugging Face's DistilBERT has this epsilon, fixed.
HF_LAYER_NORM_EPSILON = 1e-12
# transformers' names for the modules of a block
# (`transformer_block_specs`).
_BLOCK_NAMES = {
    "query": "attention.q_lin", "key": "attention.k_lin",
    "value": "attention.v_lin", "attention_output": "attention.out_lin",
    "attention_norm": "sa_layer_norm", "intermediate": "ffn.lin1",
    "output": "ffn.lin2", "output_norm": "output_layer_norm",
}


@register_converter
class DistilBertConverter(BertLayout):
    family = "distil_bert"
    backbone_class = "DistilBertBackbone"
    base_model_prefix = "distilbert"
    tokenizer_class = "DistilBertTokenizer"
    hf_tokenizer_class = "DistilBertTokenizer"
    hf_defaults = HF_DEFAULTS
    config_fields = {
        "vocabulary_size": "vocab_size",
        "num_layers": "n_layers",
        "num_heads": "n_heads",
        "hidden_dim": "dim",
        "intermediate_dim": "hidden_dim",
        "dropout": "dropout",
        "attention_dropout": "attention_dropout",
        "max_sequence_length": "max_position_embeddings",
        "initializer_range": "initializer_range",
        "sinusoidal_position_embeddings": "sinusoidal_pos_embds",
    }
    architectures = {
        "DistilBertModel": None,
        "DistilBertForMaskedLM": "DistilBertMaskedLM",
        "DistilBertForSequenceClassification": "DistilBertTextClassifier",
        "DistilBertForQuestionAnswering": "QuestionAnswerer",
    }
    backbone_tensor_prefixes = ("embeddings.", "transformer.")
    pretraining_tasks = (("DistilBertMaskedLM", ("vocab_transform.weight",)),)
    skipped_tensors = {
        r"embeddings\.position_ids": "a buffer (0..max_len-1), not a weight",
    }

    # ------------------------------------------------------------------
    # Import
    # ------------------------------------------------------------------
    def backbone_kwargs(self, config):
        act = self.hf_value(config, "activation")
        if act not in _ACTIVATIONS:
            raise ConversionError(
                f"activation={act!r} has no exact kzoo equivalent (known: "
                f"{', '.join(sorted(_ACTIVATIONS))}).")
        return {**self.mapped_kwargs(config), "activation": _ACTIVATIONS[act],
                "layer_norm_epsilon": HF_LAYER_NORM_EPSILON}

    def task_kwargs(self, task_name, config, checkpoint=None):
        if task_name == "DistilBertTextClassifier":
            return {**classifier_kwargs(config), "dropout": float(
                self.hf_value(config, "seq_classif_dropout"))}
        return {}

    def backbone_specs(self, backbone, config):
        layer = backbone.get_layer
        specs = [
            embedding("embeddings.word_embeddings.weight",
                      layer("token_embedding")),
            embedding("embeddings.position_embeddings.weight",
                      layer("position_embedding")),
            *layer_norm("embeddings.LayerNorm", layer("embeddings_layer_norm"),
                        group="embeddings"),
        ]
        for i in range(backbone.num_layers):
            specs += transformer_block_specs(
                f"transformer.layer.{i}", layer(f"transformer_layer_{i}"),
                f"layer {i}", _BLOCK_NAMES)
        return specs

    def head_specs(self, task, task_name, config):
        if task_name == "DistilBertMaskedLM":
            return masked_lm_head(task.mlm_head, "vocab_transform",
                                  "vocab_layer_norm", "vocab_projector.bias")
        if task_name == "DistilBertTextClassifier":
            return [
                *linear("pre_classifier", task.get_layer("classifier_dense"),
                        "classifier", part="head"),
                *linear("classifier", task.get_layer("classifier"),
                        "classifier", part="head"),
            ]
        return []

    def tied_tensors(self, task_name):
        if task_name == "DistilBertMaskedLM":
            return {"vocab_projector.weight":
                    "embeddings.word_embeddings.weight"}
        return {}

    # ------------------------------------------------------------------
    # Tokenizer (BertLayout.write_tokenizer, with DistilBertTokenizer)
    # ------------------------------------------------------------------
    def preprocessor(self, task_name, tokenizer, config, checkpoint=None):
        if tokenizer is None:
            return None
        from kzoo.models.distil_bert.preprocessor import \
            DistilBertPreprocessor
        # The masked-LM preprocessor takes this config too (a subclass).
        length = min(int(self.hf_value(config, "max_position_embeddings")),
                     512)
        return DistilBertPreprocessor(tokenizer, sequence_length=length)

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def hf_config(self, model, architecture, tokenizer=None):
        backbone = getattr(model, "backbone", model)
        if backbone.layer_norm_epsilon != HF_LAYER_NORM_EPSILON:
            raise ConversionError(
                f"layer_norm_epsilon={backbone.layer_norm_epsilon}: Hugging "
                "Face's DistilBERT fixes every LayerNorm epsilon at 1e-12 and "
                "has no setting for another, so this model cannot be "
                "exported to it.")
        config = {
            "architectures": [architecture],
            "model_type": "distilbert",
            "vocab_size": backbone.vocabulary_size,
            "dim": backbone.hidden_dim,
            "n_layers": backbone.num_layers,
            "n_heads": backbone.num_heads,
            "hidden_dim": backbone.intermediate_dim,
            "activation": _EXPORT_ACTIVATIONS.get(backbone.activation,
                                                  backbone.activation),
            "dropout": backbone.dropout,
            "attention_dropout": backbone.attention_dropout,
            "max_position_embeddings": backbone.max_sequence_length,
            "sinusoidal_pos_embds": backbone.sinusoidal_position_embeddings,
            "initializer_range": backbone.initializer_range,
            "pad_token_id": (tokenizer.pad_token_id if tokenizer is not None
                             else 0),
            "tie_word_embeddings": True,
            "dtype": "float32",
        }
        if architecture == "DistilBertForSequenceClassification":
            config.update(hf_config_fields(model.num_classes,
                                           model.problem_type))
            config["seq_classif_dropout"] = model.dropout
        return config

    def export_extras(self, model, dest, config):
        pass  # no sentence-transformers layout (BERT's embedder only)
