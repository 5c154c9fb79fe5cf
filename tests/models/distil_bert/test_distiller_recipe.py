"""The DistilBERT recipe's masking and clipping, against Hugging Face's
`examples/research_projects/distillation` (train.py, distiller.py):

- `token_probs = np.maximum(counts, 1) ** -mlm_smoothing` (0.7), special
  tokens 0;
- `prepare_batch_mlm`: `ceil(mlm_mask_prop * lengths.sum())` positions of
  the whole batch, drawn without replacement with probability
  proportional to `token_probs` (`torch.multinomial(...,
  replacement=False)`: successive weighted draws);
- `clip_grad_norm_(student.parameters(), max_grad_norm=5.0)` before each
  update.
"""

import itertools
import math

import keras
import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import austen_passages, make_tiny_bert, to_numpy
from kzoo.core.arguments import ArgumentError
from kzoo.models.distil_bert.smoothed_masking import (SmoothedMasker,
                                                      count_tokens,
                                                      token_probabilities)

# The Distiller is not a registered task, so the cross-backend check does
# not cover its step: its tests run in every backend's pass.
pytestmark = pytest.mark.every_backend

SEQ = 16


@pytest.fixture(scope="module")
def teacher():
    # No dropout: two students given the same batch take the same step.
    preprocessor = kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_tiny_en_uncased", sequence_length=SEQ)
    return kzoo.BertMaskedLM(
        make_tiny_bert(dropout=0.0, attention_dropout=0.0),
        preprocessor=preprocessor)


@pytest.fixture(scope="module")
def texts():
    return austen_passages("pride_and_prejudice", words=12)[:24]


@pytest.mark.once
def test_token_probabilities_are_the_recipes_formula():
    # np.maximum(counts, 1) ** -0.7, by hand: a count of 0 or 1 weighs 1,
    # 10 ** -0.7 = 0.19952623, 100 ** -0.7 = 0.03981072, 1000 ** -0.7 =
    # 0.00794328, 3 ** -0.7 = 0.46346306; the special ids (0 and 5) 0.
    counts = [7, 0, 1, 10, 100, 3, 1000, 3]
    weights = token_probabilities(counts, 0.7, special_token_ids=[0, 5])
    np.testing.assert_allclose(
        weights, [0.0, 1.0, 1.0, 0.19952623, 0.03981072, 0.0, 0.00794328,
                  0.46346306], rtol=1e-6)
    # mlm_smoothing=0: every token alike.
    np.testing.assert_array_equal(token_probabilities([4, 9, 0], 0.0),
                                  [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="finite and >= 0"):
        token_probabilities([1, -2, 3])
    with pytest.raises(ValueError, match="one count per token id"):
        token_probabilities([[1, 2]])
    with pytest.raises(ValueError, match="mlm_smoothing must be"):
        token_probabilities([1, 2], mlm_smoothing=-1)


def _inclusion_probabilities(weights, draws):
    """P(position i is among `draws` successive weighted draws without
    replacement), exactly: the sum over every ordered sequence of draws of
    prod(w_i / weight left). torch.multinomial(replacement=False) draws
    so."""
    probabilities = np.zeros(weights.size)
    for sequence in itertools.permutations(np.flatnonzero(weights > 0),
                                           draws):
        p, left = 1.0, weights.sum()
        for i in sequence:
            p *= weights[i] / left
            left -= weights[i]
        probabilities[list(sequence)] += p
    return probabilities


@pytest.mark.once
def test_masks_are_drawn_over_the_batch_as_the_recipe_draws():
    # Ids 0-3: [PAD], [CLS], [SEP], [MASK]; 4-7: a, b, c, d seen 0, 10,
    # 100 and 3 times. Two rows, 4 + 5 real tokens: the batch's budget is
    # ceil(0.15 * 9) = 2 masks, for both rows together.
    probabilities = token_probabilities([50, 50, 50, 0, 0, 10, 100, 3], 0.7,
                                        special_token_ids=[0, 1, 2, 3])
    ids = np.array([[1, 4, 5, 2, 0], [1, 6, 7, 7, 2]], "int32")
    padding = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], "int32")
    expected = _inclusion_probabilities(
        (probabilities[ids] * padding).reshape(-1), 2).reshape(2, 5)
    # a: 0.7684, b: 0.2229, c: 0.0460, each d: 0.4813 (per-row budgets
    # would give each row exactly one mask instead).
    np.testing.assert_allclose(expected[0, 1:3], [0.7684, 0.2229],
                               atol=1e-4)
    masker = SmoothedMasker(probabilities, mask_token_id=3, sequence_length=5,
                            seed=0)
    draw = tf.function(lambda: masker(ids, padding))
    draws = 3000
    frequency = np.zeros((2, 5))
    for _ in range(draws):
        masked, positions, original, weights = to_numpy(draw())
        real = weights > 0
        assert real.sum() == 2  # the batch's budget, exactly
        for row in range(2):
            chosen = positions[row][real[row]]
            frequency[row, chosen] += 1
            # The targets are the ids that were there; the rest of the
            # row is left as it was.
            np.testing.assert_array_equal(original[row][real[row]],
                                          ids[row, chosen])
            untouched = np.ones(5, bool)
            untouched[chosen] = False
            np.testing.assert_array_equal(masked[row][untouched],
                                          ids[row][untouched])
    frequency /= draws
    # Never a special token or padding.
    assert frequency[ids <= 3].sum() == 0
    # Measured spread (seeds 0-4, 3000 draws each): the largest
    # |frequency - exact| over the positions was 0.012, 0.008, 0.010,
    # 0.005, 0.016; a position's binomial sd is at most 0.0091. The bar,
    # 0.04, is 4.4 binomial sd and 6 sd of the measured maxima (mean
    # 0.010, sd 0.004) away.
    assert np.abs(frequency - expected).max() < 0.04, (frequency, expected)


@pytest.mark.once
def test_token_counts_are_the_corpus_counts(teacher, texts):
    tokenizer = teacher.preprocessor.tokenizer
    ids = np.concatenate([np.asarray(row, "int64")
                          for row in tokenizer.tokenize(texts)])
    expected = np.bincount(ids, minlength=tokenizer.vocabulary_size)
    np.testing.assert_array_equal(count_tokens(texts, tokenizer), expected)
    dataset = tf.data.Dataset.from_tensor_slices(texts)
    np.testing.assert_array_equal(count_tokens(dataset.batch(5), tokenizer),
                                  expected)
    np.testing.assert_array_equal(count_tokens(dataset, tokenizer), expected)
    with pytest.raises(ValueError, match="infinite"):
        count_tokens(dataset.repeat(), tokenizer)


def test_defaults_are_the_recipes(teacher, texts):
    student = kzoo.init_student_from_teacher(teacher)
    distiller = kzoo.Distiller(teacher, student)
    assert (distiller.mlm_smoothing, distiller.max_grad_norm) == (0.7, 5.0)
    distiller.compile()
    assert distiller.optimizer.global_clipnorm == 5.0
    # Fit on in-memory text counts it: the recipe's corpus counts.
    tokenizer = student.preprocessor.tokenizer
    history = distiller.fit(texts, epochs=1, batch_size=8, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    np.testing.assert_array_equal(distiller.token_counts,
                                  count_tokens(texts, tokenizer))
    # Masks: ceil(15%) of each batch's real tokens, never a special one,
    # where the rare tokens are likelier.
    x, y, weights = to_numpy(distiller.preprocessor(texts[:8]))
    assert x["mask_positions"].shape == (8, SEQ)
    assert weights.sum() == math.ceil(0.15 * x["padding_mask"].sum())
    special = np.isin(y[weights > 0], tokenizer.special_token_ids)
    assert not special.any()
    parts = distiller.distillation_losses(x, y, distiller(x), weights)
    assert all(np.isfinite(float(to_numpy(v))) for v in parts.values())


def test_token_counts_are_needed_for_a_dataset(teacher, texts):
    student = kzoo.init_student_from_teacher(teacher)
    distiller = kzoo.Distiller(teacher, student)
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(8)
    with pytest.raises(ValueError, match="count them first"):
        distiller.fit(dataset, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="token_counts"):
        distiller.preprocessor(texts[:2])
    distiller.set_token_counts(distiller.count_tokens(texts))
    history = distiller.fit(dataset, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    # mlm_smoothing=None: the student's preprocessor masks, as BERT (per
    # row), no counts needed.
    plain = kzoo.Distiller(teacher, student, mlm_smoothing=None)
    assert plain.preprocessor is student.preprocessor
    assert plain.token_counts is None


def test_bad_recipe_arguments_are_refused(teacher):
    student = kzoo.init_student_from_teacher(teacher)
    with pytest.raises(ArgumentError, match="mlm_smoothing"):
        kzoo.Distiller(teacher, student, mlm_smoothing=-0.7)
    with pytest.raises(ArgumentError, match="max_grad_norm"):
        kzoo.Distiller(teacher, student, max_grad_norm=0.0)
    with pytest.raises(ArgumentError, match=r"token_counts .*\(30522,\)"):
        kzoo.Distiller(teacher, student, token_counts=np.ones(100))
    with pytest.raises(ArgumentError, match="token_counts"):
        kzoo.Distiller(teacher, student,
                       token_counts=-np.ones(30522, "int64"))
    whole_words = kzoo.DistilBertMaskedLM(
        student.backbone, preprocessor=kzoo.DistilBertMaskedLMPreprocessor(
            student.preprocessor.tokenizer, sequence_length=SEQ,
            masking="whole_word"))
    with pytest.raises(ArgumentError, match="mlm_smoothing=None"):
        kzoo.Distiller(teacher, whole_words)
    clipping = kzoo.Distiller(teacher, student, token_counts=np.ones(30522))
    with pytest.raises(ValueError, match="clips already"):
        clipping.compile(optimizer=keras.optimizers.Adam(clipnorm=1.0))


def test_gradients_are_clipped_to_max_grad_norm(teacher, texts):
    """One SGD step of rate 1 moves the student by its gradient: by the
    gradient's global norm R without clipping, by R * min(1, c / (R +
    1e-6)) with max_grad_norm=c (torch's clip_grad_norm_), on every
    backend. (c relative to R: the random teacher's R differs by
    backend.)"""
    counts = count_tokens(texts, teacher.preprocessor.tokenizer)

    def step(max_grad_norm):
        # Students made alike (every weight copied from the teacher).
        student = kzoo.init_student_from_teacher(teacher)
        distiller = kzoo.Distiller(teacher, student, token_counts=counts,
                                   max_grad_norm=max_grad_norm, seed=0)
        distiller.compile(optimizer=keras.optimizers.SGD(learning_rate=1.0))
        before = [to_numpy(w.value) for w in distiller.trainable_weights]
        distiller.train_on_batch(*batch)
        after = [to_numpy(w.value) for w in distiller.trainable_weights]
        return math.sqrt(sum(float(((a - b).astype("float64") ** 2).sum())
                             for a, b in zip(after, before)))

    # One masked batch for both students.
    maker = kzoo.Distiller(teacher, kzoo.init_student_from_teacher(teacher),
                           token_counts=counts, seed=0)
    x, y, weights = to_numpy(maker.preprocessor(texts[:8]))
    batch = (x, y, weights)
    raw = step(None)
    assert raw > 0.1
    for max_grad_norm in (0.5 * raw, 2.0 * raw):  # clipped; left alone
        expected = raw * min(1.0, max_grad_norm / (raw + 1e-6))
        np.testing.assert_allclose(step(max_grad_norm), expected,
                                   rtol=1e-4)
