"""MobileBERT <-> Hugging Face `transformers` (`MobileBertModel`,
`MobileBertForPreTraining`, `MobileBertForMaskedLM`,
`MobileBertForSequenceClassification`, and the generic heads).

The tokenizer files, the classifier and the MLM head's transform are
BERT's (`BertLayout`); every other tensor (without the "mobilebert."
prefix; NoNorm's `weight`/`bias` map to `gamma`/`beta` as LayerNorm's):

    HF                                          kzoo
    embeddings.word_embeddings                  token_embedding
    embeddings.embedding_transformation         embedding_projection
    embeddings.position_embeddings              position_embedding
    embeddings.token_type_embeddings            segment_embedding
    embeddings.LayerNorm                        embeddings_norm
    encoder.layer.i.                            mobilebert_layer_i/
      bottleneck.input.{dense,LayerNorm}          input_bottleneck(_norm)
      bottleneck.attention.{dense,LayerNorm}      attention_bottleneck(_norm)
      attention.self.{query,key,value}            attention/{query,key,value}
      attention.output.dense                      attention/output
      attention.output.LayerNorm                  attention_norm
      ffn.j.intermediate.dense                    feed_forward_j/intermediate_dense
      ffn.j.output.{dense,LayerNorm}              feed_forward_j/{output_dense,norm}
      intermediate.dense, output.{dense,LayerNorm} the last feed_forward_k
      output.bottleneck.{dense,LayerNorm}         output_bottleneck(_norm)
    pooler.dense                                pooler (classifier_activation)
    cls.predictions.transform.*, .bias          mlm_head/transform, layer_norm, bias
    cls.predictions.dense                       mlm_head/extra_output_embedding
    cls.predictions.decoder.weight              (tied to the word embeddings)
    classifier                                  classifier

`MobileBertForPreTraining` checkpoints (the release) convert to
`MobileBertMaskedLM`: the next-sentence head (`cls.seq_relationship`)
is reported unused.
"""

from kzoo.convert.base import (
    WeightSpec, classifier_kwargs, embedding, layer_norm, linear,
    masked_lm_head, register_converter)
from kzoo.convert.errors import ConversionError
from kzoo.models.bert.convert import BertLayout

# Hugging Face MobileBertConfig defaults, for configs that leave a field
# out (BertLayout's for the rest: position_embedding_type "absolute").
HF_DEFAULTS = {
    **BertLayout.hf_defaults,
    "vocab_size": 30522, "hidden_size": 512, "num_hidden_layers": 24,
    "num_attention_heads": 4, "intermediate_size": 512, "hidden_act": "relu",
    "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 512, "type_vocab_size": 2,
    "initializer_range": 0.02, "layer_norm_eps": 1e-12,
    "embedding_size": 128, "intra_bottleneck_size": 128,
    "num_feedforward_networks": 4, "classifier_activation": True,
    "trigram_input": True, "use_bottleneck": True,
    "use_bottleneck_attention": False, "key_query_shared_bottleneck": True,
    "normalization_type": "no_norm",
}

# The options kzoo's MobileBERT computes only as the release sets them:
# config field -> that value.
FIXED_OPTIONS = {
    "trigram_input": True, "use_bottleneck": True,
    "use_bottleneck_attention": False, "key_query_shared_bottleneck": True,
    "normalization_type": "no_norm",
}

# Architectures whose MobileBertModel is built without a pooler.
_NO_POOLER = ("MobileBertForMaskedLM", "MobileBertForTokenClassification",
              "MobileBertForQuestionAnswering")


@register_converter
class MobileBertConverter(BertLayout):
    family = "mobilebert"
    backbone_class = "MobileBertBackbone"
    base_model_prefix = "mobilebert"
    hf_defaults = HF_DEFAULTS
    config_fields = {**BertLayout.config_fields,
                     "embedding_dim": "embedding_size",
                     "bottleneck_dim": "intra_bottleneck_size",
                     "num_feedforward_networks": "num_feedforward_networks",
                     "pooler_dense": "classifier_activation"}
    architectures = {
        "MobileBertModel": None,
        "MobileBertForMaskedLM": "MobileBertMaskedLM",
        "MobileBertForPreTraining": "MobileBertMaskedLM",
        "MobileBertForSequenceClassification": "MobileBertTextClassifier",
        "MobileBertForQuestionAnswering": "QuestionAnswerer",
    }
    no_pooler_architectures = _NO_POOLER
    pretraining_tasks = (
        ("MobileBertMaskedLM", ("cls.predictions.transform.dense.weight",)),
    )
    tokenizer_class = "MobileBertTokenizer"
    preprocessor_class = "MobileBertPreprocessor"
    hf_tokenizer_class = "MobileBertTokenizer"

    # ------------------------------------------------------------------
    # Import
    # ------------------------------------------------------------------
    def backbone_kwargs(self, config):
        for field, value in FIXED_OPTIONS.items():
            found = self.hf_value(config, field)
            if found != value:
                raise ConversionError(
                    f"{field}={found!r}: kzoo's MobileBertBackbone "
                    f"computes the released architecture only ({field}="
                    f"{value!r}).")
        return super().backbone_kwargs(config)

    def task_kwargs(self, task_name, config, checkpoint=None):
        if task_name == "MobileBertTextClassifier":
            dropout = config.get("classifier_dropout")
            return {**classifier_kwargs(config),
                    "dropout": None if dropout is None else float(dropout)}
        return {}

    def backbone_specs(self, backbone, config):
        layer = backbone.get_layer
        specs = [
            embedding("embeddings.word_embeddings.weight",
                      layer("token_embedding")),
            *linear("embeddings.embedding_transformation",
                    layer("embedding_projection"), "embeddings"),
            embedding("embeddings.position_embeddings.weight",
                      layer("position_embedding")),
            embedding("embeddings.token_type_embeddings.weight",
                      layer("segment_embedding")),
            *layer_norm("embeddings.LayerNorm", layer("embeddings_norm"),
                        "embeddings"),
        ]
        for i in range(backbone.num_layers):
            specs += self.block_specs(layer(f"mobilebert_layer_{i}"),
                                      f"encoder.layer.{i}", f"layer {i}")
        if backbone.pooler_dense:
            no_pooler = any(a in self.no_pooler_architectures
                            for a in config.get("architectures") or [])
            specs += linear(
                "pooler.dense", layer("pooler"), "pooler",
                optional=("the checkpoint's architecture has no pooler; "
                          "pooled_output is untrained") if no_pooler else None,
                export=not no_pooler)
        return specs

    @staticmethod
    def block_specs(block, hf, group):
        """One `MobileBertBlock`'s specs, under `hf` ("encoder.layer.i")."""
        attention = block.attention
        specs = [
            *linear(f"{hf}.bottleneck.input.dense", block.input_bottleneck,
                    group),
            *layer_norm(f"{hf}.bottleneck.input.LayerNorm",
                        block.input_bottleneck_norm, group),
            *linear(f"{hf}.bottleneck.attention.dense",
                    block.attention_bottleneck, group),
            *layer_norm(f"{hf}.bottleneck.attention.LayerNorm",
                        block.attention_bottleneck_norm, group),
            *linear(f"{hf}.attention.self.query", attention.query_dense,
                    group),
            *linear(f"{hf}.attention.self.key", attention.key_dense, group),
            *linear(f"{hf}.attention.self.value", attention.value_dense,
                    group),
            *linear(f"{hf}.attention.output.dense", attention.output_dense,
                    group),
            *layer_norm(f"{hf}.attention.output.LayerNorm",
                        block.attention_norm, group),
        ]
        # The first feed-forward networks are `ffn.j`; the last is the
        # layer's own `intermediate` and `output`.
        *stacked, last = block.feed_forward
        names = [f"{hf}.ffn.{j}." for j in range(len(stacked))] + [f"{hf}."]
        for network, prefix in zip([*stacked, last], names):
            specs += [
                *linear(f"{prefix}intermediate.dense",
                        network.intermediate_dense, group),
                *linear(f"{prefix}output.dense", network.output_dense,
                        group),
                *layer_norm(f"{prefix}output.LayerNorm", network.norm, group),
            ]
        specs += [
            *linear(f"{hf}.output.bottleneck.dense", block.output_bottleneck,
                    group),
            *layer_norm(f"{hf}.output.bottleneck.LayerNorm",
                        block.output_bottleneck_norm, group),
        ]
        return specs

    def head_specs(self, task, task_name, config):
        if task_name == "MobileBertMaskedLM":
            head = task.mlm_head
            return [
                *masked_lm_head(
                    head, "cls.predictions.transform.dense",
                    "cls.predictions.transform.LayerNorm",
                    "cls.predictions.bias",
                    decoder_bias="cls.predictions.decoder.bias"),
                # (hidden - embedding, vocab) on both sides.
                WeightSpec("cls.predictions.dense.weight",
                           head.extra_output_embedding, part="head",
                           group="mlm head"),
            ]
        if task_name == "MobileBertTextClassifier":
            return linear("classifier", task.get_layer("classifier"),
                          "classifier", part="head")
        return []

    def tied_tensors(self, task_name):
        if task_name == "MobileBertMaskedLM":
            return {"cls.predictions.decoder.weight":
                    "embeddings.word_embeddings.weight",
                    "cls.predictions.decoder.bias": "cls.predictions.bias"}
        return {}

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def hf_config(self, model, architecture, tokenizer=None):
        # BERT's config, with MobileBERT's type, widths and options.
        config = super().hf_config(model, architecture, tokenizer)
        backbone = getattr(model, "backbone", model)
        config.pop("position_embedding_type")
        config.update({
            "model_type": "mobilebert",
            "embedding_size": backbone.embedding_dim,
            "intra_bottleneck_size": backbone.bottleneck_dim,
            "true_hidden_size": backbone.bottleneck_dim,
            "num_feedforward_networks": backbone.num_feedforward_networks,
            "classifier_activation": backbone.pooler_dense,
            **FIXED_OPTIONS,
        })
        return config
