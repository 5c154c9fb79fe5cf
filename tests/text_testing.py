"""Every registered text class, found through the registry, built small.

The contract tests (tokenizers, preprocessors, `.keras` saving) are
parametrised over `kzoo.core.registry._CLASSES`: a new family's classes
are tested as soon as they are registered, with no new test code. Links
come from the classes themselves: a task names its `backbone_cls` and
`preprocessor_cls`, a preprocessor its `tokenizer_cls`; a backbone's named
preset is the smallest one whose config builds that class.
"""

import functools
import inspect
from pathlib import Path

import keras
import numpy as np
import pytest

from kzoo import presets
from kzoo.core.backbone import Backbone
from kzoo.core.preprocessor import Preprocessor
from kzoo.core.registry import _CLASSES
from kzoo.core.task import Task
from kzoo.core.tokenizer import Tokenizer

# Shrinks any backbone config that has these keys (sizes shared by every
# transformer family); the vocabulary and position table stay the preset's.
TINY = dict(num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32)
# Values for task constructor arguments that have no default.
TASK_ARGUMENTS = {"num_classes": 3}
SEQUENCE_LENGTH = 12

TEXTS = ["It is a truth universally acknowledged, that a single man",
         "Hello world",
         "Ünïcödé, 日本語 and emoji 🙂 too"]
SECOND_TEXTS = ["in possession of a good fortune", "Hi", "a b"]


def registered(base):
    """Registered subclasses of `base`, by name (pytest ids)."""
    return sorted((cls for cls in _CLASSES.values()
                   if issubclass(cls, base) and cls is not base),
                  key=lambda cls: cls.__name__)


def params(base):
    return [pytest.param(cls, id=cls.__name__) for cls in registered(base)]


def tasks_using(preprocessor_cls):
    return [task for task in registered(Task)
            if task.preprocessor_cls is preprocessor_cls]


def backbone_cls_for(preprocessor_cls):
    packing = _default_packing(preprocessor_cls)
    if packing is not None:  # a generic head's: tested on BERT's packing
        return backbone_cls_for(packing)
    tasks = [task for task in tasks_using(preprocessor_cls)
             if task.backbone_cls is not Backbone]
    if not tasks and preprocessor_cls.tokenizer_cls is Tokenizer:
        # A preprocessor for any family's tokenizer, used by a task on any
        # family's backbone (question answering's windows): tested on
        # BERT's.
        from kzoo.models.bert import BertBackbone
        return BertBackbone
    assert tasks, (f"no registered task uses {preprocessor_cls.__name__}; "
                   "register one (tasks declare preprocessor_cls) so the "
                   "preprocessor is tested with a model")
    return tasks[0].backbone_cls


def task_backbone_cls(task_cls):
    """The backbone class a task is tested with: its own; for a task on
    any family's backbone (`backbone_cls = Backbone`, the span boundary
    pretrainer), that of its preprocessor's family."""
    if task_cls.backbone_cls is not Backbone:
        return task_cls.backbone_cls
    return backbone_cls_for(task_cls.preprocessor_cls)


# Named presets whose tokenizer files come with the weights (RoBERTa's
# vocab.json) cannot tokenize offline; the tests use a stand-in of the same
# name here: the preset's config, with real-format tokenizer files.
STAND_IN_PRESETS = Path(__file__).resolve().parent / "data" / "presets"


@functools.lru_cache(maxsize=None)
def preset_for(backbone_cls):
    """The smallest named preset of `backbone_cls` that ships a tokenizer
    (its stand-in folder, where tests/data/presets has one)."""
    found = []
    for row in presets.list():
        preset = presets.resolve(row["name"])
        remote = any(record.get("remote") for record in
                     preset.metadata.get("tokenizer", {}).values())
        if remote and not (STAND_IN_PRESETS / row["name"]).is_dir():
            continue  # its tokenizer files come with the weights
        if preset.json("config.json")["class_name"] == backbone_cls.__name__ \
                and preset.has("tokenizer.json"):
            found.append((row["params"] or 0, row["name"]))
    assert found, f"no named preset builds {backbone_cls.__name__}"
    name = min(found)[1]
    stand_in = STAND_IN_PRESETS / name
    return str(stand_in) if stand_in.is_dir() else name


def preset_for_tokenizer(tokenizer_cls):
    for preprocessor_cls in registered(Preprocessor):
        if preprocessor_cls.tokenizer_cls is tokenizer_cls:
            return preset_for(backbone_cls_for(preprocessor_cls))
    pytest.fail(f"no registered preprocessor uses {tokenizer_cls.__name__}")


def tiny_backbone(backbone_cls, dropout=None, **config_overrides):
    """A random, tiny `backbone_cls` from its preset's config; `dropout`
    (e.g. 0.0) replaces every dropout rate the config has;
    `config_overrides` set further keys (e.g. T5's num_decoder_layers)."""
    preset = preset_for(backbone_cls)
    config = presets.resolve(preset).json("config.json")["config"]
    overrides = {k: v for k, v in TINY.items() if k in config}
    if dropout is not None:
        overrides.update({k: dropout for k in config if "dropout" in k})
    overrides.update(config_overrides)
    return backbone_cls.from_preset(preset, load_weights=False, **overrides)


def make_preprocessor(preprocessor_cls, sequence_length=SEQUENCE_LENGTH,
                      **kwargs):
    preset = preset_for(backbone_cls_for(preprocessor_cls))
    return preprocessor_cls.from_preset(preset,
                                        sequence_length=sequence_length,
                                        **kwargs)


def make_tokenizer(tokenizer_cls):
    return tokenizer_cls.from_preset(preset_for_tokenizer(tokenizer_cls))


def make_task_preprocessor(task_cls, sequence_length=SEQUENCE_LENGTH,
                           preset=None):
    """The preprocessor the task's `from_preset` would give it (e.g. span
    masking for the span boundary pretrainer)."""
    preset = preset or preset_for(task_backbone_cls(task_cls))
    return task_cls.preprocessor_for(preset, sequence_length=sequence_length)


def make_task(task_cls, backbone=None, preprocessor="auto", **overrides):
    """`task_cls` on a tiny backbone, with TASK_ARGUMENTS for its required
    arguments; `overrides` go to its constructor as they are."""
    backbone = backbone or tiny_backbone(task_backbone_cls(task_cls))
    if isinstance(preprocessor, str):
        preprocessor = make_task_preprocessor(task_cls)
    kwargs = dict(overrides)
    for name, parameter in inspect.signature(task_cls).parameters.items():
        if name in overrides:
            continue
        # (A None default that TASK_ARGUMENTS covers is a required value
        # given another way: TokenClassifier's num_classes or label_names.)
        if name in TASK_ARGUMENTS and parameter.default is None:
            kwargs[name] = TASK_ARGUMENTS[name]
            continue
        if name in ("backbone", "preprocessor") or \
                parameter.default is not inspect.Parameter.empty or \
                parameter.kind in (parameter.VAR_KEYWORD,
                                   parameter.VAR_POSITIONAL):
            continue
        assert name in TASK_ARGUMENTS, (
            f"{task_cls.__name__} needs `{name}`: add a test value to "
            "TASK_ARGUMENTS in tests/text_testing.py")
        kwargs[name] = TASK_ARGUMENTS[name]
    return task_cls(backbone=backbone, preprocessor=preprocessor, **kwargs)


def _default_packing(preprocessor_cls):
    """The family preprocessor a generic head's preprocessor packs with by
    default (its `packing` argument), or None."""
    parameter = inspect.signature(preprocessor_cls).parameters.get("packing")
    return None if parameter is None else _CLASSES[parameter.default]


def example_texts(preprocessor_cls, n=len(TEXTS)):
    """Raw input for the preprocessor: texts, or pairs when it needs them;
    words for a token classifier, (contexts, choices) for multiple
    choice."""
    name = preprocessor_cls.__name__
    if getattr(preprocessor_cls, "takes_words", False):  # word taggers
        return [text.split() for text in TEXTS[:n]]
    if name == "MultipleChoicePreprocessor":
        return (TEXTS[:n], [[second, "another choice"]
                            for second in SECOND_TEXTS[:n]])
    if preprocessor_cls.min_segments >= 2:
        return (TEXTS[:n], SECOND_TEXTS[:n])
    return TEXTS[:n]


def example_labels(preprocessor_cls, n=len(TEXTS)):
    if not preprocessor_cls.takes_labels:
        return None
    if getattr(preprocessor_cls, "takes_words", False):
        return [[i % 2 for i, _ in enumerate(text.split())]
                for text in TEXTS[:n]]
    return np.arange(n, dtype="int32") % 2


def text_dataset(preprocessor_cls, x, y=None, batch_size=None):
    """A `tf.data.Dataset` of the raw examples `x` (and labels `y`), as a
    user builds one: a text pair travels as one element; a token
    classifier's word lists (and word labels) as ragged tensors, batched
    with `ragged_batch`. Unbatched when `batch_size` is None."""
    import tensorflow as tf
    words = getattr(preprocessor_cls, "takes_words", False)
    if words:
        x = tf.ragged.constant(x, dtype=tf.string)
        y = None if y is None else tf.ragged.constant(y, dtype=tf.int32)
    elements = x if y is None else (x, y)
    if y is None and isinstance(x, tuple):
        elements = (x,)  # a pair travels as one element
    dataset = tf.data.Dataset.from_tensor_slices(elements)
    if batch_size is None:
        return dataset
    return dataset.ragged_batch(batch_size) if words \
        else dataset.batch(batch_size)


def per_sequence(inputs):
    """Model inputs with a choices axis folded into the batch: a
    multiple-choice preprocessor gives `(batch, choices, seq)` (its padding
    mask has three axes), which its task folds to `(batch * choices, seq)`
    before the backbone. Other inputs (ELMo's `(batch, seq, characters)`)
    are returned as they are."""
    mask = inputs.get("padding_mask")
    if mask is None or len(tuple(mask.shape)) < 3:
        return inputs
    return {k: keras.ops.reshape(v, (-1,) + tuple(v.shape)[2:])
            for k, v in inputs.items()}


def model_inputs(outputs):
    """The x of a preprocessor's output (a dict, or the first of x, y,
    sample_weight)."""
    return outputs if isinstance(outputs, dict) else outputs[0]


def is_backend_tensor(x):
    """A tensor of the current Keras backend (tf only on TensorFlow)."""
    import tensorflow as tf
    if keras.backend.backend() != "tensorflow" and tf.is_tensor(x):
        return False
    return keras.ops.is_tensor(x)


def registered_tokenizers():
    return params(Tokenizer)


def registered_backbones():
    return params(Backbone)
