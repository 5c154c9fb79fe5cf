"""Sequence labelling on ELMo features: a scalar mix per token, a label
per word. ELMo's tokens are the words themselves, so a word's label sits
on its own position (no word-piece alignment)."""

import keras
import numpy as np
import tensorflow as tf

from kzoo.layers import ScalarMix
from kzoo.layers.dropout import Dropout
from kzoo.core.arguments import BOOLEAN, FRACTION, Optional
from kzoo.models.elmo.backbone import ElmoBackbone
from kzoo.models.elmo.preprocessor import (ElmoPreprocessor, backbone_inputs,
                                           pack_rows, pack_words)
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import task_inputs
from kzoo.tasks.token_classifier import (WordsPreprocessor, WordTagger,
                                          check_labels)
from kzoo.training import default_optimizer
from kzoo.training.losses import token_loss

NO_LABEL = -1


@register
class ElmoTokenTaggerPreprocessor(WordsPreprocessor, ElmoPreprocessor):
    """Words (one list of words per example) and word labels ->
    `ElmoBackbone`'s inputs, a label per token and a loss weight per token.

    Each example is packed as `ElmoPreprocessor` packs a text (`<S>`,
    the words, `</S>`, padding); each word's label goes on the word's own
    position. `<S>`, `</S>`, padding, words cut off by `sequence_length`
    and words with a negative label carry no loss (weight 0).

    Args:
        tokenizer: an `ElmoTokenizer`.
        sequence_length: tokens per example, `<S>` and `</S>` included.

    Example:
    ```python
    # elmo_small_en's vocabulary comes with its weights (downloaded
    # once); offline, a word list of our own:
    words = ["<S>", "</S>", "<UNK>", "the", "cat", "sat", "."]
    with open("vocab.txt", "w") as f:
        f.write("\\n".join(words))
    tokenizer = kzoo.ElmoTokenizer("vocab.txt")
    preprocessor = kzoo.ElmoTokenTaggerPreprocessor(tokenizer,
                                                    sequence_length=8)
    x, y, weights = preprocessor([["Elizabeth", "smiled"]], [[1, 0]])
    # <S> Elizabeth smiled </S>: a label per word, none for <S>, </S>.
    assert np.asarray(y)[0][:4].tolist() == [0, 1, 0, 0]
    assert np.asarray(weights)[0][:4].tolist() == [0, 1, 1, 0]
    ```
    """

    def _call_batched(self, x, y=None, sample_weight=None):
        if not isinstance(x, tf.RaggedTensor):
            x = tf.RaggedTensor.from_tensor(x)
        inputs = backbone_inputs(*pack_words(x, self.sequence_length))
        if y is None:
            return inputs
        if not isinstance(y, tf.RaggedTensor):
            y = tf.RaggedTensor.from_tensor(y)
        labels, _ = pack_rows(tf.cast(y, tf.int32), self.sequence_length,
                              NO_LABEL, NO_LABEL, NO_LABEL)
        scored = labels >= 0
        weights = tf.cast(scored, "float32")
        if sample_weight is not None:
            weights *= tf.cast(tf.reshape(sample_weight, (-1, 1)), "float32")
        return inputs, tf.where(scored, labels, 0), weights


@register
class ElmoTokenTagger(WordTagger, Task):
    """A label per word on ELMo features (NER, POS tagging, chunking): a
    learned scalar mix of the biLM's layers at each token -> dropout ->
    dense(num_classes), trained with a token-level cross-entropy over the
    labelled words.

    Freeze the backbone (`tagger.backbone.trainable = False`) to train on
    ELMo features as the paper does; only the mix and the dense layer then
    learn. `predict_words` gives a label per word; `evaluate_entities`
    entity-level precision/recall/F1 (`kzoo.metrics.entity_scores`).

    Args:
        backbone: an `ElmoBackbone`.
        num_classes: number of labels (or None with `label_names`).
        preprocessor: an `ElmoTokenTaggerPreprocessor`, or None to feed
            input dicts (logits per token).
        dropout: before the classifier; None: the backbone's dropout.
        label_names: the label of each class id ("O", "B-PER", ...).
        normalize_layers: the mix normalises each layer first.

    Example:
    ```python
    # Setup: the example of kzoo.ElmoTokenTaggerPreprocessor (tokenizer).
    # from_preset("elmo_small_en", label_names=[...]) starts from the
    # released biLM; a small random one here:
    backbone = kzoo.ElmoBackbone(filters=[[1, 4], [2, 8]], projection_dim=8,
                                 lstm_dim=16)
    tagger = kzoo.ElmoTokenTagger(
        backbone, label_names=["O", "B-PER", "I-PER"],
        preprocessor=kzoo.ElmoTokenTaggerPreprocessor(tokenizer,
                                                      sequence_length=8))
    tagger.fit([["Elizabeth", "Bennet", "smiled"]],
               [["B-PER", "I-PER", "O"]], epochs=1, verbose=0)
    tags = tagger.predict_words([["Jane", "laughed"]])
    assert len(tags[0]) == 2 and set(tags[0]) <= {"O", "B-PER", "I-PER"}
    ```
    """

    backbone_cls = ElmoBackbone
    preprocessor_cls = ElmoTokenTaggerPreprocessor
    argument_spec = {"dropout": Optional(FRACTION),
                     "normalize_layers": BOOLEAN}

    def __init__(self, backbone, num_classes=None, preprocessor=None,
                 dropout=None, label_names=None, normalize_layers=False,
                 **kwargs):
        num_classes, label_names = check_labels(num_classes, label_names,
                                                type(self).__name__)
        dropout = backbone.dropout if dropout is None else float(dropout)
        # === Layers ===
        mix = ScalarMix(backbone.num_layers + 1,
                        normalize_layers=normalize_layers,
                        dtype=backbone.dtype_policy, name="scalar_mix")
        dropout_layer = Dropout(
            dropout, dtype=backbone.dtype_policy, name="classifier_dropout")
        classifier = keras.layers.Dense(
            num_classes, kernel_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name="classifier")
        # === Functional model ===
        inputs, backbone_in = task_inputs(backbone)
        layers = backbone(backbone_in)["layer_outputs"]
        mixed = mix(layers, inputs["padding_mask"])  # (batch, seq, dim)
        logits = classifier(dropout_layer(mixed))
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        # === Config ===
        self.num_classes = num_classes
        self.dropout = dropout
        self.label_names = label_names
        self.normalize_layers = bool(normalize_layers)

    def task_config(self):
        return {"num_classes": self.num_classes, "dropout": self.dropout,
                "label_names": self.label_names,
                "normalize_layers": self.normalize_layers}

    def default_compile_args(self):
        # A fresh head on features: a larger step than fine-tuning's.
        return {"optimizer": default_optimizer(learning_rate=1e-3),
                "loss": token_loss(),
                "weighted_metrics": [keras.metrics.SparseCategoricalAccuracy(
                    name="accuracy")]}

    def word_class_ids(self, words):
        """A batch of words (ragged tf) -> per example a class id per word
        (position i + 1, after `<S>`), None past the sequence length."""
        inputs = self.preprocessor(words)
        logits = keras.ops.convert_to_numpy(self.predict_on_batch(inputs))
        best = logits.argmax(-1)
        room = self.preprocessor.sequence_length - 2
        return [[int(best[row, i + 1]) if i < room else None
                 for i in range(int(count))]
                for row, count in enumerate(
                    np.asarray(words.row_lengths()))]
