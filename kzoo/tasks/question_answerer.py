"""Extractive question answering (SQuAD) on any encoder backbone."""

import keras
import tensorflow as tf

from kzoo import presets
from kzoo.tasks.answer_spans import best_answers
from kzoo.core.arguments import ArgumentError, describe
from kzoo.core.family import EncoderHead
from kzoo.tasks.question_answerer_preprocessor import \
    QuestionAnswererPreprocessor
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import task_inputs
from kzoo.training import default_optimizer

OUTPUTS = ("start_logits", "end_logits")


def _are_answers(y):
    """Whether `y` holds SQuAD answers (dicts or None), not positions."""
    return isinstance(y, (list, tuple)) and all(
        answer is None or isinstance(answer, dict) for answer in y)


@register
class QuestionAnswerer(EncoderHead, Task):
    """A span of the context as the answer: `dense(2)` on every token's
    final hidden state gives start and end logits, as Hugging Face's
    `*ForQuestionAnswering` (`qa_outputs`) for BERT, RoBERTa, XLM-R,
    DistilBERT, ALBERT, ELECTRA and DeBERTa-v3; one class for every
    encoder family, the family read off the backbone.

    Outputs `{"start_logits", "end_logits"}`, each `(batch, sequence)`.
    Trained with the mean of the two cross-entropies (as transformers).

    Raw data: `x = (questions, contexts)` (lists of strings) and `y` one
    answer per question, `{"text": str, "answer_start": int}` or None
    for no answer. Long contexts become several windows
    (`QuestionAnswererPreprocessor`); `answer(questions, contexts)`
    searches the spans of all windows and returns the best answers as
    text and character spans of the context (`kzoo.tasks.answer_spans`).
    `predict` returns the logits of the windows.

    Args:
        backbone: an encoder backbone (any family above).
        preprocessor: a `QuestionAnswererPreprocessor` with the family's
            tokenizer, or None to feed input dicts.

    Example:
    ```python
    # from_preset("bert_base") starts from the released encoder; offline,
    # a random tiny one:
    qa = kzoo.QuestionAnswerer.from_preset(
        "bert_tiny_en_uncased", sequence_length=64, load_weights=False)
    qa.fit((["Who called?"], ["Mr. Darcy called at noon."]),
           [{"text": "Mr. Darcy", "answer_start": 0}], epochs=1)
    answers = qa.answer(["Who called?"], ["Mr. Darcy called at noon."])
    answers[0]["text"], answers[0]["start"], answers[0]["end"]
    ```
    """

    preprocessor_cls = QuestionAnswererPreprocessor

    def __init__(self, backbone, preprocessor=None, **kwargs):
        # === Layers ===
        qa_outputs = keras.layers.Dense(
            2, kernel_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name="qa_outputs")
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone)
        sequence = backbone(backbone_inputs)["sequence_output"]
        logits = qa_outputs(sequence)  # (batch, sequence, 2)
        outputs = {
            "start_logits": keras.ops.take(logits, 0, axis=-1),
            "end_logits": keras.ops.take(logits, 1, axis=-1),
        }
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.qa_outputs = qa_outputs

    # ------------------------------------------------------------------
    # Training defaults
    # ------------------------------------------------------------------
    def default_compile_args(self):
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        accuracy = keras.metrics.SparseCategoricalAccuracy
        return {
            "optimizer": default_optimizer(5e-5),
            # transformers' loss: (start CE + end CE) / 2.
            "loss": {name: loss for name in OUTPUTS},
            "loss_weights": {name: 0.5 for name in OUTPUTS},
            "metrics": {name: [accuracy(name="accuracy")]
                        for name in OUTPUTS},
        }

    # ------------------------------------------------------------------
    # Raw examples -> windows
    # ------------------------------------------------------------------
    def _make_dataset(self, x, y=None, sample_weight=None, batch_size=None,
                      shuffle=False):
        if self.preprocessor is None or isinstance(x, dict):
            return super()._make_dataset(x, y, sample_weight, batch_size,
                                         shuffle)
        if isinstance(x, tf.data.Dataset) or (
                y is not None and not _are_answers(y)):
            # Text in tf.data (or labels that are already token positions):
            # the preprocessor packs each example's first window.
            return super()._make_dataset(x, y, sample_weight, batch_size,
                                         shuffle)
        if sample_weight is not None:
            raise ValueError(f"{type(self).__name__}: sample_weight is not "
                             "supported with raw examples.")
        questions, contexts = self._pair(x)
        features = self.preprocessor.features(questions, contexts, y)
        data = features["x"] if y is None else (features["x"],
                                                features["y"])
        dataset = tf.data.Dataset.from_tensor_slices(data)
        if shuffle:
            dataset = dataset.shuffle(len(features["example_index"]),
                                      reshuffle_each_iteration=True)
        return dataset.batch(batch_size or 32).prefetch(tf.data.AUTOTUNE)

    def _pair(self, x):
        if not isinstance(x, tuple) or len(x) != 2:
            raise ValueError(
                f"{type(self).__name__} takes x = (questions, contexts), a "
                f"tuple of two lists of strings; got {describe(x)}.")
        return x

    def answer(self, questions, contexts, n_best=20, max_answer_length=30,
               null_threshold=None, batch_size=32):
        """The best answer span of each (question, context) pair.

        Args:
            questions, contexts: strings, or lists of strings.
            n_best, max_answer_length, null_threshold: see
                `kzoo.tasks.answer_spans.best_answers` (None: always
                answer, SQuAD 1.1; a float: allow "no answer", SQuAD 2.0).

        Returns one dict per question: `text`, `start`, `end` (characters
        of the context; "" and -1 for no answer), `score`, `candidates`.
        """
        if self.preprocessor is None:
            raise ValueError(f"{type(self).__name__}.answer needs the task's "
                             "preprocessor.")
        features = self.preprocessor.features(questions, contexts)
        logits = self.predict(features["x"], batch_size=batch_size,
                              verbose=0)
        return best_answers(
            keras.ops.convert_to_numpy(logits["start_logits"]),
            keras.ops.convert_to_numpy(logits["end_logits"]), features,
            n_best=n_best, max_answer_length=max_answer_length,
            null_threshold=null_threshold)

    def predict(self, x, batch_size=None, **kwargs):
        if isinstance(x, dict):  # windows already made (see `answer`)
            inputs = {name: x[name] for name in self.input_names}
            return keras.Model.predict(self, inputs, batch_size=batch_size,
                                       **kwargs)
        return super().predict(x, batch_size=batch_size, **kwargs)

    # ------------------------------------------------------------------
    # Presets
    # ------------------------------------------------------------------
    @classmethod
    def from_preset(cls, preset, load_weights=True, sequence_length=None,
                    preprocessor="auto", doc_stride=None,
                    max_question_length=None, **kwargs):
        """`Task.from_preset`, with the windows' `doc_stride` and
        `max_question_length` for the preprocessor it makes."""
        windows = {name: value for name, value in (
            ("doc_stride", doc_stride),
            ("max_question_length", max_question_length))
            if value is not None}
        if windows and isinstance(preprocessor, str) and \
                preprocessor == "auto":
            if sequence_length is not None:
                windows["sequence_length"] = sequence_length
            preprocessor = cls.preprocessor_for(preset, **windows)
        elif windows:
            raise ArgumentError(
                f"{cls.__name__}.from_preset: doc_stride and "
                "max_question_length configure the preprocessor it makes "
                '(preprocessor="auto"); set them on your own preprocessor.')
        return super().from_preset(preset, load_weights=load_weights,
                                   sequence_length=sequence_length,
                                   preprocessor=preprocessor, **kwargs)

    @classmethod
    def preprocessor_for(cls, preset, **kwargs):
        """A `QuestionAnswererPreprocessor` with the preset's tokenizer
        (`sequence_length` from the preset, at most 384 by default)."""
        preset = presets.resolve(preset)
        if "sequence_length" not in kwargs and preset.has(
                "preprocessor.json"):
            saved = preset.json("preprocessor.json")
            if saved["class_name"] != QuestionAnswererPreprocessor.__name__:
                # A backbone preset's 512: SQuAD's rows are 384.
                kwargs["sequence_length"] = min(
                    int(saved["config"].get("sequence_length", 384)), 384)
        return super().preprocessor_for(preset, **kwargs)

