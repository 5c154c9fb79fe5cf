"""The AWD-LSTM language model's data, streamed from a prepared corpus: the
"lm" objective (AWD-LSTM's default, ULMFiT's first two stages).

As fastai's `LanguageModelLoader` (0.7, the ULMFiT paper's): the corpus is
one stream of ids (`xxbos` before each text, as fastai's tokenizer marks
texts) read by `batch_size` parallel rows, each row a contiguous stretch
of text read window after window: batch k's row i continues where batch
k-1's row i stopped. Each batch draws one window length as fastai does:
`bptt` (70) with probability 0.95, else `bptt / 2`, then `max(5,
int(normal(that, 5)))`. A window reads `length + 1` ids: the model reads
the first `length` and learns each next id, and the next window starts at
the last id, so each row's windows tile its stretch.

What differs from fastai, and why:
- fastai cuts the whole concatenated corpus into `batch_size` equal
  stretches up front (it holds the corpus in memory); here each row takes
  the next whole document of the seeded corpus walk when its own runs out
  (the documents in a new permutation every epoch; the examples are not
  permuted, unlike every other objective's: contiguous rows are the
  method),
  so nothing needs the corpus' total length or an index of it, and a
  stream's state is one position per row.
- Batches have one shape: windows are right-padded to `sequence_length`
  (default `bptt + 25`, 5 standard deviations above the mean length; a
  longer draw is cut to it), with `padding_mask` 0 and weight 0 there, so
  XLA and torch compile one step, not one per length. The LSTMs read left
  to right, so the padding after a window changes none of its outputs.
- kzoo's `AwdLstmLanguageModel` starts every window from zero LSTM state
  (it is not stateful; `kzoo.recipes.ulmfit` trains it the same way),
  where fastai carries the state from one window of a row to the next;
  fastai 0.7 also scaled the learning rate by `length / bptt`, which a
  step-based schedule here does not.

The batch is `AwdLstmLanguageModelPreprocessor`'s: `token_ids`,
`padding_mask`, next-token labels and their weights, `(batch,
sequence_length)`.
"""

import numpy as np

from kzoo.core.task import Task
from kzoo.core.families import families_with_objective
from kzoo.pretraining.objectives import Objective, register_objective
from kzoo.pretraining.streams.sequence_packing import (
    IdsStream, corpus_tokenizer, make_preset_task, new_cursor,
    preset_task_class, stream_arguments)

BPTT = 70          # fastai's
LENGTH_SPREAD = 5  # the standard deviation of a window's length
MIN_LENGTH = 5
MARGIN = 25        # sequence_length's default: bptt + 5 standard deviations


def window_length(rng, bptt, limit):
    """fastai 0.7's `LanguageModelLoader` draw, cut to `limit`."""
    mean = bptt if rng.random() < 0.95 else bptt / 2.0
    length = max(MIN_LENGTH, int(rng.normal(mean, LENGTH_SPREAD)))
    return min(length, limit)


class BpttStream(IdsStream):
    """AWD-LSTM language-model batches from a corpus (see the module doc).

    Args:
        corpus: a `kzoo.corpus.Corpus` of `AwdLstmTokenizer` ids.
        bos_token_id, pad_token_id: `xxbos` (before each document) and
            `xxpad` (after a window shorter than `sequence_length`).
        bptt: the mean window length (fastai's 70).
        sequence_length: the batches' width (None: `bptt + 25`).
        batch_size, seed, process_index, process_count, draw_groups:
            see `BatchStream`.
    """

    # One cursor per row, the row to read next and this batch's length.
    state_fields = ("rows", "row", "length")
    # Row i of batch k continues row i of batch k - 1: the method's
    # contiguous stretches, served in construction order (base.py).
    order_examples = False

    def __init__(self, corpus, bos_token_id, pad_token_id, batch_size,
                 bptt=BPTT, sequence_length=None, seed=0, **kwargs):
        super().__init__(corpus, batch_size, seed=seed,
                         prefix=[bos_token_id], **kwargs)
        self.pad_token_id = int(pad_token_id)
        self.bptt = int(bptt)
        self.sequence_length = int(sequence_length or bptt + MARGIN)
        self.rows = [new_cursor() for _ in range(batch_size)]
        self.row = 0
        self.length = 0

    def next_example(self):
        if self.row == 0:  # one length per batch, as fastai
            self.length = window_length(self.rng, self.bptt,
                                        self.sequence_length)
        cursor = self.rows[self.row]
        self.row = (self.row + 1) % self.batch_size
        window = self.read(cursor, self.length + 1)
        self.rewind(cursor, 1)
        return {"ids": window}

    def finish(self, examples, seed):
        width = self.sequence_length
        ids = np.full((len(examples), width + 1), self.pad_token_id,
                      np.int32)
        mask = np.zeros((len(examples), width), np.int32)
        for row, example in enumerate(examples):
            n = example["ids"].size  # the window and the next id
            ids[row, :n] = example["ids"]
            mask[row, :n - 1] = 1
        # Padding reads xxpad (the window's next id is a label only).
        x = {"token_ids": np.where(mask == 1, ids[:, :-1],
                                   self.pad_token_id).astype(np.int32),
             "padding_mask": mask}
        return x, ids[:, 1:], mask.astype(np.float32)


def _is_language_model(task_cls):
    return task_cls.__name__.endswith("LanguageModel")


def make_task(preset, load_weights=True, sequence_length=None, **options):
    task_cls = preset_task_class(preset, "lm", Task,
                                 accept=_is_language_model)
    return make_preset_task(task_cls, preset, load_weights, sequence_length)


def make_stream(task, corpus, batch_size, seed=0, process_index=0,
                process_count=1, draw_groups=None, sequence_length=None,
                bptt=BPTT):
    tokenizer = corpus_tokenizer(task, corpus)
    return BpttStream(
        corpus, tokenizer.bos_token_id, tokenizer.pad_token_id, bptt=bptt,
        sequence_length=sequence_length,
        **stream_arguments(batch_size, seed, process_index, process_count,
                           draw_groups))


OBJECTIVE = register_objective(Objective(
    name="lm",
    description=("AWD-LSTM's language model (ULMFiT): batch_size parallel "
                 "streams of the corpus in BPTT windows of variable "
                 "length, as fastai"),
    families=families_with_objective("lm"),
    make_task=make_task,
    make_stream=make_stream,
    options={"bptt": BPTT}))
