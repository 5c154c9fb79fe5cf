"""AWD-LSTM's tokenizer rules, preprocessors, language model (tied decoder,
loss over real tokens, perplexity) and ULMFiT classifier (concat pooling,
fastai's head), and the presets."""

import numpy as np
import pytest

import kzoo
from awd_lstm_testing import STAND_IN, TINY, VOCABULARY, padded_inputs
from helpers import (austen_paragraphs, check_preset, check_task,
                     check_task_preset, to_numpy)
from kzoo.models.awd_lstm.text_classifier import ConcatPooling

SMALL = {**TINY, "vocabulary_size": 1000}


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.AwdLstmTokenizer(vocabulary=VOCABULARY)


def test_fastai_rules_and_special_ids(tokenizer):
    words = tokenizer.split(["The BBC said: no, A I."]).to_list()[0]
    assert [w.decode() for w in words] == [
        "xxmaj", "the", "xxup", "bbc", "said", ":", "no", ",", "a", "i",
        "."]
    assert tokenizer.get_vocabulary()[:9] == [
        "xxunk", "xxpad", "xxbos", "xxeos", "xxfld", "xxrep", "xxwrep",
        "xxup", "xxmaj"]
    assert (tokenizer.unk_token_id, tokenizer.pad_token_id,
            tokenizer.bos_token_id) == (0, 1, 2)
    assert tokenizer(["zyzzyva"]) == [[0]]
    plain = kzoo.AwdLstmTokenizer(vocabulary=VOCABULARY, rules=False)
    assert plain(["xxmaj the"]) == [[8, tokenizer.token_to_id("the")]]


def test_preprocessors_pack_bos_and_shift(tokenizer):
    preprocessor = kzoo.AwdLstmPreprocessor(tokenizer, sequence_length=6)
    x = to_numpy(preprocessor(["the end .", "a b c d e f g"]))
    the = tokenizer.token_to_id("the")
    assert x["token_ids"][0].tolist()[:2] == [2, the]
    assert x["padding_mask"].tolist() == [[1, 1, 1, 1, 0, 0], [1] * 6]
    assert x["token_ids"][0, 4:].tolist() == [1, 1]  # xxpad
    lm = kzoo.AwdLstmLanguageModelPreprocessor(tokenizer, sequence_length=6)
    x, y, w = to_numpy(lm(["the end ."]))
    assert x["token_ids"][0, 1:4].tolist() == y[0, :3].tolist()
    assert w.tolist() == [[1, 1, 1, 0, 0, 0]]
    with pytest.raises(ValueError, match="makes its own labels"):
        lm(["the end ."], [1])


def test_language_model_ties_and_trains(tmp_path, tokenizer):
    backbone = kzoo.AwdLstmBackbone(**{**SMALL, "weight_dropout": 0.2})
    preprocessor = kzoo.AwdLstmLanguageModelPreprocessor(tokenizer,
                                                         sequence_length=12)
    lm = kzoo.AwdLstmLanguageModel(backbone, preprocessor=preprocessor)
    # Tied: the decoder adds one bias per token, nothing else.
    assert lm.count_params() == backbone.count_params() + 1000
    texts = austen_paragraphs("pride_and_prejudice", min_words=6)[:16]
    history, _ = check_task(lm, texts, tmp_path=tmp_path)
    assert "perplexity" in history.history


def test_language_model_loss_is_over_real_tokens(tokenizer):
    lm = kzoo.AwdLstmLanguageModel(kzoo.AwdLstmBackbone(**SMALL))
    inputs = padded_inputs(vocabulary_size=1000)
    targets = np.roll(inputs["token_ids"], -1, axis=1)
    weights = np.roll(inputs["padding_mask"], -1, axis=1).astype("float32")
    weights[:, -1] = 0
    logits = to_numpy(lm(inputs, training=False))
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    picked = -np.take_along_axis(log_probs, targets[..., None], -1)[..., 0]
    expected = (picked * weights).sum() / weights.sum()
    lm.compile()
    loss, perplexity = lm.evaluate(inputs, targets, sample_weight=weights,
                                   batch_size=4, verbose=0)
    np.testing.assert_allclose(loss, expected, rtol=1e-5)
    np.testing.assert_allclose(perplexity, np.exp(expected), rtol=1e-4)


def test_concat_pooling_reads_real_tokens_only():
    rng = np.random.default_rng(0)
    sequence = rng.normal(size=(3, 5, 4)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1] * 5, [1, 0, 0, 0, 0]], "int32")
    pooled = to_numpy(ConcatPooling()(sequence, mask))
    for row, length in enumerate((3, 5, 1)):
        real = sequence[row, :length]
        np.testing.assert_allclose(
            pooled[row], np.concatenate([real[-1], real.max(0),
                                         real.mean(0)]), rtol=1e-6)


def test_classifier_head_is_fastais(tmp_path, tokenizer):
    backbone = kzoo.AwdLstmBackbone(**SMALL)
    preprocessor = kzoo.AwdLstmPreprocessor(tokenizer, sequence_length=12)
    classifier = kzoo.AwdLstmTextClassifier(
        backbone, num_classes=3, preprocessor=preprocessor, hidden_dims=[5])
    e = SMALL["embedding_dim"]
    head = classifier.count_params() - backbone.count_params()
    # BatchNorm(3e) -> Dense(3e, 5, no bias) -> BatchNorm(5) -> Dense(5, 3).
    assert head == 4 * 3 * e + 3 * e * 5 + 4 * 5 + 5 * 3
    assert kzoo.training.layer_groups(classifier)[:4] == \
        backbone.layer_groups()
    texts = austen_paragraphs("sense_and_sensibility", min_words=6)[:8]
    check_task(classifier, texts, np.arange(8) % 3, tmp_path=tmp_path)
    # Padding changes nothing: the same text alone and in a longer batch.
    short = classifier.predict(texts[:1], verbose=0)
    both = classifier.predict(texts[:1] + ["a much longer text " * 5],
                              verbose=0)
    np.testing.assert_allclose(to_numpy(short)[0], to_numpy(both)[0],
                               atol=1e-5)


def test_named_preset_is_fastais_wt103():
    preset = check_preset("awd_lstm_wt103_en", kzoo.AwdLstmBackbone)
    config = preset.json("config.json")["config"]
    assert (config["vocabulary_size"], config["embedding_dim"],
            config["lstm_dim"], config["num_layers"]) == (60000, 400, 1152, 3)
    assert preset.metadata["tokenizer"]["vocab.txt"]["remote"]
    assert "wt103-fwd.tgz" in preset.metadata["source"]["url"]


def test_stand_in_preset_round_trip(tmp_path):
    lm = kzoo.AwdLstmLanguageModel.from_preset(
        STAND_IN, load_weights=False, sequence_length=8)
    check_task_preset(lm, tmp_path)
