"""Masked-LM masking statistics (BERT: select 15%; of those 80% [MASK],
10% random, 10% unchanged), measured over 2000 sequences of real text."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import AUSTEN_NOVELS, austen_text, to_numpy

# The text pipeline runs in TensorFlow ops on every backend: checked in
# one backend's pass (KZOO_ONCE_BACKEND) only.
pytestmark = pytest.mark.once

SEQ = 128
NUM_SEQUENCES = 2000
MASK, CLS, SEP, PAD, UNK = 103, 101, 102, 0, 100
SPECIAL = [PAD, UNK, CLS, SEP, MASK]


def windows(num, words=110, stride=7):
    """`num` overlapping 110-word windows of the two excerpts: long
    enough to fill 128 tokens, so every row has the same selectable
    count."""
    tokens = " ".join(austen_text(n) for n in AUSTEN_NOVELS).split()
    starts = range(0, len(tokens) - words, stride)
    result = [" ".join(tokens[s:s + words]) for s in starts]
    assert len(result) >= num, len(result)
    return result[:num]


@pytest.fixture(scope="module")
def preprocessor():
    return kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_base_en_uncased", sequence_length=SEQ)


@pytest.fixture(scope="module")
def masked(preprocessor):
    """One pass of masking over the texts, in tf.data as fit does."""
    texts = windows(NUM_SEQUENCES)
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(500)
    original = np.concatenate([
        to_numpy(preprocessor.pack(batch)["token_ids"]) for batch in dataset])
    parts = [to_numpy(batch) for batch in dataset.map(preprocessor)]
    x = {k: np.concatenate([p[0][k] for p in parts]) for k in parts[0][0]}
    y = np.concatenate([p[1] for p in parts])
    weights = np.concatenate([p[2] for p in parts])
    return original, x, y, weights


def selections(masked):
    """(row, position, original id, masked id) of every real selection."""
    original, x, y, weights = masked
    rows, slots = np.nonzero(weights > 0)
    positions = x["mask_positions"][rows, slots]
    return (rows, positions, original[rows, positions],
            x["token_ids"][rows, positions], y[rows, slots])


def test_fifteen_percent_of_selectable_tokens(masked):
    original, x, y, weights = masked
    selectable = ~np.isin(original, SPECIAL)
    assert selectable.sum(axis=1).min() > 100  # rows really are full
    rate = weights.sum() / selectable.sum()
    # tf-text selects ceil(15% of the row): a hair above 0.15 at 126
    # selectable tokens. 20% (or 10%) would be far outside.
    assert 0.145 <= rate <= 0.160, rate
    per_row = weights.sum(axis=1) / selectable.sum(axis=1)
    assert per_row.min() > 0.10 and per_row.max() < 0.20


def test_eighty_ten_ten(masked):
    _, _, original_ids, masked_ids, labels = selections(masked)
    total = len(original_ids)
    assert total > 30000
    to_mask = np.mean(masked_ids == MASK)
    unchanged = np.mean(masked_ids == original_ids)
    to_random = np.mean((masked_ids != MASK) & (masked_ids != original_ids))
    assert abs(to_mask - 0.80) < 0.015, to_mask
    assert abs(to_random - 0.10) < 0.015, to_random
    assert abs(unchanged - 0.10) < 0.015, unchanged
    # Random replacements come from the whole vocabulary, not one id.
    replaced = masked_ids[(masked_ids != MASK) & (masked_ids != original_ids)]
    assert len(np.unique(replaced)) > 0.8 * len(replaced)


def test_labels_are_the_original_ids(masked):
    _, _, original_ids, _, labels = selections(masked)
    np.testing.assert_array_equal(labels, original_ids)


def test_special_tokens_never_selected(masked):
    _, _, original_ids, _, _ = selections(masked)
    assert not np.isin(original_ids, SPECIAL).any()


def test_unselected_tokens_untouched(masked):
    original, x, _, weights = masked
    touched = np.zeros_like(original, dtype=bool)
    rows, slots = np.nonzero(weights > 0)
    touched[rows, x["mask_positions"][rows, slots]] = True
    np.testing.assert_array_equal(x["token_ids"][~touched],
                                  original[~touched])
    # The padding mask is the packer's (masking happens after packing).
    np.testing.assert_array_equal(x["padding_mask"],
                                  (original != PAD).astype("int32"))


def epoch_masks(preprocessor, texts, epochs=2, parallel=True):
    """mask_positions of each pass over one tf.data pipeline."""
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(32).map(
        preprocessor, num_parallel_calls=tf.data.AUTOTUNE if parallel else None)
    return [np.concatenate([to_numpy(batch)[0]["mask_positions"]
                            for batch in dataset]) for _ in range(epochs)]


def test_masks_differ_across_epochs():
    # Dynamic masking: each pass over the dataset draws fresh masks, also
    # when the program set a global seed (as training scripts do; TF's
    # stateful random ops would then restart every epoch).
    keras.utils.set_random_seed(42)
    preprocessor = kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_base_en_uncased", sequence_length=SEQ)
    epoch_1, epoch_2 = epoch_masks(preprocessor, windows(64))
    differing_rows = np.mean(np.any(epoch_1 != epoch_2, axis=1))
    assert differing_rows > 0.9, differing_rows


def test_masks_reproducible_with_a_seed():
    # Sequential map only: with parallel calls, which batch draws which
    # random numbers depends on thread timing (as for any stateful random
    # op in tf.data).
    texts = windows(64)
    runs = []
    for _ in range(2):
        keras.utils.set_random_seed(42)
        preprocessor = kzoo.BertMaskedLMPreprocessor.from_preset(
            "bert_base_en_uncased", sequence_length=SEQ)
        runs.append(epoch_masks(preprocessor, texts, parallel=False))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_rates_are_configurable():
    preprocessor = kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_base_en_uncased", sequence_length=SEQ,
        mask_selection_rate=0.3, mask_selection_length=64,
        mask_token_rate=1.0, random_token_rate=0.0)
    texts = windows(200)
    x, _, weights = to_numpy(preprocessor(texts))
    assert 0.29 <= weights.sum() / (200 * (SEQ - 2)) <= 0.31
    rows, slots = np.nonzero(weights > 0)
    assert np.all(x["token_ids"][rows, x["mask_positions"][rows, slots]]
                  == MASK)
