"""XLM-RoBERTa <-> Hugging Face `transformers` (`XLMRobertaModel`,
`XLMRobertaForMaskedLM`, `XLMRobertaForSequenceClassification`,
model_type "xlm-roberta").

The weights are RoBERTa's under the same names (transformers'
`XLMRobertaPreTrainedModel.base_model_prefix` is "roberta" too; see
roberta.py for the table); only the tokenizer differs: a SentencePiece
model, `sentencepiece.bpe.model`, copied as it is both ways.
"""

import shutil

from kzoo.convert.base import register_converter
from kzoo.models.roberta.convert import HF_DEFAULTS, RobertaConverter

_SPM_FILE = "sentencepiece.bpe.model"


@register_converter
class XLMRobertaConverter(RobertaConverter):
    family = "xlm_roberta"
    backbone_class = "XLMRobertaBackbone"
    # transformers' XLMRobertaConfig defaults: RoBERTa's but the
    # vocabulary size (BERT's).
    hf_defaults = {**HF_DEFAULTS, "vocab_size": 30522}
    architectures = {
        "XLMRobertaModel": None,
        "XLMRobertaForMaskedLM": "XLMRobertaMaskedLM",
        "XLMRobertaForSequenceClassification": "XLMRobertaTextClassifier",
        "XLMRobertaForQuestionAnswering": "QuestionAnswerer",
    }
    no_pooler_architectures = tuple(
        "XLM" + name for name in RobertaConverter.no_pooler_architectures)
    pretraining_tasks = (("XLMRobertaMaskedLM", ("lm_head.dense.weight",)),)
    masked_lm_task = "XLMRobertaMaskedLM"
    classifier_task = "XLMRobertaTextClassifier"
    preprocessor_class = "XLMRobertaPreprocessor"
    hf_tokenizer_class = "XLMRobertaTokenizer"
    hf_tokenizer_options = {"add_prefix_space": True}

    def write_tokenizer(self, checkpoint, preset_dir, report):
        from kzoo.models.xlm_roberta.tokenizer import XLMRobertaTokenizer
        path = self.copied_tokenizer_file(checkpoint, preset_dir, report,
                                          _SPM_FILE)
        if path is None:
            return None
        report.notes.append(f"tokenizer: SentencePiece from {_SPM_FILE}")
        return self.checked_tokenizer(
            checkpoint, lambda: XLMRobertaTokenizer(str(path)))

    def export_tokenizer_files(self, tokenizer, dest):
        shutil.copyfile(tokenizer.proto, dest / _SPM_FILE)
