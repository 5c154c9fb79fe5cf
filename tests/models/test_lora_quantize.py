"""LoRA (`backbone.enable_lora`, keras-hub's signature) and post-training
quantization (`task.quantize("int8")`) on every registered family.

For each backbone, on a task of its family (the sequence classifier, or
T5's seq2seq LM): a fresh adapter changes no output; the backbone's
trainable weights are exactly the adapters, rank x (in + out) each for
the query and value projections; a training step moves only the
adapters (and the task's head); the adapters alone survive
save/load_lora_weights; merged or saved whole (`save_to_preset`,
`.keras`) the model gives the same outputs. An int8 task stays within a
stated tolerance of its float self, and survives both formats.

BERT's cases run on every backend; the other families' are `once`
(CONTRIBUTING.md): the layers they quantize and adapt are Keras' Dense
through kzoo's `FoldedDense`, the same code on every backend, which
BERT's cases and tests/models/test_training_cross_backend.py check.
"""

import functools

import keras
import numpy as np
import pytest

import kzoo
from helpers import assert_all_close, to_numpy
from kzoo.core import lora, quantization
from kzoo.core.backbone import Backbone
from kzoo.core.task import Task
from kzoo.utils.skip_init import initial_values_skipped
from text_testing import (example_labels, example_texts, make_task,
                          model_inputs, registered, task_backbone_cls,
                          tiny_backbone)

RANK = 2
# ELMo and AWD-LSTM have no attention, so no default targets (their
# enable_lora() is an error naming what can take LoRA): their projection
# and their embedding table.
TARGETS = {"ElmoBackbone": ["token_projection"],
           "AwdLstmBackbone": ["token_embedding"]}
# int8 (Keras' absmax weights per output channel, inputs per token)
# against float32 on these tiny random models, seed 0: the largest
# |difference| of any output over max(1, the largest |output|), measured
# (torch): BERT 1.3e-4, ALBERT 8.8e-5, RoBERTa 1.0e-4, XLM-R 9.4e-5,
# DistilBERT 5.7e-5, DeBERTa-v3 4.9e-5, ELECTRA 6.3e-5, BART 1.0e-4,
# AWD-LSTM 2.8e-5 (its head alone), GPT-2 1.8e-3, ELMo 3.3e-3, and T5
# 1.4e-2 (its seq2seq LM, one decoder layer: logits unscaled by a norm;
# 3.6e-2 with the preset's six).
INT8_TOLERANCE = 1e-2
INT8_TOLERANCE_T5 = 1e-1


# Shallower than TINY makes them (CI time): T5's decoder and key/value
# width and ELMo's LSTMs keep their preset's sizes otherwise (6 decoder
# layers of 64-wide heads; 1024-wide LSTMs). The layers LoRA and int8
# touch are the same, fewer of them.
SMALLER = {"T5Backbone": dict(num_decoder_layers=1, key_value_dim=8),
           "ElmoBackbone": dict(lstm_dim=32, projection_dim=16)}


def _family_task_cls(backbone_cls):
    tasks = [task for task in registered(Task)
             if task_backbone_cls(task) is backbone_cls]
    classifiers = [task for task in tasks
                   if task.task_kind == "sequence_classifier"]
    return (classifiers or tasks)[0]


def _cases():
    return [pytest.param(cls, id=cls.__name__,
                         marks=() if cls.__name__ == "BertBackbone"
                         else pytest.mark.once)
            for cls in registered(Backbone)]


def _tiny(backbone_cls):
    return tiny_backbone(backbone_cls, dropout=0.0,
                         **SMALLER.get(backbone_cls.__name__, {}))


def _task(backbone_cls):
    """The family's tiny task: its random initial values are drawn once
    per module (most of a tiny build's time is drawing its embedding
    table) and set into a build that skips drawing them."""
    with initial_values_skipped():
        task = make_task(_family_task_cls(backbone_cls),
                         backbone=_tiny(backbone_cls))
    task.set_weights(_initial_values(backbone_cls))
    kind = type(task.preprocessor)
    x, y = example_texts(kind), example_labels(kind)
    inputs = model_inputs(task.preprocessor(x))
    inputs = {name: inputs[name] for name in task.input_names}
    return task, inputs, x, y


@functools.cache
def _initial_values(backbone_cls):
    keras.utils.set_random_seed(0)
    task = make_task(_family_task_cls(backbone_cls),
                     backbone=_tiny(backbone_cls))
    return [keras.ops.convert_to_numpy(w) for w in task.weights]


def _outputs(model, inputs):
    return to_numpy(model(inputs, training=False))


def _largest_difference(a, b):
    a, b = keras.tree.flatten(a), keras.tree.flatten(b)
    scale = max(1.0, max(float(np.max(np.abs(x))) for x in a))
    return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b)) / scale


def _values(variables):
    return [keras.ops.convert_to_numpy(v).copy() for v in variables]


@pytest.mark.parametrize("backbone_cls", _cases())
def test_lora(backbone_cls, tmp_path):
    task, inputs, x, y = _task(backbone_cls)
    backbone = task.backbone
    name = backbone_cls.__name__
    targets = TARGETS.get(name)
    if targets:  # no attention: the default targets are a clear error
        with pytest.raises(ValueError, match="target_layer_names"):
            backbone.enable_lora(RANK)
    # The expected adapters from the kernels' shapes: (in, out) -> a
    # (in, rank) and b (rank, out).
    ends = tuple(f"/{target}/{kind}"
                 for target in targets or ("query", "value")
                 for kind in ("kernel", "embeddings"))
    kernels = [w for w in backbone.weights
               if ("/" + w.path).endswith(ends)]
    assert kernels, name
    expected_count = sum(RANK * (w.shape[0] + w.shape[1]) for w in kernels)
    before = _outputs(task, inputs)

    backbone.enable_lora(RANK, target_layer_names=targets)

    # Fresh adapters (b = 0) change nothing.
    assert_all_close(_outputs(task, inputs), before, atol=1e-6,
                     what="outputs after enable_lora")
    trainable = backbone.trainable_weights
    assert all(w.path.rsplit("/", 1)[-1].startswith("lora_")
               for w in trainable), [w.path for w in trainable]
    assert len(trainable) == 2 * len(kernels)
    assert sum(int(np.prod(w.shape)) for w in trainable) == expected_count
    if name == "BertBackbone":  # 1 layer x (query, value), hidden 16
        assert expected_count == 1 * 2 * RANK * (16 + 16) == 128

    # One training step moves the adapters' b (a's gradient is zero while
    # b is) and nothing else of the backbone.
    frozen = [w for w in backbone.weights
              if not w.path.rsplit("/", 1)[-1].startswith("lora_")]
    adapters_b = [w for w in trainable if w.path.endswith("_b")]
    frozen_before, b_before = _values(frozen), _values(adapters_b)
    task.compile(optimizer=keras.optimizers.SGD(1.0))
    task.fit(x, y, batch_size=len(x), epochs=1, verbose=0, shuffle=False)
    for variable, value in zip(frozen, frozen_before):
        np.testing.assert_array_equal(
            keras.ops.convert_to_numpy(variable), value, err_msg=variable.path)
    for variable, value in zip(adapters_b, b_before):
        assert np.max(np.abs(keras.ops.convert_to_numpy(variable) - value)) \
            > 0, variable.path
    trained = _outputs(task, inputs)
    assert _largest_difference(trained, before) > 0

    # The adapters alone: into a fresh copy of the base model.
    path = tmp_path / "adapters.lora.h5"
    backbone.save_lora_weights(path)
    with initial_values_skipped():  # all set from the trained backbone
        copy = _tiny(backbone_cls)
    copy.set_weights(_base_weights(backbone, copy))
    copy.load_lora_weights(path)  # enables LoRA with the file's rank
    assert len(copy.trainable_weights) == len(trainable)
    assert_all_close(_outputs(copy, _backbone_inputs(task, inputs)),
                     _outputs(backbone, _backbone_inputs(task, inputs)),
                     atol=1e-6, what="backbone after load_lora_weights")

    # Saved whole, the kernels hold the adapters: plain models, same
    # outputs.
    task.save_to_preset(tmp_path / "preset")
    restored = type(task).from_preset(tmp_path / "preset")
    assert_all_close(_outputs(restored, inputs), trained, atol=1e-5,
                     what="outputs after save_to_preset/from_preset")
    assert not lora.lora_layers(restored.backbone)
    task.save(tmp_path / "task.keras")
    loaded = keras.models.load_model(tmp_path / "task.keras")
    assert_all_close(_outputs(loaded, inputs), trained, atol=1e-5,
                     what="outputs after .keras save/load")

    # Merged in place: same outputs, adapters restarted (b zeros).
    backbone.merge_lora_weights()
    assert_all_close(_outputs(task, inputs), trained, atol=1e-5,
                     what="outputs after merge_lora_weights")
    for variable in adapters_b:
        assert not np.any(keras.ops.convert_to_numpy(variable))


def _backbone_inputs(task, inputs):
    return {name: inputs[name] for name in task.backbone.input_names}


def _base_weights(lora_backbone, plain_backbone):
    """`lora_backbone`'s base weights, in `plain_backbone`'s order."""
    by_path = {w.path: w for w in lora_backbone.weights}
    return [keras.ops.convert_to_numpy(by_path[w.path])
            for w in plain_backbone.weights]


@pytest.mark.parametrize("backbone_cls", _cases())
def test_int8(backbone_cls, tmp_path):
    task, inputs, _, _ = _task(backbone_cls)
    expected = _outputs(task, inputs)

    task.quantize("int8")

    quantized = quantization.quantized_layers(task)
    assert quantized and set(quantized.values()) == {"int8_from_float32"}
    outputs = _outputs(task, inputs)
    difference = _largest_difference(outputs, expected)
    print(f"{backbone_cls.__name__} int8 |diff| / scale: {difference:.2e}")
    tolerance = INT8_TOLERANCE_T5 if backbone_cls.__name__ == \
        "T5Backbone" else INT8_TOLERANCE
    assert 0 < difference <= tolerance
    with pytest.raises(ValueError, match="already quantized.*once"):
        task.quantize("int8")

    task.save_to_preset(tmp_path / "preset")
    restored = type(task).from_preset(tmp_path / "preset")
    assert quantization.quantized_layers(restored) == quantized
    assert_all_close(_outputs(restored, inputs), outputs, atol=1e-6,
                     what="int8 outputs after save_to_preset/from_preset")
    task.save(tmp_path / "task.keras")
    loaded = keras.models.load_model(tmp_path / "task.keras")
    assert quantization.quantized_layers(loaded) == quantized
    assert_all_close(_outputs(loaded, inputs), outputs, atol=1e-6,
                     what="int8 outputs after .keras save/load")


def test_float8():
    """Keras' float8 (e4m3 weights and inputs, delayed scaling) on
    BERT's classifier: measured |diff| / scale 5.6e-4 (torch)."""
    task, inputs, _, _ = _task(kzoo.BertBackbone)
    expected = _outputs(task, inputs)
    task.quantize("float8")
    assert set(quantization.quantized_layers(task).values()) == \
        {"float8_from_float32"}
    assert 0 < _largest_difference(_outputs(task, inputs), expected) <= \
        INT8_TOLERANCE


@pytest.mark.once
def test_bad_calls_say_what_to_do(tmp_path):
    with initial_values_skipped():
        bert = tiny_backbone(kzoo.BertBackbone)
        awd_lstm = tiny_backbone(kzoo.AwdLstmBackbone)
    with pytest.raises(ValueError, match="rank must be a positive integer"):
        bert.enable_lora(0)
    with pytest.raises(ValueError, match=r"Use \['query'\]"):
        bert.enable_lora(2, target_layer_names="query")
    with pytest.raises(ValueError, match="no layer named \\['nothing'\\].*"
                       "take LoRA are named"):
        bert.enable_lora(2, target_layer_names=["nothing"])
    with pytest.raises(ValueError, match="LoRA is not enabled.*"
                       "enable_lora"):
        bert.save_lora_weights(tmp_path / "a.lora.h5")
    with pytest.raises(ValueError, match="no attention.*token_embedding.*"
                       "target_layer_names"):
        awd_lstm.enable_lora(2)
    with pytest.raises(ValueError, match="no Dense projection to quantize"):
        awd_lstm.quantize("int8")
    with pytest.raises(ValueError, match="mode must be one of"):
        bert.quantize("int4")  # Keras has it; kzoo has not tested it

    bert.enable_lora(2)
    with pytest.raises(ValueError, match="already enabled"):
        bert.enable_lora(2)
    with pytest.raises(ValueError, match=r"must end in '\.lora\.h5'"):
        bert.save_lora_weights(tmp_path / "adapters.h5")
    bert.save_lora_weights(tmp_path / "rank2.lora.h5")
    with initial_values_skipped():
        other = tiny_backbone(kzoo.BertBackbone)
    other.enable_lora(4)
    with pytest.raises(ValueError, match="rank-2 adapters.*rank 4"):
        other.load_lora_weights(tmp_path / "rank2.lora.h5")
    bert.save_weights(tmp_path / "plain.weights.h5")
    with pytest.raises(ValueError, match="not a kzoo LoRA file"):
        other.load_lora_weights(tmp_path / "plain.weights.h5")

    bert.quantize("int8")
    with pytest.raises(ValueError, match="already quantized \\(int8"):
        bert.quantize("float8")
