"""BERT as a sentence embedder (Sentence-BERT style pooling)."""

import keras

from kzoo.models.bert.backbone import BertBackbone
from kzoo.tasks.task_wiring import task_inputs
from kzoo.models.bert.preprocessor import BertPreprocessor
from kzoo.core import labels
from kzoo.layers.pooling import POOLING_MODES, L2Normalize, TokenPooling
from kzoo.core.arguments import BOOLEAN, POSITIVE_INT, OneOf, Optional
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.training import default_optimizer


# The activations of sentence-transformers' Dense module kzoo reproduces
# (its default torch.nn.Tanh, and torch.nn.Identity).
DENSE_ACTIVATIONS = ("tanh", "linear")


@register
class BertTextEmbedder(Task):
    """Text -> one fixed-size vector per text, for semantic search and
    clustering: token vectors pooled over the real tokens (mean by
    default), optionally through a dense layer, then L2-normalised, as
    sentence-transformers computes for `all-MiniLM-L6-v2` and friends
    (Transformer -> Pooling -> Dense -> Normalize; LaBSE pools [CLS]
    through a 768 -> 768 tanh layer). Dot products of the outputs are
    cosine similarities.

    Args:
        backbone: a `BertBackbone`.
        preprocessor: a `BertPreprocessor`, or None to feed input dicts.
        pooling: "mean" (default), "cls" or "max".
        dense_dim: None (default), or the width of a dense layer applied
            to the pooled vector (sentence-transformers' `Dense` module).
        dense_activation: that layer's activation, "tanh" (default, as
            sentence-transformers' `Dense`) or "linear".
        normalize: L2-normalise the (pooled, projected) vector.

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
                     "dense_dim": Optional(POSITIVE_INT),
                     "dense_activation": OneOf(DENSE_ACTIVATIONS,
                                               noun="dense activation"),
                     "normalize": BOOLEAN}

    def __init__(self, backbone, preprocessor=None, pooling="mean",
                 dense_dim=None, dense_activation="tanh", normalize=True,
                 **kwargs):
        # === Layers ===
        dtype = backbone.dtype_policy
        pooling_layer = TokenPooling(pooling, dtype=dtype, name="pooling")
        dense_layer = None if dense_dim is None else keras.layers.Dense(
            dense_dim, activation=dense_activation,
            kernel_initializer=backbone.kernel_initializer(), dtype=dtype,
            name="dense")
        normalize_layer = (L2Normalize(dtype=dtype, name="normalize")
                           if normalize else None)
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone, ())
        sequence = backbone(backbone_inputs)["sequence_output"]
        embedding = pooling_layer(sequence, inputs["padding_mask"])
        if dense_layer is not None:
            embedding = dense_layer(embedding)
        if normalize_layer is not None:
            embedding = normalize_layer(embedding)
        super().__init__(inputs=inputs, outputs=embedding, **kwargs)
        self._finish_init(backbone, preprocessor)
        # === Config ===
        self.pooling = pooling
        self.dense_dim = dense_dim
        self.dense_activation = dense_activation
        self.normalize = bool(normalize)

    def task_config(self):
        return {"pooling": self.pooling, "dense_dim": self.dense_dim,
                "dense_activation": self.dense_activation,
                "normalize": self.normalize}

    @property
    def embedding_dim(self):
        """The width of the vectors `embed` returns."""
        return self.dense_dim or self.backbone.hidden_dim

    def label_spec(self):
        return labels.Targets(self.embedding_dim, what="target embeddings")

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
