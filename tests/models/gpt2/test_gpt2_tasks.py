"""GPT2CausalLM and GPT2Classifier on raw text: fit, predict, generate,
presets."""

import keras
import numpy as np
import pytest

import kzoo
from gpt2_testing import TINY_GPT2_FULL_VOCAB
from helpers import austen_passages, check_task

END = 50256


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.GPT2Tokenizer.from_preset("gpt2")


def tiny_lm(tokenizer, sequence_length=32):
    preprocessor = kzoo.GPT2CausalLMPreprocessor(
        tokenizer, sequence_length=sequence_length)
    backbone = kzoo.GPT2Backbone(**TINY_GPT2_FULL_VOCAB)
    return kzoo.GPT2CausalLM(backbone, preprocessor=preprocessor)


@pytest.mark.convergence
def test_causal_lm_trains_on_text(tokenizer, tmp_path):
    # Real prose (Pride and Prejudice, tests/data/austen): fit on raw
    # strings lowers the loss of a tiny GPT-2; predict works; a preset
    # round trip keeps everything (helpers.check_task).
    texts = austen_passages("pride_and_prejudice", words=12)[:32]
    lm = tiny_lm(tokenizer, sequence_length=16)
    lm.compile(optimizer=keras.optimizers.Adam(1e-2))
    history, _ = check_task(lm, texts, batch_size=8, epochs=3,
                         tmp_path=tmp_path)
    losses = history.history["loss"]
    assert losses[-1] < losses[0] - 1.5, losses


def test_padding_is_masked_out_of_the_loss(tokenizer):
    # The same text padded to two lengths has the same loss: padding adds
    # nothing and does not dilute the mean.
    lm = tiny_lm(tokenizer, sequence_length=16)
    loss_fn = lm.default_compile_args()["loss"]
    losses = []
    for length in (16, 32):
        preprocessor = kzoo.GPT2CausalLMPreprocessor(
            tokenizer, sequence_length=length)
        x, y, weights = preprocessor(["Hello world, and good day."])
        losses.append(float(keras.ops.convert_to_numpy(
            loss_fn(y, lm(x, training=False), weights))))
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)


def test_generate_text(tokenizer):
    lm = tiny_lm(tokenizer)
    single = lm.generate("It is a truth", max_length=12)
    assert isinstance(single, str) and single.startswith("It is a truth")
    batch = lm.generate(["It is a truth", "Mr. Bennet"], max_new_tokens=5,
                        stop_token_ids=None)
    assert [t[:len(p)] for t, p in zip(batch, ["It is a truth",
                                               "Mr. Bennet"])] == \
        ["It is a truth", "Mr. Bennet"]
    new = lm.generate(["It is a truth", "Mr. Bennet"], max_new_tokens=5,
                      stop_token_ids=None, strip_prompt=True)
    assert [p + n for p, n in zip(["It is a truth", "Mr. Bennet"], new)] \
        == batch
    # Token ids in, token ids out: the start token, the prompt, 5 more.
    ids = lm.generate([END, 1026, 318], max_new_tokens=5, stop_token_ids=None)
    assert ids[:3] == [END, 1026, 318] and len(ids) == 8


def test_classifier_task_contract(tokenizer, tmp_path):
    preprocessor = kzoo.GPT2Preprocessor(tokenizer, sequence_length=24)
    classifier = kzoo.GPT2Classifier(
        kzoo.GPT2Backbone(**TINY_GPT2_FULL_VOCAB), num_classes=2,
        preprocessor=preprocessor)
    texts = austen_passages("pride_and_prejudice", words=12)[:8]
    labels = np.array([0, 1] * 4)
    check_task(classifier, texts, labels, tmp_path=tmp_path)
    pairs = (texts, texts[::-1])
    logits = classifier.predict(pairs, batch_size=4, verbose=0)
    assert logits.shape == (8, 2) and np.all(np.isfinite(logits))


def test_classifier_reads_the_last_real_token(tokenizer):
    classifier = kzoo.GPT2Classifier(
        kzoo.GPT2Backbone(**TINY_GPT2_FULL_VOCAB), num_classes=3)
    token_ids = np.array([[10, 11, 12, 0, 0], [10, 11, 12, 13, 14]], "int32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], "int32")
    out = classifier.predict({"token_ids": token_ids, "padding_mask": mask},
                             verbose=0)
    # Row 0 equals the classification of its unpadded prefix.
    alone = classifier.predict({"token_ids": token_ids[:1, :3],
                                "padding_mask": mask[:1, :3]}, verbose=0)
    np.testing.assert_allclose(out[0], alone[0], atol=1e-5)


def test_preprocessor_from_every_preset():
    for name in ("gpt2", "gpt2_medium_en", "gpt2_large_en",
                 "gpt2_extra_large_en"):
        preprocessor = kzoo.GPT2CausalLMPreprocessor.from_preset(
            name, sequence_length=16)
        assert preprocessor.sequence_length == 16
        assert preprocessor.tokenizer.vocabulary_size == 50257


def test_generation_under_mixed_bfloat16(tokenizer):
    # The KV cache is made in the backbone's compute dtype (bfloat16) and
    # the logits reach the sampler in float32: with the same weights, a
    # tiny model's greedy continuation is float32's.
    preprocessor = kzoo.GPT2CausalLMPreprocessor(tokenizer,
                                                 sequence_length=16)
    float32 = kzoo.GPT2CausalLM(kzoo.GPT2Backbone(**TINY_GPT2_FULL_VOCAB),
                                preprocessor=preprocessor)
    mixed = kzoo.GPT2CausalLM(
        kzoo.GPT2Backbone(**TINY_GPT2_FULL_VOCAB, dtype="mixed_bfloat16"),
        preprocessor=preprocessor)
    mixed.set_weights(float32.get_weights())
    assert mixed.backbone.compute_dtype == "bfloat16"
    prompt = ["It is a truth universally"]
    expected = float32.generate(prompt, max_length=14)
    assert mixed.generate(prompt, max_length=14) == expected
    assert len(expected[0]) > len(prompt[0])
