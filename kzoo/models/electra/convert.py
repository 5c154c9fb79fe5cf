"""ELECTRA <-> Hugging Face `transformers` (`ElectraModel`,
`ElectraForPreTraining`, `ElectraForMaskedLM`,
`ElectraForSequenceClassification`).

The encoder's tensors are BERT's under the prefix "electra." (so
`BertLayout.encoder_specs` names them), at `embedding_size` for the
embeddings; ELECTRA has no pooler. Every other tensor:

    HF                                          kzoo
    electra.embeddings_project                  embeddings_project (only
                                                when embedding_size !=
                                                hidden_size)
    generator_predictions.dense                 mlm_head/transform
    generator_predictions.LayerNorm             mlm_head/layer_norm
    generator_lm_head.bias                      mlm_head/bias
    generator_lm_head.weight                    (tied to the word embeddings)
    discriminator_predictions.dense             discriminator_predictions/dense
    discriminator_predictions.dense_prediction  discriminator_predictions/
                                                dense_prediction
    classifier.dense                            classifier_dense
    classifier.out_proj                         classifier
"""

from kzoo.convert.base import linear, masked_lm_head, register_converter
from kzoo.models.bert.convert import BertLayout

# Hugging Face ElectraConfig defaults, for configs that leave a field out.
HF_DEFAULTS = {
    **BertLayout.hf_defaults,
    "embedding_size": 128, "hidden_size": 256, "num_attention_heads": 4,
    "intermediate_size": 1024,
}


@register_converter
class ElectraConverter(BertLayout):
    family = "electra"
    backbone_class = "ElectraBackbone"
    base_model_prefix = "electra"
    hf_defaults = HF_DEFAULTS
    config_fields = {**BertLayout.config_fields,
                     "embedding_size": "embedding_size"}
    architectures = {
        "ElectraModel": None,
        "ElectraForPreTraining": "ElectraDiscriminator",
        "ElectraForMaskedLM": "ElectraMaskedLM",
        "ElectraForSequenceClassification": "ElectraTextClassifier",
        "ElectraForQuestionAnswering": "QuestionAnswerer",
    }
    backbone_tensor_prefixes = ("embeddings.", "embeddings_project.",
                                "encoder.")
    pretraining_tasks = (
        ("ElectraDiscriminator", ("discriminator_predictions.dense.weight",)),
        ("ElectraMaskedLM", ("generator_predictions.dense.weight",)),
    )
    tokenizer_class = "ElectraTokenizer"
    preprocessor_class = "ElectraPreprocessor"
    hf_tokenizer_class = "ElectraTokenizer"

    # ------------------------------------------------------------------
    # Import
    # ------------------------------------------------------------------
    def task_kwargs(self, task_name, config, checkpoint=None):
        if task_name == "ElectraTextClassifier":
            return self.text_classifier_kwargs(config)
        return {}

    def backbone_specs(self, backbone, config):
        specs = self.encoder_specs(backbone)
        if backbone.embedding_width != backbone.hidden_dim:
            specs += linear("embeddings_project",
                            backbone.get_layer("embeddings_project"),
                            "embeddings")
        return specs

    def head_specs(self, task, task_name, config):
        if task_name == "ElectraMaskedLM":
            return masked_lm_head(
                task.mlm_head, "generator_predictions.dense",
                "generator_predictions.LayerNorm", "generator_lm_head.bias",
                group="generator head")
        if task_name == "ElectraDiscriminator":
            head = task.discriminator_predictions
            return [
                *linear("discriminator_predictions.dense", head.dense,
                        "discriminator head", part="head"),
                *linear("discriminator_predictions.dense_prediction",
                        head.dense_prediction, "discriminator head",
                        part="head"),
            ]
        if task_name == "ElectraTextClassifier":
            return [
                *linear("classifier.dense", task.get_layer("classifier_dense"),
                        "classifier", part="head"),
                *linear("classifier.out_proj", task.get_layer("classifier"),
                        "classifier", part="head"),
            ]
        return []

    def multiple_choice_specs(self, scorer, config):
        # `ElectraForMultipleChoice`: the sequence summary (dense + GELU on
        # the first token), then dense(1); the same layers as ELECTRA's
        # classification head, under other names.
        return [
            *linear("sequence_summary.summary",
                    scorer.get_layer("classifier_dense"), "classifier",
                    part="head"),
            *linear("classifier", scorer.get_layer("classifier"),
                    "classifier", part="head"),
        ]

    def tied_tensors(self, task_name):
        if task_name == "ElectraMaskedLM":
            return {"generator_lm_head.weight":
                    "embeddings.word_embeddings.weight"}
        return {}

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def hf_config(self, model, architecture, tokenizer=None):
        # BERT's config, with ELECTRA's type and embedding width.
        config = super().hf_config(model, architecture, tokenizer)
        backbone = getattr(model, "backbone", model)
        config.update({"model_type": "electra",
                       "embedding_size": backbone.embedding_width})
        return config
