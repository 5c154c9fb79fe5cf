"""The private APIs of other libraries that kzoo uses
(kzoo/utils/private_apis.py): the installed releases are the ones their
fences were checked on, every private API used on this backend is there,
and every fast path gives what its public fallback gives.

When a test here fails after an upgrade of keras or keras-hub, read the
library's entries in kzoo/utils/private_apis.py against the new release;
that module's docstring says what to do.

Tests that concern one backend are defined only on that backend (not
skipped elsewhere); backend-independent ones are marked `once`.
"""

import re
import tomllib
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import id_lists, random_bert_inputs, to_numpy
from kzoo import training
from kzoo.distribution import tf_strategy
from kzoo.training import schedules
from kzoo.utils import private_apis
from t5_testing import T5_PRESET

BACKEND = keras.backend.backend()
PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
TEXTS = ["Hello world", " 'told you so", "I'm here, aren't you?",
         "don't  stop\tnow", "a\x00b", "<|endoftext|> tail", "", "ünïcödé ✓"]


# ----------------------------------------------------------------------
# The table and the installed releases
# ----------------------------------------------------------------------
@pytest.mark.once
def test_installed_releases_are_inside_the_tested_ranges():
    problems = private_apis.outside_tested_ranges()
    assert not problems, "\n".join(problems)


@pytest.mark.once
def test_an_untested_release_is_reported_with_what_to_do():
    problems = private_apis.outside_tested_ranges(
        {"keras": "3.16.0", "keras-hub": "0.31.2"})
    assert len(problems) == 2
    assert all("kzoo/utils/private_apis.py" in p
               and "tests/test_private_apis.py" in p
               and "pyproject.toml" in p for p in problems)
    assert not private_apis.outside_tested_ranges(
        {"keras": "3.15.9", "keras-hub": "0.32.1"})


@pytest.mark.once
def test_pyproject_bounds_are_the_tested_range():
    # The floor is the range's first release and the bound the next minor:
    # no install picks an unchecked release (the range test above fails
    # where one is forced in).
    requirements = tomllib.loads(PYPROJECT.read_text())["project"][
        "dependencies"]
    for library, (first, last_minor) in private_apis.TESTED_RANGES.items():
        spec = next(r for r in requirements
                    if re.match(rf"{re.escape(library)}\s*[<>=]", r))
        major, minor = (int(n) for n in last_minor.split("."))
        assert spec == f"{library}>={first},<{major}.{minor + 1}", spec


@pytest.mark.once
def test_torch_is_bounded_below_an_untested_minor():
    # torch has no private API in the table, but the fused AdamW step and
    # the DDP train step reach deep into it: pyproject bounds it (the
    # extra and `dev` alike) below the next minor of the installed release
    # the suite runs on, so an untested torch needs a deliberate raise.
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    extras = project["optional-dependencies"]
    specs = [r for r in extras["torch"] + extras["dev"]
             if re.match(r"torch\s*[<>=]", r)]
    assert len(specs) == 2 and all(re.search(r",<\d+\.\d+$", s)
                                   for s in specs), specs
    installed = private_apis.installed_version("torch")
    if installed is None:
        return  # the torch extra is not installed: nothing to compare
    major, minor = (int(n) for n in specs[0].rsplit("<", 1)[1].split("."))
    assert specs[0] == specs[1]
    assert private_apis._release(installed, 2) < (major, minor), (
        f"torch {installed} is past pyproject's bound {specs[0]}: run the "
        "suite on it, then raise the bound")


@pytest.mark.once
def test_the_table_names_where_each_api_is_used():
    root = PYPROJECT.parent
    keys = [api.key for api in private_apis.PRIVATE_APIS]
    assert len(keys) == len(set(keys))
    for api in private_apis.PRIVATE_APIS:
        assert api.library in private_apis.TESTED_RANGES, api.key
        for path in re.findall(r"kzoo/[\w/]+\.py", api.used_in):
            assert (root / path).is_file(), (api.key, path)


def test_every_private_api_used_on_this_backend_is_present():
    missing = private_apis.missing()
    assert not missing, "\n".join(
        f"{api.library} {private_apis.installed_version(api.library)} "
        f"lacks {api.name} (used in {api.used_in}; checked on "
        f"{api.checked_on}); fallback: {api.fallback or 'none'}"
        for api in missing)


# ----------------------------------------------------------------------
# keras-hub
# ----------------------------------------------------------------------
@pytest.mark.once
def test_gpt2_eager_ids_are_the_graph_paths():
    key = "keras-hub:BytePairTokenizer._set_vocabulary_and_merges_tokenizers"
    tokenizer = kzoo.GPT2Tokenizer.from_preset("gpt2")
    fast = id_lists(tokenizer(TEXTS))
    with private_apis.forced_fallback(key):
        fallback = id_lists(tokenizer(TEXTS))
        one = id_lists(tokenizer(TEXTS[1]))
    assert fast == fallback
    assert one == fast[1]
    # " 'told": GPT-2's pre-tokenizer keeps " '" whole (Llama 3's, the
    # one keras-hub's eager path has without the hook, does not).
    assert tokenizer.detokenize([fast[1][0]]) == " '"


@pytest.mark.once
def test_sentencepiece_graph_model_remade_either_way():
    key = "keras-hub:SentencePieceTokenizer._set_proto_tf"
    tokenizer = kzoo.T5Tokenizer.from_preset(str(T5_PRESET))

    def in_graph():
        # A new graph: `_graph_ready_hub` remakes the model for it, after
        # a seed reset that drops the one made before.
        keras.utils.set_random_seed(0)
        dataset = tf.data.Dataset.from_tensor_slices(TEXTS).batch(4)
        return [row for batch in dataset.map(tokenizer.tokenize_tf)
                for row in id_lists(batch)]

    fast = in_graph()
    with private_apis.forced_fallback(key):
        fallback = in_graph()
    assert fast == fallback
    assert fast == id_lists(tokenizer(TEXTS))


# ----------------------------------------------------------------------
# Keras: optimizers
# ----------------------------------------------------------------------
def _adamw_steps(steps=3):
    """Weights and optimizer variables of a small model after `steps`
    AdamW steps (two weight-decay groups, amsgrad)."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((6,)), keras.layers.Dense(8, activation="tanh"),
        keras.layers.LayerNormalization(), keras.layers.Dense(2)])
    optimizer = training.AdamW(1e-2, weight_decay=0.1, amsgrad=True)
    optimizer.exclude_from_weight_decay(var_names=["bias"])
    model.compile(optimizer=optimizer, loss="mse", run_eagerly=True)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        model.train_on_batch(rng.normal(size=(4, 6)).astype("float32"),
                             rng.normal(size=(4, 2)).astype("float32"))
    values = [to_numpy(v.value) for v in model.weights + optimizer.variables]
    return values, optimizer


if BACKEND in ("torch", "tensorflow"):
    def test_fused_adam_step_is_keras_update():
        # torch: torch's fused AdamW; TensorFlow: ResourceApplyAdam; both
        # through Keras' private optimizer hooks. The fallback is Keras'
        # own update.
        fast, optimizer = _adamw_steps()
        assert optimizer._fused_ready
        assert (optimizer._fused_adamw is not None) == (BACKEND == "torch")
        with private_apis.forced_fallback("keras:optimizer-hooks"):
            fallback, optimizer = _adamw_steps()
        assert not optimizer._fused_ready and optimizer._fused_adamw is None
        assert len(fast) == len(fallback)
        for a, b in zip(fast, fallback):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.once
def test_layerwise_optimizer_refuses_a_keras_without_the_hooks():
    optimizer = training.LayerwiseAdamW(
        1e-3, layer_groups=[["dense"]], scales=[1.0])
    with private_apis.forced_fallback("keras:optimizer-hooks"), \
            pytest.raises(RuntimeError, match="private_apis.py"):
        optimizer.build([keras.Variable(np.zeros(2), name="kernel")])


@pytest.mark.once
def test_planned_schedule_found_either_way():
    key = "keras:Optimizer._learning_rate"
    planned = training.WarmupLinearDecay(1e-3)
    users = keras.optimizers.schedules.ExponentialDecay(1e-3, 10, 0.5)
    for rate, expected in ((planned, planned), (users, None), (1e-3, None)):
        optimizer = training.AdamW(rate)
        assert schedules.planned_schedule_of(optimizer) is expected
        with private_apis.forced_fallback(key):
            assert schedules.planned_schedule_of(optimizer) is expected


# ----------------------------------------------------------------------
# Keras: fit, evaluate and distribution
# ----------------------------------------------------------------------
def _tiny_classifier(preprocessor=None):
    keras.utils.set_random_seed(0)
    backbone = kzoo.BertBackbone(
        vocabulary_size=64, num_layers=1, num_heads=2, hidden_dim=8,
        intermediate_dim=16, max_sequence_length=16, dropout=0.0,
        attention_dropout=0.0)
    return kzoo.BertTextClassifier(backbone, num_classes=2, dropout=0.0,
                                   preprocessor=preprocessor)


def test_fit_validation_on_raw_text_either_way():
    texts = ["The sun was shining.", "It rained all day.", "A cold wind.",
             "The garden was in bloom.", "Snow fell at night.", "Warm."]
    labels = np.array([0, 1, 1, 0, 1, 0])

    def val_losses():
        preprocessor = kzoo.BertPreprocessor.from_preset(
            "bert_tiny_en_uncased", sequence_length=12)
        backbone = kzoo.BertBackbone.from_preset(
            "bert_tiny_en_uncased", load_weights=False, num_layers=1,
            hidden_dim=16, num_heads=2, intermediate_dim=32, dropout=0.0)
        classifier = kzoo.BertTextClassifier(
            backbone, num_classes=2, preprocessor=preprocessor, dropout=0.0)
        classifier.compile(optimizer="sgd")
        history = classifier.fit(texts, labels, batch_size=3, epochs=2,
                                 shuffle=False, verbose=0,
                                 validation_data=(texts[:4], labels[:4]))
        return history.history["val_loss"]

    keras.utils.set_random_seed(0)
    fast = val_losses()
    keras.utils.set_random_seed(0)
    with private_apis.forced_fallback("keras:fit._use_cached_eval_dataset"):
        fallback = val_losses()
    np.testing.assert_allclose(fast, fallback, rtol=1e-6)


if BACKEND == "tensorflow":
    def test_model_strategy_found_either_way():
        key = "keras:Model._distribute_strategy"
        mirrored = tf.distribute.MirroredStrategy(["/cpu:0"])
        with mirrored.scope():
            inside = keras.Sequential([keras.Input((2,)),
                                       keras.layers.Dense(1)])
        outside = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        for model, expected in ((inside, mirrored), (outside, None)):
            assert tf_strategy.model_strategy(model) is expected
            with private_apis.forced_fallback(key):
                assert tf_strategy.model_strategy(model) is expected

    def test_fit_under_a_strategy_either_way():
        # The fast path builds the task from one replica's first batch
        # (tf_strategy.symbolic_build); the fallback leaves the build to
        # Keras' trace of the train step.
        x = random_bert_inputs(batch=4, seq=6, vocabulary_size=64)
        y = np.array([0, 1, 0, 1])

        def fitted():
            with tf.distribute.MirroredStrategy(["/cpu:0"]).scope():
                task = _tiny_classifier()
            task.compile(optimizer="sgd")
            loss = task.fit(x, y, batch_size=4, verbose=0,
                            shuffle=False).history["loss"]
            return loss, [to_numpy(w) for w in task.get_weights()]

        fast_loss, fast = fitted()
        with private_apis.forced_fallback("keras:Model._maybe_symbolic_build"):
            loss, weights = fitted()
        np.testing.assert_allclose(fast_loss, loss, rtol=1e-6)
        for a, b in zip(fast, weights):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


if BACKEND == "torch":
    def test_torch_train_step_parts_either_way():
        from kzoo.distribution import torch_ddp
        task = _tiny_classifier()
        task.compile(optimizer="sgd")
        x = random_bert_inputs(batch=4, seq=6, vocabulary_size=64)
        y = np.array([0, 1, 0, 1])
        task.train_on_batch(x, y)
        y_pred = task(x, training=False)

        def parts():
            return (torch_ddp.call_takes_training(task),
                    float(keras.ops.convert_to_numpy(
                        torch_ddp.training_loss(task, x, y, y_pred, None))),
                    torch_ddp.loss_tracker(task))

        fast = parts()
        with private_apis.forced_fallback("keras:Trainer.torch-train-step"):
            fallback = parts()
        assert fast[0] is fallback[0] is True
        np.testing.assert_allclose(fast[1], fallback[1], rtol=1e-6)
        assert fast[2] is fallback[2]


@pytest.mark.once
def test_probing_refuses_a_keras_without_graph_nodes():
    from kzoo.tasks import probing
    backbone = _tiny_classifier().backbone
    assert len(probing.hidden_states(backbone)) == 2
    with private_apis.forced_fallback("keras:Functional._nodes_by_depth"), \
            pytest.raises(RuntimeError, match="private_apis.py"):
        probing.hidden_states(backbone)
