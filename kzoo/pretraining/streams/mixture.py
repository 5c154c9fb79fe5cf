"""Several prepared corpora mixed with weights (`kzoo pretrain --corpus
books:0.3 --corpus web:0.7`).

Each corpus keeps its own stream of the run's objective (its own walk,
windows and example order: `base.py`), and so its own epochs: a small
corpus with a large weight goes round many times while a large one is
still in its first, each reshuffled when it ends, as Megatron-LM's
`BlendedDataset` and seqio's mixtures do.

Which corpus gives the next example is Megatron-LM's blending rule
(`build_blending_indices`): the one furthest below its share so far,
`argmax(weight * (examples + 1) - taken)`, ties to the first listed. It
draws no random number: every prefix of the run holds each corpus' share
to within one example, and the choice is a function of the counts alone,
so the mixture's state is those counts plus each corpus stream's own
(a few integers each): a checkpoint restores the mixture where it stood.
Every process makes the same choices and keeps its own rows, as a single
stream does; the dynamic draws (masks, noise) are seeded by the run's
seed, step and row group, as a single stream's are.

Epoch caps (`--corpus books:0.3:epochs=4`): a corpus may be gone through
at most N times, as data-constrained recipes repeat a small corpus about
four times and no more (Muennighoff et al. 2023, "Scaling Data-Constrained
Language Models": up to ~4 epochs of repeated data is nearly as good as
new). An example counts in the epoch its start lies in; once a capped
corpus' next example would start epoch N, the corpus leaves the mixture
and the blending rule goes on over the others, their weights renormalised
and their shares counted from that moment (counted over the whole run, a
corpus that had been behind would first catch up in a burst). Whether a
corpus is still in is read from its stream's position (`next_epoch`), so
it is part of the checkpointed state; the counts at the last change of
the corpora in (`segment`) are in the mixture's state too. When no
corpus is left, the next batch cannot be made: `MixtureExhausted` says
at which batch and what to change. A cap is not part of the run's
identity (it decides only what comes after the moment it is reached):
raising one on an exhausted run and running the command again goes on.
The validation split is read without caps (a fixed set of batches).
"""

import numpy as np

from kzoo.corpus.shards import Corpus, CorpusError
from kzoo.pretraining.config import corpus_entries
from kzoo.pretraining.streams.base import BatchStream


class MixtureExhausted(CorpusError):
    """Every corpus of a mixture has reached its epoch cap."""


class CorpusMixture:
    """Prepared corpora with their weights (normalised to sum to 1) and
    epoch caps, read as one corpus where a run needs one: the tokenizer
    (every corpus must share it), the total size, the shards.

    Args:
        entries: `[(folder, weight), ...]` or `[(folder, weight, epochs),
            ...]`, or strings `"folder:weight[:epochs=N]"` (see
            `kzoo.pretraining.config.corpus_entries`); at least two.
        split: `"train"` or `"validation"`, as `Corpus`'s; the caps apply
            to the training split only.
    """

    def __init__(self, entries, split="train"):
        entries = corpus_entries(entries)
        if len(entries) < 2:
            raise CorpusError("A mixture needs at least two corpora; give "
                              "one corpus as a folder.")
        self.names = [path for path, _, _ in entries]
        self.corpora = [Corpus(path, split=split) for path in self.names]
        total = sum(weight for _, weight, _ in entries)
        self.weights = np.array([weight / total
                                 for _, weight, _ in entries])
        # The most epochs each corpus may give (None: no cap).
        self.epoch_caps = [epochs if split == "train" else None
                           for _, _, epochs in entries]
        first = self.corpora[0]
        for corpus in self.corpora[1:]:
            if corpus.tokenizer_hash != first.tokenizer_hash:
                raise CorpusError(
                    f"Corpus {corpus.folder} was prepared with another "
                    f"tokenizer than {first.folder} (hashes "
                    f"{corpus.tokenizer_hash[:12]} and "
                    f"{first.tokenizer_hash[:12]}): a mixture's corpora "
                    "share one tokenizer. Prepare it again with the "
                    "model's preset.")
        self.folder = " + ".join(self.names)  # for messages
        self.split = split

    @property
    def tokenizer_hash(self):
        return self.corpora[0].tokenizer_hash

    @property
    def tokenizer_folder(self):
        return self.corpora[0].tokenizer_folder

    @property
    def shards(self):
        return [shard for corpus in self.corpora for shard in corpus.shards]

    @property
    def num_tokens(self):
        return sum(corpus.num_tokens for corpus in self.corpora)

    @property
    def num_documents(self):
        return sum(corpus.num_documents for corpus in self.corpora)

    def check_tokenizer(self, tokenizer_hash, what):
        self.corpora[0].check_tokenizer(tokenizer_hash, what)

    def identity(self):
        """What a run's checkpoints must share with it: the weights, in
        the corpora's order (each corpus' seed follows its place)."""
        return {"corpus_weights": [float(w) for w in self.weights]}


def open_corpus(entries, split="train"):
    """One corpus folder -> `Corpus`; several -> `CorpusMixture`."""
    entries = corpus_entries(entries)
    if len(entries) == 1:
        return Corpus(entries[0][0], split=split)
    return CorpusMixture(entries, split=split)


def corpus_identity(corpus):
    """A mixture's part of a run's identity; nothing for one corpus (a
    run on one corpus keeps the identity it always had)."""
    return corpus.identity() if isinstance(corpus, CorpusMixture) else {}


def make_stream(objective, task, corpus, batch_size, seed, process_index,
                process_count, draw_groups, sequence_length, **options):
    """`objective.make_stream` on one corpus, or a `MixtureStream` of one
    such stream per corpus of a `CorpusMixture`."""
    if not isinstance(corpus, CorpusMixture):
        return objective.make_stream(
            task, corpus, batch_size, seed, process_index, process_count,
            draw_groups, sequence_length, **options)
    streams = [objective.make_stream(
        task, part, batch_size, corpus_seed(seed, index), process_index,
        process_count, draw_groups, sequence_length, **options)
        for index, part in enumerate(corpus.corpora)]
    for stream in streams:
        if not stream.order_examples:
            raise CorpusError(
                f"The {objective.name} objective's rows continue from one "
                "batch to the next, so its examples cannot be drawn from "
                "several corpora in turn; give one corpus.")
    return MixtureStream(corpus, streams, seed)


def corpus_seed(seed, index):
    """The seed of corpus `index`'s own stream: a function of the run's
    seed and the corpus' place, so that no two corpora share an order."""
    return int(np.random.SeedSequence([seed, 4, index]).generate_state(1)[0])


class MixtureStream(BatchStream):
    """Batches whose examples come from several corpus streams (of one
    objective, built alike) in the shares of `mixture.weights`.

    The batch machinery (rows per process, row groups, the states kept
    for checkpoints) is `BatchStream`'s; an example's start here is
    `{"corpus": index, "start": that stream's start}`.
    """

    def __init__(self, mixture, streams, seed):
        first = streams[0]
        super().__init__(mixture, first.batch_size, seed,
                         first.process_index, first.process_count,
                         first.draw_groups)
        self.mixture = mixture
        self.streams = streams
        self.weights = mixture.weights
        # Examples each corpus has given, over all processes' rows, and
        # the epoch of its own walk the last of them came from.
        self.taken = [0] * len(streams)
        self.epochs = [0] * len(streams)
        self.caps = mixture.epoch_caps
        # The corpora in the mixture since the last change, and the
        # examples each had given then: shares are held from there on.
        self.segment = {"active": [True] * len(streams),
                        "taken": [0] * len(streams)}

    def active(self):
        """Which corpora may give the next example: those without a cap,
        or whose next example starts below it."""
        return [cap is None or stream.next_epoch() < cap
                for stream, cap in zip(self.streams, self.caps)]

    def _next_start(self):
        active = self.active()
        if not any(active):
            raise self._exhausted()
        if active != self.segment["active"]:
            self.segment = {"active": active, "taken": list(self.taken)}
        since = np.array(self.taken) - np.array(self.segment["taken"])
        weights = self.weights
        if not all(active):  # (all in: the weights as given, to the bit)
            weights = np.where(active, weights, 0.0)
            weights = weights / weights.sum()
        lag = np.where(active, weights * (since.sum() + 1) - since,
                       -np.inf)
        index = int(np.argmax(lag))
        start = self.streams[index]._next_start()
        self.taken[index] += 1
        self.epochs[index] = int(start["walk"]["epoch"])
        return {"corpus": index, "start": start, "cut": start.get("cut", {})}

    def _exhausted(self):
        given = "; ".join(
            f"{name}: {taken:,} examples in {cap} epoch{'s' * (cap > 1)}"
            for name, taken, cap in zip(self.mixture.names, self.taken,
                                        self.caps))
        batches = self.next_step
        return MixtureExhausted(
            f"Every corpus of the mixture has reached its epoch cap "
            f"({given}): they fill {batches:,} batches, and batch "
            f"{batches + 1:,} is asked for. Lower --max-steps to what "
            f"{batches:,} batches make ({batches:,} steps without gradient"
            " accumulation) or raise a cap (PATH:WEIGHT:epochs=N); the "
            "same command then resumes from the last checkpoint.")

    def _build_at(self, start):
        return self.streams[start["corpus"]]._build_at(start["start"])

    def finish(self, examples, seed):
        # The streams differ in their corpus only: any one finishes.
        return self.streams[0].finish(examples, seed)

    def state(self):
        return {"next_step": self.next_step, "ids_cut": dict(self.ids_cut),
                "mixture": {"taken": list(self.taken),
                            "epochs": list(self.epochs),
                            "segment": {
                                "active": list(self.segment["active"]),
                                "taken": list(self.segment["taken"])},
                            "streams": [s.state() for s in self.streams]}}

    def restore(self, state):
        if "mixture" not in state or len(state["mixture"]["streams"]) != \
                len(self.streams):
            raise ValueError(
                f"This stream state is not a mixture of {len(self.streams)}"
                " corpora's: resume with the corpora the run began with.")
        self.next_step = state["next_step"]
        self.ids_cut = dict(state.get("ids_cut", {}))
        self._states = {}
        self.taken = list(state["mixture"]["taken"])
        self.epochs = list(state["mixture"]["epochs"])
        # A state saved before epoch caps: every corpus in from the start.
        segment = state["mixture"].get("segment") or {
            "active": [True] * len(self.streams),
            "taken": [0] * len(self.streams)}
        self.segment = {"active": list(segment["active"]),
                        "taken": list(segment["taken"])}
        for stream, saved in zip(self.streams, state["mixture"]["streams"]):
            stream.restore(saved)

    def progress(self, state=None):
        """Per corpus: its name, weight, epoch cap (None: none), the
        examples it gave and the epoch (from 0) of its own walk the last
        one came from, as of `state` (default: now)."""
        state = (state or self.state())["mixture"]
        return [{"corpus": name, "weight": float(weight), "epoch_cap": cap,
                 "examples": taken, "epoch": epoch}
                for name, weight, cap, taken, epoch in zip(
                    self.mixture.names, self.weights, self.caps,
                    state["taken"], state["epochs"])]


def mixture_progress(stream, batches):
    """A mixture's `progress` after its first `batches` batches (Keras
    reads batches ahead of the step it trains), or None for a single
    corpus' stream."""
    if not isinstance(stream, MixtureStream):
        return None
    try:
        return stream.progress(stream.state_before(batches))
    except ValueError:  # made too long ago to be kept: as of now
        return stream.progress()
