"""Tasks: construction, labels for fit/evaluate, predict input. Every
registered task class gets the cases that apply to it: its labels' bad
cases come from its own `label_spec()` (`kzoo.core.labels`)."""

import inspect

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from bad_input_models import (shared_backbone, shared_preprocessor,
                              shared_task)
from kzoo.core.arguments import ArgumentError
from kzoo.core.backbone import Backbone
from kzoo.core.classification import PROBLEM_TYPES
from kzoo.core import labels
from kzoo.core.labels import LabelError
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import SequenceClassifier
from text_testing import (TASK_ARGUMENTS, example_texts, preset_for,
                          registered, task_backbone_cls)

TASKS = registered(Task)
# Tasks whose backbone has a position table (ELMo's LSTMs have none).
POSITIONAL_TASKS = [
    cls for cls in TASKS if "max_sequence_length" in
    inspect.signature(cls.backbone_cls).parameters]
N = 3  # examples per case


def required_arguments(cls):
    """Test values for the task's arguments that have no default."""
    parameters = inspect.signature(cls).parameters
    return {name: TASK_ARGUMENTS[name] for name, p in parameters.items()
            if name not in ("backbone", "preprocessor")
            and p.default is p.empty
            and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}


def task_variants():
    """(task class, constructor kwargs): every task, and every problem type
    of every sequence classifier."""
    variants = []
    for cls in TASKS:
        if issubclass(cls, SequenceClassifier):
            for problem_type in PROBLEM_TYPES:
                variants.append((cls, (("num_classes", 3),
                                       ("problem_type", problem_type))))
        else:
            variants.append((cls, ()))
    return variants


def variant_id(cls, kwargs):
    return cls.__name__ + "".join(f"-{v}" for k, v in kwargs
                                  if k == "problem_type")


def build(cls, kwargs):
    return shared_task(cls, **dict(kwargs))


# The variants whose labels are checked: their class states a label spec.
# (Collected from the class, not from a built task: building ~60 tasks at
# collection cost every pytest-xdist worker of every pass ~20 s.)
LABELLED = [pytest.param(cls, kwargs, id=variant_id(cls, kwargs))
            for cls, kwargs in task_variants()
            if cls.label_spec is not Task.label_spec]


def label_spec(task):
    spec = task.label_spec()
    assert spec is not None, f"{type(task).__name__} states no label spec"
    return spec


@pytest.mark.parametrize("cls,kwargs", LABELLED)
def test_bad_labels_in_memory(cls, kwargs):
    """Each bad case of the task's own label spec is refused by fit and by
    evaluate, with the spec's phrase."""
    task = build(cls, kwargs)
    x = example_texts(cls.preprocessor_cls, N)
    cases = list(label_spec(task).bad_examples(N))
    assert cases
    for name, bad, phrase in cases:
        for method in (task.fit, task.evaluate):
            with pytest.raises(LabelError, match=phrase) as error:
                method(x, bad, verbose=0)
            assert str(error.value).startswith(f"{cls.__name__}: "), name


@pytest.mark.parametrize("cls,kwargs", LABELLED)
def test_bad_labels_in_a_dataset(cls, kwargs):
    """Inside tf.data the labels are checked per batch, with the same
    message, raised as a LabelError (the task's data pipeline, iterated
    here without Keras; fit and evaluate run it below)."""
    task = build(cls, kwargs)
    _, bad, _ = next(
        case for case in label_spec(task).bad_examples(N)
        if "nan" in case[0] or "large" in case[0] or "2" in case[0])
    x = example_texts(cls.preprocessor_cls, N)
    dataset = tf.data.Dataset.from_tensor_slices((x, bad)).batch(N)
    with pytest.raises(LabelError, match=rf"{cls.__name__}: labels must be "
                       r".*a batch of the tf.data.Dataset holds"):
        with labels.reraise_label_errors():
            for _ in labels.check_dataset(task, dataset):
                pass


def test_evaluate_on_a_dataset_with_a_nan_target():
    task = shared_task(kzoo.BertTextClassifier, num_classes=1,
                       problem_type="regression")
    x = example_texts(kzoo.BertPreprocessor, N)
    dataset = tf.data.Dataset.from_tensor_slices(
        (x, [0.5, np.nan, 1.0])).batch(2)
    with pytest.raises(LabelError, match="regression targets.*holds nan"):
        task.evaluate(dataset, verbose=0)


def test_fit_on_a_dataset_with_a_label_too_large(bert_classifier):
    x = example_texts(kzoo.BertPreprocessor, N)
    dataset = tf.data.Dataset.from_tensor_slices((x, [0, 1, 3])).batch(2)
    with pytest.raises(LabelError, match=r"\[0, 2\].*holds 3"):
        bert_classifier.fit(dataset, verbose=0)


@pytest.mark.parametrize("cls", [c for c in TASKS
                                 if not c.preprocessor_cls.takes_labels],
                         ids=lambda c: c.__name__)
def test_self_supervised_tasks_refuse_labels(cls):
    task = shared_task(cls)
    with pytest.raises(ValueError, match="makes its own labels"):
        task.fit(example_texts(cls.preprocessor_cls, N), np.zeros(N),
                 verbose=0)


def test_labels_and_texts_of_different_lengths(bert_classifier):
    with pytest.raises(LabelError, match="3 examples in x but 2 entries in y"):
        bert_classifier.fit(example_texts(kzoo.BertPreprocessor, N), [0, 1],
                            verbose=0)


@pytest.mark.parametrize("weights,phrase", [
    ([1.0, np.nan, 1.0], r"sample_weight\[1\] is nan"),
    ([1.0, -1.0, 1.0], r"sample_weight\[1\] is -1"),
    ([1.0, 1.0], "2 entries in sample_weight"),
], ids=["nan", "negative", "too_few"])
def test_bad_sample_weights(bert_classifier, weights, phrase):
    with pytest.raises(LabelError, match=phrase):
        bert_classifier.fit(example_texts(kzoo.BertPreprocessor, N),
                            [0, 1, 2], sample_weight=np.array(weights),
                            verbose=0)


def test_bad_validation_labels(bert_classifier):
    x = example_texts(kzoo.BertPreprocessor, N)
    with pytest.raises(LabelError, match=r"labels\[2\] is 7"):
        bert_classifier.fit(x, [0, 1, 2], validation_data=(x, [0, 1, 7]),
                            verbose=0)


def test_own_loss_leaves_labels_to_it():
    """Documented: with a loss of the user's own, kzoo does not judge the
    labels (one-hot rows suit categorical cross-entropy)."""
    task = kzoo.BertTextClassifier(
        shared_backbone(kzoo.BertBackbone), num_classes=3,
        preprocessor=shared_preprocessor(kzoo.BertPreprocessor))
    x, one_hot = example_texts(kzoo.BertPreprocessor, N), np.eye(3)
    with pytest.raises(LabelError, match="one-hot"):
        labels.check_in_memory(task, x, one_hot)
    task.compile(loss="categorical_crossentropy", metrics=[])
    labels.check_in_memory(task, x, one_hot)  # no error


# ----------------------------------------------------------------------
# predict / evaluate input
# ----------------------------------------------------------------------
@pytest.mark.parametrize("bad,phrase", [
    (None, r"`x(\[0\])?` is None"),
    ([], "empty batch"),
    (5, r"must be text.*got 5 \(int\)"),
    ([1, 2, 3], r"it holds 1 \(int\)"),
    (np.zeros((2, 3)), "numpy array of float64"),
], ids=["none", "empty_list", "an_int", "ints", "float_array"])
@pytest.mark.parametrize("cls", TASKS, ids=lambda c: c.__name__)
def test_predict_bad_text(cls, bad, phrase):
    task = shared_task(cls)
    if cls.preprocessor_cls.min_segments >= 2:
        bad = (bad, bad)
    with pytest.raises(ValueError, match=phrase):
        task.predict(bad, verbose=0)


def test_predict_without_preprocessor_needs_a_dict():
    task = kzoo.BertTextClassifier(shared_backbone(kzoo.BertBackbone),
                                   num_classes=2)
    with pytest.raises(ValueError, match="has no preprocessor, so it takes "
                                         "a dict.*got NoneType"):
        task.predict(None, verbose=0)
    with pytest.raises(ValueError, match="takes a dict"):
        task.predict(["raw text"], verbose=0)


def test_pairs_of_different_lengths():
    task = shared_task(kzoo.BertPretrainer)
    with pytest.raises(ValueError, match="equal numbers"):
        task.predict((["a", "b"], ["c"]), verbose=0)


# ----------------------------------------------------------------------
# Construction
# ----------------------------------------------------------------------
# Tasks of one family (the span boundary pretrainer takes any family with a
# masked LM; its own tests refuse the others).
@pytest.mark.parametrize("cls", [c for c in TASKS
                                 if c.backbone_cls is not Backbone],
                         ids=lambda c: c.__name__)
def test_backbone_of_another_family(cls):
    other = next(b for b in registered(Backbone)
                 if not issubclass(b, cls.backbone_cls))
    with pytest.raises(ArgumentError, match=rf"{cls.__name__} needs a "
                       rf"{cls.backbone_cls.__name__} as its backbone; got "
                       rf".*{other.__name__}"):
        cls(backbone=shared_backbone(other), **required_arguments(cls))


@pytest.mark.parametrize("cls", TASKS, ids=lambda c: c.__name__)
def test_preprocessor_of_another_kind(cls):
    kwargs = required_arguments(cls)
    with pytest.raises(ArgumentError, match=rf"needs a "
                       rf"{cls.preprocessor_cls.__name__} as its "
                       r"preprocessor.*got 'tokenizer'"):
        cls(shared_backbone(task_backbone_cls(cls)), preprocessor="tokenizer",
            **kwargs)


@pytest.mark.parametrize("cls", POSITIONAL_TASKS,
                         ids=lambda c: c.__name__)
def test_sequence_longer_than_the_position_table(cls):
    backbone = shared_backbone(task_backbone_cls(cls))
    # Built around from_preset, which refuses the length itself (the
    # preset knows its table): here a preprocessor made by hand.
    base = shared_preprocessor(cls.preprocessor_cls)
    config = {**base.get_config(),
              "sequence_length": backbone.max_sequence_length + 1}
    config.pop("tokenizer", None)
    too_long = type(base).from_config(config, tokenizer=base.tokenizer)
    kwargs = required_arguments(cls)
    with pytest.raises(ValueError, match=rf"sequence_length="
                       rf"{backbone.max_sequence_length + 1} is longer than "
                       r"the position table"):
        cls(backbone, preprocessor=too_long, **kwargs)


@pytest.mark.parametrize("cls", POSITIONAL_TASKS,
                         ids=lambda c: c.__name__)
def test_from_preset_sequence_length_too_long(cls):
    kwargs = required_arguments(cls)
    with pytest.raises(ValueError, match=r"sequence_length=100000 is longer "
                       r"than the position table of the backbone of preset"):
        cls.from_preset(preset_for(task_backbone_cls(cls)), load_weights=False,
                        sequence_length=100000, **kwargs)


def test_misspelled_task_argument():
    with pytest.raises(ArgumentError, match=r"unknown argument 'num_clases'"
                       r".*Did you mean 'num_classes'"):
        kzoo.BertTextClassifier(shared_backbone(kzoo.BertBackbone),
                                num_clases=2)


def test_vocabulary_larger_than_the_embedding_table():
    small = kzoo.BertBackbone(vocabulary_size=100, num_layers=1, num_heads=2,
                              hidden_dim=16, intermediate_dim=32)
    with pytest.raises(ValueError, match=r"tokenizer has 30522 token ids but "
                       r"BertBackbone's embedding table only 100"):
        kzoo.BertTextClassifier(
            small, num_classes=2,
            preprocessor=shared_preprocessor(kzoo.BertPreprocessor))


@pytest.mark.parametrize("num_classes,problem_type,phrase", [
    (0, "single_label_classification", "num_classes must be a positive"),
    (1, "single_label_classification", "needs num_classes >= 2"),
    (2, "multi_label", "problem_type must be one of"),
], ids=["zero_classes", "one_class_softmax", "unknown_problem_type"])
def test_bad_classifier_arguments(num_classes, problem_type, phrase):
    with pytest.raises(ValueError, match=phrase):
        kzoo.BertTextClassifier(shared_backbone(kzoo.BertBackbone),
                                num_classes=num_classes,
                                problem_type=problem_type)


# ----------------------------------------------------------------------
# What fit/evaluate/predict are asked
# ----------------------------------------------------------------------
@pytest.mark.parametrize("cls,kwargs", LABELLED)
def test_fit_without_labels(cls, kwargs):
    task = build(cls, kwargs)
    label_spec(task)
    x = example_texts(cls.preprocessor_cls, N)
    with pytest.raises(LabelError, match=rf"{cls.__name__}.fit needs labels"):
        task.fit(x, verbose=0)
    dataset = tf.data.Dataset.from_tensor_slices(
        (x,) if isinstance(x, tuple) else x).batch(N)
    with pytest.raises(LabelError, match="the tf.data.Dataset holds no "
                                         "labels"):
        task.evaluate(dataset, verbose=0)


@pytest.mark.parametrize("method", ["fit", "evaluate", "predict"])
@pytest.mark.parametrize("batch_size", [0, -1, 1.5, "8"],
                         ids=["zero", "negative", "a_float", "a_string"])
def test_bad_batch_size(bert_classifier, method, batch_size):
    x = example_texts(kzoo.BertPreprocessor, N)
    args = (x,) if method == "predict" else (x, [0, 1, 2])
    with pytest.raises(ValueError, match=rf"{method}: batch_size must be a "
                                         "positive integer"):
        getattr(bert_classifier, method)(*args, batch_size=batch_size,
                                         verbose=0)


@pytest.mark.parametrize("epochs", [0, -1, 2.5])
def test_bad_epochs(bert_classifier, epochs):
    with pytest.raises(ValueError, match="epochs must be a positive integer"):
        bert_classifier.fit(example_texts(kzoo.BertPreprocessor, N),
                            [0, 1, 2], epochs=epochs, verbose=0)


def test_labels_as_a_dict(bert_classifier):
    with pytest.raises(LabelError, match=r"got a dict with keys \['label'\]"):
        bert_classifier.fit(example_texts(kzoo.BertPreprocessor, N),
                            {"label": [0, 1, 2]}, verbose=0)


@pytest.mark.parametrize("make,phrase", [
    (lambda x: tf.data.Dataset.from_tensor_slices((x, [0, 1, 2])),
     r"not batched.*\.batch\(batch_size\)"),
    (lambda x: tf.data.Dataset.from_tensor_slices(([1, 2, 3], [0, 1, 2]))
     .batch(2), r"must hold raw text \(tf.string\).*int32"),
    (lambda x: tf.data.Dataset.from_tensor_slices((x, x)).batch(2),
     "labels must be class ids.*holds text"),
    (lambda x: tf.data.Dataset.from_tensor_slices(
        (x, np.eye(3, dtype="float32"))).batch(2), "one-hot"),
], ids=["unbatched", "token_ids_not_text", "text_labels_or_pairs",
        "one_hot_labels"])
def test_bad_dataset_structure(bert_classifier, make, phrase):
    """Found from the dataset's structure, before fit starts."""
    dataset = make(example_texts(kzoo.BertPreprocessor, N))
    with pytest.raises(ValueError, match=phrase):
        bert_classifier.fit(dataset, verbose=0)


def test_model_still_works_after_a_label_error_mid_fit(bert_classifier):
    """The bad label is found inside fit's loop (second batch); the model
    keeps working (on JAX, Keras takes the weights out of the model during
    an epoch and must put them back)."""
    x = example_texts(kzoo.BertPreprocessor, N)
    before = bert_classifier.predict(x, verbose=0)
    dataset = tf.data.Dataset.from_tensor_slices((x, [0, 1, 5])).batch(2)
    with pytest.raises(LabelError, match="holds 5"):
        bert_classifier.fit(dataset, verbose=0)
    after = bert_classifier.predict(x, verbose=0)
    assert np.all(np.isfinite(np.asarray(after)))
    assert np.asarray(after).shape == np.asarray(before).shape


@pytest.mark.parametrize("bad,phrase", [
    (None, "is None"), ([], "empty batch"), (5, r"got 5 \(int\)")],
    ids=["none", "empty", "an_int"])
def test_embed_and_fill_mask_bad_text(bad, phrase):
    with pytest.raises(ValueError, match=phrase):
        shared_task(kzoo.BertTextEmbedder).embed(bad)
    with pytest.raises(ValueError, match=phrase):
        shared_task(kzoo.BertMaskedLM).fill_mask(bad)


@pytest.mark.parametrize("top_k", [0, -1, 2.5])
def test_fill_mask_bad_top_k(top_k):
    with pytest.raises(ValueError, match="top_k must be a positive integer"):
        shared_task(kzoo.BertMaskedLM).fill_mask(["a [MASK] b"], top_k=top_k)


def test_fill_mask_without_a_mask():
    with pytest.raises(ValueError, match=r'needs at least one "\[MASK\]"'):
        shared_task(kzoo.BertMaskedLM).fill_mask(["no mask here"])


def task_spec_cases():
    cases = []
    for cls in TASKS:
        parameters = inspect.signature(cls.__init__).parameters
        for name, constraint in cls.argument_spec.items():
            if name in parameters:
                cases += [pytest.param(cls, name, bad,
                                       id=f"{cls.__name__}-{name}={bad!r}")
                          for bad in constraint.bad_examples]
    return cases


@pytest.mark.parametrize("cls,argument,bad", task_spec_cases())
def test_bad_task_argument(cls, argument, bad):
    """Each task's declared `argument_spec`, checked before it is built."""
    kwargs = {**required_arguments(cls), argument: bad}
    with pytest.raises(ArgumentError, match=rf"{cls.__name__}: .*{argument}"):
        cls(shared_backbone(task_backbone_cls(cls)), **kwargs)
