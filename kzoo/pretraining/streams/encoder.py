"""What the encoder objectives' streams share (masked LM, NSP, SOP, RTD):
the family's own masked-LM preprocessor, which packs a batch of token-id
segments and masks it, and the tasks they train, found without importing
a family.

Each stream's `next_example` gives the token ids of one row's segments
(one: a FULL-SENTENCES row, or two: A and B) and its sentence-level label;
`finish` packs them with the family's packing (`pack_ids`: `[CLS] A [SEP]
(B [SEP])`, RoBERTa's doubled separator, segment ids where the backbone
reads them) and masks them with the family's masker, whose generator is
reset from the batch's seed first, so a batch's masks are a function of
the examples and the seed alone (see `base.py`). Batches are exactly what
the family's in-memory preprocessor gives for the same text, as NumPy.
"""

import keras
import numpy as np
import tensorflow as tf

from kzoo.core.family import masked_lm_family, preset_backbone_class
from kzoo.core.registry import registered_classes
from kzoo.core.task import Task
from kzoo.corpus.corpus_tokenizer import corpus_tokenizer
from kzoo.corpus.shards import CorpusError
from kzoo.pretraining.streams.base import BatchStream
from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.tasks.span_boundary import SpanBoundaryPretrainer


def family_task_class(preset, name):
    """The registered task class `name` (`"BertPretrainer"`, ...), checked
    to be made for `preset`'s backbone; looked up by name, as a preset's
    classes are, so that no family is imported here."""
    backbone_cls = preset_backbone_class(preset)
    found = [cls for cls in registered_classes()
             if cls.__name__ == name and issubclass(cls, Task)
             and issubclass(backbone_cls, cls.backbone_cls)]
    if not found:
        raise ValueError(
            f"The preset holds a {backbone_cls.__name__}; {name} trains "
            "another family's backbone.")
    return found[0]


def family_masked_lm(preset):
    """The preset family's masked LM class (`BertMaskedLM`, ...)."""
    cls = masked_lm_family(preset_backbone_class(preset))
    if cls is None:
        raise ValueError(
            f"The preset holds a {preset_backbone_class(preset).__name__}, "
            "whose family has no masked LM.")
    return cls


def build_task(task_cls, preset, load_weights, sequence_length, **kwargs):
    """`task_cls` on the preset's backbone, without a preprocessor (the
    stream hands it finished batches); weights from the preset, or random
    (`load_weights=False`)."""
    return task_cls.from_preset(preset, load_weights=load_weights,
                                sequence_length=sequence_length,
                                preprocessor=None, **kwargs)


def masking_preprocessor(task, corpus, sequence_length, **kwargs):
    """The family's masked-LM preprocessor for `task` (its own, or, for a
    task on any encoder such as `SpanBoundaryPretrainer`, the backbone's
    family's), with the corpus' tokenizer; `kwargs` (masking, rates)
    override its defaults."""
    cls = task.preprocessor_cls
    if cls is None or cls is MaskedLMPreprocessor or not issubclass(
            cls, MaskedLMPreprocessor):
        family = masked_lm_family(type(task.backbone))
        if family is None:
            raise ValueError(
                f"{type(task).__name__} on a {type(task.backbone).__name__}:"
                " its family has no masked-LM preprocessor to mask with.")
        cls = family.preprocessor_cls
    kwargs = {key: value for key, value in kwargs.items() if value is not None}
    preprocessor = cls(corpus_tokenizer(corpus, cls.tokenizer_cls),
                       sequence_length=sequence_length, **kwargs)
    limit = getattr(task.backbone, "max_sequence_length", None)
    if limit is not None and sequence_length > limit:
        raise ValueError(
            f"sequence_length={sequence_length} is longer than the "
            f"{type(task.backbone).__name__}'s position table ({limit}); use "
            f"sequence_length <= {limit}.")
    vocabulary = preprocessor.tokenizer.vocabulary_size
    if vocabulary > task.backbone.vocabulary_size:
        raise CorpusError(
            f"{corpus.folder} was tokenized with a vocabulary of "
            f"{vocabulary} ids; the model's embeddings hold "
            f"{task.backbone.vocabulary_size}. Prepare the corpus with the "
            "model's tokenizer.")
    return preprocessor


def _ragged(rows):
    """A list of 1-D id arrays -> a tf.RaggedTensor (int32)."""
    lengths = np.fromiter((len(row) for row in rows), np.int64, len(rows))
    values = (np.concatenate(rows).astype(np.int32) if lengths.sum()
              else np.zeros((0,), np.int32))
    return tf.RaggedTensor.from_row_lengths(values, lengths)


def _numpy(structure):
    return keras.tree.map_structure(
        lambda t: None if t is None else np.asarray(t), structure)


class EncoderStream(BatchStream):
    """A stream whose examples are `{"segments": (ids,) or (a_ids, b_ids),
    "label": int or None}` (plus what a stream records of where they came
    from), packed and masked by `preprocessor` (the family's masked-LM
    preprocessor; see `masking_preprocessor`).

    `adapt`: the task's last step on a batch, `(x, y, sample_weight) ->
    (x, y, sample_weight)` on tf values (`SpanBoundaryPretrainer.
    span_targets`: the SBO targets); None: none.
    """

    def __init__(self, corpus, preprocessor, batch_size, adapt=None,
                 **kwargs):
        super().__init__(corpus, batch_size, **kwargs)
        preprocessor._ensure_setup()  # its masker (made on first use)
        self.preprocessor = preprocessor
        self.sequence_length = int(preprocessor.sequence_length)
        self.adapt = adapt

    def pack(self, examples):
        """Pack the examples' segments as the family's `pack_ids` packs
        text: `[CLS] A [SEP]`, or `[CLS] A [SEP]... B [SEP]` with the
        family's separators between, segment ids 0 up to A's separators
        and 1 after (where the backbone reads them), then padding.

        Why not `pack_ids` itself: keras-hub's packer runs a Python path
        on JAX and torch that took ~90 ms a batch of 32 x 128 here, most
        of a masked-LM batch; this is the same layout in NumPy
        (`tests/pretraining/test_encoder_streams.py` holds the two
        equal)."""
        preprocessor = self.preprocessor
        tokenizer = preprocessor.tokenizer
        cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
        between = [sep] * preprocessor.separators_between
        length = self.sequence_length
        token_ids = np.full((len(examples), length), tokenizer.pad_token_id,
                            np.int32)
        segment_ids = np.zeros((len(examples), length), np.int32)
        padding_mask = np.zeros((len(examples), length), np.int32)
        for row, example in enumerate(examples):
            segments = example["segments"]
            ids = [cls, *segments[0]]
            ids += between if len(segments) > 1 else [sep]
            first = len(ids)
            for segment in segments[1:]:
                ids += [*segment, sep]
            ids = ids[:length]
            token_ids[row, :len(ids)] = ids
            segment_ids[row, first:len(ids)] = 1
            padding_mask[row, :len(ids)] = 1
        x = {"token_ids": token_ids, "padding_mask": padding_mask}
        if preprocessor.segment_input:
            x["segment_ids"] = segment_ids
        return x

    def pack_with_preprocessor(self, examples):
        """`pack`, done by the family's `pack_ids` (rows of one segment
        and of two packed apart: an empty B would get a [SEP] of its
        own): the reference `pack` is held to."""
        counts = [len(example["segments"]) for example in examples]
        order, parts = [], []
        for count in sorted(set(counts)):
            rows = [i for i, c in enumerate(counts) if c == count]
            order += rows
            parts.append(self.preprocessor.pack_ids(tuple(
                _ragged([examples[i]["segments"][k] for i in rows])
                for k in range(count))))
        inverse = np.argsort(order)
        return {key: np.concatenate([np.asarray(part[key])
                                     for part in parts])[inverse]
                for key in parts[0]}

    def finish(self, examples, seed):
        x = self.pack(examples)
        self.preprocessor.masker.generator.reset_from_seed(seed)
        labels = [example.get("label") for example in examples]
        y = None if labels[0] is None else tf.constant(labels, tf.int32)
        batch = self.preprocessor.draw(x, y)
        if self.adapt is not None:
            batch = self.adapt(*batch)
        return _numpy(batch)


def masked_lm_task_class(preset, masking):
    """The task an MLM objective trains: SpanBERT's pretrainer (MLM + span
    boundary objective) on span masking, else the family's masked LM."""
    family = family_masked_lm(preset)  # an error for a family without one
    return SpanBoundaryPretrainer if masking == "span" else family


def task_adapt(task):
    """The task's own last step on a batch, if it has one
    (`span_targets`)."""
    return getattr(task, "span_targets", None)


__all__ = ["EncoderStream", "build_task", "family_task_class",
           "masked_lm_task_class", "masking_preprocessor", "task_adapt"]
