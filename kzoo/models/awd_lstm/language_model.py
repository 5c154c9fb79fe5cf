"""AWD-LSTM's language model: ULMFiT's pretraining and target-domain
fine-tuning objective."""

from kzoo.layers import TiedLMHead
from kzoo.core.arguments import FRACTION
from kzoo.models.awd_lstm.backbone import AwdLstmBackbone, locked_dropout
from kzoo.models.awd_lstm.preprocessor import AwdLstmLanguageModelPreprocessor
from kzoo.metrics.perplexity import Perplexity
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import task_inputs
from kzoo.training.adam import AdamW
from kzoo.training.losses import token_loss


@register
class AwdLstmLanguageModel(Task):
    """Next-token prediction with AWD-LSTM, as fastai's language model:
    variational output dropout on the top layer, then a decoder TIED to
    the encoder's embedding matrix (`logits = h E^T + b`, fastai's
    `LinearDecoder(tie_encoder=...)`, with its bias). The loss is the mean
    cross-entropy over the real next tokens; the metric their perplexity.

    Outputs: logits `(batch, tokens, vocabulary_size)`.

    Args:
        backbone: an `AwdLstmBackbone`.
        preprocessor: an `AwdLstmLanguageModelPreprocessor`, or None to
            feed input dicts (with targets and weights of your own).
        output_dropout: fastai's `output_p` (0.1 in its LM config).

    Example:
    ```python
    from kzoo import datasets
    from kzoo.models.awd_lstm.tokenizer import build_vocabulary
    texts = datasets.austen_passages("emma", words=20)[:16]
    build_vocabulary(texts, "vocab.txt", max_size=200)  # fastai's layout
    tokenizer = kzoo.AwdLstmTokenizer(vocabulary="vocab.txt")
    lm = kzoo.AwdLstmLanguageModel(
        kzoo.AwdLstmBackbone(tokenizer.vocabulary_size, embedding_dim=8,
                             lstm_dim=16),
        preprocessor=kzoo.AwdLstmLanguageModelPreprocessor(
            tokenizer, sequence_length=24))
    lm.fit(texts, epochs=1, verbose=0)
    loss, perplexity = lm.evaluate(texts, verbose=0)
    ```
    """

    backbone_cls = AwdLstmBackbone
    preprocessor_cls = AwdLstmLanguageModelPreprocessor
    pretrained_heads = ("lm_head",)
    argument_spec = {"output_dropout": FRACTION}

    def __init__(self, backbone, preprocessor=None, output_dropout=0.1,
                 **kwargs):
        # === Layers ===
        output_dp = locked_dropout(output_dropout, backbone.dtype_policy,
                                   "output_dropout")
        lm_head = TiedLMHead(backbone.token_embedding, use_bias=True,
                             dtype=backbone.dtype_policy, name="lm_head")
        # === Functional model ===
        inputs, _ = task_inputs(backbone)
        top = backbone(inputs)["sequence_output"]
        logits = lm_head(output_dp(top))  # (batch, seq, vocab)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.lm_head = lm_head
        # === Config ===
        self.output_dropout = float(output_dropout)

    def task_config(self):
        return {"output_dropout": self.output_dropout}

    def default_compile_args(self):
        # fastai's: Adam with beta_1 0.7 (its momentum at the peak of the
        # one-cycle), beta_2 0.99, weight decay 0.01.
        return {
            "optimizer": AdamW(
                1e-3, beta_1=0.7, beta_2=0.99, weight_decay=0.01),
            "loss": token_loss(),
            "weighted_metrics": [Perplexity()],
        }
