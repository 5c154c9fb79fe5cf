"""ELMo's pretraining: a forward and a backward language model over words,
read from characters."""

import keras
import tensorflow as tf
from keras import ops

from kzoo.models.elmo.backbone import ElmoBackbone
from kzoo.models.elmo.preprocessor import ElmoPreprocessor
from kzoo.models.registry import register
from kzoo.models.task import Task
from kzoo.models.task_wiring import task_inputs
from kzoo.training import default_optimizer
from kzoo.training.losses import token_loss

DIRECTIONS = ("forward", "backward")


class Perplexity(keras.metrics.Metric):
    """exp(mean cross-entropy) over the weighted (real) tokens seen, from
    logits and integer targets."""

    def __init__(self, name="perplexity", **kwargs):
        super().__init__(name=name, **kwargs)
        self.total = self.add_variable(shape=(), initializer="zeros",
                                       name="total")
        self.count = self.add_variable(shape=(), initializer="zeros",
                                       name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        losses = keras.losses.sparse_categorical_crossentropy(
            y_true, y_pred, from_logits=True)
        weights = ops.ones_like(losses) if sample_weight is None else \
            ops.cast(sample_weight, losses.dtype)
        self.total.assign_add(ops.sum(losses * weights))
        self.count.assign_add(ops.sum(weights))

    def result(self):
        return ops.exp(self.total / ops.maximum(self.count, 1.0))

    def reset_state(self):
        self.total.assign(0.0)
        self.count.assign(0.0)


@register
class ElmoLanguageModelPreprocessor(ElmoPreprocessor):
    """Raw text -> x (`character_ids`, `padding_mask`), the targets of
    both directions (word ids: the next word for the forward LM, the
    previous one for the backward LM; `<S>`/`</S>` are targets too) and
    their weights (1 where there is a real target).

    Makes its own labels: pass texts only.
    """

    takes_labels = False

    def call(self, x, y=None, sample_weight=None):
        words, padding_mask = self.pack_words(x)
        inputs = self._pack(x)
        ids = self.tokenizer._hub().lookup(words)  # (batch, seq)
        zeros = tf.zeros_like(ids[:, :1])
        targets = {
            "forward": tf.concat([ids[:, 1:], zeros], axis=1),
            "backward": tf.concat([zeros, ids[:, :-1]], axis=1),
        }
        weights = {
            "forward": tf.concat([padding_mask[:, 1:], zeros], axis=1),
            "backward": tf.concat([zeros, padding_mask[:, :-1]], axis=1),
        }
        weights = {k: tf.cast(v, "float32") for k, v in weights.items()}
        return inputs, targets, weights


@register
class ElmoLanguageModel(Task):
    """ELMo's biLM objective: the forward LSTM stack predicts each next
    word, the backward one each previous word, through one softmax over
    the word vocabulary shared by both directions (Peters et al., 2018);
    the loss is the mean of the two directions' cross-entropies over the
    real targets, with a perplexity per direction.

    Outputs: `{"forward": logits, "backward": logits}`, each
    `(batch, tokens, vocabulary_size)`.

    Args:
        backbone: an `ElmoBackbone`.
        vocabulary_size: the softmax's size (the tokenizer's vocabulary).
        preprocessor: an `ElmoLanguageModelPreprocessor`, or None to feed
            input dicts (with targets and weights of your own).

    Example:
    ```python
    lm = kzoo.ElmoLanguageModel.from_preset("elmo_small_en",
                                            load_weights=False)
    lm.fit(texts, epochs=1)
    lm.evaluate(texts)  # loss, forward/backward perplexity
    ```
    """

    backbone_cls = ElmoBackbone
    preprocessor_cls = ElmoLanguageModelPreprocessor
    pretrained_heads = ()

    def __init__(self, backbone, preprocessor=None, vocabulary_size=None,
                 **kwargs):
        if vocabulary_size is None:
            if preprocessor is None:
                raise ValueError(
                    "ElmoLanguageModel needs vocabulary_size (the softmax's "
                    "size), or a preprocessor whose tokenizer gives it.")
            vocabulary_size = preprocessor.tokenizer.vocabulary_size
        # === Layers ===
        softmax = keras.layers.Dense(
            vocabulary_size, kernel_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name="softmax")
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone)
        top = backbone(backbone_inputs)["sequence_output"]
        half = backbone.projection_dim
        outputs = {"forward": softmax(top[..., :half]),
                   "backward": softmax(top[..., half:])}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self._finish_init(backbone, preprocessor)
        # === Config ===
        self.vocabulary_size = int(vocabulary_size)

    def task_config(self):
        return {"vocabulary_size": self.vocabulary_size}

    def default_compile_args(self):
        # Each direction averaged over its real targets; Keras sums the two
        # losses, weighted 1/2 each: their mean, as the original.
        return {
            "optimizer": default_optimizer(learning_rate=1e-3),
            "loss": {d: token_loss(name=f"{d}_loss") for d in DIRECTIONS},
            "loss_weights": {d: 0.5 for d in DIRECTIONS},
            "weighted_metrics": {d: [Perplexity()] for d in DIRECTIONS},
        }

    def compile(self, optimizer="auto", loss="auto", metrics="auto",
                weighted_metrics="auto", loss_weights="auto", **kwargs):
        if isinstance(loss_weights, str) and loss_weights == "auto":
            loss_weights = self.default_compile_args()["loss_weights"] \
                if isinstance(loss, str) and loss == "auto" else None
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics,
                        weighted_metrics=weighted_metrics,
                        loss_weights=loss_weights, **kwargs)
