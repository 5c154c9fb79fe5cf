"""ULMFiT's classifier: concat pooling over the AWD-LSTM's top layer, then
fastai's batchnorm-dropout-linear blocks."""

import keras
from keras import ops

from kzoo.core.arguments import FRACTION
from kzoo.layers.dropout import Dropout
from kzoo.models.awd_lstm.backbone import AwdLstmBackbone
from kzoo.models.awd_lstm.preprocessor import AwdLstmPreprocessor
from kzoo.core.classification import SINGLE_LABEL
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import SequenceClassifier


class ConcatPooling(keras.layers.Layer):
    """`[last real vector, max over real, mean over real]` of a sequence
    (ULMFiT's concat pooling, fastai's `masked_concat_pool`):
    `(batch, seq, d)` and a padding mask -> `(batch, 3 d)`."""

    def call(self, sequence, padding_mask):
        # Lengths counted in int32 and the mean summed in float32: in a
        # bfloat16 compute dtype a count above 256 rounds, and the "last"
        # token could land on padding.
        lengths = ops.sum(ops.cast(padding_mask, "int32"), axis=1)  # (batch,)
        last = ops.maximum(lengths - 1, 0)
        last = ops.take_along_axis(
            sequence, ops.reshape(last, (-1, 1, 1)), axis=1)[:, 0]
        real = ops.expand_dims(ops.cast(padding_mask, "bool"), -1)
        maximum = ops.max(ops.where(real, sequence, float("-inf")), axis=1)
        mask = ops.expand_dims(ops.cast(padding_mask, "float32"), -1)
        mean = ops.sum(ops.cast(sequence, "float32") * mask, axis=1) / \
            ops.maximum(ops.sum(mask, axis=1), 1.0)
        return ops.concatenate([last, maximum,
                                ops.cast(mean, sequence.dtype)], axis=-1)

    def compute_output_shape(self, sequence_shape, padding_mask_shape):
        return (sequence_shape[0], 3 * sequence_shape[-1])


def batchnorm(dtype, name):
    # torch.nn.BatchNorm1d's numbers (momentum 0.1 there is 0.9 here).
    return keras.layers.BatchNormalization(momentum=0.9, epsilon=1e-5,
                                           dtype=dtype, name=name)


@register
class AwdLstmTextClassifier(SequenceClassifier):
    """ULMFiT's classifier (fastai's `PoolingLinearClassifier`): concat
    pooling of the backbone's top layer over the real tokens (the last
    real token's vector, the max and the mean: `3 * embedding_dim`), then
    for each width in `hidden_dims` a block BatchNorm -> dropout ->
    linear -> ReLU, and a last block BatchNorm -> dropout -> linear to
    `num_classes`. As fastai's `LinBnDrop`, the linear layers after a
    BatchNorm have no bias.

    Train it ULMFiT's way with `kzoo.recipes.ulmfit` (discriminative
    learning rates, slanted triangular rates, gradual unfreezing; the
    layer groups are the embedding, each LSTM, then this head).

    Args:
        backbone: an `AwdLstmBackbone` (fastai's classifier config uses
            stronger dropouts than the LM's: input 0.4, hidden 0.3,
            embedding 0.05, weight 0.5).
        num_classes, problem_type: as `SequenceClassifier`'s.
        hidden_dims: widths of the hidden blocks (fastai's `lin_ftrs`,
            [50]).
        pooled_dropout: dropout on the pooled vector (fastai's classifier
            `output_p`, 0.4).
        dropout: dropout before every later linear layer (0.1).

    Example:
    ```python
    from kzoo import datasets
    from kzoo.models.awd_lstm.tokenizer import build_vocabulary
    texts = datasets.austen_passages("emma", words=20)[:16]
    build_vocabulary(texts, "vocab.txt", max_size=200)  # fastai's layout
    tokenizer = kzoo.AwdLstmTokenizer(vocabulary="vocab.txt")
    # ULMFiT starts it from a language model's encoder
    # (kzoo.recipes.ulmfit.classifier_from_language_model).
    classifier = kzoo.AwdLstmTextClassifier(
        kzoo.AwdLstmBackbone(tokenizer.vocabulary_size, embedding_dim=8,
                             lstm_dim=16),
        num_classes=2,
        preprocessor=kzoo.AwdLstmPreprocessor(tokenizer, sequence_length=24))
    classifier.fit(texts[:4], [1, 0, 1, 0], epochs=1, verbose=0)
    assert classifier.predict(texts[:2], verbose=0).shape == (2, 2)
    ```
    """

    backbone_cls = AwdLstmBackbone
    preprocessor_cls = AwdLstmPreprocessor
    classifier_use_bias = False
    argument_spec = {"dropout": FRACTION, "pooled_dropout": FRACTION}

    def __init__(self, backbone, num_classes, preprocessor=None,
                 hidden_dims=(50,), pooled_dropout=0.4, dropout=0.1,
                 problem_type=SINGLE_LABEL, **kwargs):
        hidden_dims = [int(d) for d in hidden_dims]
        if any(d < 1 for d in hidden_dims):
            raise ValueError(f"AwdLstmTextClassifier: hidden_dims must be "
                             f"positive widths; got {hidden_dims!r}.")
        dtype = backbone.dtype_policy
        blocks = []
        for i, width in enumerate(hidden_dims):
            blocks.append((
                batchnorm(dtype, f"head_batchnorm_{i}"),
                Dropout(pooled_dropout if i == 0 else dropout,
                        dtype=dtype, name=f"head_dropout_{i}"),
                keras.layers.Dense(
                    width, use_bias=False, activation="relu",
                    kernel_initializer=backbone.kernel_initializer(),
                    dtype=dtype, name=f"head_dense_{i}")))
        # `pool`'s layers, made before the base class's graph uses them.
        head = (ConcatPooling(dtype=dtype, name="concat_pooling"), blocks,
                batchnorm(dtype, "classifier_batchnorm"))
        # The base class's dropout sits before its last linear layer.
        super().__init__(backbone, num_classes, preprocessor=preprocessor,
                         dropout=dropout if hidden_dims else pooled_dropout,
                         problem_type=problem_type, pooling_layers=head,
                         **kwargs)
        self.hidden_dims = hidden_dims
        self.pooled_dropout = float(pooled_dropout)
        self.dropout = float(dropout)

    def pool(self, inputs, backbone_outputs, pooling, blocks, last_batchnorm):
        x = pooling(backbone_outputs["sequence_output"],
                    inputs["padding_mask"])  # (batch, 3 embedding_dim)
        for batch_norm, dropout, dense in blocks:
            x = dense(dropout(batch_norm(x)))
        return last_batchnorm(x)

    def task_config(self):
        return {**super().task_config(), "hidden_dims": self.hidden_dims,
                "pooled_dropout": self.pooled_dropout}
