"""The rules every stream keeps (kzoo/pretraining/streams/base.py): a
seeded order that covers each document once per epoch, batches that a
restored state makes again, and processes that split each global batch."""

import numpy as np
import pytest

from helpers import toy_batch
from kzoo.corpus import Corpus
from kzoo.corpus.shards import SHARDS_FOLDER, write_manifest, write_shard
from kzoo.pretraining.streams.base import BatchStream

pytestmark = pytest.mark.once


class SentenceStream(BatchStream):
    """Each example: one sentence's first id and its document, plus a
    carried counter and one draw of `rng` (so state covers both)."""

    state_fields = ("counter",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.counter = 0

    def next_example(self):
        ids, document, _, _ = self.walk.next_sentence()
        self.counter += 1
        return {"first": np.array(ids[0]), "document": np.array(document),
                "counter": np.array(self.counter),
                "draw": np.array(self.rng.integers(1 << 30))}

    def finish(self, examples, seed):
        return toy_batch(examples, seed)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    rng = np.random.default_rng(0)
    shards, first = [], 0
    for name, count in (("a", 7), ("b", 0), ("c", 5)):
        docs = []
        for _ in range(count):
            docs.append([[first + s] for s in range(rng.integers(1, 4))])
            first += 100
        shards.append(write_shard(folder / SHARDS_FOLDER, name, docs,
                                  np.uint32))
    write_manifest(folder, {"shards": shards, "tokenizer": {"sha256": "x"}})
    return Corpus(folder)


def _batches(stream, steps, start=0):
    return [stream.batch(step)[0] for step in range(start, start + steps)]


def test_each_document_once_per_epoch_in_a_seeded_order(corpus):
    stream = SentenceStream(corpus, batch_size=1, seed=3)
    documents = [stream.walk.next_document()[0]
                 for _ in range(corpus.num_documents)]
    assert stream.walk.epoch == 0
    assert sorted(documents) == list(range(corpus.num_documents))
    next_epoch = [stream.walk.next_document()[0]
                  for _ in range(corpus.num_documents)]
    assert stream.walk.epoch == 1 and next_epoch != documents
    assert sorted(next_epoch) == sorted(documents)
    again = SentenceStream(corpus, batch_size=1, seed=3)
    assert [again.walk.next_document()[0] for _ in documents] == documents
    other = SentenceStream(corpus, batch_size=1, seed=4)
    assert [other.walk.next_document()[0] for _ in documents] != documents


def test_a_restored_state_makes_the_same_batches(corpus):
    whole = _batches(SentenceStream(corpus, batch_size=4, seed=1), 12)
    first = SentenceStream(corpus, batch_size=4, seed=1)
    _batches(first, 9)
    state = first.state_before(5)
    resumed = SentenceStream(corpus, batch_size=4, seed=1)
    resumed.restore(state)
    for got, want in zip(_batches(resumed, 7, start=5), whole[5:]):
        for key in want:
            np.testing.assert_array_equal(got[key], want[key])


def test_processes_split_each_global_batch(corpus):
    single = _batches(SentenceStream(corpus, batch_size=4, seed=2,
                                     draw_groups=2), 6)
    parts = [_batches(SentenceStream(corpus, batch_size=4, seed=2,
                                     process_index=rank, process_count=2),
                      6) for rank in range(2)]
    for step, want in enumerate(single):
        for key in want:
            np.testing.assert_array_equal(
                np.concatenate([parts[0][step][key], parts[1][step][key]]),
                want[key])


def test_batches_come_in_order(corpus):
    stream = SentenceStream(corpus, batch_size=2)
    stream.batch(0)
    with pytest.raises(ValueError, match="in order"):
        stream.batch(2)
    with pytest.raises(ValueError, match="divide among"):
        SentenceStream(corpus, batch_size=3, process_count=2)
