"""(question, context) pairs -> overlapping windows over the context,
packed as the family packs a text pair, with each context token's
character span and the answer's token positions."""

import numpy as np

from kzoo.core.family import tokenizer_packing
from kzoo.core.preprocessor import Preprocessor, split_padding
from kzoo.core.registry import register
from kzoo.core.text_tensors import as_tf
from kzoo.core.tokenizer import Tokenizer
from kzoo.core.token_offsets import token_offsets
from kzoo.tasks.segment_preprocessor import segment_packer


@register
class QuestionAnswererPreprocessor(Preprocessor):
    """SQuAD-style inputs for `kzoo.QuestionAnswerer`, for any encoder
    family whose texts pack as `[CLS] question [SEP] context [SEP]`
    (RoBERTa's and XLM-R's `<s> q </s></s> c </s>`): the family is read
    off the tokenizer.

    A context longer than one row is cut into windows of the tokens that
    fit beside the question; each window starts `doc_stride` tokens after
    the previous one (the original BERT's `doc_stride`; Hugging Face's
    `stride` is the overlap, `row room - doc_stride`), so a span near one
    window's edge lies well inside the next. Every window is one row.

    Labels (`features(..., answers)`): the answer's first and last token
    in the row; position 0 (`[CLS]`) where the window does not hold the
    whole answer, or for an unanswerable question (SQuAD 2.0).

    Called as a layer (`preprocessor((questions, contexts))`, and in
    `tf.data`), it packs each example's first window only, in tf ops (one
    row per example; labels pass through): for contexts that fit, or to
    serve a model. `features(...)` makes every window, with offsets and
    labels, in Python.

    Args:
        tokenizer: the backbone family's tokenizer.
        sequence_length: row length (question, context window, specials).
        doc_stride: context tokens between the starts of two windows.
        max_question_length: questions are cut to this many tokens.

    Example:
    ```python
    preprocessor = kzoo.QuestionAnswererPreprocessor.from_preset(
        "bert_base", sequence_length=64)
    features = preprocessor.features(["Who?"], ["Emma did."],
                                     [{"text": "Emma", "answer_start": 0}])
    assert features["x"]["token_ids"].shape == (1, 64)  # (windows, 64)
    ```
    """

    tokenizer_cls = Tokenizer
    min_segments = max_segments = 2
    segments_hint = "Pass x = (questions, contexts)."
    # A served model's string inputs (kzoo.core.export): one row per
    # example, the first window (as this layer packs).
    serving_names = {2: ("questions", "contexts")}

    def __init__(self, tokenizer, sequence_length=384, doc_stride=128,
                 max_question_length=64, **kwargs):
        family = tokenizer_packing(type(self).__name__, tokenizer)
        super().__init__(tokenizer, sequence_length, **kwargs)
        for name, value in (("doc_stride", doc_stride),
                            ("max_question_length", max_question_length)):
            if isinstance(value, bool) or not isinstance(
                    value, (int, np.integer)) or value < 1:
                raise ValueError(
                    f"QuestionAnswererPreprocessor: {name} must be a "
                    f"positive integer (tokens); got {value!r}.")
        self.separators_between = family.separators_between
        self.doc_stride = int(doc_stride)
        self.max_question_length = int(max_question_length)

    def special_token_count(self, num_segments=2):
        # [CLS] q [SEP] (extra separators) c [SEP]
        return 3 + self.separators_between - 1

    # ------------------------------------------------------------------
    # Windows
    # ------------------------------------------------------------------
    def features(self, questions, contexts, answers=None):
        """Examples -> windows.

        Args:
            questions, contexts: lists of strings (or one string each).
            answers: None, or one per example: a dict
                `{"text": str, "answer_start": int}` (SQuAD's fields; a
                list of texts/starts uses the first), or None / text ""
                for a question the context does not answer.

        Returns a dict: `x` (the model's inputs, int32 arrays `(windows,
        sequence_length)`), `y` (`start_logits`/`end_logits` positions,
        with answers), `example_index` (the example of each window),
        `offsets` (`(windows, sequence_length, 2)`: each context token's
        `[start, end)` in its context; -1 elsewhere) and `contexts`.
        """
        # The base class's checks and messages (None, numbers, empty
        # batches, unequal numbers of questions and contexts).
        segments = self.text_segments((_as_list(questions),
                                       _as_list(contexts)))
        questions, contexts = (_strings(s) for s in segments)
        if answers is not None:
            answers = list(answers)
            if len(answers) != len(questions):
                raise ValueError(
                    f"QuestionAnswererPreprocessor: {len(answers)} answers "
                    f"for {len(questions)} questions; give one per question "
                    "(None for no answer).")
        self._ensure_setup()
        rows = []
        for index, (question, context) in enumerate(zip(questions,
                                                        contexts)):
            answer = None if answers is None else _answer_span(
                answers[index], context, index)
            for row in self._windows(question, context, answer):
                rows.append((index, row))
        return self._stack(rows, contexts, with_labels=answers is not None)

    def _windows(self, question, context, answer):
        tokenizer = self.tokenizer
        question_ids = [int(i) for i in np.asarray(
            tokenizer.tokenize(question)).reshape(-1)]
        cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
        # The question is cut to max_question_length, and further where a
        # short row would otherwise leave no context token beside it.
        specials = self.special_token_count()
        question_ids = question_ids[:min(
            self.max_question_length,
            max(self.sequence_length - specials - 1, 0))]
        head = [cls] + question_ids + [sep] * self.separators_between
        room = self.sequence_length - len(head) - 1
        if room < 1:
            raise ValueError(
                f"QuestionAnswererPreprocessor: sequence_length="
                f"{self.sequence_length} leaves no room for context beside "
                f"the {specials} special tokens; use sequence_length >= "
                f"{specials + 1} (SQuAD: 384).")
        context_ids, offsets = token_offsets(tokenizer, context)
        step = min(self.doc_stride, room)
        start = 0
        while True:
            window = slice(start, min(start + room, len(context_ids)))
            ids = head + context_ids[window] + [sep]
            first = len(head)  # the window's first token in the row
            row_offsets = np.full((len(ids), 2), -1, "int64")
            row_offsets[first:first + window.stop - window.start] = \
                offsets[window]
            segments = [0] * len(head) + [1] * (len(ids) - len(head))
            label = _label(answer, offsets, window, first)
            yield ids, segments, row_offsets, label
            if window.stop >= len(context_ids):
                return
            start += step

    def _stack(self, rows, contexts, with_labels):
        n, length = len(rows), self.sequence_length
        pad = self.tokenizer.pad_token_id
        token_ids = np.full((n, length), pad, "int32")
        segment_ids = np.zeros((n, length), "int32")
        padding_mask = np.zeros((n, length), "int32")
        offsets = np.full((n, length, 2), -1, "int64")
        labels = np.zeros((n, 2), "int32")
        example_index = np.zeros(n, "int64")
        for r, (index, (ids, segments, row_offsets, label)) in \
                enumerate(rows):
            token_ids[r, :len(ids)] = ids
            segment_ids[r, :len(ids)] = segments
            padding_mask[r, :len(ids)] = 1
            offsets[r, :len(ids)] = row_offsets
            labels[r] = label
            example_index[r] = index
        result = {"x": {"token_ids": token_ids, "segment_ids": segment_ids,
                        "padding_mask": padding_mask},
                  "example_index": example_index, "offsets": offsets,
                  "contexts": list(contexts)}
        if with_labels:
            result["y"] = {"start_logits": labels[:, 0],
                           "end_logits": labels[:, 1]}
        return result

    def setup(self):
        self.pad_token_id = self.tokenizer.pad_token_id
        # Waterfall: the context (second) is cut first, so a row is the
        # first window of `features`.
        self.packer = segment_packer(self.tokenizer, self.sequence_length,
                                     "waterfall", self.separators_between)

    def _pack(self, x):
        questions, contexts = (self.tokenizer.tokenize_tf(s) for s in x)
        if questions.shape.rank == 1:  # one example (tf.data, unbatched)
            questions = questions[:self.max_question_length]
        else:
            questions = questions[:, :self.max_question_length]
        packed, segment_ids = as_tf(self.packer((questions, contexts)))
        token_ids, padding_mask = split_padding(packed, self.pad_token_id)
        return {"token_ids": token_ids, "segment_ids": segment_ids,
                "padding_mask": padding_mask}

    def get_config(self):
        config = super().get_config()
        config.update({"doc_stride": self.doc_stride,
                       "max_question_length": self.max_question_length})
        return config


def _as_list(texts):
    """Python lists as they are; a lone string is a batch of one; other
    values go to the base class's checks unchanged."""
    if isinstance(texts, (str, bytes)):
        return [texts]
    if isinstance(texts, (list, tuple)):
        return list(texts)
    return texts


def _strings(texts):
    """A checked tf string tensor -> a list of Python strings."""
    return [t.decode("utf-8") for t in np.asarray(texts.numpy()).reshape(-1)]


def _answer_span(answer, context, index):
    """An answer -> `[start, end)` characters in its context; None for no
    answer. Checked: the text must sit at `answer_start`."""
    if answer is None:
        return None
    if not isinstance(answer, dict) or "text" not in answer or \
            "answer_start" not in answer:
        raise ValueError(
            f"QuestionAnswererPreprocessor: answer {index} must be None or "
            "a dict {'text': str, 'answer_start': int} (SQuAD's fields); "
            f"got {answer!r}.")
    text, start = answer["text"], answer["answer_start"]
    if isinstance(text, (list, tuple)):  # SQuAD's lists: the first answer
        text = text[0] if text else ""
        start = start[0] if len(start) else -1
    if text == "":
        return None
    start = int(start)
    if context[start:start + len(text)] != text:
        raise ValueError(
            f"QuestionAnswererPreprocessor: answer {index} {text!r} is not "
            f"at answer_start={start} of its context (found "
            f"{context[start:start + len(text)]!r}).")
    return start, start + len(text)


def _label(answer, offsets, window, first):
    """(start, end) positions of the answer in the row; (0, 0) where the
    window does not hold all of it."""
    if answer is None:
        return 0, 0
    begin, end = answer
    # Every context token the answer's characters touch (empty spans, a
    # lone "▁", never start or end one).
    touching = np.flatnonzero((offsets[:, 1] > begin) &
                              (offsets[:, 0] < end) &
                              (offsets[:, 1] > offsets[:, 0]))
    if touching.size == 0 or touching[0] < window.start or \
            touching[-1] >= window.stop:
        return 0, 0
    return (first + int(touching[0]) - window.start,
            first + int(touching[-1]) - window.start)
