"""What every pretraining stream shares: a seeded, resumable walk over a
prepared corpus, cut into global batches, of which each process keeps its
own rows.

Determinism and resumption. A stream's whole state is a small dict of
plain values (`state()` / `restore()`): the walk's position (epoch, shard,
document, sentence), the objective's own fields (`state_fields`: what a
packer carries over, as positions, never ids) and the NumPy generator of
its random choices. Dynamic draws made per batch (masks, noise) are seeded
by `(seed, step, row group)` alone, so batch `step` is the same in every
run: started fresh, resumed from a checkpoint, or split over processes.

Why a hand-written walk and not `tf.data` (shuffle, interleave,
`Dataset.save`/`checkpoint`): a `tf.data` iterator's checkpoint is
TensorFlow-only and holds its shuffle buffers (megabytes per checkpoint,
not a position), and on JAX and torch every step would cross from
TensorFlow. Here the walk is NumPy over memory maps, the same on the
three backends.

Processes. Every process walks the same global order and keeps rows
`[rank * local, (rank + 1) * local)` of each global batch, so together
they see each example exactly once per pass, and a run on P processes
trains on the batches a single process with the same global batch (and
`draw_groups=P`) trains on. Reading the ids is cheap (memory maps); the
dynamic draws, the costly part, are made for a process's own rows only.
"""

import copy

import numpy as np

from kzoo.corpus.shards import CorpusError

# Steps whose stream state is kept after the batch was made: Keras reads
# batches ahead of the step it trains (its queue holds up to 10), and a
# checkpoint at step s needs the state from which batch s is made.
KEPT_STATES = 64


class CorpusWalk:
    """A seeded order over a corpus' documents, epoch after epoch: shards
    in a shuffled order, each shard's documents shuffled, each document's
    sentences in order. Memory: one shard's permutation."""

    def __init__(self, corpus, seed, shuffle=True):
        self.corpus = corpus
        self.seed = int(seed)
        self.shuffle = shuffle
        self.epoch = 0
        self.shard_position = 0     # index into this epoch's shard order
        self.document_position = 0  # index into the shard's document order
        self.sentence = 0           # next sentence of the current document
        self._orders = None

    def state(self):
        return {"epoch": self.epoch, "shard_position": self.shard_position,
                "document_position": self.document_position,
                "sentence": self.sentence}

    def restore(self, state):
        self.epoch = state["epoch"]
        self.shard_position = state["shard_position"]
        self.document_position = state["document_position"]
        self.sentence = state["sentence"]
        self._orders = None

    def _shard_order(self):
        count = len(self.corpus.shards)
        if not self.shuffle:
            return np.arange(count)
        return np.random.default_rng([self.seed, self.epoch]).permutation(
            count)

    def _document_order(self, shard_index):
        count = self.corpus.shards[shard_index].num_documents
        if not self.shuffle:
            return np.arange(count)
        return np.random.default_rng(
            [self.seed, self.epoch, int(shard_index)]).permutation(count)

    def _current(self):
        """(shard, its index, this epoch's document order of the shard),
        skipping empty shards; moves to the next epoch at the end."""
        if self.corpus.num_documents == 0:
            raise CorpusError(f"{self.corpus.folder} holds no documents.")
        while True:
            if self._orders is None or self._orders[0] != (
                    self.epoch, self.shard_position):
                shard_order = self._shard_order()
                if self.shard_position >= len(shard_order):
                    self.epoch += 1
                    self.shard_position = self.document_position = 0
                    self.sentence = 0
                    continue
                index = int(shard_order[self.shard_position])
                self._orders = ((self.epoch, self.shard_position), index,
                                self._document_order(index))
            _, index, documents = self._orders
            if self.document_position < len(documents):
                return self.corpus.shards[index], index, documents
            self.shard_position += 1
            self.document_position = self.sentence = 0

    def current_document(self):
        """`(global document index, its sentences)` of where the walk is;
        a document's sentences are id arrays (memory-mapped views)."""
        shard, index, documents = self._current()
        local = int(documents[self.document_position])
        global_index = int(self.corpus.document_offsets[index]) + local
        return global_index, shard.document(local)

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
        document, sentences = self.current_document()
        rest = sentences[self.sentence:]
        self.document_position += 1
        self.sentence = 0
        if not rest:
            return self.next_document()
        return document, rest


class BatchStream:
    """Batches of one pretraining objective, made from a prepared corpus.

    Subclasses implement:
        `next_example()`: one example (a dict of NumPy arrays) from
            `self.walk` and `self.rng` (the generator of the objective's
            random choices: NSP's random documents, shorter targets, ...).
        `finish(examples, seed)`: a list of examples -> one batch
            `(x, y, sample_weight)` (NumPy), with the dynamic draws
            (masks, noise) seeded by `seed` alone.
        `state_fields`: names of the attributes (plain values) that carry
            over between examples.

    Call `batch(step)` for consecutive steps; `state_before(step)` is the
    state to `restore` so that the next `batch` call makes batch `step`.
    """

    state_fields = ()

    def __init__(self, corpus, batch_size, seed=0, process_index=0,
                 process_count=1, draw_groups=None, shuffle=True):
        if batch_size % process_count:
            raise ValueError(
                f"The global batch size ({batch_size}) must divide among the "
                f"{process_count} processes; pick a multiple of "
                f"{process_count}.")
        draw_groups = draw_groups or process_count
        local = batch_size // process_count
        if batch_size % draw_groups or local % (batch_size // draw_groups):
            raise ValueError(
                f"draw_groups={draw_groups} must divide the batch "
                f"({batch_size}) into groups that tile each process' "
                f"{local} rows.")
        self.corpus = corpus
        self.batch_size = batch_size
        self.seed = int(seed)
        self.process_index = process_index
        self.process_count = process_count
        self.draw_groups = draw_groups
        self.walk = CorpusWalk(corpus, seed, shuffle=shuffle)
        self.rng = np.random.default_rng([self.seed, 1])
        self.next_step = 0
        self._states = {}

    # --- the state a checkpoint saves -------------------------------------

    def state(self):
        return copy.deepcopy({
            "next_step": self.next_step, "walk": self.walk.state(),
            "rng": self.rng.bit_generator.state,
            "fields": {name: getattr(self, name)
                       for name in self.state_fields}})

    def restore(self, state):
        self.next_step = state["next_step"]
        self.walk.restore(state["walk"])
        self.rng.bit_generator.state = copy.deepcopy(state["rng"])
        for name, value in state["fields"].items():
            setattr(self, name, copy.deepcopy(value))
        self._states = {}

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
        examples = [self.next_example() for _ in range(self.batch_size)]
        self.next_step += 1
        group_size = self.batch_size // self.draw_groups
        local = self.batch_size // self.process_count
        first = self.process_index * local
        parts = [self.finish(examples[start:start + group_size],
                             self.draw_seed(step, start // group_size))
                 for start in range(first, first + local, group_size)]
        return concatenate_batches(parts)

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


def stack_examples(examples):
    """A list of example dicts -> a dict of stacked arrays."""
    return {key: np.stack([example[key] for example in examples])
            for key in examples[0]}
