"""kzoo.MultipleChoice: (context, choices) packing, training on raw text,
presets, linear probing; and sentence-pair regression (STS) with Pearson
and Spearman. (Logits parity with transformers:
tests/convert/test_generic_heads_parity.py.)"""

import os

import keras
import numpy as np
import pytest

import kzoo
from helpers import austen_paragraphs, check_task_preset, make_tiny_bert

CONTEXTS = ["Elizabeth walked to Meryton.", "Mr Darcy wrote a letter.",
            "Jane caught a cold.", "Lydia ran off with Wickham."]
CHOICES = [["She met her aunt.", "She ate the moon.", "She flew home."],
           ["He sealed it.", "He swam in it.", "He sang it."],
           ["She stayed in bed.", "She ran a race.", "She lifted a horse."],
           ["They married.", "They became fish.", "They grew wings."]]
ANSWERS = [0, 0, 0, 0]


def chooser(**kwargs):
    preprocessor = kzoo.MultipleChoicePreprocessor.from_preset(
        "bert_base", sequence_length=16)
    return kzoo.MultipleChoice(make_tiny_bert(), preprocessor=preprocessor,
                               **kwargs)


@pytest.mark.once
def test_pairs_are_packed_per_choice():
    preprocessor = kzoo.MultipleChoicePreprocessor.from_preset(
        "bert_base", sequence_length=16)
    x = preprocessor((CONTEXTS[:2], CHOICES[:2]))
    assert np.asarray(x["token_ids"]).shape == (2, 3, 16)
    pair = kzoo.BertPreprocessor.from_preset("bert_base", sequence_length=16)(
        ([CONTEXTS[1]], [CHOICES[1][2]]))
    for name, value in pair.items():
        np.testing.assert_array_equal(np.asarray(x[name])[1, 2],
                                      np.asarray(value)[0])
    with pytest.raises(ValueError, match="the same number"):
        preprocessor((CONTEXTS[:2], [["a", "b"], ["c"]]))
    with pytest.raises(ValueError, match=r"x = \(contexts, choices\)"):
        preprocessor(CONTEXTS)


@pytest.mark.convergence
def test_fit_lowers_loss_and_round_trips(tmp_path):
    task = chooser()
    # (A tiny random BERT sits on the log(3) plateau for a few steps.)
    task.compile(optimizer=keras.optimizers.Adam(5e-3))
    history = task.fit((CONTEXTS * 2, CHOICES * 2), ANSWERS * 2,
                       batch_size=4, epochs=15, verbose=0)
    losses = history.history["loss"]
    # Measured with scripts/measure_spread.py, torch, seeds 1-5:
    # last/first 0.009 +- 0.006 (0.5: > 80 sd).
    assert losses[-1] < 0.5 * losses[0], losses
    scores = keras.ops.convert_to_numpy(
        task.predict((CONTEXTS, CHOICES), verbose=0))
    assert scores.shape == (4, 3)
    assert list(scores.argmax(-1)) == ANSWERS
    check_task_preset(task, tmp_path)


def test_linear_probing_keeps_backbone_frozen():
    task = chooser(trainable_backbone=False)
    before = [w.numpy().copy() for w in task.backbone.weights]
    head = task.scorer.get_layer("classifier").kernel
    head_before = head.numpy().copy()
    task.fit((CONTEXTS, CHOICES), ANSWERS, batch_size=4, epochs=2,
             verbose=0)
    for value, weight in zip(before, task.backbone.weights):
        np.testing.assert_array_equal(value, weight.numpy())
    assert not np.array_equal(head_before, head.numpy())


@pytest.mark.once
def test_correlations_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    y = x + rng.normal(size=50)
    y[:10] = np.round(y[:10])  # ties
    x[5:15] = 0.0
    assert kzoo.metrics.pearson(x, y) == pytest.approx(
        stats.pearsonr(x, y)[0], abs=1e-12)
    assert kzoo.metrics.spearman(x, y) == pytest.approx(
        stats.spearmanr(x, y)[0], abs=1e-12)
    metric = kzoo.metrics.PearsonCorrelation()
    metric.update_state(x[:20], y[:20])
    metric.update_state(x[20:], y[20:])
    assert float(metric.result()) == pytest.approx(
        stats.pearsonr(x, y)[0], abs=1e-5)


def sts_pairs():
    """Sentence pairs from the bundled novels, scored by a documented
    rule: the Jaccard overlap of their lower-cased word sets (a paragraph
    against itself shuffled, a neighbour, or a far paragraph), so the
    targets spread over [0, 1]."""
    paragraphs = [p for p in austen_paragraphs("pride_and_prejudice", 8)
                  if len(p.split()) <= 40][:48]
    rng = np.random.default_rng(0)
    firsts, seconds, scores = [], [], []
    for i, paragraph in enumerate(paragraphs):
        words = paragraph.split()
        half = list(words)
        rng.shuffle(half)
        for other in (" ".join(half[:len(half) // 2]),
                      paragraphs[(i + 1) % len(paragraphs)]):
            a = set(paragraph.lower().split())
            b = set(other.lower().split())
            firsts.append(paragraph)
            seconds.append(other)
            scores.append(len(a & b) / len(a | b))
    return firsts, seconds, np.asarray(scores, "float32")


@pytest.mark.convergence
def test_sts_regression_head_trains_on_real_pairs():
    firsts, seconds, scores = sts_pairs()
    preprocessor = kzoo.BertPreprocessor.from_preset("bert_base",
                                                     sequence_length=48)
    task = kzoo.BertTextClassifier(make_tiny_bert(), num_classes=1,
                                   problem_type="regression",
                                   preprocessor=preprocessor)
    # (A tiny random BERT predicts the mean for ~10 epochs first.)
    task.compile(optimizer=keras.optimizers.Adam(2e-3),
                 metrics=[kzoo.metrics.PearsonCorrelation()])
    history = task.fit((firsts, seconds), scores, batch_size=16, epochs=20,
                       verbose=0)
    losses = history.history["loss"]
    # Measured with scripts/measure_spread.py, torch, seeds 1-5:
    # loss last/first 0.026 +- 0.007, pearson 0.978 +- 0.008 at the last
    # epoch: both bars are > 50 sd away.
    assert losses[-1] < 0.5 * losses[0], losses
    assert history.history["pearson"][-1] > 0.5
    predicted = keras.ops.convert_to_numpy(
        task.predict((firsts, seconds), verbose=0))[:, 0]
    # Overlap is easy to see for a model reading both texts.
    assert kzoo.metrics.pearson(predicted, scores) > 0.5
    assert kzoo.metrics.spearman(predicted, scores) > 0.5


# ----------------------------------------------------------------------
# Real data: which sentence of a novel comes next?
# ----------------------------------------------------------------------
@pytest.mark.once
def test_next_sentence_choices_are_real_and_reproducible():
    from kzoo.datasets import (austen_next_sentence_choices, austen_paragraphs,
                               austen_sentences)
    examples = austen_next_sentence_choices(["persuasion"])
    assert examples == austen_next_sentence_choices(["persuasion"])
    assert examples != austen_next_sentence_choices(["persuasion"], seed=1)
    text = " ".join(austen_paragraphs("persuasion", min_words=1))
    labels = [e["label"] for e in examples]
    # The right choice's place is uniform over the four.
    assert all(abs(labels.count(k) / len(labels) - 0.25) < 0.04
               for k in range(4))
    for example in examples[:50]:
        choices = example["choices"]
        assert len(set(choices)) == 4 and example["context"] not in choices
        following = choices[example["label"]]
        # The right choice follows its context in the novel.
        assert f"{example['context']} {following}" in text
        for choice in choices:
            assert choice in text
    assert austen_sentences('"Yes!" said Mrs. Bennet. She left.') == [
        '"Yes!" said Mrs. Bennet.', "She left."]


@pytest.mark.large
def test_minilm_picks_the_next_sentence_of_other_novels():
    """all-MiniLM-L6-v2 (real weights) fine-tuned as a multiple-choice
    head on three novels, tested on two others; it must beat chance (25%)
    and the word-overlap rule (`word_overlap_choice`, ~38%) by 10 points.

    KZOO_MC_TRAIN_EXAMPLES (800) and KZOO_MC_EPOCHS (2) shrink the run."""
    from kzoo.datasets import austen_next_sentence_choices, word_overlap_choice
    rng = np.random.default_rng(0)
    train = austen_next_sentence_choices(
        ["pride_and_prejudice", "emma", "sense_and_sensibility"])
    rng.shuffle(train)
    train = train[:int(os.environ.get("KZOO_MC_TRAIN_EXAMPLES", 800))]
    test = austen_next_sentence_choices(["persuasion", "northanger_abbey"])
    rng.shuffle(test)
    test = test[:600]

    def split(examples):
        return (([e["context"] for e in examples],
                 [e["choices"] for e in examples]),
                np.array([e["label"] for e in examples]))
    (train_x, train_y), (test_x, test_y) = split(train), split(test)
    overlap = np.mean([word_overlap_choice(c, ch) == y
                       for c, ch, y in zip(*test_x, test_y)])
    task = kzoo.MultipleChoice.from_preset("all_minilm_l6_v2",
                                           sequence_length=96)
    task.compile(optimizer=keras.optimizers.AdamW(3e-5))
    task.fit(train_x, train_y, batch_size=8, verbose=2,
             epochs=int(os.environ.get("KZOO_MC_EPOCHS", 2)))
    scores = keras.ops.convert_to_numpy(task.predict(test_x, batch_size=16))
    accuracy = np.mean(scores.argmax(-1) == test_y)
    print(f"fine-tuned accuracy {accuracy:.3f}; word overlap {overlap:.3f}; "
          "chance 0.250")
    assert accuracy > overlap + 0.10 and accuracy > 0.35
