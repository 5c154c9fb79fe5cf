"""The preprocessing contract, for every registered preprocessor (found
through the registry, so a new family is covered with no new test code):

- called eagerly it returns tensors of the current backend, which go
  straight into its backbone and into every task that uses it;
- inside tf.data it returns tf values, the same as eagerly;
- it checks its input and its sequence_length in the base class, with
  errors that name the argument, the value and what to do.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import to_numpy, without_names
from kzoo.core import input_pipeline
from kzoo.core.preprocessor import Preprocessor
from kzoo.core.tokenizer import Tokenizer
from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.utils import traced
from text_testing import (SEQUENCE_LENGTH, example_labels, example_texts,
                          is_backend_tensor, make_preprocessor, make_task,
                          make_task_preprocessor, model_inputs, params,
                          per_sequence, tasks_using, text_dataset,
                          tiny_backbone, backbone_cls_for)

PREPROCESSORS = params(Preprocessor)


@pytest.fixture(scope="module")
def built():
    """One preprocessor per class (building them is the slow part)."""
    cache = {}

    def get(preprocessor_cls):
        if preprocessor_cls not in cache:
            cache[preprocessor_cls] = make_preprocessor(preprocessor_cls)
        return cache[preprocessor_cls]
    return get


def padding_mask(inputs):
    """The (encoder's) padding mask of a preprocessor's model inputs."""
    return inputs["padding_mask"] if "padding_mask" in inputs \
        else inputs["encoder_padding_mask"]


@pytest.mark.parametrize("preprocessor_cls", PREPROCESSORS)
def test_eager_outputs_are_backend_tensors(preprocessor_cls, built):
    preprocessor = built(preprocessor_cls)
    x, y = example_texts(preprocessor_cls), example_labels(preprocessor_cls)
    outputs = preprocessor(x, y)
    for value in keras.tree.flatten(outputs):
        assert is_backend_tensor(value), (
            f"{preprocessor_cls.__name__} returned a {type(value)} on "
            f"{keras.backend.backend()}")
    inputs = model_inputs(outputs)
    batch = len(example_texts(preprocessor_cls, 3)[0]) \
        if isinstance(x, tuple) else len(x)
    # (batch, seq), or (batch, choices, seq) for multiple choice.
    mask_shape = tuple(padding_mask(inputs).shape)
    assert mask_shape[0] == batch and mask_shape[-1] == SEQUENCE_LENGTH
    for value in keras.tree.flatten(outputs):
        assert value.shape[0] == batch


# Shapes and dtypes that fit: the same on every backend (the outputs are
# backend tensors, checked above in every pass; the models' forward pass
# is held equal across backends by test_training_cross_backend), so once.
@pytest.mark.once
@pytest.mark.parametrize("preprocessor_cls", PREPROCESSORS)
def test_output_feeds_its_backbone_and_tasks(preprocessor_cls, built):
    preprocessor = built(preprocessor_cls)
    inputs = model_inputs(preprocessor(example_texts(preprocessor_cls),
                                       example_labels(preprocessor_cls)))
    backbone = tiny_backbone(backbone_cls_for(preprocessor_cls))
    folded = per_sequence(inputs)
    outputs = backbone({k: folded[k] for k in backbone.input_names})
    for value in keras.tree.flatten(outputs):
        assert np.all(np.isfinite(keras.ops.convert_to_numpy(value)))
    for task_cls in tasks_using(preprocessor_cls):
        task_preprocessor, task_inputs = preprocessor, inputs
        own = make_task_preprocessor(task_cls)
        if without_names(own.get_config()) != without_names(
                preprocessor.get_config()):  # e.g. span masking for SBO
            task_preprocessor = own
            task_inputs = model_inputs(own(example_texts(preprocessor_cls),
                                           example_labels(preprocessor_cls)))
        task = make_task(task_cls, backbone=backbone,
                         preprocessor=task_preprocessor)
        outputs = task({k: task_inputs[k] for k in task.input_names})
        for value in keras.tree.flatten(outputs):
            assert np.all(np.isfinite(keras.ops.convert_to_numpy(value))), \
                task_cls.__name__


@pytest.mark.parametrize("preprocessor_cls", PREPROCESSORS)
def test_public_packing_steps_return_backend_tensors(preprocessor_cls,
                                                     built):
    # `pack` (and `mask`, where there is one) are called eagerly on their
    # own too, e.g. by fill_mask: the same contract as __call__.
    preprocessor = built(preprocessor_cls)
    if not hasattr(preprocessor, "pack"):
        return
    packed = preprocessor.pack(example_texts(preprocessor_cls))
    steps = [packed]
    if hasattr(preprocessor, "mask"):
        steps.append(preprocessor.mask(packed))
    backbone = tiny_backbone(backbone_cls_for(preprocessor_cls))
    for outputs in steps:
        for value in keras.tree.flatten(outputs):
            assert is_backend_tensor(value), type(value)
        inputs = model_inputs(outputs)
        backbone({k: inputs[k] for k in backbone.input_names})


# Tests and `Task.fit` rely on the declaration, not on comparing two calls:
# two random draws on a short text can coincide (a BART noise draw did, and
# failed a round-trip test that then expected equal outputs).
@pytest.mark.parametrize("preprocessor_cls", PREPROCESSORS)
def test_draws_per_call_says_whether_calls_differ(preprocessor_cls, built):
    preprocessor = built(preprocessor_cls)
    x, y = example_texts(preprocessor_cls), example_labels(preprocessor_cls)
    first = keras.tree.flatten(to_numpy(preprocessor(x, y)))

    def differs():
        again = keras.tree.flatten(to_numpy(preprocessor(x, y)))
        return any(not np.array_equal(a, b) for a, b in zip(first, again))
    if preprocessor.draws_per_call:  # 20 equal draws in a row: ~never
        assert any(differs() for _ in range(20)), \
            f"{preprocessor_cls.__name__} says it draws per call but does not"
    else:
        assert not differs(), (f"{preprocessor_cls.__name__} differs between "
                               "calls; set draws_per_call = True")


# Inside tf.data a preprocessor is TensorFlow whatever the Keras backend
# (only its eager outputs are converted, checked on every backend above),
# so comparing the traced and eager paths for every class runs once per
# suite: its first use inside a `dataset.map` (where a tokenizer sets
# itself up) against its eager call, and `preprocess_once`'s traced
# graph against its eager rows. The first also runs on every backend for
# one preprocessor of each kind of tokenizer (what differs by backend is
# the eager/traced switch of the tokenizer's implementation and of the
# base classes; tokenizer classes of one kind differ in their special
# tokens and settings, which the once-per-suite check covers).
@pytest.mark.once
@pytest.mark.parametrize("preprocessor_cls", PREPROCESSORS)
def test_prepared_once_the_same_eagerly_and_traced(preprocessor_cls, built,
                                                   monkeypatch):
    """A task prepares in-memory text once per fit/predict
    (`preprocess_once`): eagerly when the examples are few, in the traced
    graph when they are many. Both give the same rows, and only the
    second builds a graph."""
    preprocessor = built(preprocessor_cls)
    x, y = example_texts(preprocessor_cls), example_labels(preprocessor_cls)
    examples = text_dataset(preprocessor_cls, x, y)
    assert int(examples.cardinality()) <= \
        input_pipeline.EAGER_PREPROCESS_LIMIT
    eager = input_pipeline.preprocess_once(examples, preprocessor)
    assert "prepare" not in traced._FUNCTIONS.get(preprocessor, {})
    monkeypatch.setattr(input_pipeline, "EAGER_PREPROCESS_LIMIT", 0)
    in_graph = input_pipeline.preprocess_once(examples, preprocessor)
    assert "prepare" in traced._FUNCTIONS[preprocessor]
    eager, in_graph = to_numpy(eager), to_numpy(in_graph)
    keras.tree.assert_same_structure(in_graph, eager)
    for a, b in zip(keras.tree.flatten(in_graph), keras.tree.flatten(eager)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def _tokenizer_kind(tokenizer_cls):
    """The tokenizer's implementation: the class right below the base
    `Tokenizer` (byte-level BPE for GPT-2, RoBERTa and BART; WordPiece for
    BERT, DistilBERT and ELECTRA; SentencePiece for four families), or
    the base itself for the generic task preprocessors, which take any."""
    return next((cls for cls in tokenizer_cls.__mro__
                 if Tokenizer in cls.__bases__), tokenizer_cls)


def _one_per_tokenizer_kind():
    """A masked LM's preprocessor where the kind has one (its masker sets
    itself up inside the trace too), else the first."""
    chosen = {}
    for param in PREPROCESSORS:
        cls = param.values[0]
        kind = _tokenizer_kind(cls.tokenizer_cls)
        if kind not in chosen or (
                issubclass(cls, MaskedLMPreprocessor) and not issubclass(
                    chosen[kind].values[0], MaskedLMPreprocessor)):
            chosen[kind] = param
    return list(chosen.values())


ONE_PER_TOKENIZER_KIND = _one_per_tokenizer_kind()


def check_first_use_inside_tf_data_unbatched(preprocessor_cls):
    """A fresh preprocessor sets up inside the tf.data trace (as a loaded
    model's does), mapped one example at a time (`dataset.map` before
    `.batch`); it gives tf values, the same as it gives eagerly for the
    same batch."""
    preprocessor = make_preprocessor(preprocessor_cls)
    x, y = example_texts(preprocessor_cls), example_labels(preprocessor_cls)
    n = len(x[0]) if isinstance(x, tuple) else len(x)
    dataset = text_dataset(preprocessor_cls, x, y).map(preprocessor)
    in_graph = next(iter(dataset.batch(n)))
    for value in keras.tree.flatten(in_graph):
        assert isinstance(value, tf.Tensor)
    # (n, seq), or (n, choices, seq) for multiple choice.
    shape = tuple(padding_mask(model_inputs(in_graph)).shape)
    assert shape[0] == n and shape[-1] == SEQUENCE_LENGTH
    eager = to_numpy(preprocessor(x, y))
    in_graph = to_numpy(in_graph)
    keras.tree.assert_same_structure(in_graph, eager)
    for a, b in zip(keras.tree.flatten(in_graph), keras.tree.flatten(eager)):
        assert a.shape == b.shape and a.dtype == b.dtype
        if not preprocessor.draws_per_call:
            np.testing.assert_array_equal(a, b)


@pytest.mark.once
@pytest.mark.parametrize("preprocessor_cls", [
    param for param in PREPROCESSORS
    if param not in ONE_PER_TOKENIZER_KIND])
def test_first_use_inside_tf_data_unbatched(preprocessor_cls):
    # The others run in every pass, below.
    check_first_use_inside_tf_data_unbatched(preprocessor_cls)


@pytest.mark.parametrize("preprocessor_cls", ONE_PER_TOKENIZER_KIND)
def test_first_use_inside_tf_data_on_this_backend(preprocessor_cls):
    check_first_use_inside_tf_data_unbatched(preprocessor_cls)


# ----------------------------------------------------------------------
# Bad input: one clear error each, raised by the base class
# ----------------------------------------------------------------------
def _as_x(preprocessor_cls, value):
    """`value` as the whole x, or as each text of a pair-only input."""
    if preprocessor_cls.min_segments >= 2:
        return (value, value)
    return value


@pytest.mark.parametrize("preprocessor_cls", PREPROCESSORS)
@pytest.mark.parametrize("bad, message", [
    ([], r"is an empty batch \(\[\] \(list\)\).*at least one string"),
    (np.array([], dtype=str), "is an empty batch"),
    (None, r"is None; it must be text"),
    (5, r"must be text.*got 5 \(int\)"),
    ([5, 6], r"holds 5 \(int\)"),
    (np.array([1, 2]), r"numpy array of int64.*not token ids"),
    ({"text": ["a"]}, r"got \{'text'"),
])
def test_bad_text_is_refused_clearly(preprocessor_cls, bad, message, built):
    preprocessor = built(preprocessor_cls)
    with pytest.raises(ValueError, match=message) as error:
        preprocessor(_as_x(preprocessor_cls, bad))
    assert preprocessor_cls.__name__ in str(error.value)
    assert "`x" in str(error.value)  # names the argument


@pytest.mark.parametrize("preprocessor_cls", PREPROCESSORS)
def test_number_tensor_is_refused(preprocessor_cls, built):
    preprocessor = built(preprocessor_cls)
    with pytest.raises(ValueError, match="tensor of int32.*not token ids"):
        preprocessor(_as_x(preprocessor_cls, tf.constant([1, 2])))


@pytest.mark.parametrize("preprocessor_cls", PREPROCESSORS)
def test_wrong_number_of_texts_per_example(preprocessor_cls, built):
    preprocessor = built(preprocessor_cls)
    too_many = tuple(["a text"] for _ in range(preprocessor_cls.max_segments
                                               + 1))
    with pytest.raises(ValueError, match=preprocessor_cls.__name__ +
                       r" takes .*got \d texts per example"):
        preprocessor(too_many)
    if preprocessor_cls.max_segments >= 2:
        with pytest.raises(ValueError, match=r"equal numbers.*\[2, 1\]"):
            preprocessor((["a", "b"], ["c"]))


@pytest.mark.parametrize("preprocessor_cls", PREPROCESSORS)
def test_labels_refused_when_made_internally(preprocessor_cls, built):
    preprocessor = built(preprocessor_cls)
    x = example_texts(preprocessor_cls, 1)
    if preprocessor_cls.takes_labels:
        preprocessor(x, example_labels(preprocessor_cls, 1))  # accepted
    else:
        with pytest.raises(ValueError, match="makes its own labels"):
            preprocessor(x, np.array([1]))


@pytest.mark.parametrize("preprocessor_cls", PREPROCESSORS)
@pytest.mark.parametrize("sequence_length", [0, -3, 2.5, "16", None, True])
def test_sequence_length_must_be_a_positive_integer(preprocessor_cls,
                                                    sequence_length, built):
    tokenizer = built(preprocessor_cls).tokenizer
    with pytest.raises(ValueError, match=r"sequence_length must be a "
                       r"positive integer.*got " +
                       repr(sequence_length).replace(".", r"\.")):
        preprocessor_cls(tokenizer, sequence_length=sequence_length)


@pytest.mark.parametrize("preprocessor_cls", PREPROCESSORS)
def test_sequence_length_leaves_room_for_special_tokens(preprocessor_cls,
                                                        built):
    """Each preprocessor declares what its special tokens take
    (`special_token_count`); the base class refuses less, at construction
    for one example's worth of texts, and the minimum itself gives outputs
    of exactly that length."""
    preprocessor = built(preprocessor_cls)
    tokenizer = preprocessor.tokenizer
    needed = max(1, preprocessor.special_token_count(
        preprocessor_cls.min_segments))
    if needed > 1:
        with pytest.raises(ValueError, match=(
                f"sequence_length={needed - 1} is too short.*take {needed} "
                f"positions.*sequence_length >= {needed}")):
            preprocessor_cls(tokenizer, sequence_length=needed - 1)
    shortest = preprocessor_cls(tokenizer, sequence_length=needed)
    x = example_texts(preprocessor_cls, 2)
    inputs = model_inputs(shortest(x, example_labels(preprocessor_cls, 2)))
    # (2, needed), or (2, choices, needed) for multiple choice.
    shape = tuple(padding_mask(inputs).shape)
    assert shape[0] == 2 and shape[-1] == needed, shape


def test_pairs_need_more_room_than_single_texts(built):
    # Checked on first use with pairs: the layout is known only then.
    for preprocessor_cls in [cls.values[0] for cls in PREPROCESSORS]:
        if preprocessor_cls.max_segments < 2:
            continue
        tokenizer = built(preprocessor_cls).tokenizer
        single = max(1, built(preprocessor_cls).special_token_count(1))
        pairs = built(preprocessor_cls).special_token_count(2)
        if pairs <= single or preprocessor_cls.min_segments >= 2:
            continue
        preprocessor = preprocessor_cls(tokenizer, sequence_length=single)
        preprocessor(["fits"])
        with pytest.raises(ValueError, match=f"2 texts take {pairs}"):
            preprocessor((["a"], ["b"]))


def test_every_preprocessor_has_a_task():
    # Otherwise the contract tests above could not feed it to a model.
    for param in PREPROCESSORS:
        assert tasks_using(param.values[0]), param.id


def test_no_private_keras_hub_arguments():
    # Packaging floors may not depend on keras-hub's private API; the
    # eager/graph difference is handled with public calls (as_tf).
    import kzoo
    from pathlib import Path
    for path in Path(kzoo.__file__).parent.rglob("*.py"):
        assert "_allow_python_workflow" not in path.read_text(), path


@pytest.mark.once
def test_base_class_from_preset_gives_the_family_preprocessor(tmp_path):
    """`kzoo.Preprocessor.from_preset` returns the preset's own class, as
    `Backbone.from_preset` and `Tokenizer.from_preset` do; a family without
    a plain text preprocessor is a clear error."""
    bert = kzoo.Preprocessor.from_preset("bert_tiny_en_uncased",
                                         sequence_length=8)
    assert type(bert) is kzoo.BertPreprocessor and bert.sequence_length == 8
    assert type(kzoo.Preprocessor.from_preset("gpt2_base_en")) is \
        kzoo.GPT2Preprocessor
    # A saved preprocessor's class wins.
    kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_tiny_en_uncased", sequence_length=8).save_to_preset(tmp_path)
    kzoo.BertBackbone.from_preset("bert_tiny_en_uncased",
                                  load_weights=False).save_to_preset(tmp_path)
    assert type(kzoo.Preprocessor.from_preset(str(tmp_path))) is \
        kzoo.BertMaskedLMPreprocessor
    with pytest.raises(kzoo.presets.PresetError,
                       match="T5Backbone, whose family has no plain text"):
        kzoo.Preprocessor.from_preset("t5_small_multi")


@pytest.mark.once
def test_a_pretrained_masked_lm_preset_fine_tunes_as_a_classifier(tmp_path):
    """`kzoo pretrain` saves a masked LM's preset (its preprocessor.json
    holds the masking rates); a text classifier loads from it with its own
    plain preprocessor, the packing settings carried over."""
    import kzoo
    preprocessor = kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_tiny_en_uncased", sequence_length=16, mask_selection_rate=0.2)
    mlm = kzoo.BertMaskedLM.from_preset(
        "bert_tiny_en_uncased", load_weights=False,
        preprocessor=preprocessor)
    mlm.save_to_preset(tmp_path / "pretrained")
    classifier = kzoo.BertTextClassifier.from_preset(
        tmp_path / "pretrained", num_classes=2)
    assert type(classifier.preprocessor) is kzoo.BertPreprocessor
    assert classifier.preprocessor.sequence_length == 16
    assert classifier.predict(["A line of text."]).shape == (1, 2)
