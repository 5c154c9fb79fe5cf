"""kzoo: pretrained NLP transformers in Keras 3, on TensorFlow, JAX and
PyTorch.

    import kzoo
    backbone = kzoo.BertBackbone.from_preset("bert_base")
"""

import os as _os

# TensorFlow runs its oneDNN kernels by default only on CPUs with AVX512
# VNNI/BF16 or AMX; elsewhere it uses Eigen's. On the project's AVX2 AMD
# EPYC oneDNN's float32 matmul is ~1.5x as fast (4096x512 @ 512x2048: 105
# -> 150 GFLOP/s) and BERT-small's masked-LM training step 1.3x (4.48 ->
# 3.45 s, docs/speed.md). A user's own setting wins, and TensorFlow reads
# it at import: import kzoo first, or set it yourself.
_os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")

from kzoo import presets  # noqa: E402
from kzoo import preprocessing
from kzoo.core import Backbone, Preprocessor, Task, Tokenizer
from kzoo.core.export import ExportError
from kzoo.models.albert import (
    AlbertBackbone,
    AlbertMaskedLM,
    AlbertMaskedLMPreprocessor,
    AlbertPreprocessor,
    AlbertPretrainer,
    AlbertPretrainerPreprocessor,
    AlbertTextClassifier,
    AlbertTokenizer,
)
from kzoo.models.bert import (
    BertBackbone,
    BertMaskedLM,
    BertMaskedLMPreprocessor,
    BertPreprocessor,
    BertPretrainer,
    BertPretrainerPreprocessor,
    BertTextClassifier,
    BertTextEmbedder,
    BertTokenizer,
)
from kzoo.models.deberta_v3 import (
    DebertaV3Backbone,
    DebertaV3MaskedLM,
    DebertaV3MaskedLMPreprocessor,
    DebertaV3Preprocessor,
    DebertaV3TextClassifier,
    DebertaV3Tokenizer,
)
from kzoo import generation
from kzoo.models.electra import (
    ElectraBackbone,
    ElectraDiscriminator,
    ElectraMaskedLM,
    ElectraMaskedLMPreprocessor,
    ElectraPreprocessor,
    ElectraPretrainer,
    ElectraTextClassifier,
    ElectraTokenizer,
)
from kzoo.models.mobilebert import (
    MobileBertBackbone,
    MobileBertMaskedLM,
    MobileBertMaskedLMPreprocessor,
    MobileBertPreprocessor,
    MobileBertTextClassifier,
    MobileBertTokenizer,
)
from kzoo.models.gpt2 import (
    GPT2Backbone,
    GPT2CausalLM,
    GPT2CausalLMPreprocessor,
    GPT2Classifier,
    GPT2Preprocessor,
    GPT2Tokenizer,
)
from kzoo.models.rembert import (
    RemBertBackbone,
    RemBertMaskedLM,
    RemBertMaskedLMPreprocessor,
    RemBertPreprocessor,
    RemBertTextClassifier,
    RemBertTokenizer,
)
from kzoo.models.roberta import (
    RobertaBackbone,
    RobertaMaskedLM,
    RobertaMaskedLMPreprocessor,
    RobertaPreprocessor,
    RobertaTextClassifier,
    RobertaTokenizer,
)
from kzoo.models.xlm_roberta import (
    XLMRobertaBackbone,
    XLMRobertaMaskedLM,
    XLMRobertaMaskedLMPreprocessor,
    XLMRobertaPreprocessor,
    XLMRobertaTextClassifier,
    XLMRobertaTokenizer,
)
from kzoo.models.distil_bert import (
    DistilBertBackbone,
    DistilBertMaskedLM,
    DistilBertMaskedLMPreprocessor,
    DistilBertPreprocessor,
    DistilBertTextClassifier,
    DistilBertTokenizer,
    Distiller,
    init_student_from_teacher,
)
from kzoo.tasks.span_boundary import SpanBoundaryPretrainer
from kzoo.tasks.question_answerer import QuestionAnswerer
from kzoo.tasks.question_answerer_preprocessor import \
    QuestionAnswererPreprocessor
from kzoo.tasks.squad_metric import squad_scores
from kzoo.tasks.token_classifier import (TokenClassifier,
                                          TokenClassifierPreprocessor)
from kzoo.tasks.multiple_choice import (MultipleChoice,
                                         MultipleChoicePreprocessor)
from kzoo import metrics
# kzoo.datasets.austen_passages(...) works after a bare `import kzoo`.
from kzoo import datasets
from kzoo.models.elmo import (
    ElmoBackbone,
    ElmoEmbedder,
    ElmoLanguageModel,
    ElmoLanguageModelPreprocessor,
    ElmoPreprocessor,
    ElmoTextClassifier,
    ElmoTokenizer,
    ElmoTokenTagger,
    ElmoTokenTaggerPreprocessor,
)
from kzoo.models.awd_lstm import (
    AwdLstmBackbone,
    AwdLstmLanguageModel,
    AwdLstmLanguageModelPreprocessor,
    AwdLstmPreprocessor,
    AwdLstmTextClassifier,
    AwdLstmTokenizer,
)
from kzoo.models.t5 import (
    T5Backbone,
    T5Preprocessor,
    T5Seq2SeqLM,
    T5Tokenizer,
)
from kzoo.models.bart import (
    BartBackbone,
    BartDenoisingLM,
    BartDenoisingPreprocessor,
    BartPreprocessor,
    BartSeq2SeqLM,
    BartSeq2SeqLMPreprocessor,
    BartTextClassifier,
    BartTokenizer,
)
from kzoo import convert  # after the models: converters build them
from kzoo.version import __version__
