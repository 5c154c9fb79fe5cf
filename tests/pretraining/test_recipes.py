"""Each family's pretraining recipe (`kzoo.pretraining.recipes`) against
the numbers of the original's code or paper (written here with their
source, not read back from kzoo), the schedules' shapes, the optimizer
options a family's optimizer lacks, the `[model]` table's architecture,
a resume with a changed recipe, and the honest FLOP count
(`kzoo.pretraining.throughput`) against a hand computation."""

import math

import keras
import numpy as np
import pytest

import pretraining_testing
from kzoo.pretraining import checkpoints
from kzoo.pretraining.config import PretrainingError
from kzoo.pretraining.run import pretrain, resolved_run_options
from kzoo.pretraining.schedule import PretrainingSchedule

# preset -> (the original's length in steps, its numbers). Sources:
# BERT: google-research/bert optimization.py (AdamWeightDecayOptimizer
#   beta_1 0.9, beta_2 0.999, epsilon 1e-6, weight_decay_rate 0.01,
#   clip_by_global_norm 1.0, polynomial_decay power 1.0), README
#   (learning_rate 1e-4, num_warmup_steps 10000), paper A.2 (1M steps).
# RoBERTa: paper Table 9 (base: peak 6e-4, warmup 24k; large: 4e-4, 30k;
#   500k steps; Adam eps 1e-6, beta 0.9/0.98, weight decay 0.01, gradient
#   clipping 0.0, linear decay).
# DistilBERT: transformers examples/research_projects/distillation
#   train.py (learning_rate 5e-4, adam_epsilon 1e-6, warmup_prop 0.05,
#   weight_decay 0.0, max_grad_norm 5.0) and distiller.py (betas
#   (0.9, 0.98)).
# ALBERT: google-research/albert optimization.py (LAMB 0.9/0.999/1e-6,
#   weight_decay_rate 0.01, clip 1.0) and README (learning_rate .00176,
#   num_train_steps 125000, num_warmup_steps 3125).
# ELECTRA: google-research/electra configure_pretraining.py
#   (learning_rate 5e-4 small, 2e-4 base/large; num_warmup_steps 10000;
#   num_train_steps 1000000; weight_decay_rate 0.01) with BERT's optimizer.
# DeBERTa-v3: microsoft/DeBERTa experiments/language_model/rtd.sh
#   (--warmup 10000, --num_training_steps 1000000, --learning_rate 3e-4
#   xsmall, 1e-4 base) and DeBERTa/optims/args.py (adam_beta1 0.9,
#   adam_beta2 0.999, epsilon 1e-6, weight_decay 0.01, max_grad_norm 1).
# GPT-2: not published; GPT-3 paper Table 2.1 (125M: 6e-4, 350M: 3e-4)
#   and appendix B (beta 0.9/0.95, eps 1e-8, clip 1.0, decay 0.1, cosine
#   to 10%, warmup 375M tokens = 750 steps of 0.5M tokens, 300B tokens).
# T5: paper 3.1.2 (AdaFactor, 1/sqrt(max(n, k)), k = 10^4, 2^19 steps).
# ELMo: allenai/bilm-tf training.py (Adagrad lr 0.2, initial accumulator
#   1.0), train_elmo.py (all_clip_norm_val 10.0).
# AWD-LSTM: salesforce/awd-lstm-lm main.py (sgd, lr 30, clip 0.25,
#   wdecay 1.2e-6).
ADAM = dict(optimizer="adamw", schedule="linear")
PUBLISHED = {
    "bert_base_en_uncased": (1_000_000, dict(
        ADAM, learning_rate=1e-4, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
        warmup_steps=10_000, clip_norm=1.0, weight_decay=0.01)),
    "roberta_base_en": (500_000, dict(
        ADAM, learning_rate=6e-4, beta_1=0.9, beta_2=0.98, epsilon=1e-6,
        warmup_steps=24_000, clip_norm=None, weight_decay=0.01)),
    "roberta_large_en": (500_000, dict(
        ADAM, learning_rate=4e-4, beta_1=0.9, beta_2=0.98, epsilon=1e-6,
        warmup_steps=30_000, clip_norm=None, weight_decay=0.01)),
    # XLM-R and BART publish none: RoBERTa's numbers stand in.
    "xlm_roberta_base_multi": (500_000, dict(
        ADAM, learning_rate=6e-4, beta_1=0.9, beta_2=0.98, epsilon=1e-6,
        warmup_steps=24_000, clip_norm=None, weight_decay=0.01)),
    "bart_base_en": (500_000, dict(
        ADAM, learning_rate=6e-4, beta_1=0.9, beta_2=0.98, epsilon=1e-6,
        warmup_steps=24_000, clip_norm=None, weight_decay=0.01)),
    "distil_bert_base_en_uncased": (2_000, dict(
        ADAM, learning_rate=5e-4, beta_1=0.9, beta_2=0.98, epsilon=1e-6,
        warmup_steps=100, clip_norm=5.0, weight_decay=0.0)),
    "albert_base_en_uncased": (125_000, dict(
        optimizer="lamb", schedule="linear", learning_rate=0.00176,
        beta_1=0.9, beta_2=0.999, epsilon=1e-6, warmup_steps=3125,
        clip_norm=1.0, weight_decay=0.01)),
    "electra_small_discriminator_en_uncased": (1_000_000, dict(
        ADAM, learning_rate=5e-4, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
        warmup_steps=10_000, clip_norm=1.0, weight_decay=0.01)),
    "electra_base_discriminator_en_uncased": (1_000_000, dict(
        ADAM, learning_rate=2e-4, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
        warmup_steps=10_000, clip_norm=1.0, weight_decay=0.01)),
    "deberta_v3_base_en": (1_000_000, dict(
        ADAM, learning_rate=1e-4, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
        warmup_steps=10_000, clip_norm=1.0, weight_decay=0.01)),
    "deberta_v3_extra_small_en": (1_000_000, dict(
        ADAM, learning_rate=3e-4, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
        warmup_steps=10_000, clip_norm=1.0, weight_decay=0.01)),
    "gpt2_base_en": (600_000, dict(
        optimizer="adamw", schedule="cosine", learning_rate=6e-4,
        beta_1=0.9, beta_2=0.95, epsilon=1e-8, warmup_steps=750,
        clip_norm=1.0, weight_decay=0.1)),
    "gpt2_medium_en": (600_000, dict(
        optimizer="adamw", schedule="cosine", learning_rate=3e-4,
        beta_1=0.9, beta_2=0.95, epsilon=1e-8, warmup_steps=750,
        clip_norm=1.0, weight_decay=0.1)),
    "t5_small_multi": (2 ** 19, dict(
        optimizer="adafactor", schedule="inverse_sqrt", learning_rate=0.01,
        warmup_steps=10_000, clip_norm=None, weight_decay=0.0,
        beta_1=None, beta_2=None, epsilon=None)),
    "elmo_small_en": (100_000, dict(
        optimizer="adagrad", schedule="constant", learning_rate=0.2,
        warmup_steps=0, clip_norm=10.0, weight_decay=0.0)),
    "awd_lstm_wt103_en": (100_000, dict(
        optimizer="sgd", schedule="constant", learning_rate=30.0,
        warmup_steps=0, clip_norm=0.25, weight_decay=1.2e-6)),
}


@pytest.mark.once
@pytest.mark.parametrize("preset", sorted(PUBLISHED))
def test_the_default_recipe_is_the_originals(preset):
    steps, published = PUBLISHED[preset]
    resolved = resolved_run_options(preset, max_steps=steps)
    got = {name: resolved[name] for name in published}
    assert got == pytest.approx(published), resolved["recipe"]["source"]
    assert resolved["recipe"]["source"]


@pytest.mark.once
def test_elmo_starts_its_accumulators_at_one_and_masking_is_shown():
    resolved = resolved_run_options("elmo_small_en", max_steps=10)
    assert resolved["recipe"]["optimizer_arguments"] == {
        "initial_accumulator_value": 1.0}  # bilm-tf training.py
    # BART masks 30% (paper 5.1), T5 15% (paper 3.1.4).
    assert resolved_run_options("bart_base_en", max_steps=10)[
        "recipe"]["masking_rate"] == 0.3
    assert resolved_run_options("t5_small_multi", max_steps=10)[
        "recipe"]["masking_rate"] == 0.15


@pytest.mark.once
def test_a_shorter_run_warms_up_over_the_same_share():
    # BERT: 10,000 of 1,000,000 steps -> 6 of 600; DistilBERT: 5% of any.
    assert resolved_run_options("bert_base_en_uncased", max_steps=600)[
        "warmup_steps"] == 6
    assert resolved_run_options("distil_bert_base_en_uncased",
                                max_steps=600)["warmup_steps"] == 30
    assert resolved_run_options("bert_base_en_uncased", max_steps=2_000_000)[
        "warmup_steps"] == 10_000


@pytest.mark.once
def test_flags_override_any_part_and_another_optimizer_drops_the_familys():
    resolved = resolved_run_options(
        "bert_base_en_uncased", max_steps=1000, learning_rate=1e-3,
        beta_2=0.98, clip_norm=0.5, schedule="one_cycle",
        pretraining_dropout=0.0, from_scratch=True)
    assert (resolved["learning_rate"], resolved["beta_2"],
            resolved["clip_norm"], resolved["schedule"],
            resolved["warmup_steps"], resolved["beta_1"]) == \
        (1e-3, 0.98, 0.5, "one_cycle", 0, 0.9)
    lamb = resolved_run_options("t5_small_multi", max_steps=100,
                                optimizer="lamb", beta_1=0.8)
    assert (lamb["optimizer"], lamb["beta_1"], lamb["beta_2"]) == \
        ("lamb", 0.8, None)  # Keras' default beta_2, not T5's (none)
    assert resolved_run_options("bert_base_en_uncased", max_steps=100,
                                clip_norm=0)["clip_norm"] is None


def one_line(error):
    message = str(error.value)
    assert "\n" not in message, message
    return message


@pytest.mark.once
@pytest.mark.parametrize("options, words", [
    (dict(beta_1=0.9), ["--beta-1", "adafactor", "no beta_1"]),
    (dict(optimizer="sgd", epsilon=1e-6), ["--epsilon", "sgd"]),
    (dict(schedule="one_cycle", warmup_steps=10),
     ["one_cycle", "--warmup-steps"]),
    (dict(warmup_steps=0), ["inverse_sqrt", "--warmup-steps >= 1"]),
    (dict(optimizer="adam"), ["optimizer 'adam'", "adamw"]),
    (dict(pretraining_dropout=0.0), ["--from-scratch"]),
])
def test_an_option_the_recipe_cannot_take_is_one_clear_line(options,
                                                             words):
    with pytest.raises(PretrainingError) as error:
        resolved_run_options("t5_small_multi", max_steps=100, **options)
    message = one_line(error)
    for word in words:
        assert word in message, message


@pytest.mark.once
@pytest.mark.parametrize("model, words", [
    ({"hidden_dim": 30, "num_heads": 4}, ["[model]", "hidden_dim", "30"]),
    ({"max_sequence_length": 16}, ["max_sequence_length 16", "128"]),
    ({"num_layer": 2}, ["num_layer", "num_layers"]),
    ({"vocabulary_size": 100}, ["vocabulary_size 100", "30522"]),
])
def test_a_model_table_the_backbone_refuses_is_one_clear_line(
        tmp_path, model, words):
    config = tmp_path / "run.toml"
    config.write_text("max_steps = 10\nfrom_scratch = true\n[model]\n" +
                      "".join(f"{k} = {v}\n" for k, v in model.items()))
    with pytest.raises(PretrainingError) as error:
        resolved_run_options("bert_tiny_en_uncased", config=str(config))
    message = one_line(error)
    assert str(config) in message
    for word in words:
        assert word in message, message
    config.write_text("max_steps = 10\n[model]\nnum_layers = 1\n")
    with pytest.raises(PretrainingError) as error:
        resolved_run_options("bert_tiny_en_uncased", config=str(config))
    assert "--from-scratch" in one_line(error)


@pytest.mark.once
@pytest.mark.parametrize("shape", ["linear", "cosine", "inverse_sqrt",
                                   "one_cycle", "constant"])
def test_each_schedule_is_the_same_in_keras_and_in_python(shape):
    schedule = PretrainingSchedule(1e-3, 10, 100, shape=shape, floor=0.1)
    steps = [0, 5, 10, 11, 50, 77, 100]
    graph = [float(schedule(s)) for s in steps]
    python = [schedule.rate_at(s) for s in steps]
    assert np.allclose(graph, python, rtol=1e-6, atol=1e-12)


@pytest.mark.once
def test_the_schedules_by_hand():
    # T5: 1/sqrt(max(n, k)) with k = 10^4 (paper 3.1.2).
    t5 = PretrainingSchedule(0.01, 10_000, 2 ** 19, shape="inverse_sqrt")
    for n in (0, 1, 9_999, 10_000, 40_000, 2 ** 19):
        assert math.isclose(t5.rate_at(n), 1 / math.sqrt(max(n, 10_000)))
    # GPT-3: cosine to 10% at the end; half-way through the decay 55%.
    gpt = PretrainingSchedule(6e-4, 750, 600_750, shape="cosine", floor=0.1)
    assert math.isclose(gpt.rate_at(600_750), 6e-5)
    assert math.isclose(gpt.rate_at(300_750), 6e-4 * 0.55)
    cycle = PretrainingSchedule(1e-3, 0, 100, shape="one_cycle")
    assert [cycle.rate_at(s) for s in (0, 25, 50, 75, 100)] == \
        pytest.approx([0, 5e-4, 1e-3, 5e-4, 0])


def test_every_optimizer_takes_a_clipped_step():
    """Each optimizer `--optimizer` names trains on this backend, with the
    global norm clipped: a gradient of norm 10 clipped at 1 moves SGD's
    weights by lr x 1 in norm."""
    from kzoo.training import OPTIMIZER_ARGUMENTS, make_optimizer
    for name in OPTIMIZER_ARGUMENTS:
        variable = keras.Variable(np.ones((4, 4), "float32"))
        optimizer = make_optimizer(name, 0.1, weight_decay=0.01,
                                   clip_norm=1.0)
        optimizer.build([variable])
        optimizer.apply_gradients([(keras.ops.full((4, 4), 2.5), variable)])
        moved = np.asarray(variable.numpy())
        assert np.all(np.isfinite(moved)) and not np.allclose(moved, 1.0)
        if name == "sgd":
            # Decay first (1 - 0.1 x 0.01), then the clipped step: each of
            # the 16 entries by 0.1 x 2.5 / 10.
            assert np.allclose(moved, 0.999 - 0.025, atol=1e-6)


def test_flops_per_token_by_hand():
    """A 2-layer, 32-wide BERT (2 heads, feed-forward 64, 125 words) as an
    MLM: its non-embedding parameters counted by hand, and nanoGPT's
    6 N + 12 L H Q T at T = 32."""
    import kzoo
    from kzoo.pretraining import throughput
    from kzoo.utils.skip_init import initial_values_skipped
    with initial_values_skipped():
        backbone = kzoo.BertBackbone(
            vocabulary_size=125, num_layers=2, num_heads=2, hidden_dim=32,
            intermediate_dim=64, max_sequence_length=64)
        task = kzoo.BertMaskedLM(backbone=backbone, preprocessor=None)
    layer = (4 * (32 * 32 + 32)       # query, key, value, output
             + 2 * 2 * 32             # two LayerNorms
             + (32 * 64 + 64) + (64 * 32 + 32))  # feed-forward
    by_hand = (2 * 32                 # the embeddings' LayerNorm
               + 2 * layer
               + (32 * 32 + 32)       # pooler
               + (32 * 32 + 32) + 2 * 32 + 125)  # MLM transform, LN, bias
    assert by_hand == 19_453
    counted = throughput.non_embedding_parameters(task.trainable_variables)
    assert counted == by_hand
    shape = throughput.transformer_shape(backbone.get_config())
    assert shape == (2, 2, 16)
    assert throughput.flops_per_token(counted, *shape, 32) == \
        6 * 19_453 + 12 * 2 * 2 * 16 * 32 == 141_294


@pytest.mark.once
def test_peak_flops_of_known_accelerators_and_real_tokens():
    from kzoo.pretraining.throughput import peak_tflops_of, real_tokens
    assert peak_tflops_of("NVIDIA A100-SXM4-80GB") == 312
    assert peak_tflops_of("NVIDIA H100 80GB HBM3") == 989
    assert peak_tflops_of("NVIDIA H100 PCIe") == 756
    assert peak_tflops_of("Tesla T4") == 65
    assert peak_tflops_of("TPU v4") == 275
    assert peak_tflops_of("NVIDIA A10G") is None
    assert peak_tflops_of(None) is None
    mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]])
    assert real_tokens(({"token_ids": mask * 7, "padding_mask": mask},
                        None)) == 5


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("recipes")
    preset = pretraining_testing.make_mlm_preset(root / "preset")
    corpus = pretraining_testing.prepare_text_corpus(root / "corpus", preset,
                                                     paragraphs=8)
    return root, str(preset), str(corpus)


def test_a_model_table_builds_its_architecture_and_a_changed_recipe_is_refused(
        tiny):
    """On this backend: a from-scratch run whose [model] table makes a
    1-layer, 16-wide BERT trains and saves that architecture, its metrics
    count real tokens and the MFU from them; the same OUTPUT with another
    clipping norm is refused, naming it."""
    root, preset, corpus = tiny
    config = root / "run.toml"
    config.write_text("[model]\nnum_layers = 1\nhidden_dim = 16\n"
                      "num_heads = 2\nintermediate_dim = 32\n"
                      "max_sequence_length = 32\n")
    output = root / "run"
    options = dict(objective="mlm", from_scratch=True, max_steps=2,
                   batch_size=4, sequence_length=32, checkpoint_every=2,
                   seed=1, verbose=0, peak_tflops=1.0)
    summary = pretrain(preset, corpus, output, config=str(config), **options)
    import json
    saved = json.loads((output / "preset" / "config.json").read_text())
    assert {k: saved["config"][k] for k in (
        "num_layers", "hidden_dim", "num_heads", "intermediate_dim",
        "max_sequence_length")} == dict(
        num_layers=1, hidden_dim=16, num_heads=2, intermediate_dim=32,
        max_sequence_length=32)
    assert summary["recipe"]["clip_norm"] == 1.0  # BERT's
    records = [json.loads(line) for line in
               (output / "metrics.jsonl").read_text().splitlines()]
    # Non-embedding parameters by hand: embeddings' LayerNorm 32; the
    # layer 4 x (16 x 16 + 16) + 2 x 32 + (16 x 32 + 32) + (32 x 16 + 16);
    # pooler and MLM transform 272 each, its LayerNorm 32, its bias 30,522.
    parameters = 32 + 2224 + 272 + 272 + 32 + 30_522
    flops = 6 * parameters + 12 * 1 * 2 * 8 * 32
    for record in records:
        assert 0 < record["tokens"] <= 4 * 32
        # 1 TFLOP/s peak: the MFU is the FLOP/s over 1e12.
        assert math.isclose(record["mfu"], flops * record[
            "tokens_per_second"] / 1e12, rel_tol=1e-9)
    with pytest.raises(PretrainingError) as error:
        pretrain(preset, corpus, output, config=str(config),
                 **dict(options, clip_norm=0.5))
    message = one_line(error)
    assert "clip_norm: 1.0 there, 0.5 now" in message
    assert [s for s, _ in checkpoints.list_checkpoints(output)] == [2]
