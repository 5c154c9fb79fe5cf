"""kzoo.ElmoTokenTagger: word labels on ELMo's own word positions,
padding and truncation, predictions per word, training on the bundled
entity data, presets."""

import keras
import numpy as np
import pytest

import kzoo
import kzoo.datasets
from elmo_testing import TINY_ELMO, VOCABULARY
from helpers import check_task_preset, to_numpy
from kzoo.metrics import entity_scores

LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
WORDS = [["Elizabeth", "Bennet", "walked", "to", "Meryton"],
         ["Jane", "stayed"]]
TAGS = [["B-PER", "I-PER", "O", "O", "B-LOC"], ["B-PER", "O"]]


def preprocessor(sequence_length=8):
    return kzoo.ElmoTokenTaggerPreprocessor(
        kzoo.ElmoTokenizer(vocabulary=VOCABULARY),
        sequence_length=sequence_length)


def tagger(sequence_length=8, **kwargs):
    return kzoo.ElmoTokenTagger(kzoo.ElmoBackbone(**TINY_ELMO),
                                preprocessor=preprocessor(sequence_length),
                                label_names=LABELS, **kwargs)


@pytest.mark.once
def test_labels_sit_on_their_words():
    # Length 5: <S>, three words, </S>; the second example's last two
    # words are cut off; its third word has no label (negative id).
    x, y, w = to_numpy(preprocessor(5)(
        [["Jane", "smiled"], ["Mr", "Darcy", "left", "Rosings", "today"]],
        [[1, 0], [0, 1, -1, 3, 0]]))
    np.testing.assert_array_equal(y, [[0, 1, 0, 0, 0], [0, 0, 1, 0, 0]])
    np.testing.assert_array_equal(w, [[0, 1, 1, 0, 0], [0, 1, 1, 0, 0]])
    np.testing.assert_array_equal(x["padding_mask"],
                                  [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    # The words are where the labels say: ELMo's tokens are the words.
    plain = to_numpy(kzoo.ElmoPreprocessor(
        preprocessor().tokenizer, sequence_length=5)(["Jane smiled",
                                                      "Mr Darcy left"]))
    np.testing.assert_array_equal(x["character_ids"], plain["character_ids"])
    # Sample weights scale each example's words.
    _, _, w = to_numpy(preprocessor(5)([["Jane", "smiled"]], [[1, 0]],
                                       np.array([0.5])))
    np.testing.assert_array_equal(w, [[0, 0.5, 0.5, 0, 0]])


@pytest.mark.once
def test_tf_data_examples_pack_as_batches():
    import tensorflow as tf
    p = preprocessor(6)
    words = tf.ragged.constant(WORDS)
    labels = tf.ragged.constant([[1, 2, 0, 0, 3], [1, 0]])
    batched = next(iter(tf.data.Dataset.from_tensor_slices(
        (words, labels)).ragged_batch(2).map(p)))
    single = next(iter(tf.data.Dataset.from_tensor_slices(
        (words, labels)).map(p).batch(2)))
    eager = to_numpy(p(WORDS, [[1, 2, 0, 0, 3], [1, 0]]))
    for packed in (batched, single):
        packed = tf.nest.map_structure(lambda t: t.numpy(), packed)
        for got, want in zip(tf.nest.flatten(packed), tf.nest.flatten(eager)):
            np.testing.assert_array_equal(got, want)


@pytest.mark.convergence
def test_fit_lowers_the_loss_on_austen_entities(tmp_path):
    keras.utils.set_random_seed(0)
    words, tags = kzoo.datasets.austen_entities(max_words=10)
    words, tags = words[:64], tags[:64]
    task = tagger(sequence_length=12)
    task.compile(optimizer=keras.optimizers.Adam(1e-2))
    before = task.evaluate(words, tags, verbose=0, return_dict=True)["loss"]
    task.fit(words, tags, epochs=3, batch_size=32, verbose=0)
    after = task.evaluate(words, tags, verbose=0, return_dict=True)["loss"]
    assert after < 0.7 * before
    # A label per word, None past the sequence length (room for 10).
    predicted = task.predict_words(WORDS + [words[0] + ["x"] * 12])
    assert [len(row) for row in predicted] == [5, 2, len(words[0]) + 12]
    assert predicted[2][10:] == [None] * (len(predicted[2]) - 10)
    assert all(label in LABELS for label in predicted[0] + predicted[1])
    scores = task.evaluate_entities(WORDS, TAGS)
    assert scores == entity_scores(TAGS, predicted[:2])
    loaded = check_task_preset(task, tmp_path)
    np.testing.assert_allclose(to_numpy(loaded.predict(WORDS, verbose=0)),
                               to_numpy(task.predict(WORDS, verbose=0)),
                               atol=1e-6)


def test_frozen_backbone_trains_only_the_head():
    task = tagger()
    task.backbone.trainable = False
    names = sorted(v.path for v in task.trainable_variables)
    assert names == ["classifier/bias", "classifier/kernel",
                     "scalar_mix/gamma", "scalar_mix/layer_weights"]


@pytest.mark.once
def test_bad_labels_are_refused():
    with pytest.raises(ValueError, match="2 words but 1 labels"):
        preprocessor()([["Jane", "smiled"]], [[1]])
    with pytest.raises(ValueError, match="ElmoTokenTagger: num_classes"):
        kzoo.ElmoTokenTagger(kzoo.ElmoBackbone(**TINY_ELMO), num_classes=0)
    with pytest.raises(ValueError, match="unknown label 'B-ORG'"):
        tagger().fit([["Jane"]], [["B-ORG"]], verbose=0)


@pytest.mark.large
def test_beats_the_capitalised_word_baseline_on_held_out_sentences():
    """Trained from scratch on the first 512 sentences, scored on the last
    200: entity F1 above the capitalised-word rule's (jax: 0.79 vs
    0.60)."""
    keras.utils.set_random_seed(0)
    words, tags = kzoo.datasets.austen_entities(max_words=20)
    config = dict(TINY_ELMO, projection_dim=16, lstm_dim=32,
                  filters=[[1, 8], [2, 16], [3, 16]])
    task = kzoo.ElmoTokenTagger(kzoo.ElmoBackbone(**config),
                                preprocessor=preprocessor(22),
                                label_names=LABELS, dropout=0.0)
    task.compile(optimizer=keras.optimizers.Adam(1e-2))
    task.fit(words[:512], tags[:512], epochs=6, batch_size=32, verbose=0)
    held_out_words, held_out_tags = words[-200:], tags[-200:]
    model = task.evaluate_entities(held_out_words, held_out_tags,
                                   batch_size=200)["f1"]
    baseline = entity_scores(
        held_out_tags,
        kzoo.datasets.capitalised_word_tags(held_out_words))["f1"]
    assert model > baseline + 0.05, (model, baseline)
