"""What the sequence objectives' streams share (T5's span corruption,
BART's denoising, GPT-2's causal LM, ELMo's biLM, the AWD-LSTM LM): a
corpus read as one stream of ids, unit after unit (a document, or a
sentence), each unit framed by the ids its objective puts around it (GPT-2's
`<|endoftext|>` after each document, ELMo's `<S>` ... `</S>` around each
sentence), and the lookup of a family's task and tokenizer by the registry
(modules here never import a family).

A cursor is a position in that stream, a plain dict `{"unit": [document]
or [document, sentence] or None, "offset": int}`, so a stream's state
stays a few integers (`BatchStream.state`) and a unit's ids are read from
the memory-mapped shards again after a restore. Units are framed without
copying a document: a 100 MB document costs the slices read from it.
"""

import collections

import numpy as np

from kzoo.core.backbone import Backbone
from kzoo.core.family import preset_backbone_class, tasks_of_kind
from kzoo.corpus.corpus_tokenizer import \
    corpus_tokenizer as read_corpus_tokenizer
from kzoo.corpus.shards import CorpusError
from kzoo.pretraining.streams.base import BatchStream

# Units kept ready (their memory-mapped views and frames): one per cursor
# is enough; the AWD-LSTM stream has one cursor per row.
_UNIT_CACHE = 8


def new_cursor():
    return {"unit": None, "offset": 0}


class IdsStream(BatchStream):
    """A `BatchStream` that reads its corpus as framed units of ids.

    Subclasses set `unit` ("document": each document's ids end to end;
    "sentence": each sentence alone) and `prefix` / `suffix` (ids before
    and after each unit; NumPy int64 arrays), and read with `read` /
    `rewind` on cursors they keep in `state_fields`.
    """

    unit = "document"

    def __init__(self, *args, prefix=(), suffix=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.prefix = np.asarray(prefix, np.int64).reshape(-1)
        self.suffix = np.asarray(suffix, np.int64).reshape(-1)
        self._units = collections.OrderedDict()

    # --- units ------------------------------------------------------------

    def _next_unit(self, unit):
        """The unit after `unit` (None: the walk's next)."""
        if self.unit == "sentence" and unit is not None:
            # The next sentence of the document, read here and not with
            # `walk.next_sentence`, which lists the document's sentences
            # at every call.
            shard, local = self.corpus.locate(unit[0])
            first, end = shard.document_sentence_range(local)
            if unit[1] + 1 < end - first:
                return [unit[0], unit[1] + 1]
        document, _ = self.walk.next_document()
        return [int(document)] if self.unit == "document" else \
            [int(document), 0]

    def _body(self, unit):
        key = tuple(unit)
        body = self._units.get(key)
        if body is None:
            if self.unit == "document":
                body = self.corpus.document_tokens(key[0])
            else:
                shard, local = self.corpus.locate(key[0])
                first, _ = shard.document_sentence_range(local)
                body = shard.sentence(first + key[1])
            # A plain array over the same memory: slicing a np.memmap
            # costs several times more.
            body = np.asarray(body)
            self._units[key] = body
            if len(self._units) > _UNIT_CACHE:
                self._units.popitem(last=False)
        else:
            self._units.move_to_end(key)
        return body

    def unit_length(self, unit):
        return self.prefix.size + self._body(unit).size + self.suffix.size

    def unit_slice(self, unit, start, end):
        """Ids `[start, end)` of the framed unit (int64)."""
        body = self._body(unit)
        p, n = self.prefix.size, body.size
        parts = []
        if start < p:
            parts.append(self.prefix[start:min(end, p)])
        if end > p and start < p + n:
            parts.append(np.asarray(body[max(start - p, 0):min(end - p, n)],
                                    np.int64))
        if end > p + n:
            parts.append(self.suffix[max(start - p - n, 0):end - p - n])
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    # --- reading ----------------------------------------------------------

    def read(self, cursor, count, marks=False):
        """The next `count` ids of the stream from `cursor` (moved past
        them). With `marks`: also `(starts, ends)`, True at ids that begin
        / end their unit."""
        pieces, starts, ends = [], [], []
        left, empty = int(count), 0
        while left:
            if cursor["unit"] is None or \
                    cursor["offset"] >= self.unit_length(cursor["unit"]):
                cursor["unit"] = self._next_unit(cursor["unit"])
                cursor["offset"] = 0
                if self.unit_length(cursor["unit"]) == 0:
                    empty += 1
                    if empty > self.corpus.num_documents + 1:
                        raise CorpusError(
                            f"{self.corpus.folder} holds no token ids.")
                    continue
            length = self.unit_length(cursor["unit"])
            start = cursor["offset"]
            end = min(length, start + left)
            pieces.append(self.unit_slice(cursor["unit"], start, end))
            if marks:
                positions = np.arange(start, end)
                starts.append(positions == 0)
                ends.append(positions == length - 1)
            cursor["offset"] = end
            left -= end - start
        ids = np.concatenate(pieces) if pieces else np.zeros(0, np.int64)
        if not marks:
            return ids
        return ids, np.concatenate(starts), np.concatenate(ends)

    @staticmethod
    def rewind(cursor, count):
        """Step `cursor` back over the last `count` ids read, which must
        lie in its unit (true of the last one of any read)."""
        if count > cursor["offset"]:
            raise ValueError("a cursor rewinds inside its unit only")
        cursor["offset"] -= count


def stream_arguments(batch_size, seed, process_index, process_count,
                     draw_groups):
    return dict(batch_size=batch_size, seed=seed,
                process_index=process_index, process_count=process_count,
                draw_groups=draw_groups)


# --- families, found through the registry --------------------------------

def preset_task_class(preset, objective, kind, accept=None):
    """The registered task of `kind` (a task base class) for the preset's
    backbone family; with `accept`, one for which `accept(task_cls)` is
    true (a name, or what its preprocessor can do). A clear error naming
    the objective otherwise."""
    backbone_cls = preset_backbone_class(preset)
    found = [task for task in tasks_of_kind(kind)
             if task.backbone_cls is not Backbone
             and issubclass(backbone_cls, task.backbone_cls)
             and (accept is None or accept(task))]
    found.sort(key=lambda task: backbone_cls.__mro__.index(
        task.backbone_cls))
    if not found:
        raise ValueError(
            f"The {objective!r} objective does not apply to a "
            f"{backbone_cls.__name__} (preset {preset!s}).")
    return found[0]


def make_preset_task(task_cls, preset, load_weights, sequence_length,
                     **kwargs):
    """`task_cls.from_preset` without a preprocessor (the stream hands
    the task finished batches): the preset's weights, or random ones."""
    return task_cls.from_preset(preset, load_weights=load_weights,
                                sequence_length=sequence_length,
                                preprocessor=None, **kwargs)


def corpus_tokenizer(task, corpus):
    """The corpus' tokenizer, as the task's family reads it (its
    preprocessor's tokenizer class)."""
    return read_corpus_tokenizer(
        corpus, type(task).preprocessor_cls.tokenizer_cls)


def corpus_preprocessor(task, corpus, preprocessor_cls=None, **kwargs):
    """The task's preprocessor (or `preprocessor_cls`) on the corpus'
    tokenizer; `kwargs` set its lengths and options."""
    preprocessor_cls = preprocessor_cls or type(task).preprocessor_cls
    return preprocessor_cls(corpus_tokenizer(task, corpus), **kwargs)


def compiled_packing(preprocessor):
    """`preprocessor.pack_ids` as one TensorFlow graph (traced once for
    all batches: eager, its ragged ops cost most of a batch's time)."""
    import tensorflow as tf
    return tf.function(preprocessor.pack_ids, reduce_retracing=True)


def numpy_batch(batch):
    """A `(x, y, sample_weight)` of TensorFlow tensors (a preprocessor's
    `pack_ids`) as NumPy."""
    import tensorflow as tf
    return tf.nest.map_structure(
        lambda t: None if t is None else np.asarray(t), batch)


def ragged(rows):
    """A list of 1-D id arrays -> a ragged int64 TensorFlow batch."""
    import tensorflow as tf
    lengths = [len(r) for r in rows]
    flat = np.concatenate(rows).astype(np.int64) if rows else \
        np.zeros(0, np.int64)
    return tf.RaggedTensor.from_row_lengths(flat, np.asarray(lengths,
                                                             np.int64))
