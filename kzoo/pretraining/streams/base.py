"""What every pretraining stream shares: a seeded, resumable walk over a
prepared corpus, a seeded global order over the examples built from it,
cut into global batches, of which each process keeps its own rows.

Examples, and their order. An objective builds its examples one after
another from the walk (`next_example`: RoBERTa's FULL-SENTENCES rows,
BERT's instances, T5's chunks, ...), as its original builds them from its
input. That construction order is never the training order, as in BERT
(`create_pretraining_data.py` shuffles every instance it made) and
Megatron-LM (`gpt_dataset.py`: a document index per epoch, a sample index
over it, and a shuffle index that permutes the samples). Here the walk
visits the documents in a seeded permutation of the whole corpus per
epoch (Megatron's document index); the examples built from it are cut
into windows of up to `order_window` consecutive examples (65,536 by
default) that never cross an epoch; a window is planned first (its
examples built once, each one's start recorded: the walk's position and
the objective's carried fields, a few integers: Megatron's sample index),
then served in a seeded permutation (the shuffle index). A corpus whose
epoch holds fewer examples than a window is permuted whole, each epoch;
a larger one in windows of random documents drawn from every shard.

A stream whose contiguous batches are its method (the AWD-LSTM's BPTT:
row i of batch k continues row i of batch k - 1) sets `order_examples =
False`: its documents still come in a new permutation every epoch, its
examples in construction order.

Determinism and resumption. Example n of the construction draws its own
random choices (NSP's other document, a shorter target, ...) from a
generator seeded by `(seed, n)`, so it is a function of its start alone.
A stream's whole state is a small dict of plain values (`state()` /
`restore()`): where the current window starts (the walk's position, the
objective's fields, the example count) and how many of its examples were
served; a restore plans that window again (the same examples) and goes
on. Dynamic draws made per batch (masks, noise) are seeded by `(seed,
step, row group)` alone, so batch `step` is the same in every run: started
fresh, resumed from a checkpoint, or split over processes.

Why a hand-written walk and not `tf.data` (shuffle, interleave,
`Dataset.save`/`checkpoint`): a `tf.data` iterator's checkpoint is
TensorFlow-only and holds its shuffle buffers (megabytes per checkpoint,
not a position), and on JAX and torch every step would cross from
TensorFlow. Here the walk is NumPy over memory maps, the same on the
three backends.

Processes. Every process plans the same windows and keeps rows
`[rank * local, (rank + 1) * local)` of each global batch, so together
they see each example exactly once per pass, and a run on P processes
trains on the batches a single process with the same global batch (and
`draw_groups=P`) trains on. Planning reads ids (memory maps: cheap); a
process builds again only its own rows' examples and makes the dynamic
draws, the costly part, for them alone. The draw groups are the run's
(its checkpoints record them), not the process count's: where a group
spans several processes' rows (a run resumed on more processes than it
has groups), each of them builds and draws that group whole and keeps
its own rows, so any process count makes the same global batches.
"""

import copy

import numpy as np

from kzoo.corpus.shards import CorpusError

# Steps whose stream state is kept after the batch was made: Keras reads
# batches ahead of the step it trains (its queue holds up to 10), and a
# checkpoint at step s needs the state from which batch s is made.
KEPT_STATES = 64
# Examples permuted together (unless an epoch holds fewer): a window's
# plan holds a few integers per example (~20 MB at this size).
ORDER_WINDOW = 1 << 16


class CorpusWalk:
    """A seeded order over a corpus' documents, epoch after epoch: each
    epoch a permutation of all the corpus' documents (across shards), each
    document's sentences in order. Memory: 8 bytes a document."""

    def __init__(self, corpus, seed, shuffle=True):
        self.corpus = corpus
        self.seed = int(seed)
        self.shuffle = shuffle
        self.epoch = 0
        self.document_position = 0  # index into this epoch's order
        self.sentence = 0           # next sentence of the current document
        self._order = None          # (epoch, its document order)
        self._sentences = None      # the current document's

    def state(self):
        return {"epoch": self.epoch,
                "document_position": self.document_position,
                "sentence": self.sentence}

    def restore(self, state):
        self.epoch = state["epoch"]
        self.document_position = state["document_position"]
        self.sentence = state["sentence"]

    def document_order(self, epoch):
        """Epoch `epoch`'s order of the documents (global indices)."""
        if self._order is None or self._order[0] != epoch:
            count = self.corpus.num_documents
            order = np.random.default_rng([self.seed, epoch]).permutation(
                count) if self.shuffle else np.arange(count)
            self._order = (epoch, order)
        return self._order[1]

    def _current(self):
        """The current document's global index; moves to the next epoch
        at the end of one."""
        count = self.corpus.num_documents
        if count == 0:
            raise CorpusError(f"{self.corpus.folder} holds no documents.")
        if self.document_position >= count:
            self.epoch += 1
            self.document_position = self.sentence = 0
        return int(self.document_order(self.epoch)[self.document_position])

    def settle(self):
        """Step past a finished document, and past the epoch's end, so
        that `epoch` names the epoch the next read begins in."""
        if self.corpus.num_documents == 0:
            return
        _, sentences = self.current_document()
        if self.sentence >= len(sentences):
            self.document_position += 1
            self.sentence = 0
            self._current()

    def current_document(self):
        """`(global document index, its sentences)` of where the walk is:
        a sequence of id arrays (memory-mapped views), each read when
        indexed, so a book-length document costs nothing to step
        through."""
        document = self._current()
        if self._sentences is None or self._sentences.index != document:
            self._sentences = DocumentSentences(self.corpus, document)
        return document, self._sentences

    def next_sentence(self):
        """The next sentence: `(ids, document index, sentence index,
        starts_document)`; walks on into the next document (and epoch)."""
        while True:
            document, sentences = self.current_document()
            if self.sentence < len(sentences):
                index = self.sentence
                self.sentence += 1
                return sentences[index], document, index, index == 0
            self.document_position += 1
            self.sentence = 0

    def next_document(self):
        """The rest of the current document (all of it when the walk
        stands at its start), then on to the next."""
        for _ in range(self.corpus.num_documents + 1):
            document, sentences = self.current_document()
            rest = sentences[self.sentence:]
            self.document_position += 1
            self.sentence = 0
            if rest:
                return document, rest
        raise CorpusError(f"{self.corpus.folder} holds no sentences.")


class DocumentSentences:
    """One document's sentences as a sequence: `len`, and an index or a
    slice read from the shard's memory maps when asked (a list of
    `corpus.document` would read them all)."""

    def __init__(self, corpus, document):
        self.index = document
        self.shard, local = corpus.locate(document)
        self.first, end = self.shard.document_sentence_range(local)
        self.count = end - self.first

    def __len__(self):
        return self.count

    def __getitem__(self, key):
        if isinstance(key, slice):
            return [self[i] for i in range(*key.indices(self.count))]
        if key < 0:
            key += self.count
        if not 0 <= key < self.count:
            raise IndexError(f"sentence {key} of {self.count}")
        return self.shard.sentence(self.first + key)


class BatchStream:
    """Batches of one pretraining objective, made from a prepared corpus.

    Subclasses implement:
        `next_example()`: one example (a dict of NumPy arrays) from
            `self.walk` and `self.rng` (the generator of the objective's
            random choices: NSP's random documents, shorter targets, ...;
            seeded anew for every example).
        `finish(examples, seed)`: a list of examples -> one batch
            `(x, y, sample_weight)` (NumPy), with the dynamic draws
            (masks, noise) seeded by `seed` alone.
        `state_fields`: names of the attributes (plain values) that carry
            over between examples.
        `order_examples`: False to serve the examples in construction
            order (contiguous batches; see the module doc).

    Call `batch(step)` for consecutive steps; `state_before(step)` is the
    state to `restore` so that the next `batch` call makes batch `step`.
    `order_window`: examples permuted together (see the module doc).
    """

    state_fields = ()
    order_examples = True

    def __init__(self, corpus, batch_size, seed=0, process_index=0,
                 process_count=1, draw_groups=None, shuffle=True,
                 order_window=ORDER_WINDOW):
        if batch_size % process_count:
            raise ValueError(
                f"The global batch size ({batch_size}) must divide among the "
                f"{process_count} processes; pick a multiple of "
                f"{process_count}.")
        draw_groups = draw_groups or process_count
        if isinstance(draw_groups, bool) or draw_groups < 1 or \
                batch_size % draw_groups:
            raise ValueError(
                f"draw_groups={draw_groups} must divide the batch "
                f"({batch_size}) into equal groups; pick a divisor of "
                f"{batch_size}.")
        if isinstance(order_window, bool) or not isinstance(
                order_window, (int, np.integer)) or order_window < 1:
            raise ValueError(f"order_window must be a positive integer; "
                             f"got {order_window!r}.")
        self.corpus = corpus
        self.batch_size = batch_size
        self.seed = int(seed)
        self.process_index = process_index
        self.process_count = process_count
        self.draw_groups = draw_groups
        self.order_window = int(order_window)
        self.walk = CorpusWalk(corpus, seed, shuffle=shuffle)
        self.rng = np.random.default_rng([self.seed, 1])
        self.examples_built = 0  # the construction's count (n above)
        # Ids of the corpus left out of the examples served so far (all
        # processes' rows), by reason: `cut` below.
        self.ids_cut = {}
        self._cut_now = {}       # the example being built's
        self.next_step = 0
        self._states = {}
        self._window = None      # {"start", "plan", "order"}
        self._served = 0         # examples of the window served
        # batch index -> its global rows, where they vary (a batch-size
        # ramp: kzoo.pretraining.batch_ramp); None: `batch_size` each.
        self.batch_size_at = None

    # --- construction: example n from its start ----------------------------

    def _construction(self):
        """Where the construction stands: the start of its next example."""
        return {"walk": self.walk.state(), "built": self.examples_built,
                "fields": copy.deepcopy({name: getattr(self, name)
                                         for name in self.state_fields})}

    def _set_construction(self, state):
        self.walk.restore(state["walk"])
        self.examples_built = state["built"]
        for name, value in state["fields"].items():
            setattr(self, name, copy.deepcopy(value))

    def cut(self, reason, count):
        """Record, from `next_example`, that `count` ids of the corpus are
        left out of the example being built (`reason`: why, e.g. BERT's
        `truncate_seq_pair`); `ids_cut` totals them over the examples
        served, for the run's report."""
        if count:
            self._cut_now[reason] = self._cut_now.get(reason, 0) + int(count)

    def _count_cut(self, cut):
        for reason, count in cut.items():
            self.ids_cut[reason] = self.ids_cut.get(reason, 0) + count

    def _build(self):
        """The construction's next example, its random choices drawn from
        a generator of its own."""
        self.rng = np.random.default_rng(
            [self.seed, 1, self.examples_built])
        self._cut_now = {}
        example = self.next_example()
        self.examples_built += 1
        return example

    def _plan_window(self):
        """Build the window that starts where the construction stands:
        the start of each of its examples, and their served order."""
        start = self._construction()
        self.walk.settle()
        epoch, plan = self.walk.epoch, []
        while len(plan) < self.order_window:
            self.walk.settle()
            if plan and self.walk.epoch != epoch:
                break
            plan.append(self._construction())
            self._build()
            if self._cut_now:
                plan[-1]["cut"] = self._cut_now
        order = np.random.default_rng(
            [self.seed, 3, start["built"]]).permutation(len(plan))
        self._window = {"start": start, "plan": plan, "order": order}
        self._served = 0

    def _next_start(self):
        """The start of the next example in the served order."""
        if self._window is None or self._served >= len(
                self._window["plan"]):
            self._plan_window()
        start = self._window["plan"][self._window["order"][self._served]]
        self._served += 1
        return start

    def next_epoch(self):
        """The epoch of its own walk the next served example starts in,
        read without serving it (a mixture asks whether a corpus' epoch
        cap lets it give one more: streams/mixture.py). A window never
        crosses an epoch, so within one it is the window's; at its end,
        where the walk settles next."""
        window = self._window
        if window is not None and self._served < len(window["plan"]):
            start = window["plan"][window["order"][self._served]]
            return int(start["walk"]["epoch"])
        here = self._construction()
        try:
            self.walk.settle()
            return int(self.walk.epoch)
        finally:
            self._set_construction(here)

    def _build_at(self, start):
        """The example that begins at `start` (the construction's own
        position is kept)."""
        here = self._construction()
        self._set_construction(start)
        try:
            return self._build()
        finally:
            self._set_construction(here)

    # --- the state a checkpoint saves -------------------------------------

    def state(self):
        if not self.order_examples:
            where = {"construction": self._construction()}
        elif self._window is None:
            where = {"window": self._construction(), "served": 0}
        else:
            where = {"window": copy.deepcopy(self._window["start"]),
                     "served": self._served}
        return {"next_step": self.next_step,
                "ids_cut": dict(self.ids_cut), **where}

    def restore(self, state):
        if "window" not in state and "construction" not in state:
            raise ValueError(
                "This stream state was saved by an older kzoo, before the "
                "global example order: it cannot be resumed. Start the run "
                "again (kzoo pretrain --overwrite) or finish it with the "
                "kzoo that began it.")
        self.next_step = state["next_step"]
        self.ids_cut = dict(state.get("ids_cut", {}))
        self._states = {}
        if "construction" in state:
            self._set_construction(state["construction"])
            self._window = None
            return
        self._set_construction(state["window"])
        self._window = None
        if state["served"]:
            self._plan_window()
            self._served = state["served"]

    def state_before(self, step):
        """The state from which batch `step` is made (`step` is the next
        batch to make, or one made within the last `KEPT_STATES`)."""
        if step == self.next_step:
            return self.state()
        try:
            return copy.deepcopy(self._states[step])
        except KeyError:
            raise ValueError(
                f"No stream state kept for step {step} (next step "
                f"{self.next_step}; states are kept for the last "
                f"{KEPT_STATES}).") from None

    # --- batches ----------------------------------------------------------

    def draw_seed(self, step, group):
        """The seed of batch `step`'s dynamic draws for row group `group`:
        a function of the run's seed and the position alone."""
        return int(np.random.SeedSequence(
            [self.seed, 2, step, group]).generate_state(1)[0])

    def batch(self, step):
        if step != self.next_step:
            raise ValueError(
                f"Batches are made in order: asked for step {step}, next is "
                f"{self.next_step}. Restore a saved state to jump.")
        self._states[step] = self.state()
        self._states.pop(step - KEPT_STATES, None)
        batch_size = self.batch_size if self.batch_size_at is None \
            else self.batch_size_at(step)
        local = batch_size // self.process_count
        first = self.process_index * local
        # The draw groups this process' rows lie in: whole groups where
        # the groups tile its rows; where a group is larger (a run resumed
        # on more processes than its draw groups), the group's rows are
        # built and drawn whole and this process keeps its own.
        group_size = batch_size // self.draw_groups
        groups = range(first // group_size,
                       (first + local - 1) // group_size + 1)
        built = slice(groups[0] * group_size, groups[-1] * group_size
                      + group_size)
        if self.order_examples:
            starts = [self._next_start() for _ in range(batch_size)]
            for start in starts:
                self._count_cut(start.get("cut", {}))
            examples = [self._build_at(start) for start in starts[built]]
        else:
            examples = []
            for _ in range(batch_size):
                examples.append(self._build())
                self._count_cut(self._cut_now)
            examples = examples[built]
        self.next_step += 1
        parts = [self.finish(examples[at:at + group_size],
                             self.draw_seed(step, group))
                 for at, group in zip(range(0, len(examples), group_size),
                                      groups)]
        keep = first - built.start
        return slice_batch(concatenate_batches(parts), keep, keep + local)

    def next_example(self):
        raise NotImplementedError

    def finish(self, examples, seed):
        raise NotImplementedError


def concatenate_batches(parts):
    """Join `(x, y, sample_weight)` batches (dicts, arrays or None) along
    the batch axis."""
    if len(parts) == 1:
        return parts[0]

    def join(values):
        first = values[0]
        if first is None:
            return None
        if isinstance(first, dict):
            return {key: join([v[key] for v in values]) for key in first}
        if isinstance(first, (tuple, list)):
            return type(first)(join(list(group)) for group in zip(*values))
        return np.concatenate(values, axis=0)

    return join(list(parts))


def slice_batch(batch, start, stop):
    """Rows `[start, stop)` of a `(x, y, sample_weight)` batch (dicts,
    arrays or None); the batch itself when that is all of it."""
    def rows(value):
        if value is None:
            return None
        if isinstance(value, dict):
            return {key: rows(v) for key, v in value.items()}
        if isinstance(value, (tuple, list)):
            return type(value)(rows(v) for v in value)
        return value[start:stop]

    first = batch[0]
    while isinstance(first, (dict, tuple, list)):
        first = next(iter(first.values())) if isinstance(first, dict) \
            else first[0]
    if start == 0 and stop == len(first):
        return batch
    return rows(batch)


def stack_examples(examples):
    """A list of example dicts -> a dict of stacked arrays."""
    return {key: np.stack([example[key] for example in examples])
            for key in examples[0]}
