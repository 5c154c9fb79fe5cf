"""The global example order (kzoo/pretraining/streams/base.py): each epoch
the examples an objective builds are served in a seeded permutation, as
BERT shuffles its instances and Megatron-LM its sample index; windows
never cross an epoch; a restore anywhere in a window serves the same
examples; processes split each global batch; batches mix documents."""

import numpy as np
import pytest

from helpers import toy_batch
from kzoo.corpus import Corpus
from kzoo.corpus.shards import SHARDS_FOLDER, write_manifest, write_shard
from kzoo.pretraining.streams.base import BatchStream

pytestmark = pytest.mark.once


class ChunkStream(BatchStream):
    """Each example: up to three sentences of one document from where the
    walk stands (a chunk, as NSP's and ELECTRA's are cut), and one draw
    of the example's own generator."""

    def next_example(self):
        ids, document, first, _ = self.walk.next_sentence()
        _, sentences = self.walk.current_document()
        end = min(first + 3, len(sentences))
        self.walk.sentence = end
        return {"document": np.array(document), "first": np.array(first),
                "end": np.array(end), "draw": np.array(
                    self.rng.integers(1 << 30))}

    def finish(self, examples, seed):
        return toy_batch(examples, seed)


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    """Eight "books" of 60 sentences in three shards: the shape where a
    walk in construction order fills a batch from one book."""
    folder = tmp_path_factory.mktemp("books")
    documents = [[[book * 1000 + s] for s in range(60)] for book in range(8)]
    shards = [write_shard(folder / SHARDS_FOLDER, name, part, np.uint32)
              for name, part in (("a", documents[:3]), ("b", documents[3:6]),
                                 ("c", documents[6:]))]
    write_manifest(folder, {"shards": shards, "tokenizer": {"sha256": "x"}})
    return Corpus(folder)


EXAMPLES_PER_EPOCH = 8 * 20  # 60 sentences in chunks of 3


def _served(stream, steps):
    return [stream.batch(step)[0] for step in range(steps)]


def _keys(batches):
    return [(int(d), int(f)) for x in batches
            for d, f in zip(x["document"], x["first"])]


def test_each_epoch_serves_its_examples_once_in_a_seeded_order(books):
    steps = EXAMPLES_PER_EPOCH // 8
    built = ChunkStream(books, batch_size=8, seed=1)
    built.order_examples = False
    construction = _keys(_served(built, 2 * steps))
    stream = ChunkStream(books, batch_size=8, seed=1)
    served = _keys(_served(stream, 2 * steps))
    for epoch in range(2):
        part = slice(epoch * EXAMPLES_PER_EPOCH,
                     (epoch + 1) * EXAMPLES_PER_EPOCH)
        # The same examples as the construction's epoch, each once ...
        assert sorted(served[part]) == sorted(construction[part])
        assert len(set(served[part])) == EXAMPLES_PER_EPOCH
        # ... in another order.
        assert served[part] != construction[part]
    # Another seed, another order; the same seed, the same.
    again = _keys(_served(ChunkStream(books, batch_size=8, seed=1), steps))
    other = _keys(_served(ChunkStream(books, batch_size=8, seed=2), steps))
    assert again == served[:EXAMPLES_PER_EPOCH] and other != again


def test_batches_mix_the_documents_that_construction_order_keeps_apart(
        books):
    """Distinct books in a batch of 8 chunks, over the first 40 batches.
    Construction order: 1-2 (a batch is 8 chunks of one or two books).
    Served order, measured over seeds 0-4: mean 5.39 +- 0.09 (chance,
    8 draws from 8 books: 5.25); the bar, 4, is 15 sd below. Two
    consecutive batches share 3.54 +- 0.37 books, two batches 20 steps
    apart 3.57 +- 0.16 (chance: 3.45); their difference -0.03 +- 0.23:
    consecutive batches are unrelated (bar: within 0.75, 3.2 sd)."""
    built = ChunkStream(books, batch_size=8, seed=0)
    built.order_examples = False
    before = [len(set(x["document"].tolist())) for x in _served(built, 40)]
    assert max(before) <= 2
    batches = _served(ChunkStream(books, batch_size=8, seed=0), 40)
    documents = [set(x["document"].tolist()) for x in batches]
    assert np.mean([len(d) for d in documents]) > 4
    consecutive = np.mean([len(a & b) for a, b in
                           zip(documents[:19], documents[1:20])])
    apart = np.mean([len(a & b) for a, b in
                     zip(documents[:19], documents[20:39])])
    assert abs(consecutive - apart) < 0.75, (consecutive, apart)


def test_windows_stay_inside_an_epoch_and_are_permuted_each(books):
    stream = ChunkStream(books, batch_size=8, seed=3, order_window=48)
    served = _keys(_served(stream, EXAMPLES_PER_EPOCH // 8))
    built = ChunkStream(books, batch_size=8, seed=3)
    built.order_examples = False
    construction = _keys(_served(built, EXAMPLES_PER_EPOCH // 8))
    # Windows of 48, 48, 48, then the epoch's last 16.
    for start, end in ((0, 48), (48, 96), (96, 144), (144, 160)):
        assert sorted(served[start:end]) == sorted(construction[start:end])
        assert served[start:end] != construction[start:end]


@pytest.mark.parametrize("window", [48, 1 << 16])
def test_a_restore_anywhere_serves_the_same_batches(books, window):
    def stream():
        return ChunkStream(books, batch_size=8, seed=4, order_window=window)
    whole = _served(stream(), 30)
    first = stream()
    _served(first, 27)
    for step in (0, 5, 6, 19, 20, 26):  # inside windows and at their ends
        resumed = stream()
        resumed.restore(first.state_before(step))
        for got, want in zip(
                [resumed.batch(s)[0] for s in range(step, step + 4)],
                whole[step:step + 4]):
            for key in want:
                np.testing.assert_array_equal(got[key], want[key])


def test_processes_build_their_own_rows_of_the_global_batch(books):
    single = _served(ChunkStream(books, batch_size=8, seed=5,
                                 draw_groups=2), 25)
    ranks = [ChunkStream(books, batch_size=8, seed=5, process_index=rank,
                         process_count=2) for rank in range(2)]
    built = []
    for rank in ranks:  # count the examples each process builds again
        original = rank._build_at
        rank.rebuilt = 0

        def counting(start, rank=rank, original=original):
            rank.rebuilt += 1
            return original(start)
        rank._build_at = counting
    for step, want in enumerate(single):
        got = [rank.batch(step)[0] for rank in ranks]
        for key in want:
            np.testing.assert_array_equal(
                np.concatenate([got[0][key], got[1][key]]), want[key])
    built = [rank.rebuilt for rank in ranks]
    assert built == [25 * 4, 25 * 4]


def test_an_old_state_is_refused_with_what_to_do(books):
    stream = ChunkStream(books, batch_size=8)
    old = {"next_step": 3, "walk": {"epoch": 0, "shard_position": 0,
                                    "document_position": 2, "sentence": 0},
           "rng": {}, "fields": {}}
    with pytest.raises(ValueError, match="older kzoo.*--overwrite"):
        stream.restore(old)
    with pytest.raises(ValueError, match="order_window"):
        ChunkStream(books, batch_size=8, order_window=0)
