"""kzoo.TokenClassifier: word labels aligned to word pieces, training on
raw words, predictions per word, entity scores, presets, linear probing.
(Logits parity with transformers: tests/convert/test_generic_heads_parity.py.)"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import check_task_preset, make_tiny_bert
from roberta_testing import ROBERTA_PRESET

LABELS = ["O", "B-PER", "I-PER", "B-LOC"]
WORDS = [["Elizabeth", "Bennet", "walked", "to", "Meryton"],
         ["Mr", "Darcy", "left", "Netherfield", "today"],
         ["Jane", "stayed", "at", "Longbourn"],
         ["Charlotte", "Lucas", "smiled"]]
TAGS = [["B-PER", "I-PER", "O", "O", "B-LOC"],
        ["O", "B-PER", "O", "B-LOC", "O"],
        ["B-PER", "O", "O", "B-LOC"],
        ["B-PER", "I-PER", "O"]]


def bert_preprocessor(**kwargs):
    return kzoo.TokenClassifierPreprocessor.from_preset(
        "bert_base", **{"sequence_length": 16, **kwargs})


def tagger(**kwargs):
    return kzoo.TokenClassifier(make_tiny_bert(), preprocessor=bert_preprocessor(),
                                label_names=LABELS, **kwargs)


@pytest.mark.once
def test_labels_go_on_first_pieces():
    preprocessor = bert_preprocessor(sequence_length=8)
    # "holmes's" -> holmes ' s: one word, three pieces.
    x, y, w = preprocessor([["Sherlock", "Holmes's", "pipe"]], [[1, 2, 3]])
    ids = np.asarray(x["token_ids"])[0]
    tokens = [preprocessor.tokenizer.id_to_token(int(i)) for i in ids]
    assert tokens[:7] == ["[CLS]", "sherlock", "holmes", "'", "s", "pipe",
                          "[SEP]"]
    np.testing.assert_array_equal(np.asarray(w)[0],
                                  [0, 1, 1, 0, 0, 1, 0, 0])
    assert list(np.asarray(y)[0][[1, 2, 5]]) == [1, 2, 3]
    # Every piece labelled, on request; negative labels carry no loss.
    all_pieces = bert_preprocessor(sequence_length=8, label_all_pieces=True)
    _, y, w = all_pieces([["Sherlock", "Holmes's", "pipe"]], [[1, 2, -100]])
    np.testing.assert_array_equal(np.asarray(w)[0], [0, 1, 1, 1, 1, 0, 0, 0])
    np.testing.assert_array_equal(np.asarray(y)[0][1:5], [1, 2, 2, 2])


@pytest.mark.once
def test_side_values_of_each_piece_survive_truncation():
    """Per packed token: the word it belongs to (in its example and in
    the batch), and whether it is the word's first and last piece; -1 on
    special tokens and padding. A word cut by truncation keeps its first
    piece's flags and loses its last."""
    preprocessor = bert_preprocessor(sequence_length=5)
    preprocessor._ensure_setup()
    words = tf.ragged.constant([["pipe", "Holmes's"], ["Sherlock"]])
    _, side = preprocessor.word_pieces(words)
    # [CLS] pipe holmes ' [SEP] | [CLS] sherlock [SEP] [PAD] [PAD]
    expected = {"word_index": [[-1, 0, 1, 1, -1], [-1, 0, -1, -1, -1]],
                "global_index": [[-1, 0, 1, 1, -1], [-1, 2, -1, -1, -1]],
                "first": [[-1, 1, 1, 0, -1], [-1, 1, -1, -1, -1]],
                "last": [[-1, 1, 0, 0, -1], [-1, 1, -1, -1, -1]]}
    assert {name: np.asarray(value).tolist()
            for name, value in side.items()} == expected


@pytest.mark.once
@pytest.mark.parametrize("names, tags, pieces", [
    # BIO, as transformers' label_all_tokens: B- continues as I-.
    (["O", "B-PER", "I-PER"], ["O", "B-PER", "I-PER"],
     "O B-PER I-PER I-PER I-PER I-PER I-PER"),
    # BIOES: a unit word spreads over B ... E; an end word ends on E.
    (["O", "B-PER", "I-PER", "E-PER", "S-PER"], ["O", "S-PER", "E-PER"],
     "O B-PER I-PER E-PER I-PER I-PER E-PER"),
    # BILOU spells the ends U and L.
    (["O", "B-X", "I-X", "L-X", "U-X"], ["O", "U-X", "B-X"],
     "O B-X I-X L-X B-X I-X I-X"),
    # No continuation among the names: every piece copies its word's tag.
    (["O", "B-PER"], ["O", "B-PER", "B-PER"],
     "O B-PER B-PER B-PER B-PER B-PER B-PER"),
])
def test_all_pieces_continue_the_entity(names, tags, pieces):
    # pipe | holmes ' s | holmes ' s: a one-piece word, two three-piece ones.
    preprocessor = bert_preprocessor(label_all_pieces=True,
                                     label_names=names)
    _, y, w = preprocessor([["pipe", "Holmes's", "Holmes's"]],
                           [[names.index(tag) for tag in tags]])
    scored = np.asarray(w)[0] > 0
    assert [names[i] for i in np.asarray(y)[0][scored]] == pieces.split()


@pytest.mark.once
def test_tagger_hands_its_label_names_to_the_preprocessor():
    preprocessor = bert_preprocessor(label_all_pieces=True)
    kzoo.TokenClassifier(make_tiny_bert(), preprocessor=preprocessor,
                         label_names=LABELS)
    _, y, _ = preprocessor([["Holmes's"]], [[1]])
    assert list(np.asarray(y)[0][1:4]) == [1, 2, 2]
    assert type(preprocessor).from_config(
        preprocessor.get_config()).label_names == LABELS


@pytest.mark.once
def test_bpe_words_are_spelled_as_in_a_sentence():
    """RoBERTa's pieces for words given one by one are its pieces for the
    same words in running text (each word after a space)."""
    preprocessor = kzoo.TokenClassifierPreprocessor.from_preset(
        ROBERTA_PRESET, sequence_length=24)
    words = ["Elizabeth", "walked", "to", "Meryton."]
    x = preprocessor([words])
    text = kzoo.RobertaPreprocessor.from_preset(
        ROBERTA_PRESET, sequence_length=24)([" " + " ".join(words)])
    np.testing.assert_array_equal(np.asarray(x["token_ids"]),
                                  np.asarray(text["token_ids"]))
    assert "segment_ids" not in x


@pytest.mark.once
def test_bad_labels_are_refused():
    task = tagger()
    with pytest.raises(ValueError, match="3 words but 2 labels"):
        task.fit([["a", "b", "c"]], [["O", "O"]], epochs=1)
    with pytest.raises(ValueError, match="unknown label 'B-ORG'"):
        task.fit([["a"]], [["B-ORG"]], epochs=1)
    with pytest.raises(ValueError, match="list of examples, each a list"):
        task.predict_words("Elizabeth walked")


@pytest.mark.convergence
def test_fit_lowers_loss_and_predicts_words(tmp_path):
    task = tagger()
    task.compile(optimizer=keras.optimizers.Adam(3e-3))
    history = task.fit(WORDS * 2, TAGS * 2, batch_size=4, epochs=12,
                       verbose=0)
    losses = history.history["loss"]
    # Measured with scripts/measure_spread.py, torch, seeds 1-5:
    # last/first 0.153 +- 0.009 (0.5: > 30 sd).
    assert losses[-1] < 0.5 * losses[0], losses
    predicted = task.predict_words(WORDS)
    assert [len(p) for p in predicted] == [len(w) for w in WORDS]
    assert predicted == TAGS
    assert task.evaluate_entities(WORDS, TAGS)["f1"] == 1.0
    # Words past the sequence length have no prediction.
    long = [["word"] * 30]
    assert task.predict_words(long)[0][-1] is None
    check_task_preset(task, tmp_path)


def test_linear_probing_keeps_backbone_frozen():
    task = tagger(trainable_backbone=False)
    backbone_before = [w.numpy().copy() for w in task.backbone.weights]
    head_before = task.get_layer("classifier").kernel.numpy().copy()
    task.fit(WORDS, TAGS, batch_size=4, epochs=2, verbose=0)
    for before, after in zip(backbone_before, task.backbone.weights):
        np.testing.assert_array_equal(before, after.numpy())
    assert not np.array_equal(head_before,
                              task.get_layer("classifier").kernel.numpy())
    assert kzoo.TokenClassifier.from_config(task.get_config()) \
        .backbone.trainable is False


@pytest.mark.once
def test_entity_scores_follow_conlleval():
    true = [["B-PER", "I-PER", "O", "B-LOC"], ["B-LOC", "O"]]
    # One person right, one place right, one place missed, one spurious
    # person: P = 2/3, R = 2/3.
    predicted = [["B-PER", "I-PER", "O", "O"], ["B-LOC", "B-PER"]]
    scores = kzoo.metrics.entity_scores(true, predicted)
    assert scores["precision"] == pytest.approx(2 / 3)
    assert scores["recall"] == pytest.approx(2 / 3)
    assert scores["per_type"]["LOC"]["recall"] == pytest.approx(0.5)
    # conlleval reads a stray I- as an entity; strict IOB2 does not.
    stray = [["I-PER", "O"]]
    assert kzoo.metrics.entity_scores(stray, stray)["f1"] == 1.0
    assert kzoo.metrics.entity_scores(stray, stray, scheme="IOB2")["f1"] == 0


@pytest.mark.large
def test_minilm_tags_austen_better_than_capitalised_words():
    """Fine-tuned from all-MiniLM-L6-v2's real weights on the first
    sentences of Pride and Prejudice (`kzoo.datasets.austen_entities`),
    scored on later, held-out chapters against the capitalised-word
    baseline."""
    from kzoo import datasets
    sentences, tags = datasets.austen_entities(max_words=30)
    train = slice(0, 1200)
    test = slice(2000, 2400)
    names = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    task = kzoo.TokenClassifier.from_preset(
        "all_minilm_l6_v2", label_names=names, sequence_length=48)
    task.compile(optimizer=keras.optimizers.Adam(1e-4))
    task.fit(sentences[train], tags[train], batch_size=16, epochs=2,
             verbose=0)
    model = task.evaluate_entities(sentences[test], tags[test])
    baseline = kzoo.metrics.entity_scores(
        tags[test], datasets.capitalised_word_tags(sentences[test]))
    print(f"entity F1: fine-tuned {model['f1']:.3f} vs capitalised-word "
          f"baseline {baseline['f1']:.3f}")
    assert model["f1"] > baseline["f1"] + 0.1, (model, baseline)
