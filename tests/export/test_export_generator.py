"""Exported generators (`Task.export` of a task that generates,
`kzoo.core.export_generator`): a tiny random GPT-2, BART and T5, each
with generation settings in its `generation_config` (n-gram blocking,
minimum lengths, a forced first token, beam search for BART), exported
and loaded with `tf.saved_model.load` in one fresh interpreter that never
imports kzoo (nor keras-hub). From a batch of prompts of different
lengths the SavedModel returns the token ids and the text that kzoo's own
`generate` makes with the same settings, with and without
`max_new_tokens`; a prompt with no room left fails with a message.

`generate` is checked first to give each prompt different new tokens (a
generator that ignored its prompts could not pass) and to change with the
settings (one that ignored them could not either). TensorFlow exports
every family; JAX (jax2tf) GPT-2 and T5, greedy, and refuses beam search
with the way out; torch refuses with the way out."""

import json
import os
import subprocess
import sys

import keras
import pytest

import kzoo
from bart_testing import BART_PRESET, make_tiny_bart
from gpt2_testing import TINY_GPT2_FULL_VOCAB
from kzoo.core.export import ExportError
from t5_testing import T5_PRESET, make_tiny_t5

EXPORTS = keras.backend.backend() != "torch"
# Different lengths (the empty one included) in one batch.
PROMPTS = ["It is a truth universally acknowledged", "Mr. Bennet said",
           "", "She smiled."]
LIMIT = 3  # max_new_tokens of the second endpoint

# Runs in a fresh interpreter: TensorFlow and tf-text only.
LOADER = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  registers the tokenizers' ops
cases = json.load(open(sys.argv[1]))
results = {}


def rows(outputs):
    ids, mask = outputs["token_ids"].numpy(), outputs["padding_mask"].numpy()
    # A tiny random model's tokens may end inside a character: replaced,
    # as generate does.
    texts = outputs["texts"].numpy()
    return {"texts": [t.decode("utf-8", errors="replace") for t in texts],
            "token_ids": [r[m].tolist() for r, m in zip(ids, mask)]}


for name, case in cases.items():
    served = tf.saved_model.load(case["path"])
    prompts = tf.constant(case["prompts"])
    # TensorFlow Serving's endpoint: `generate`'s function (not run
    # again: its first call costs seconds), the prompts alone in.
    default = served.signatures["serving_default"]
    results[name] = {
        "generate": rows(served.generate(prompts)),
        "limited": rows(served.generate_max_new_tokens(
            prompts, tf.constant(case["limit"]))),
        "default": [sorted(default.structured_input_signature[1]),
                    sorted(default.structured_outputs)]}
    if case.get("too_long"):
        try:
            served.generate(tf.constant([case["too_long"]]))
            results[name]["too_long"] = "no error"
        except tf.errors.InvalidArgumentError as error:
            results[name]["too_long"] = error.message
results["imported"] = sorted(m for m in ("kzoo", "keras_hub")
                             if m in sys.modules)
json.dump(results, open(sys.argv[2], "w"))
"""


def _gpt2():
    keras.utils.set_random_seed(1)
    tokenizer = kzoo.GPT2Tokenizer.from_preset("gpt2")
    preprocessor = kzoo.GPT2CausalLMPreprocessor(tokenizer,
                                                 sequence_length=12)
    # One layer: the loop is traced and compiled three times (export,
    # generate with and without the settings).
    lm = kzoo.GPT2CausalLM(
        kzoo.GPT2Backbone(**{**TINY_GPT2_FULL_VOCAB, "num_layers": 1}),
        preprocessor=preprocessor)
    lm.generation_config = {"no_repeat_ngram_size": 2,
                            "repetition_penalty": 1.3}
    return lm


def _bart():
    keras.utils.set_random_seed(1)
    preprocessor = kzoo.BartSeq2SeqLM.preprocessor_for(
        str(BART_PRESET), sequence_length=16, target_length=10)
    # At BART's own initial scale (normal, std 0.02) the decoder hardly
    # reads the encoder: a random tiny BART decodes the same text for
    # every input, in generate as served (1, 1, 1, 2, 1 different texts
    # for the 4 prompts, seeds 0-4, JAX), so a test of it cannot tell
    # whether the prompts reach the model. Std 1: 4 of 4 for each.
    lm = kzoo.BartSeq2SeqLM(make_tiny_bart(num_layers=1,
                                           initializer_range=1.0),
                            preprocessor=preprocessor)
    # bart_large_cnn's kind of settings: beams, a minimum length, no
    # repeated bigram, <s> forced first.
    lm.generation_config = {"num_beams": 2, "min_length": 6,
                            "no_repeat_ngram_size": 2,
                            "forced_bos_token_id": 0}
    return lm


def _t5():
    keras.utils.set_random_seed(1)
    preprocessor = kzoo.T5Seq2SeqLM.preprocessor_for(
        str(T5_PRESET), sequence_length=24, target_length=8)
    # As BART's (above), a random T5 at its initial scale often decodes
    # two inputs alike (4, 2, 4, 4, 3 different texts of 4 for seeds 0-4,
    # JAX); scaled by 10, 4 of 4 for each.
    lm = kzoo.T5Seq2SeqLM(make_tiny_t5(num_layers=1, num_decoder_layers=1,
                                       initializer_factor=10.0),
                          preprocessor=preprocessor)
    lm.generation_config = {"min_length": 5, "no_repeat_ngram_size": 2}
    return lm


# Every family from TensorFlow; from JAX (jax2tf: the same loop, another
# converter) the greedy ones. Beam search from JAX is refused
# (test_jax_refuses_beam_search_with_the_way_out).
FAMILIES = {name: build for name, build in
            {"gpt2": _gpt2, "bart": _bart, "t5": _t5}.items()
            if keras.backend.backend() != "jax" or name != "bart"}


def _new_tokens(lm, **kwargs):
    """kzoo's generate on the prompts' ids: each row's new tokens."""
    ids = lm.preprocessor.generate_preprocess(PROMPTS)
    return lm.generate(ids, strip_prompt=True, **kwargs)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Each family exported once and all served in one fresh interpreter:
    `(models, results)`."""
    root = tmp_path_factory.mktemp("generators")
    models, cases = {}, {}
    for name, build in FAMILIES.items():
        lm = models[name] = build()
        lm.export(root / name, verbose=False)
        cases[name] = {"path": str(root / name), "prompts": PROMPTS,
                       "limit": LIMIT}
    cases["gpt2"]["too_long"] = "word " * 40
    (root / "cases.json").write_text(json.dumps(cases))
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "KERAS_BACKEND")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    run = subprocess.run(
        [sys.executable, "-c", LOADER, str(root / "cases.json"),
         str(root / "results.json")], cwd=root, env=env,
        capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return models, json.loads((root / "results.json").read_text())


@pytest.mark.skipif(not EXPORTS, reason="torch cannot export (below)")
def test_served_without_kzoo(served):
    assert served[1]["imported"] == []  # neither kzoo nor keras-hub


@pytest.mark.skipif(not EXPORTS, reason="torch cannot export (below)")
@pytest.mark.parametrize("family", list(FAMILIES))
def test_served_generation_is_generates(served, family):
    models, results = served
    lm, result = models[family], results[family]
    new_tokens = _new_tokens(lm)
    # Every prompt gets its own new tokens from generate, so a served
    # output that ignored the prompts would differ from it...
    assert len({tuple(row) for row in new_tokens}) == len(PROMPTS), \
        new_tokens
    # ... and the settings change them, so would one that ignored those.
    assert new_tokens != _new_tokens(lm, generation_config={})
    ids = lm.preprocessor.generate_preprocess(PROMPTS)
    assert result["generate"]["token_ids"] == lm.generate(ids)
    assert result["generate"]["texts"] == lm.generate(PROMPTS)
    assert result["default"] == [["prompts"],
                                 ["padding_mask", "texts", "token_ids"]]
    assert result["limited"]["token_ids"] == lm.generate(
        ids, max_new_tokens=LIMIT)
    assert result["limited"]["texts"] == lm.generate(PROMPTS,
                                                     max_new_tokens=LIMIT)


@pytest.mark.skipif(not EXPORTS, reason="torch cannot export (below)")
def test_a_prompt_without_room_fails_with_a_message(served):
    assert "a prompt leaves no room to generate within max_length=12" in \
        served[1]["gpt2"]["too_long"]


@pytest.mark.skipif(keras.backend.backend() != "jax",
                    reason="TensorFlow exports beam search (above)")
def test_jax_refuses_beam_search_with_the_way_out(tmp_path):
    # Served, jax2tf's beam search failed: "unregistered operation
    # 'vhlo.composite_v2'" (JAX's top_k; jax 0.10, TensorFlow 2.21).
    with pytest.raises(ExportError, match="KERAS_BACKEND=tensorflow"):
        _bart().export(tmp_path / "generator", verbose=False)
    assert not (tmp_path / "generator").exists()


@pytest.mark.skipif(EXPORTS, reason="the backends that export: above")
def test_torch_refuses_with_the_way_out(tmp_path):
    with pytest.raises(ExportError, match="KERAS_BACKEND=tensorflow"):
        _t5().export(tmp_path / "generator", verbose=False)
    assert not (tmp_path / "generator").exists()


@pytest.mark.once
def test_what_cannot_be_exported_is_refused_before_any_work(tmp_path):
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=2, sequence_length=8,
        load_weights=False)
    with pytest.raises(ExportError, match="does not generate text"):
        classifier.export(tmp_path / "a", generator=True, verbose=False)
    lm = _t5()
    with pytest.raises(ExportError, match="greedily or with beam search"):
        lm.export(tmp_path / "b", sampler="top_k", verbose=False)
    with pytest.raises(ValueError, match="num_beams must be >= 1, got 0"):
        lm.export(tmp_path / "c", verbose=False,
                  generation_config={"num_beams": 0})
    with pytest.raises(ExportError, match="pass them with generator=True"):
        classifier.export(tmp_path / "d", max_length=8, verbose=False)
    assert not any(tmp_path.iterdir())
