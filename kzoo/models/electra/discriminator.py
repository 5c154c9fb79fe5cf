"""ELECTRA's discriminator: a replaced/original logit per token."""

import keras
from keras import ops

from kzoo.layers import get_activation
from kzoo.layers.dense import FoldedDense
from kzoo.models.electra.backbone import ElectraBackbone
from kzoo.models.electra.preprocessor import ElectraPreprocessor
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import task_inputs
from kzoo.training import default_optimizer
from kzoo.training.losses import PER_REAL_TOKEN


@keras.saving.register_keras_serializable(package="kzoo")
class ReplacedTokenLoss(keras.losses.Loss):
    """Binary cross-entropy on `(batch, seq)` logits, one loss per token,
    averaged over the tokens whose sample weight is 1 (the per-real-token
    normalisation of `kzoo.training.losses`). Keras' binary cross-entropy
    would average over the last axis, the sequence, before a per-token
    weight (the padding mask) could apply."""

    def __init__(self, name="replaced_token_loss", **kwargs):
        kwargs.setdefault("reduction", PER_REAL_TOKEN)
        super().__init__(name=name, **kwargs)

    def call(self, y_true, y_pred):
        return keras.losses.binary_crossentropy(
            ops.expand_dims(ops.cast(y_true, y_pred.dtype), -1),
            ops.expand_dims(y_pred, -1), from_logits=True)


class ReplacedTokenHead(keras.layers.Layer):
    """The original's `discriminator_predictions`: dense(hidden) +
    activation (the encoder's), then `dense_prediction` to one logit per
    token: `(batch, seq, hidden)` -> `(batch, seq)`; above 0: replaced."""

    head_kind = "replaced_token"   # see kzoo.core.head_weights

    def __init__(self, activation="gelu", kernel_initializer="glorot_uniform",
                 **kwargs):
        super().__init__(**kwargs)
        self.activation = activation
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self._activation_fn = get_activation(activation)

    def build(self, input_shape):
        self.dense = FoldedDense(
            input_shape[-1], kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy, name="dense")
        self.dense.build(input_shape)
        self.dense_prediction = FoldedDense(
            1, kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy, name="dense_prediction")
        self.dense_prediction.build(tuple(input_shape[:-1]) +
                                    (input_shape[-1],))
        self.built = True

    def call(self, sequence_output):
        hidden = self._activation_fn(self.dense(sequence_output))
        return ops.squeeze(self.dense_prediction(hidden), -1)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1])

    def get_config(self):
        config = super().get_config()
        config.update({"activation": self.activation,
                       "kernel_initializer": keras.initializers.serialize(
                           self.kernel_initializer)})
        return config


def real_token_weights(x, sample_weight=None):
    """`(batch, seq)` float32 weights: the input's padding mask, times a
    user's `sample_weight` (per example or per token) when there is one.

    Weighting happens here, on the inputs every step sees, rather than in
    the preprocessor, so that token-id dicts and datasets without weights
    skip the padding as raw text does."""
    real = ops.cast(x["padding_mask"], "float32")
    if sample_weight is None:
        return real
    sample_weight = ops.cast(sample_weight, "float32")
    if len(sample_weight.shape) == 1:  # one weight per example
        sample_weight = ops.expand_dims(sample_weight, -1)
    elif len(sample_weight.shape) != 2:
        raise ValueError(
            "ElectraDiscriminator takes a sample_weight per example "
            "(batch,) or per token (batch, seq); got shape "
            f"{tuple(sample_weight.shape)}.")
    return real * sample_weight


def replaced_token_head(backbone):
    """The discriminator head, configured from the backbone."""
    return ReplacedTokenHead(
        activation=backbone.activation,
        kernel_initializer=backbone.kernel_initializer(),
        dtype=backbone.dtype_policy, name="discriminator_predictions")


@register
class ElectraDiscriminator(Task):
    """ELECTRA's discriminator (Hugging Face's `ElectraForPreTraining`):
    `(batch, seq)` logits, above 0 where a token looks replaced.

    Fit takes texts and per-token 0/1 labels of the packed length
    (`(batch, sequence_length)`). The loss and accuracy count the real
    tokens only, as the original's (its sigmoid cross-entropy is weighted
    by the input mask): the task weights every position by the input's
    `padding_mask`, whatever the input (raw text, a dataset, token-id
    dicts), so labels at padded positions are ignored. A `sample_weight`
    of your own, per example `(batch,)` or per token `(batch, seq)`,
    multiplies the mask.
    Replaced-token-detection pretraining from raw text, with a generator
    making the replacements, is `kzoo.ElectraPretrainer`.

    Example:
    ```python
    # from_preset("electra_small_discriminator_en_uncased") loads the released
    # weights (downloaded once); offline, random ones:
    discriminator = kzoo.ElectraDiscriminator.from_preset(
        "electra_small_discriminator_en_uncased", load_weights=False,
        sequence_length=16)
    logits = discriminator.predict(["the chef cooked the meal"])
    replaced = logits > 0   # per token: was it replaced?
    assert logits.shape[:2] == (1, 16)
    ```
    """

    backbone_cls = ElectraBackbone
    preprocessor_cls = ElectraPreprocessor
    pretrained_heads = ("discriminator_predictions",)

    def __init__(self, backbone, preprocessor=None, **kwargs):
        # === Layers ===
        head = replaced_token_head(backbone)
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone)
        logits = head(backbone(backbone_inputs)["sequence_output"])
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.discriminator_predictions = head

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        return super().compute_loss(
            x, y, y_pred, real_token_weights(x, sample_weight),
            training=training)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        return super().compute_metrics(
            x, y, y_pred, real_token_weights(x, sample_weight))

    def default_compile_args(self):
        return {"optimizer": default_optimizer(5e-5),
                "loss": ReplacedTokenLoss(),
                "weighted_metrics": [keras.metrics.BinaryAccuracy(
                    threshold=0.0, name="accuracy")]}
