"""`kzoo pretrain` prints the held-out loss beside the corpus' unigram
entropy at each evaluation, and warns while the model does no better than
word frequencies (the plateau a from-scratch run can stay on). The
entropy is checked against the definition computed here by hand; the
warning on a tiny model two steps from random weights, whose held-out
loss (about ln 30,522 = 10.3) is far above any unigram entropy of a few
hundred distinct pieces."""

import collections
import math

import pytest

import pretraining_testing
from kzoo.corpus import Corpus
from kzoo.pretraining.callbacks import (PLATEAU_MARGIN, plateau_report,
                                        unigram_entropy)
from kzoo.pretraining.run import pretrain

pytestmark = pytest.mark.once


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("plateau")
    preset = pretraining_testing.make_mlm_preset(root / "preset")
    corpus = pretraining_testing.prepare_text_corpus(
        root / "corpus", preset, validation_documents=2)
    return root, str(preset), str(corpus)


def test_unigram_entropy_is_that_of_the_training_tokens(tiny):
    _, _, corpus = tiny
    shards = Corpus(corpus).shards
    counts = collections.Counter(
        int(token) for shard in shards for token in shard.tokens)
    total = sum(counts.values())
    expected = -sum(n / total * math.log(n / total)
                    for n in counts.values())
    assert unigram_entropy(shards) == pytest.approx(expected, rel=1e-12)


def test_each_evaluation_prints_the_loss_beside_the_entropy_and_warns(
        tiny, capsys):
    root, preset, corpus = tiny
    summary = pretrain(preset, corpus, root / "run", objective="mlm",
                       from_scratch=True, max_steps=4, batch_size=4,
                       sequence_length=32, checkpoint_every=2, eval_every=2,
                       eval_batches=1, learning_rate=1e-3, warmup_steps=1,
                       seed=0, verbose=0)
    printed = capsys.readouterr().out
    entropy = unigram_entropy(Corpus(corpus).shards)
    lines = [line for line in printed.splitlines()
             if "held-out loss" in line]
    # Steps 2 and 4: the second is the end's evaluation.
    assert [line.split(" at step ")[1].split(";")[0]
            for line in lines] == ["2", "4"]
    assert f"unigram entropy {entropy:.3f} nats" in lines[-1]
    final = summary["evaluation"]["eval_loss"]
    assert f"held-out loss {final:.3f} nats" in lines[-1]
    assert final > entropy + 1  # still on (above) the plateau
    assert printed.count("warning: the model predicts no better than "
                         "word frequencies") == 2


def test_no_warning_once_the_loss_is_below_the_plateau():
    assert "warning" not in plateau_report(3.0, 6.0, 100)
    assert "(3.000 below it)" in plateau_report(3.0, 6.0, 100)
    assert "(0.500 above it)" in plateau_report(6.5, 6.0, 100)
    assert "warning" not in plateau_report(6.0 - PLATEAU_MARGIN - 1e-3,
                                           6.0, 100)
    assert "warning" in plateau_report(6.0 - PLATEAU_MARGIN + 1e-3, 6.0, 1)
    assert "warning" in plateau_report(6.5, 6.0, 1)
