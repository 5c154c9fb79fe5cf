"""BERT as a sentence embedder (Sentence-BERT style pooling)."""

import keras
from keras import ops

from kzoo.models.bert.backbone import BertBackbone
from kzoo.models.task_wiring import task_inputs
from kzoo.models.bert.preprocessor import BertPreprocessor
from kzoo.models import labels
from kzoo.models.arguments import BOOLEAN, OneOf
from kzoo.models.registry import register
from kzoo.models.task import Task
from kzoo.training import default_optimizer

POOLING_MODES = ("mean", "cls", "max")


class TokenPooling(keras.layers.Layer):
    """`(batch, seq, hidden)` token vectors -> `(batch, hidden)`, counting
    only real (non-padding) tokens.

    mean: sum of real token vectors / number of real tokens (clamped at
        1e-9, as sentence-transformers does).
    cls: the first token's vector.
    max: the element-wise maximum over real tokens.
    """

    def __init__(self, mode="mean", **kwargs):
        super().__init__(**kwargs)
        if mode not in POOLING_MODES:
            raise ValueError(f"pooling must be one of {POOLING_MODES}; got "
                             f"{mode!r}.")
        self.mode = mode

    def call(self, sequence_output, padding_mask):
        if self.mode == "cls":
            return sequence_output[:, 0, :]
        mask = ops.expand_dims(ops.cast(padding_mask, sequence_output.dtype),
                               -1)  # (batch, seq, 1)
        if self.mode == "max":
            very_low = ops.cast(-1e9, sequence_output.dtype)
            return ops.max(ops.where(mask > 0, sequence_output, very_low),
                           axis=1)
        total = ops.sum(sequence_output * mask, axis=1)  # (batch, hidden)
        count = ops.maximum(ops.sum(mask, axis=1), 1e-9)  # (batch, 1)
        return total / count

    def compute_output_shape(self, sequence_output_shape, padding_mask_shape):
        return (sequence_output_shape[0], sequence_output_shape[-1])

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}


class L2Normalize(keras.layers.Layer):
    """x / max(||x||, 1e-12) along the last axis (torch's F.normalize)."""

    def call(self, x):
        norm = ops.sqrt(ops.sum(ops.square(x), axis=-1, keepdims=True))
        return x / ops.maximum(norm, 1e-12)


@register
class BertTextEmbedder(Task):
    """Text -> one fixed-size vector per text, for semantic search and
    clustering: token vectors pooled over the real tokens (mean by
    default), then L2-normalised, as sentence-transformers computes for
    `all-MiniLM-L6-v2` and friends. Dot products of the outputs are cosine
    similarities.

    Args:
        backbone: a `BertBackbone`.
        preprocessor: a `BertPreprocessor`, or None to feed input dicts.
        pooling: "mean" (default), "cls" or "max".
        normalize: L2-normalise the pooled vector.

    Example:
    ```python
    embedder = kzoo.BertTextEmbedder.from_preset("all_minilm_l6_v2")
    vectors = embedder.embed(["A man is eating food.",
                              "Someone is having a meal.",
                              "The stock market fell."])
    vectors @ vectors.T   # the first two are the closest pair
    ```
    """

    backbone_cls = BertBackbone
    preprocessor_cls = BertPreprocessor
    argument_spec = {"pooling": OneOf(POOLING_MODES, noun="pooling mode"),
                     "normalize": BOOLEAN}

    def __init__(self, backbone, preprocessor=None, pooling="mean",
                 normalize=True, **kwargs):
        # === Layers ===
        pooling_layer = TokenPooling(pooling, name="pooling")
        normalize_layer = L2Normalize(name="normalize") if normalize else None
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone, ())
        sequence = backbone(backbone_inputs)["sequence_output"]
        embedding = pooling_layer(sequence, inputs["padding_mask"])
        if normalize_layer is not None:
            embedding = normalize_layer(embedding)
        super().__init__(inputs=inputs, outputs=embedding, **kwargs)
        self._finish_init(backbone, preprocessor)
        # === Config ===
        self.pooling = pooling
        self.normalize = bool(normalize)

    def task_config(self):
        return {"pooling": self.pooling, "normalize": self.normalize}

    def label_spec(self):
        return labels.Targets(self.backbone.hidden_dim,
                              what="target embeddings")

    def default_compile_args(self):
        # Distillation onto target vectors; contrastive objectives need
        # pairs and are left to the user's own `compile`.
        return {"optimizer": default_optimizer(learning_rate=2e-5),
                "loss": keras.losses.MeanSquaredError()}

    def embed(self, texts, batch_size=32):
        """Embeddings of `texts` (a list of strings) as a numpy array of
        shape `(len(texts), hidden_dim)`."""
        if isinstance(texts, str):
            texts = [texts]
        elif isinstance(texts, tuple) or _is_iterator(texts):
            texts = list(texts)  # a tuple here is texts, not a pair
        # Anything else goes to the preprocessor's checks as it is.
        return keras.ops.convert_to_numpy(
            self.predict(texts, batch_size=batch_size, verbose=0))

    def similarity(self, texts_a, texts_b, batch_size=32):
        """Cosine similarities, `(len(texts_a), len(texts_b))`."""
        a = self.embed(texts_a, batch_size)
        b = self.embed(texts_b, batch_size)
        if not self.normalize:
            a = a / keras.ops.convert_to_numpy(
                keras.ops.norm(a, axis=-1, keepdims=True))
            b = b / keras.ops.convert_to_numpy(
                keras.ops.norm(b, axis=-1, keepdims=True))
        return a @ b.T


def _is_iterator(value):
    return hasattr(value, "__next__")
