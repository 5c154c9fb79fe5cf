"""Shared test helpers: one place for the checks every model family runs.

A family's tests build a small instance and example inputs, then call:

    check_backbone(backbone, inputs, tmp_path)        # config, lengths,
                                                      # predict, preset
    check_task(task, texts, labels, tmp_path)          # fit/predict on raw
                                                      # text, preset
    check_preset("bert_tiny_en_uncased", kzoo.BertBackbone)

Everything here is generic: it looks at a model's inputs/outputs as nested
structures of arrays and never at a family's names. Test data is read from
`tests/data/` only (a user's clone has nothing outside the repository).
"""

from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from kzoo import presets as kzoo_presets
from kzoo.utils.files import read_json

DATA_DIR = Path(__file__).resolve().parent / "data"
GOLDEN_DIR = DATA_DIR / "golden"
AUSTEN_DIR = DATA_DIR / "austen"
AUSTEN_NOVELS = ("pride_and_prejudice", "sense_and_sensibility")

# Special ids of the bert-base-uncased vocabulary.
BERT_SPECIAL_IDS = {"[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102,
                    "[MASK]": 103}


# ----------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------
def golden_cases(name):
    """llama.cpp tokenizer vectors: a list of (text, expected ids)."""
    inp = (GOLDEN_DIR / f"{name}.inp").read_text(encoding="utf-8")
    out = (GOLDEN_DIR / f"{name}.out").read_text(encoding="utf-8")
    texts = inp.split("\n__ggml_vocab_test__\n")
    assert texts[-1] == "", "the .inp must end with a terminator"
    texts = texts[:-1]
    ids = [[int(t) for t in line.split()] for line in out.split("\n")[:-1]]
    assert len(texts) == len(ids), (len(texts), len(ids))
    return list(zip(texts, ids))


def austen_text(novel):
    return (AUSTEN_DIR / f"{novel}_excerpt.txt").read_text(encoding="utf-8")


def austen_paragraphs(novel, min_words=1):
    """Paragraphs (blank-line separated), each joined onto one line."""
    paragraphs = []
    for block in austen_text(novel).split("\n\n"):
        text = " ".join(block.split())
        if len(text.split()) >= min_words:
            paragraphs.append(text)
    return paragraphs


def austen_chapters(novel):
    """Chapters of the excerpt, each a string (documents for NSP)."""
    chapters, current = [], []
    for line in austen_text(novel).splitlines():
        if line.strip().lower().startswith("chapter"):
            if current:
                chapters.append(" ".join(current))
            current = []
        elif line.strip():
            current.append(line.strip())
    if current:
        chapters.append(" ".join(current))
    return chapters


def austen_passages(novel, words=24):
    """The excerpt as consecutive passages of `words` words."""
    tokens = austen_text(novel).split()
    return [" ".join(tokens[i:i + words])
            for i in range(0, len(tokens) - words + 1, words)]


# ----------------------------------------------------------------------
# Small BERTs
# ----------------------------------------------------------------------
TINY_BERT = dict(num_layers=2, num_heads=2, hidden_dim=32,
                 intermediate_dim=64, max_sequence_length=64)


def make_tiny_bert(vocabulary_size=30522, **overrides):
    """A 2-layer, 32-wide BERT; the default vocabulary fits the real
    tokenizer."""
    import kzoo
    return kzoo.BertBackbone(vocabulary_size=vocabulary_size,
                             **{**TINY_BERT, **overrides})


def random_bert_inputs(batch=4, seq=12, vocabulary_size=30522, seed=0):
    """Random ids and two segments, with a padded tail in every second
    row."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(0, vocabulary_size, (batch, seq)).astype("int32")
    segment_ids = np.zeros((batch, seq), "int32")
    segment_ids[:, seq // 2:] = 1
    padding_mask = np.ones((batch, seq), "int32")
    padding_mask[1::2, seq - 3:] = 0
    token_ids[padding_mask == 0] = 0
    segment_ids[padding_mask == 0] = 0
    return {"token_ids": token_ids, "segment_ids": segment_ids,
            "padding_mask": padding_mask}


# ----------------------------------------------------------------------
# Arrays
# ----------------------------------------------------------------------
def to_numpy(structure):
    """Any nested structure of backend/tf tensors -> numpy arrays."""
    def convert(x):
        if isinstance(x, (tf.Tensor, tf.Variable)):
            return x.numpy()
        if isinstance(x, tf.RaggedTensor):
            return x.to_list()
        return keras.ops.convert_to_numpy(x)
    return keras.tree.map_structure(convert, structure)


def assert_all_close(actual, expected, atol=1e-5, rtol=0.0, what="outputs"):
    """Nested structures of arrays agree (same structure, within atol)."""
    actual, expected = to_numpy(actual), to_numpy(expected)
    keras.tree.assert_same_structure(actual, expected)
    for a, e in zip(keras.tree.flatten(actual), keras.tree.flatten(expected)):
        assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
        np.testing.assert_allclose(a, e, atol=atol, rtol=rtol, err_msg=what)


def id_lists(token_ids):
    """Token ids (ragged tf, numpy, nested lists) -> lists of Python ints."""
    if isinstance(token_ids, tf.RaggedTensor):
        token_ids = token_ids.to_list()
    elif isinstance(token_ids, tf.Tensor):
        token_ids = token_ids.numpy()
    elif not isinstance(token_ids, (list, tuple, int, np.integer,
                                    np.ndarray)):
        token_ids = keras.ops.convert_to_numpy(token_ids)  # backend tensor
    if isinstance(token_ids, np.ndarray):
        token_ids = token_ids.tolist()
    if isinstance(token_ids, (list, tuple)):
        return [id_lists(t) if isinstance(t, (list, tuple, np.ndarray,
                                              tf.Tensor, tf.RaggedTensor))
                else int(t) for t in token_ids]
    return int(token_ids)


def resize_sequence(inputs, length):
    """Every (batch, seq, ...) input cut (or cyclically extended) to
    `length` positions."""
    def resize(x):
        x = np.asarray(x)
        return np.take(x, np.arange(length) % x.shape[1], axis=1)
    return keras.tree.map_structure(resize, inputs)


def batch_size_of(inputs):
    return len(np.asarray(keras.tree.flatten(inputs)[0]))


# ----------------------------------------------------------------------
# Weights and configs
# ----------------------------------------------------------------------
def assert_weights_identical(actual_model, expected_model):
    """Bit-identical weights, matched by path (order- and name-checked)."""
    actual = {w.path: w for w in actual_model.weights}
    expected = {w.path: w for w in expected_model.weights}
    assert len(actual_model.weights) == len(expected_model.weights)
    assert sorted(actual) == sorted(expected), (
        "weight paths differ: "
        f"{sorted(set(actual) ^ set(expected))}")
    for path, weight in expected.items():
        a = keras.ops.convert_to_numpy(actual[path])
        e = keras.ops.convert_to_numpy(weight)
        assert a.dtype == e.dtype, f"{path}: dtype {a.dtype} != {e.dtype}"
        assert a.shape == e.shape, f"{path}: shape {a.shape} != {e.shape}"
        assert np.array_equal(a, e), f"{path}: values differ"


def assert_weights_differ(model_a, model_b):
    """At least one weight differs (guards a check that cannot fail)."""
    pairs = zip(model_a.weights, model_b.weights)
    assert any(not np.array_equal(keras.ops.convert_to_numpy(a),
                                  keras.ops.convert_to_numpy(b))
               for a, b in pairs), "weights unexpectedly identical"


def without_names(config):
    """A config with the auto-generated layer names removed (recursively);
    everything else must match exactly."""
    if isinstance(config, dict):
        return {k: without_names(v) for k, v in config.items() if k != "name"}
    if isinstance(config, (list, tuple)):
        return [without_names(v) for v in config]
    return config


def comparable_task_config(task):
    """A task's config with auto-generated names dropped, plus the sha256
    of each tokenizer asset file (configs name no files; a loaded preset
    reads its own copy)."""
    from kzoo.utils.files import sha256_of
    config = task.get_config()
    if task.preprocessor is not None:
        config["tokenizer_assets"] = {
            argument: sha256_of(path) for argument, path in
            task.preprocessor.tokenizer.asset_paths.items()}
    return without_names(config)


# ----------------------------------------------------------------------
# Backbones
# ----------------------------------------------------------------------
def check_backbone(backbone, inputs, tmp_path, lengths=None,
                   expected_shapes=None):
    """The contract checks every backbone passes.

    Args:
        backbone: a small, built backbone instance.
        inputs: example inputs (numpy), every entry `(batch, seq, ...)`.
        tmp_path: a scratch folder (pytest's `tmp_path`).
        lengths: sequence lengths to try (default: 1, seq // 2, seq).
        expected_shapes: optional structure of output shapes for `inputs`.
    """
    outputs = to_numpy(backbone(inputs, training=False))
    if expected_shapes is not None:
        shapes = keras.tree.map_structure(lambda x: tuple(x.shape), outputs)
        assert shapes == expected_shapes
    for array in keras.tree.flatten(outputs):
        assert np.all(np.isfinite(array)), "non-finite backbone output"

    _check_config_round_trip(backbone, inputs, outputs)
    _check_variable_lengths(backbone, inputs, outputs, lengths)
    _check_predict(backbone, inputs, outputs)
    _check_backbone_preset(backbone, inputs, outputs, tmp_path)


def _check_config_round_trip(backbone, inputs, outputs):
    config = backbone.get_config()
    rebuilt = type(backbone).from_config(config)
    assert rebuilt.get_config() == config
    assert [w.shape for w in rebuilt.weights] == \
        [w.shape for w in backbone.weights]
    assert rebuilt.count_params() == backbone.count_params()
    # Same config + same weights = same function.
    rebuilt.set_weights(backbone.get_weights())
    assert_all_close(rebuilt(inputs, training=False), outputs, atol=1e-6,
                     what="rebuilt-from-config outputs")


def _check_variable_lengths(backbone, inputs, outputs, lengths):
    seq = np.asarray(keras.tree.flatten(inputs)[0]).shape[1]
    lengths = lengths or sorted({1, max(1, seq // 2), seq})
    for length in lengths:
        short = resize_sequence(inputs, length)
        result = to_numpy(backbone(short, training=False))
        for array in keras.tree.flatten(result):
            assert array.shape[0] == batch_size_of(inputs)
            if array.ndim >= 3:  # per-token outputs follow the length
                assert array.shape[1] == length, (array.shape, length)
            assert np.all(np.isfinite(array))


def _check_predict(backbone, inputs, outputs):
    predicted = backbone.predict(inputs, batch_size=2, verbose=0)
    assert_all_close(predicted, outputs, atol=1e-5, what="predict(arrays)")
    dataset = tf.data.Dataset.from_tensor_slices(inputs).batch(2)
    predicted = backbone.predict(dataset, verbose=0)
    assert_all_close(predicted, outputs, atol=1e-5,
                     what="predict(tf.data.Dataset)")


def _check_backbone_preset(backbone, inputs, outputs, tmp_path):
    preset_dir = Path(tmp_path) / "backbone_preset"
    backbone.save_to_preset(preset_dir)
    for filename in ("config.json", "metadata.json",
                     kzoo_presets.BACKBONE_WEIGHTS):
        assert (preset_dir / filename).is_file(), filename
    metadata = read_json(preset_dir / "metadata.json")
    assert metadata["params"] == backbone.count_params()
    loaded = type(backbone).from_preset(preset_dir)
    assert type(loaded) is type(backbone)
    assert loaded.get_config() == backbone.get_config()
    assert_weights_identical(loaded, backbone)
    assert_all_close(loaded(inputs, training=False), outputs, atol=0.0,
                     what="outputs after save_to_preset/from_preset")


# ----------------------------------------------------------------------
# Tasks
# ----------------------------------------------------------------------
def check_task(task, x, y=None, tmp_path=None, batch_size=4, epochs=1,
               from_dataset=False):
    """Fit and predict from raw text, then a preset round trip.

    Args:
        task: a small task with a preprocessor.
        x: raw inputs (a list of strings, or a tuple of lists for pairs).
        y: labels, or None for self-supervised tasks.
        tmp_path: scratch folder; the preset round trip runs when given.
        from_dataset: also predict from a `tf.data.Dataset` of the same
            raw text, which must give the same predictions. That path is
            `Task`'s own, the same for every family (no family task
            overrides it), and the preprocessor contract checks every
            preprocessor inside tf.data; each call costs 3-4 s per backend
            (a new tokenizer graph), so BERT's tests take it for each kind
            of input (texts, pairs, random masks) and the other families
            leave it off.

    Returns `(history, predictions)`.
    """
    assert task.preprocessor is not None, "check_task needs raw-text input"
    history = task.fit(x, y, batch_size=batch_size, epochs=epochs, verbose=0)
    losses = history.history["loss"]
    assert len(losses) == epochs and all(np.isfinite(losses)), losses

    n = len(x[0]) if isinstance(x, tuple) else len(x)
    predictions = to_numpy(task.predict(x, batch_size=batch_size, verbose=0))
    for array in keras.tree.flatten(predictions):
        assert array.shape[0] == n
        assert np.all(np.isfinite(array))
    if from_dataset:
        _check_predict_from_dataset(task, x, batch_size, predictions)
    if tmp_path is not None:
        check_task_preset(task, tmp_path)
    return history, predictions


def _check_predict_from_dataset(task, x, batch_size, predictions):
    """The same raw text as a tf.data.Dataset gives the same predictions.
    (Keras reads a dataset element as (x, y, sample_weight): sentence
    pairs travel as a 1-tuple holding the pair.)"""
    elements = (x,) if isinstance(x, tuple) else x
    dataset = tf.data.Dataset.from_tensor_slices(elements).batch(batch_size)
    from_dataset = task.predict(dataset, verbose=0)
    if not _has_random_preprocessing(task):
        assert_all_close(from_dataset, predictions, atol=1e-5,
                         what="predict(tf.data.Dataset of text)")
    else:  # masked inputs differ per call; shapes must not
        keras.tree.assert_same_structure(to_numpy(from_dataset), predictions)


def _has_random_preprocessing(task):
    """Masked-LM style preprocessors draw new masks on every call."""
    return task.preprocessor.draws_per_call


def check_task_preset(task, tmp_path, x=None):
    """save_to_preset -> from_preset: the same task, bit for bit, with its
    tokenizer assets."""
    preset_dir = Path(tmp_path) / f"{type(task).__name__}_preset"
    task.save_to_preset(preset_dir)
    for filename in ("config.json", "metadata.json", "tokenizer.json",
                     "task.json", kzoo_presets.BACKBONE_WEIGHTS,
                     kzoo_presets.TASK_WEIGHTS):
        assert (preset_dir / filename).is_file(), filename
    tokenizer = task.preprocessor.tokenizer
    for argument, filename in tokenizer.asset_files.items():
        source = tokenizer.asset_paths[argument]
        assert (preset_dir / filename).read_bytes() == source.read_bytes()

    loaded = type(task).from_preset(preset_dir)
    assert type(loaded) is type(task)
    assert_weights_identical(loaded, task)
    assert loaded.backbone.get_config() == task.backbone.get_config()
    assert comparable_task_config(loaded) == comparable_task_config(task)
    # The loaded tokenizer reads the copied assets, not the originals.
    loaded_tokenizer = loaded.preprocessor.tokenizer
    for argument, filename in loaded_tokenizer.asset_files.items():
        assert loaded_tokenizer.asset_paths[argument].resolve() == \
            (preset_dir / filename).resolve()
    text = ["It is a truth universally acknowledged."]
    assert id_lists(loaded_tokenizer(text)) == id_lists(tokenizer(text))
    return loaded


# ----------------------------------------------------------------------
# Presets
# ----------------------------------------------------------------------
def check_preset(name, backbone_cls, tokenizer_cls=None, build=True):
    """A named preset's folder is complete and consistent.

    Checks metadata fields, that the config builds the declared class with
    the declared parameter count (when `build`), and that the tokenizer's
    vocabulary matches the backbone's.
    """
    preset = kzoo_presets.resolve(name)
    metadata = preset.metadata
    for field in ("name", "aliases", "family", "class_name", "description",
                  "params", "license", "source"):
        assert field in metadata, f"{name}: metadata lacks {field!r}"
    assert metadata["name"] == name
    for alias in metadata["aliases"]:
        assert kzoo_presets.resolve(alias).name == name
    entry = preset.json("config.json")
    assert entry["class_name"] == metadata["class_name"] == \
        backbone_cls.__name__
    config = entry["config"]
    if tokenizer_cls is not None:
        tokenizer = tokenizer_cls.from_preset(name)
        assert tokenizer.vocabulary_size == config["vocabulary_size"]
        recorded = metadata.get("tokenizer", {})
        for filename, record in recorded.items():
            from kzoo.utils.files import sha256_of
            assert sha256_of(preset.file(filename)) == record["sha256"]
    if build:
        # The architecture is checked, not the values: skip drawing random
        # initial values (most of a 29M-parameter build's time on jax).
        from kzoo.utils.skip_init import initial_values_skipped
        with initial_values_skipped():
            backbone = backbone_cls.from_preset(name, load_weights=False)
            assert backbone.count_params() == metadata["params"]
            assert backbone.get_config() == backbone_cls.from_config(
                config).get_config()
    return preset


def run_guide_smoke(guide, timeout, backend=None):
    """Run `guides/<guide>` in its smoke mode (KZOO_GUIDE_SMOKE=1) as
    `python guides/<guide>` on the current backend (or `backend`), in a
    warm interpreter (tests/warm_python.py); its output, after checking
    that it exited 0."""
    import warm_python
    repo = Path(__file__).resolve().parents[1]
    env = warm_python.environment(backend or keras.backend.backend(),
                                  path=[repo], KZOO_GUIDE_SMOKE="1")
    env.pop("XLA_FLAGS", None)  # the guide runs as a user runs it
    output = warm_python.run([repo / "guides" / guide], env,
                             timeout=timeout)
    text = output.stdout + output.stderr
    assert output.returncode == 0, text[-3000:]
    return text


# ----------------------------------------------------------------------
# Pretraining streams
# ----------------------------------------------------------------------
def toy_batch(examples, seed):
    """A toy `BatchStream.finish`: the examples stacked, plus `noise`,
    one draw per example from the batch's own `seed` (so a test sees
    which seed each batch got); no labels or weights."""
    from kzoo.pretraining.streams.base import stack_examples
    x = stack_examples(examples)
    x["noise"] = np.random.default_rng(seed).integers(
        1 << 30, size=len(examples))
    return x, None, None
