"""Multiple choice (SWAG, RACE, COPA-style) on any encoder: a context and
its candidate answers -> one score per candidate."""

import keras
import tensorflow as tf
from keras import ops

from kzoo.core.arguments import FRACTION, Optional, describe
from kzoo.core.classification import REGRESSION
from kzoo.core.family import (EncoderHead, checked_family_task,
                                tokenizer_packing)
from kzoo.core.preprocessor import Preprocessor
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.core.text_tensors import eager_outputs, text_tensor
from kzoo.core.tokenizer import Tokenizer
from kzoo.training import default_optimizer


class FoldChoices(keras.layers.Layer):
    """`(batch, choices, seq)` -> `(batch * choices, seq)`: every
    (context, choice) pair through the backbone as one example."""

    def call(self, x):
        return ops.reshape(x, (-1, ops.shape(x)[-1]))

    def compute_output_shape(self, shape):
        return (None, shape[-1])


class UnfoldChoices(keras.layers.Layer):
    """`(batch * choices, 1)` scores -> `(batch, choices)`, the choice
    count read from the folded inputs."""

    def call(self, scores, reference):
        return ops.reshape(scores, (-1, ops.shape(reference)[1]))

    def compute_output_shape(self, scores_shape, reference_shape):
        return (reference_shape[0], reference_shape[1])


@register
class MultipleChoicePreprocessor(Preprocessor):
    """`(contexts, choices)` -> each context paired with each of its
    choices, packed as the tokenizer's family packs sentence pairs:
    inputs of shape `(batch, choices, seq)`.

    `contexts`: a list of strings; `choices`: a list (one per context) of
    lists of candidate strings, the same number for every context. Labels
    (the index of the right choice) pass through.

    Example:
    ```python
    preprocessor = kzoo.MultipleChoicePreprocessor.from_preset(
        "bert_base", sequence_length=32)
    x = preprocessor((["The fox saw the dog."],
                      [["It ran.", "It sang.", "It flew."]]))
    assert x["token_ids"].shape == (1, 3, 32)   # (questions, choices, seq)
    ```
    """

    tokenizer_cls = Tokenizer
    min_segments = max_segments = 2
    input_description = ("x = (contexts, choices): a list of context "
                         "strings and, per context, a list of candidate "
                         "strings")

    def __init__(self, tokenizer, sequence_length=512, **kwargs):
        packing_cls = tokenizer_packing(type(self).__name__, tokenizer)
        super().__init__(tokenizer, sequence_length, **kwargs)
        self.packer_preprocessor = packing_cls(
            tokenizer, sequence_length=sequence_length)

    def special_token_count(self, num_segments):
        return self.packer_preprocessor.special_token_count(2)

    def text_segments(self, x):
        name = type(self).__name__
        if not isinstance(x, tuple):
            text_tensor(x, name, "x")  # None, numbers, ids: shared errors
            raise ValueError(self._segments_message(1))
        if len(x) != 2:
            raise ValueError(self._segments_message(len(x)))
        contexts, choices = x
        if isinstance(contexts, (str, bytes)):
            contexts, choices = [contexts], [choices]
        contexts = text_tensor(contexts, name, "x[0]")
        if not isinstance(choices, (tf.Tensor, tf.RaggedTensor)):
            if isinstance(choices, (list, tuple)) and \
                    len(choices) != contexts.shape[0]:
                raise ValueError(
                    f"{name}: the texts of x must come in equal numbers "
                    f"(a list of choices per context); got batches of "
                    f"[{contexts.shape[0]}, {len(choices)}].")
            counts = {len(c) for c in choices
                      if isinstance(c, (list, tuple))}
            if len(counts) != 1 or not all(
                    isinstance(c, (list, tuple)) for c in choices) or \
                    0 in counts:
                raise ValueError(
                    f"{name}: x[1] must hold, per context, a list of "
                    f"candidate strings, the same number (>= 1) for every "
                    f"context; got {describe(choices)}.")
            for i, row in enumerate(choices):
                text_tensor(list(row), name, f"x[1][{i}]")
            choices = tf.constant([list(c) for c in choices], tf.string)
        else:
            choices = text_tensor(choices, name, "x[1]")
        if tf.executing_eagerly() and contexts.shape.rank and \
                contexts.shape[0] != choices.shape[0]:
            raise ValueError(
                f"{name}: the texts of x must come in equal numbers (a "
                f"list of choices per context); got batches of "
                f"[{contexts.shape[0]}, {choices.shape[0]}].")
        self._ensure_setup()
        self.check_sequence_length(2)
        return (contexts, choices)

    def _pack(self, x):
        contexts, choices = (x if isinstance(x, tuple) and all(
            isinstance(t, tf.Tensor) for t in x) else self.text_segments(x))
        if contexts.shape.rank == 0:
            # One example (tf.data's map before batch): a context and its
            # choices, packed as a batch of one, then unwrapped.
            packed = self._pack((contexts[tf.newaxis], choices[tf.newaxis]))
            return {name: value[0] for name, value in packed.items()}
        num_choices = tf.shape(choices)[1]
        firsts = tf.repeat(contexts, num_choices)
        seconds = tf.reshape(choices, (-1,))
        packed = self.packer_preprocessor._pack((firsts, seconds))
        return {name: tf.reshape(value, (-1, num_choices,
                                         self.sequence_length))
                for name, value in packed.items()}

    def __call__(self, x, y=None, sample_weight=None, **kwargs):
        segments = self.text_segments(x)
        self._ensure_setup()
        if not tf.executing_eagerly():
            # In tf.data: the graph traced once per input signature.
            return self.traced()(segments, y, sample_weight)
        return eager_outputs(self.call(segments, y, sample_weight))


@register
class MultipleChoice(EncoderHead, Task):
    """One score per candidate answer on any encoder: each (context,
    choice) pair goes through the family's sequence-classifier head with
    one output, as `transformers`' `*ForMultipleChoice`; a softmax over
    the choices is the loss.

    The head is the family's classifier head (its `*TextClassifier`,
    `num_classes=1`): BERT's and ALBERT's pooler -> dropout -> dense;
    DistilBERT's [CLS] -> dense + ReLU -> dropout -> dense; ELECTRA's
    summary (dense + GELU) -> dense; DeBERTa-v3's context pooler -> dense.
    RoBERTa and XLM-R read their pooler there (as `RobertaForMultipleChoice`,
    not their classification head): their classifier names that with
    `multiple_choice_cls`.

    Args:
        backbone: an encoder backbone.
        preprocessor: a `MultipleChoicePreprocessor`, or None to feed
            input dicts of shape `(batch, choices, seq)`.
        dropout: the head's dropout; None: the family classifier's.
        trainable_backbone: False for linear probing (frozen backbone).

    Example:
    ```python
    chooser = kzoo.MultipleChoice.from_preset(
        "bert_tiny_en_uncased", sequence_length=16, load_weights=False)
    chooser.fit((["The fox saw the dog."],
                 [["It ran away.", "It sang opera."]]), [0], epochs=1)
    ```
    """

    preprocessor_cls = MultipleChoicePreprocessor
    argument_spec = {"dropout": Optional(FRACTION)}

    @classmethod
    def check_argument_values(cls, values):
        super().check_argument_values(values)
        cls.scorer_class(values.get("backbone"))

    @classmethod
    def scorer_class(cls, backbone):
        from kzoo.tasks.task_wiring import SequenceClassifier
        classifier = checked_family_task(cls.__name__, backbone,
                                         SequenceClassifier,
                                         "a text classifier")
        return getattr(classifier, "multiple_choice_cls", None) or classifier

    def __init__(self, backbone, preprocessor=None, dropout=None,
                 trainable_backbone=True, **kwargs):
        scorer_kwargs = {} if dropout is None else {"dropout": dropout}
        # === Layers ===
        scorer = self.scorer_class(backbone)(
            backbone, num_classes=1, problem_type=REGRESSION,
            name="choice_scorer", **scorer_kwargs)
        # === Functional model ===
        inputs = {name: keras.Input((None, None), dtype="int32", name=name)
                  for name in backbone.input_names}
        fold = FoldChoices(dtype=backbone.dtype_policy, name="fold_choices")
        folded = {name: fold(value) for name, value in inputs.items()}
        scores = scorer(folded)  # (batch * choices, 1)
        logits = UnfoldChoices(dtype=backbone.dtype_policy,
                               name="unfold_choices")(
            scores, inputs["token_ids"])  # (batch, choices)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.scorer = scorer
        # === Config ===
        self.dropout = scorer.dropout
        self.trainable_backbone = bool(trainable_backbone)
        backbone.trainable = self.trainable_backbone

    def _text_tensors(self, x):
        return self.preprocessor.text_segments(x)

    def _check_model_inputs(self, x):
        if not isinstance(x, dict) or set(x) != set(self.input_names):
            raise ValueError(
                f"MultipleChoice has no preprocessor, so it takes a dict "
                f"with keys {sorted(self.input_names)}, each of shape "
                f"(batch, choices, sequence); got {describe(x)}.")

    def task_config(self):
        return {"dropout": self.dropout,
                "trainable_backbone": self.trainable_backbone}

    def default_compile_args(self):
        return {"optimizer": default_optimizer(learning_rate=5e-5),
                "loss": keras.losses.SparseCategoricalCrossentropy(
                    from_logits=True),
                "metrics": [keras.metrics.SparseCategoricalAccuracy(
                    name="accuracy")]}
