"""Backbone: the pretrained network itself, as a functional Keras model."""

import contextlib
import re

import keras
import numpy as np

from kzoo import presets
from kzoo.distribution.layouts import layout_map_from_rules
from kzoo.layers.initializers import truncated_normal
from kzoo.core.arguments import (
    KERAS_KEYWORDS, TRANSFORMER_ARGUMENTS, TRANSFORMER_RULES,
    CheckedArguments, config_source)
from kzoo.core import lora, quantization
from kzoo.core.registry import class_entry, get_class
from kzoo.utils.files import atomic_write
from kzoo.utils.skip_init import initial_values_skipped
from kzoo.utils.tensors import concrete_numpy
from kzoo.utils.weights import load_weights_checked


# A numbered block of a stack: transformer_layer_0, ...
_BLOCK_NAME = re.compile(r".*_\d+")


class Backbone(CheckedArguments, keras.Model):
    """Base class of every kzoo backbone.

    Subclasses build a functional graph in `__init__` and call
    `super().__init__(inputs=..., outputs=..., **kwargs)`. The config is the
    constructor's arguments: once the outermost `__init__` has run, its
    checked arguments (defaults filled in) become attributes of the same
    name (unless `__init__` set one) and `get_config()` returns them, so a
    family writes neither a config block nor a `get_config`.

    Class attributes subclasses set:
        input_names: the names of the dict inputs.
        input_axes: `{input name: axis names}` for inputs that are not
            `(batch, sequence)`, e.g. ELMo's `(batch, sequence, characters)`
            character ids. Every input shares the batch and sequence axes.
        family: the model family (for presets and conversion).
        argument_spec: constructor argument -> what it must be (see
            `kzoo.core.arguments`); checked, with `argument_rules`,
            before `__init__` runs, for direct calls and preset configs
            alike. The shared transformer names are declared here; a
            family adds its own.

    Example:
    ```python
    # The base class builds whichever backbone a preset names.
    backbone = kzoo.Backbone.from_preset("bert_tiny_en_uncased",
                                         load_weights=False)
    assert isinstance(backbone, kzoo.BertBackbone)
    backbone.save_to_preset("my_backbone")   # config.json + weights
    restored = kzoo.Backbone.from_preset("my_backbone")
    assert restored.count_params() == backbone.count_params()
    ```
    """

    input_names = ()
    input_axes = {}
    family = None
    argument_spec = TRANSFORMER_ARGUMENTS
    argument_rules = TRANSFORMER_RULES

    def __init__(self, *args, dtype=None, **kwargs):
        super().__init__(*args, **kwargs)
        # Keras' functional Model drops `dtype` (its layers have their
        # own); keep it, as keras-hub's Backbone does, so that the config
        # (save_to_preset, from_config) and the heads tasks build with
        # `backbone.dtype_policy` follow the backbone's precision, and the
        # caches of generation are made in its compute dtype. None: the
        # global policy, which Keras already gave the model.
        if dtype is not None:
            self.dtype_policy = keras.dtype_policies.get(dtype)

    # ------------------------------------------------------------------
    # Input checks: raised before any work, with what to do about it.
    # ------------------------------------------------------------------
    def __call__(self, inputs, *args, **kwargs):
        self.check_inputs(inputs)
        if not self.trainable:
            # Frozen means inference mode (as Keras' BatchNormalization):
            # a frozen backbone is a fixed feature extractor, so a head
            # trained on it (a linear probe) sees the features it is
            # scored on, without dropout. `fit` hands training=True down
            # every task's graph; the one place to override it is here.
            kwargs["training"] = False
        return super().__call__(inputs, *args, **kwargs)

    def check_inputs(self, inputs):
        """Check names, length and (when concrete) token ids of `inputs`."""
        name = type(self).__name__
        expected = sorted(self.input_names)
        if not isinstance(inputs, dict):
            raise ValueError(
                f"{name} takes a dict with keys {expected}; got "
                f"{'None' if inputs is None else 'a ' + type(inputs).__name__}"
                ". Use the task's preprocessor to turn raw text into such a "
                "dict.")
        got = sorted(inputs)
        if got != expected:
            missing = sorted(set(expected) - set(got))
            unexpected = sorted(set(got) - set(expected))
            raise ValueError(
                f"{name} takes inputs {expected}; got {got} "
                f"(missing: {missing}, unexpected: {unexpected}).")
        shapes = self._check_shapes_and_dtypes(inputs)
        length = shapes[self.input_names[0]][1]
        limit = self.max_sequence_length
        if limit is not None and length is not None and length > limit:
            raise ValueError(
                f"Sequence length {length} is longer than {name}'s "
                f"max_sequence_length ({limit}). Truncate the input (the "
                "preprocessor's `sequence_length` does this).")
        if getattr(self, "_ids_checked_before", False):
            return
        for input_name, limit in self.id_limits().items():
            values = concrete_numpy(inputs[input_name])
            if values is not None and values.size:
                self._check_ids(input_name, values, limit)

    @contextlib.contextmanager
    def ids_checked_before(self, checked=True):
        """Within: calls skip the check of id values (names, shapes and
        dtypes are still checked), because the caller checked every batch
        before (`Task.fit` on in-memory arrays) or made them itself (a
        preprocessor's ids are below the table, `check_preprocessor`).

        On torch, steps run eagerly, so each step's check copied the ids
        to NumPy: host work per step, and on an accelerator a device sync
        that stalls the step queue. `checked=False` leaves the checks on
        (data a step cannot have seen before: a user's dataset of ids).
        """
        previous = getattr(self, "_ids_checked_before", False)
        self._ids_checked_before = previous or bool(checked)
        try:
            yield
        finally:
            self._ids_checked_before = previous

    def id_limits(self):
        """Integer inputs and their exclusive upper bounds (by default the
        token ids, below `vocabulary_size`, and the segment ids, below
        `num_segments`, for backbones that read them)."""
        limits = {}
        if "token_ids" in self.input_names:
            limits["token_ids"] = self.vocabulary_size
        if "segment_ids" in self.input_names:
            limits["segment_ids"] = self.num_segments
        return limits

    def _check_shapes_and_dtypes(self, inputs):
        """Every input `(batch, seq, ...)` as `input_axes` says, all with
        one batch and sequence length; ids integers (a float id would be
        truncated without a word, a string cannot be one)."""
        name = type(self).__name__
        shapes = {}
        for input_name in self.input_names:
            value = inputs[input_name]
            axes = self.input_axes.get(input_name, ("batch", "sequence"))
            layout = f"({', '.join(axes)})"
            if isinstance(value, (list, tuple)):
                raise ValueError(
                    f"{name}: `{input_name}` must be a {layout} "
                    "array or tensor; got a Python list. Use "
                    "`np.array(..., dtype='int32')` (rows padded to one "
                    "length, as the preprocessor does).")
            if value is None or not hasattr(value, "shape"):
                raise ValueError(
                    f"{name}: `{input_name}` must be a {layout} "
                    f"array; got {type(value).__name__}.")
            shape = tuple(value.shape)
            if len(shape) != len(axes):
                raise ValueError(
                    f"{name}: `{input_name}` must be {len(axes)}-D {layout}; "
                    f"got shape {shape}. Add the batch axis for a single "
                    "example, e.g. `x[None]`.")
            shapes[input_name] = shape
            if input_name in self.id_limits():
                try:
                    dtype = keras.backend.standardize_dtype(value.dtype)
                except ValueError:  # strings, objects
                    dtype = str(value.dtype)
                if "int" not in dtype:
                    raise ValueError(
                        f"{name}: `{input_name}` must hold integer ids; got "
                        f"{dtype} values. Token ids come from the "
                        "tokenizer/preprocessor; whole-number floats can be "
                        "cast with `.astype('int32')`.")
        # Inputs share the sizes of the axes they name alike (an
        # encoder-decoder's encoder and decoder lengths are two axes).
        seen = {}  # axis name -> (input name, size)
        for input_name, shape in shapes.items():
            axes = self.input_axes.get(input_name, ("batch", "sequence"))
            for axis, size in zip(axes[:2], shape[:2]):
                if size is None:
                    continue
                first, first_size = seen.setdefault(axis, (input_name, size))
                if size != first_size:
                    raise ValueError(
                        f"{name}: every input must have the batch and "
                        f"sequence length of `{first}` {shapes[first]} "
                        f"(axis {axis!r}); `{input_name}` has {shape}.")
        return shapes

    def check_preprocessor(self, preprocessor, owner=None):
        """Raise when `preprocessor`'s rows cannot feed this backbone: longer
        than the position table, or ids beyond the embedding table."""
        owner = owner or type(self).__name__
        _check_sequence_length(owner, preprocessor.sequence_length,
                               self.max_sequence_length,
                               f"this {type(self).__name__}")
        tokenizer = getattr(preprocessor, "tokenizer", None)
        vocabulary_size = getattr(self, "vocabulary_size", None)
        if tokenizer is not None and tokenizer.has_assets and \
                vocabulary_size is not None and \
                tokenizer.vocabulary_size > vocabulary_size:
            raise ValueError(
                f"{owner}: the tokenizer has {tokenizer.vocabulary_size} "
                f"token ids but {type(self).__name__}'s embedding table "
                f"only {self.vocabulary_size} (vocabulary_size): ids beyond "
                "it have no embedding. Use the tokenizer of the backbone's "
                "preset, or a backbone with vocabulary_size >= "
                f"{tokenizer.vocabulary_size}.")

    @classmethod
    def check_preset_sequence_length(cls, preset, sequence_length, owner):
        """`sequence_length` against the position table of the backbone a
        preset's config.json describes (before anything is built)."""
        config = preset.json("config.json").get("config") or {}
        _check_sequence_length(
            owner, sequence_length, config.get("max_sequence_length"),
            f"the backbone of preset {preset.name!r}")

    def predict(self, x, *args, **kwargs):
        # Checked here, on the concrete arrays: inside the compiled predict
        # step only names and shapes can be checked, not the ids' values.
        if x is None or isinstance(x, dict):
            self.check_inputs(x)
        # Every batch of a checked dict is a slice of it.
        with self.ids_checked_before(isinstance(x, dict)):
            return super().predict(x, *args, **kwargs)

    def export(self, filepath, format="tf_saved_model", verbose=None,
               input_signature=None, **kwargs):
        """Keras' `export`, but `format="onnx"` goes through kzoo's
        exporter (`kzoo.core.export.export_onnx`: token ids in, the
        sequence axis at `max_sequence_length` unless `input_signature`
        says otherwise; TensorFlow backend)."""
        if format == "onnx":
            from kzoo.core.export import export_onnx
            return export_onnx(self, filepath, verbose=verbose,
                               input_signature=input_signature, **kwargs)
        return super().export(filepath, format=format, verbose=verbose,
                              input_signature=input_signature, **kwargs)

    def _check_ids(self, input_name, values, limit):
        low, high = int(np.min(values)), int(np.max(values))
        if low < 0 or high >= limit:
            bad = high if high >= limit else low
            raise ValueError(
                f"{input_name} holds {bad}, outside [0, {limit - 1}] for "
                f"{type(self).__name__}. Tokenize with this preset's "
                "tokenizer/preprocessor, or build a backbone with a larger "
                "table.")

    # ------------------------------------------------------------------
    # Model parallelism (JAX keras.distribution; see kzoo/distribution)
    # ------------------------------------------------------------------
    @classmethod
    def layout_rules(cls):
        """`{variable-path regex: role}` for model parallelism; each family
        declares its own (roles in `kzoo.distribution.layouts`)."""
        raise NotImplementedError(
            f"{cls.__name__} declares no layout rules, so it cannot be "
            "sharded with ModelParallel (DataParallel needs none). Add a "
            "`layout_rules` classmethod; most families return "
            "`kzoo.distribution.transformer_rules()`.")

    @classmethod
    def get_layout_map(cls, device_mesh, model_parallel_dim_name="model",
                       data_parallel_dim_name="batch"):
        """A `keras.distribution.LayoutMap` that splits this family's
        embeddings, attention projections and feed-forward kernels over the
        model axis of `device_mesh` (Megatron-style column/row split).

        Example:
        ```python
        mesh = keras.distribution.DeviceMesh(
            (2, 4), ("batch", "model"), keras.distribution.list_devices())
        layout_map = kzoo.BertBackbone.get_layout_map(mesh)
        keras.distribution.set_distribution(keras.distribution.ModelParallel(
            layout_map=layout_map, batch_dim_name="batch"))
        backbone = kzoo.BertBackbone.from_preset("bert_base")  # sharded
        ```
        """
        return layout_map_from_rules(
            cls.layout_rules(), device_mesh,
            model_parallel_dim_name=model_parallel_dim_name,
            data_parallel_dim_name=data_parallel_dim_name)

    # ------------------------------------------------------------------
    # Fine-tuning
    # ------------------------------------------------------------------
    def layer_groups(self):
        """The layers with weights in groups, bottom to top, for layer-wise
        learning rates and gradual unfreezing (`kzoo.training`): the
        layers before the first numbered block (`..._<i>`: the
        embeddings), then one group per block, the layers after the last
        block (a pooler, a final LayerNorm) joining its group. A family
        whose layers are not numbered blocks overrides this."""
        groups = [[]]
        for layer in self.layers:
            if not layer.weights:
                continue
            if _BLOCK_NAME.fullmatch(layer.name):
                groups.append([])
            groups[-1].append(layer.name)
        return [group for group in groups if group]

    # ------------------------------------------------------------------
    # LoRA and quantization (Keras does the work; kzoo.core.lora and
    # kzoo.core.quantization pick the layers and check the calls)
    # ------------------------------------------------------------------
    def default_lora_layer_names(self):
        """The layers `enable_lora` adapts by default: keras-hub's names
        for the attention query and value projections. ELMo and AWD-LSTM
        have no attention, so they need `target_layer_names`."""
        return list(lora.DEFAULT_TARGETS)

    def enable_lora(self, rank, target_layer_names=None):
        """Freeze the backbone and give the layers named
        `target_layer_names` (default: `default_lora_layer_names()`, the
        attention query and value projections) LoRA adapters of `rank`,
        as keras-hub's `Backbone.enable_lora`: Keras' `Dense.enable_lora`
        adds `a (in, rank)`, random, and `b (rank, out)`, zeros, so the
        outputs do not change until training moves them. Only the
        adapters train (the targets' biases stay frozen too); a task's
        head stays trainable.

        `save_to_preset`, `.keras` and `save_weights` write each kernel
        with its adapter folded in (the model that loads is a plain one,
        same outputs); `save_lora_weights` keeps the adapters alone.

        Example:
        ```python
        classifier = kzoo.BertTextClassifier.from_preset(
            "bert_tiny_en_uncased", num_classes=2)
        classifier.backbone.enable_lora(rank=4)
        classifier.fit(texts, labels)   # adapters and the head train
        classifier.backbone.save_lora_weights("adapters.lora.h5")
        ```
        """
        if target_layer_names is None:
            target_layer_names = self.default_lora_layer_names()
            if not any(layer.name in target_layer_names
                       for layer in lora.lora_capable_layers(self).values()):
                target_layer_names = None  # the error names the defaults
        lora.enable_lora(self, rank, target_layer_names)

    def save_lora_weights(self, filepath):
        """Write the LoRA adapters alone (`*.lora.h5`, atomically), keyed
        by layer path, with the rank and target names."""
        lora.save_lora_weights(self, filepath)

    def load_lora_weights(self, filepath):
        """Read adapters `save_lora_weights` wrote into this backbone (of
        the same config), enabling LoRA with the file's rank and targets
        first if it is not on; the base weights are left as they are."""
        lora.load_lora_weights(self, filepath)

    def merge_lora_weights(self):
        """Fold each adapter into its kernel (`kernel + (alpha / rank) *
        a @ b`) and restart the adapters (`b` zeros, so outputs keep the
        merged values; further LoRA training starts afresh on the merged
        kernel). A plain model without adapter variables is what
        `save_to_preset` then `from_preset` gives."""
        lora.merge_lora_weights(self)

    def quantize(self, mode=None, config=None, filters=None, **kwargs):
        """Keras' `Model.quantize` on the backbone's Dense projections:
        `"int8"` or `"float8"` (see `kzoo.core.quantization`: embedding
        tables and LSTMs stay float). Once only: a second call is an
        error. The quantized backbone saves and loads as it is
        (`save_to_preset`, `.keras`)."""
        if kwargs:
            raise ValueError(f"{type(self).__name__}.quantize: unexpected "
                             f"arguments {sorted(kwargs)}.")
        quantization.quantize(self, mode, config=config, filters=filters)

    # ------------------------------------------------------------------
    # Presets
    # ------------------------------------------------------------------
    @property
    def max_sequence_length(self):
        """The longest sequence the backbone takes (None: no limit)."""
        return self.config_arguments.get("max_sequence_length")

    def kernel_initializer(self):
        """The initializer of new kernels on this backbone (a task's heads
        start from it, as the original's do). Families override it with
        their own (GPT-2's normal); the default is BERT's truncated
        normal, which RoBERTa, ALBERT, ELECTRA, DistilBERT and DeBERTa-v3
        keep."""
        return truncated_normal(getattr(self, "initializer_range", 0.02))

    @property
    def token_embedding(self):
        """The token embedding layer (tied to LM heads)."""
        return self.get_layer("token_embedding")

    @classmethod
    def check_config(cls, config):
        # The quantized layers are the weights' format, applied after the
        # build (from_config), not a constructor argument.
        super().check_config({key: value for key, value in config.items()
                              if key != quantization.CONFIG_KEY})

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        quantized = config.pop(quantization.CONFIG_KEY, None)
        backbone = cls(**config)
        quantization.apply_saved_quantization(backbone, quantized)
        return backbone

    def record_arguments(self, values):
        # The config is the constructor's arguments (see the class doc).
        self._config_arguments = {
            name: value for name, value in values.items()
            if name not in KERAS_KEYWORDS}
        for name, value in self._config_arguments.items():
            if not hasattr(self, name):
                setattr(self, name, value)

    @property
    def config_arguments(self):
        """The constructor's arguments, as `get_config` returns them."""
        return getattr(self, "_config_arguments", {})

    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": keras.dtype_policies.serialize(self.dtype_policy),
                  **self.config_arguments}
        quantized = quantization.quantized_layers(self)
        if quantized:
            config[quantization.CONFIG_KEY] = quantized
        return config

    @classmethod
    def from_preset(cls, preset, load_weights=True, **kwargs):
        """Build the backbone a preset describes.

        Args:
            preset: a preset name (`"bert_base"`), or a preset folder.
            load_weights: load the pretrained weights (from the preset
                folder or the cache); `False` gives random initialisation.
            **kwargs: config overrides (e.g. `dropout=0.0`); `dtype`
                (e.g. "mixed_bfloat16") sets the precision.
        """
        preset = presets.resolve(preset)
        entry = preset.json("config.json")
        backbone_cls = get_class(entry["class_name"], cls)
        config = {**entry["config"], **kwargs}
        if kwargs.get("dtype") is None and \
                _plain_policy(entry["config"].get("dtype")):
            # Precision is a run-time choice, not the preset's: with no
            # `dtype` given, the global policy (keras.config.
            # set_dtype_policy) applies, as keras-hub's presets load
            # (weights saved in another float dtype are cast on loading).
            config["dtype"] = keras.config.dtype_policy().name
        # A bad value in the file is named with the file, and found before
        # any weights are looked for (or downloaded).
        source = config_source(
            f"config.json of preset {preset.name!r}, "
            f"{preset.path / 'config.json'}",
            keys=set(entry["config"]) - set(kwargs),
            fix="Correct it in that file, or override it: "
                "from_preset(..., {argument}=...).")
        with source:
            backbone_cls.check_config(config)
        # Find (or fetch) the weights before building: a missing file is
        # reported before any work, and a download precedes the build.
        weights = (preset.weights_file(presets.BACKBONE_WEIGHTS)
                   if load_weights else None)
        with source, (initial_values_skipped() if weights is not None
                      else contextlib.nullcontext()):
            # With weights to load, drawing random values first is wasted
            # time (most of from_preset's, for large models).
            backbone = backbone_cls.from_config(config)
        if weights is not None:
            load_weights_checked(backbone, weights, presets.PresetError)
        return backbone

    def save_to_preset(self, preset_dir, metadata=None):
        """Write config and weights (atomically) into `preset_dir`."""
        from kzoo.core.preset_writer import write_backbone
        write_backbone(self, preset_dir, metadata)

    def config_entry(self):
        return class_entry(self, self.get_config())

    def save_weights_atomic(self, path):
        atomic_write(path, self.save_weights, suffix=".weights.h5")


def _plain_policy(saved):
    """Whether a config's saved `dtype` is a plain float policy (or none),
    which the global policy replaces on loading; a quantized one or a
    per-layer map is the weights' format, kept as saved."""
    if saved is None:
        return True
    try:
        policy = keras.dtype_policies.get(saved)
    except (ValueError, TypeError):
        return False  # reported, with the file, when the backbone is built
    # (Quantized policies and DTypePolicyMap are subclasses.)
    return type(policy) is keras.dtype_policies.DTypePolicy


def _check_sequence_length(owner, sequence_length, limit, what):
    if isinstance(limit, int) and isinstance(sequence_length, int) and \
            not isinstance(sequence_length, bool) and sequence_length > limit:
        raise ValueError(
            f"{owner}: sequence_length={sequence_length} is longer than "
            f"the position table of {what} (max_sequence_length={limit}); "
            f"the model has no positions beyond {limit}. Use "
            f"sequence_length <= {limit}.")
