"""RoBERTa <-> Hugging Face `transformers` (`RobertaModel`,
`RobertaForMaskedLM`, `RobertaForSequenceClassification`).

The encoder's tensors are BERT's, under the prefix "roberta." (so
`BertLayout.backbone_specs` names them); the heads are RoBERTa's own:

    HF                                          kzoo
    roberta.embeddings.position_embeddings      position_embedding (514 rows:
                                                512 + padding index + 1)
    roberta.embeddings.token_type_embeddings    segment_embedding (1 row)
    roberta.embeddings..., roberta.encoder...,  as BERT's (see bert.py)
    roberta.pooler
    lm_head.dense                               mlm_head/transform
    lm_head.layer_norm                          mlm_head/layer_norm
    lm_head.bias                                mlm_head/bias
    lm_head.decoder.{weight,bias}               (tied to the token embedding
                                                and lm_head.bias)
    classifier.dense                            classifier_dense
    classifier.out_proj                         classifier
"""

import json
import shutil
from pathlib import Path

from kzoo.convert.base import linear, masked_lm_head, register_converter
from kzoo.models.bert.convert import BertLayout
from kzoo.convert.errors import ConversionError
from kzoo.models.gpt2.convert import write_bpe_tokenizer
from kzoo.core.registry import get_class

# Hugging Face RobertaConfig defaults, for configs that leave a field out.
HF_DEFAULTS = {
    "vocab_size": 50265, "hidden_size": 768, "num_hidden_layers": 12,
    "num_attention_heads": 12, "intermediate_size": 3072,
    "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 512,
    "type_vocab_size": 2, "initializer_range": 0.02,
    "layer_norm_eps": 1e-12, "pad_token_id": 1, "bos_token_id": 0,
    "eos_token_id": 2, "position_embedding_type": "absolute",
}

_SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>",
                   "unk_token": "<unk>", "sep_token": "</s>",
                   "pad_token": "<pad>", "cls_token": "<s>",
                   "mask_token": "<mask>"}


@register_converter
class RobertaConverter(BertLayout):
    family = "roberta"
    backbone_class = "RobertaBackbone"
    base_model_prefix = "roberta"
    hf_defaults = HF_DEFAULTS
    # max_sequence_length is derived (see backbone_kwargs); RoBERTa has
    # no segment input.
    config_fields = {
        **{name: field for name, field in BertLayout.config_fields.items()
           if name not in ("max_sequence_length", "num_segments")},
        "pad_token_id": "pad_token_id",
    }
    architectures = {
        "RobertaModel": None,
        "RobertaForMaskedLM": "RobertaMaskedLM",
        "RobertaForSequenceClassification": "RobertaTextClassifier",
        "RobertaForQuestionAnswering": "QuestionAnswerer",
    }
    no_pooler_architectures = ("RobertaForMaskedLM",
                               "RobertaForSequenceClassification",
                               "RobertaForCausalLM",
                               "RobertaForTokenClassification",
                               "RobertaForQuestionAnswering")
    pretraining_tasks = (("RobertaMaskedLM", ("lm_head.dense.weight",)),)
    # The family's task classes (families built on RoBERTa's layout name
    # their own).
    masked_lm_task = "RobertaMaskedLM"
    classifier_task = "RobertaTextClassifier"
    preprocessor_class = "RobertaPreprocessor"

    # ------------------------------------------------------------------
    # Import
    # ------------------------------------------------------------------
    def backbone_kwargs(self, config):
        # BERT's checks (absolute positions, an encoder, a known
        # activation) and fields, then RoBERTa's own.
        kwargs = super().backbone_kwargs(config)
        types = self.hf_value(config, "type_vocab_size")
        if types != 1:
            raise ConversionError(
                f"type_vocab_size={types!r}: kzoo's RobertaBackbone has the "
                "one token type of the original RoBERTa (type_vocab_size=1).")
        pad = kwargs["pad_token_id"]
        positions = self.hf_value(config, "max_position_embeddings")
        if not isinstance(pad, int) or not isinstance(positions, int) or \
                positions <= pad + 1:
            raise ConversionError(
                f"max_position_embeddings={positions!r} with pad_token_id="
                f"{pad!r}: RoBERTa numbers positions after the padding index, "
                "so the table needs more than pad_token_id + 1 rows (514 "
                "for 512 positions with pad_token_id=1).")
        # The table's first pad_token_id + 1 rows are never a real token's.
        return {**kwargs, "max_sequence_length": positions - pad - 1}

    def task_kwargs(self, task_name, config, checkpoint=None):
        if task_name == self.classifier_task:
            return self.text_classifier_kwargs(config)
        return {}

    def head_specs(self, task, task_name, config):
        if task_name == self.masked_lm_task:
            return masked_lm_head(task.mlm_head, "lm_head.dense",
                                  "lm_head.layer_norm", "lm_head.bias",
                                  decoder_bias="lm_head.decoder.bias")
        if task_name == self.classifier_task:
            return [
                *linear("classifier.dense", task.get_layer("classifier_dense"),
                        "classifier", part="head"),
                *linear("classifier.out_proj", task.get_layer("classifier"),
                        "classifier", part="head"),
            ]
        return []

    def multiple_choice_specs(self, scorer, config):
        # `RobertaForMultipleChoice` reads the backbone's pooler (its
        # tensors are the backbone's): dropout -> dense(1) "classifier".
        return linear("classifier", scorer.get_layer("classifier"),
                      "classifier", part="head")

    def tied_tensors(self, task_name):
        if task_name == self.masked_lm_task:
            return {"lm_head.decoder.weight":
                    "embeddings.word_embeddings.weight",
                    "lm_head.decoder.bias": "lm_head.bias"}
        return {}

    # ------------------------------------------------------------------
    # Tokenizer
    # ------------------------------------------------------------------
    def write_tokenizer(self, checkpoint, preset_dir, report):
        from kzoo.models.roberta.tokenizer import RobertaTokenizer
        return write_bpe_tokenizer(self, checkpoint, preset_dir, report,
                                   RobertaTokenizer)

    def preprocessor(self, task_name, tokenizer, config, checkpoint=None):
        if tokenizer is None:
            return None
        # The masked-LM preprocessor takes this config too (a subclass).
        length = self.backbone_kwargs(config)["max_sequence_length"]
        return get_class(self.preprocessor_class)(tokenizer,
                                                  sequence_length=length)

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def hf_config(self, model, architecture, tokenizer=None):
        # BERT's config, with RoBERTa's positions, token type and ids.
        config = super().hf_config(model, architecture, tokenizer)
        backbone = getattr(model, "backbone", model)
        pad = backbone.pad_token_id
        config.update({
            "model_type": self.model_types[0],
            "max_position_embeddings": backbone.max_sequence_length + pad + 1,
            "type_vocab_size": 1,
            "pad_token_id": pad,
            "bos_token_id": (tokenizer.start_token_id if tokenizer is not None
                             else 0),
            "eos_token_id": (tokenizer.end_token_id if tokenizer is not None
                             else 2),
        })
        return config

    # transformers' tokenizer class for the exported files, and its
    # options beyond the special tokens.
    hf_tokenizer_class = "RobertaTokenizer"
    hf_tokenizer_options = {"add_prefix_space": False}

    def export_tokenizer_files(self, tokenizer, dest):
        shutil.copyfile(tokenizer.vocabulary, dest / "vocab.json")
        shutil.copyfile(tokenizer.merges, dest / "merges.txt")

    def export_tokenizer(self, tokenizer, dest, config):
        dest = Path(dest)
        self.export_tokenizer_files(tokenizer, dest)
        # Each special token as the original declares it: `<mask>` strips
        # the whitespace before it, as kzoo's tokenizer does.
        added = {
            str(tokenizer.token_to_id(token)): {
                "content": token, "lstrip": token == "<mask>",
                "rstrip": False, "normalized": False, "single_word": False,
                "special": True}
            for token in tokenizer.special_tokens}
        tokenizer_config = {
            "tokenizer_class": self.hf_tokenizer_class,
            **self.hf_tokenizer_options,
            "model_max_length": config["max_position_embeddings"]
            - config["pad_token_id"] - 1,
            "added_tokens_decoder": added,
            **_SPECIAL_TOKENS,
        }
        (dest / "tokenizer_config.json").write_text(
            json.dumps(tokenizer_config, indent=2) + "\n", encoding="utf-8")
        (dest / "special_tokens_map.json").write_text(
            json.dumps(_SPECIAL_TOKENS, indent=2) + "\n", encoding="utf-8")

    def export_extras(self, model, dest, config):
        pass  # no sentence-transformers layout (BERT's embedder only)
