"""Text classification on ELMo features: a scalar mix, pooled."""

from keras import ops

from kzoo.layers import ScalarMix
from kzoo.core.arguments import BOOLEAN, FRACTION, OneOf, Optional
from kzoo.layers.pooling import TokenPooling
from kzoo.models.elmo.backbone import ElmoBackbone
from kzoo.models.elmo.preprocessor import ElmoPreprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import SequenceClassifier


@register
class ElmoTextClassifier(SequenceClassifier):
    """ELMo features -> a class: a learned scalar mix of the biLM's layers,
    pooled over the real words (`<S>`/`</S>` excluded; "mean" or "max"),
    dropout, dense(num_classes).

    Freeze the backbone (`classifier.backbone.trainable = False`) to train
    on ELMo features as the paper does; only the mix and the dense layer
    then learn.

    Args: `SequenceClassifier`'s (`num_classes`, `dropout`,
    `problem_type`), and
        pooling: "mean" or "max" over the words.
        normalize_layers: the mix normalises each layer first.

    Example:
    ```python
    # elmo_small_en's vocabulary comes with its weights (downloaded
    # once); offline, a word list of our own:
    words = ["<S>", "</S>", "<UNK>", "the", "cat", "sat", "."]
    with open("vocab.txt", "w") as f:
        f.write("\\n".join(words))
    tokenizer = kzoo.ElmoTokenizer("vocab.txt")
    backbone = kzoo.ElmoBackbone(filters=[[1, 4], [2, 8]], projection_dim=8,
                                 lstm_dim=16)   # small, random
    # from_preset("elmo_small_en", num_classes=2) starts from the
    # released biLM (often kept frozen: backbone.trainable = False).
    classifier = kzoo.ElmoTextClassifier(
        backbone, num_classes=2,
        preprocessor=kzoo.ElmoPreprocessor(tokenizer, sequence_length=8))
    classifier.fit(["a fine film", "a dull film"], [1, 0], epochs=1,
                   verbose=0)
    assert classifier.predict(["a film"], verbose=0).shape == (1, 2)
    ```
    """

    backbone_cls = ElmoBackbone
    preprocessor_cls = ElmoPreprocessor
    argument_spec = {"dropout": Optional(FRACTION),
                     "pooling": OneOf(("mean", "max"), noun="pooling mode"),
                     "normalize_layers": BOOLEAN}

    def __init__(self, backbone, num_classes, preprocessor=None,
                 dropout=None, problem_type="single_label_classification",
                 pooling="mean", normalize_layers=False, **kwargs):
        # `pool`'s layers, made before the base class's graph uses them.
        mix_and_pooling = (
            ScalarMix(backbone.num_layers + 1,
                      normalize_layers=normalize_layers,
                      dtype=backbone.dtype_policy, name="scalar_mix"),
            TokenPooling(pooling, dtype=backbone.dtype_policy,
                         name="pooling"))
        super().__init__(backbone, num_classes, preprocessor=preprocessor,
                         dropout=dropout, problem_type=problem_type,
                         pooling_layers=mix_and_pooling, **kwargs)
        self.pooling = pooling
        self.normalize_layers = bool(normalize_layers)

    def pool(self, inputs, backbone_outputs, mix, pooling):
        mask = inputs["padding_mask"]
        mixed = mix(backbone_outputs["layer_outputs"], mask)
        return pooling(mixed, words_only(mask))

    def task_config(self):
        return {**super().task_config(), "pooling": self.pooling,
                "normalize_layers": self.normalize_layers}


def words_only(padding_mask):
    """The padding mask without `<S>` (the first position) and `</S>` (the
    last real one): the words of each text."""
    mask = ops.cast(padding_mask, "int32")
    next_is_real = ops.concatenate(
        [mask[:, 1:], ops.zeros_like(mask[:, :1])], axis=1)
    not_first = ops.concatenate(
        [ops.zeros_like(mask[:, :1]), ops.ones_like(mask[:, 1:])], axis=1)
    return mask * next_is_real * not_first
