"""The share an objective masks as a recipe option (`--mask-rate`, issue
50): each family's own by default (BERT paper A.1: 15%; BART paper 5.1:
30% of the words; ELECTRA's configure_pretraining.py: 15%, large 25%),
raised as Cramming (Geiping & Goldstein 2022) and "Should You Mask 15% in
Masked Language Modeling?" (Wettig et al. 2023) train BERTs, at 0.4;
refused in one line where it cannot apply; part of what a resume checks;
and shown by `kzoo info` without a backend.

The resolving and the command are backend-independent: once per suite."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pretraining_testing
from kzoo import cli
from kzoo.pretraining.config import PretrainingError
from kzoo.pretraining.objectives import OBJECTIVES
from kzoo.pretraining.recipes import resolve_recipe
from kzoo.pretraining.run import (objective_arguments, pretrain,
                                  resolved_run_options)

pytestmark = pytest.mark.once

ROOT = Path(__file__).resolve().parents[2]
LENGTH = 32


def one_line(error):
    message = str(error.value)
    assert "\n" not in message, message
    return message


def test_each_family_masks_its_own_share_and_the_option_overrides_it():
    def rate(preset, **options):
        return resolved_run_options(preset, max_steps=10,
                                    **options)["mask_rate"]

    assert rate("bert_base_en_uncased") == 0.15
    assert rate("bert_base_en_uncased", mask_rate=0.4) == 0.4
    assert rate("bart_base_en") == 0.3
    assert rate("t5_small_multi", mask_rate=0.25) == 0.25
    assert rate("gpt2_base_en") is None  # a causal LM masks nothing
    # ELECTRA-large (hidden 1024) masks 25% (configure_pretraining.py).
    assert resolve_recipe("electra", 256, {"max_steps": 10})[
        "mask_rate"] == 0.15
    assert resolve_recipe("electra", 1024, {"max_steps": 10})[
        "mask_rate"] == 0.25
    # The config file's objective_options entry is the share too.
    assert rate("t5_small_multi", objective_options={
        "noise_density": 0.3}) == 0.3


@pytest.mark.parametrize("preset, options, words", [
    ("bert_base_en_uncased", dict(mask_rate=0.0), ["mask_rate", "0.0"]),
    ("bert_base_en_uncased", dict(mask_rate=1.0), ["between 0 and 1"]),
    ("gpt2_base_en", dict(mask_rate=0.2),
     ["--mask-rate", "causal_lm", "masks nothing"]),
    ("t5_small_multi", dict(mask_rate=0.2, objective_options={
        "noise_density": 0.3}), ["noise_density", "give it once"]),
])
def test_a_mask_rate_that_cannot_apply_is_one_clear_line(preset, options,
                                                        words):
    with pytest.raises(PretrainingError) as error:
        resolved_run_options(preset, max_steps=10, **options)
    message = one_line(error)
    for word in words:
        assert word in message, message


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("mask_rate")
    preset = pretraining_testing.make_mlm_preset(root / "preset")
    corpus = pretraining_testing.prepare_text_corpus(root / "corpus", preset,
                                                     paragraphs=8)
    return root, str(preset), str(corpus)


@pytest.mark.parametrize("rate", [None, 0.4])
def test_the_stream_masks_the_share_asked_for(tiny, rate):
    """Each row's masked positions are ceil(rate x its real tokens),
    [CLS]/[SEP] and padding never chosen: BERT's count
    (create_pretraining_data.py: len(tokens) x masked_lm_prob, at most
    max_predictions_per_seq), as the run's stream is given the rate."""
    from kzoo.corpus import Corpus
    _, preset, corpus = tiny
    objective = OBJECTIVES["mlm"]
    arguments = objective_arguments(
        objective, {"objective_options": {}, "mask_rate": rate})
    task = objective.make_task(preset, False, LENGTH, **arguments)
    stream = objective.make_stream(task, Corpus(corpus), 8, 0, 0, 1, None,
                                   LENGTH, **arguments)
    x, _, weights = stream.batch(0)
    real = x["padding_mask"].sum(axis=1) - 2  # [CLS] and [SEP] apart
    share = 0.15 if rate is None else rate
    assert list(weights.sum(axis=1)) == [
        math.ceil(share * n) for n in real]


def test_a_resume_with_another_mask_rate_is_refused(tiny):
    root, preset, corpus = tiny
    output = root / "run"
    options = dict(objective="mlm", from_scratch=True, max_steps=1,
                   batch_size=4, sequence_length=LENGTH, checkpoint_every=1,
                   seed=1, verbose=0, mask_rate=0.4, warmup_steps=0)
    summary = pretrain(preset, corpus, output, **options)
    assert summary["recipe"]["mask_rate"] == 0.4
    with pytest.raises(PretrainingError) as error:
        pretrain(preset, corpus, output, **dict(options, mask_rate=0.15,
                                                max_steps=2))
    assert "mask_rate: 0.4 there, 0.15 now" in one_line(error)


def test_kzoo_info_shows_the_recipe_without_a_backend(capsys):
    """`kzoo info` prints the preset's recipe for its size (ELECTRA-small:
    lr 5e-4, configure_pretraining.py) and imports no Keras or backend
    doing it (the launcher's path, in a fresh process)."""
    assert cli.main(["info", "electra_small_discriminator_en_uncased"]) == 0
    out = capsys.readouterr().out
    assert ("pretraining recipe (kzoo pretrain's default, small size): "
            "adamw, lr 0.0005, linear, warmup 10,000 of 1,000,000 steps, "
            "beta 0.9/0.999, eps 1e-06, clip 1, wd 0.01, mask 0.15") in out
    assert "configure_pretraining.py" in out
    script = (
        "import json, sys, kzoo_launcher\n"
        "code = kzoo_launcher.main(['info', 'bert_base', '--json'])\n"
        "print('REPORT ' + json.dumps([code, [m for m in ('keras', "
        "'tensorflow', 'jax', 'torch') if m in sys.modules]]))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ))
    lines = done.stdout.splitlines()
    assert lines[-1] == 'REPORT [0, []]', done.stderr[-2000:]
    recipe = json.loads("\n".join(lines[:-1]))["pretraining_recipe"]
    # BERT's google-research/bert optimization.py and README numbers.
    assert {k: recipe[k] for k in (
        "optimizer", "learning_rate", "warmup_steps", "total_steps",
        "beta_2", "epsilon", "clip_norm", "weight_decay", "mask_rate")} == {
        "optimizer": "adamw", "learning_rate": 1e-4, "warmup_steps": 10_000,
        "total_steps": 1_000_000, "beta_2": 0.999, "epsilon": 1e-6,
        "clip_norm": 1.0, "weight_decay": 0.01, "mask_rate": 0.15}
    assert np.isclose(recipe["beta_1"], 0.9)
