"""Task: a backbone plus a head, trainable end to end on raw text."""

import warnings

import keras
import tensorflow as tf

from kzoo import presets
from kzoo.distribution.tf_strategy import compile_scope, symbolic_build
from kzoo.core import head_weights, input_pipeline, labels, quantization
from kzoo.core.arguments import ArgumentError, CheckedArguments, describe
from kzoo.core.backbone import Backbone
from kzoo.core.input_pipeline import (DEFAULT_BATCH_SIZE, FitValidation,
                                      InMemoryBatches)
from kzoo.core.preprocessor import Preprocessor
from kzoo.core.registry import class_entry, get_class
from kzoo.training.schedules import planned_schedule_of
from kzoo.utils.files import atomic_write
from kzoo.utils.weights import load_weights_checked

# Config keys that describe the task's parts rather than the task itself.
_PART_KEYS = ("backbone", "preprocessor")


class Task(CheckedArguments, keras.Model):
    """Base class of kzoo tasks.

    A task owns `self.backbone` and `self.preprocessor` (which may be None).
    With a preprocessor, `fit`, `evaluate` and `predict` take raw strings
    (or a `tf.data.Dataset` of them) and preprocess in `tf.data`; without
    one they take the model's input dict directly.

    The task compiles itself with `default_compile_args()` on first use;
    call `compile(...)` yourself to override any part ("auto" keeps the
    default for that argument).

    Subclasses set `backbone_cls`, `preprocessor_cls`, `extra_input_names`
    (inputs beyond the backbone's), and return their own constructor
    arguments from `task_config()`. `label_spec()` says what `fit` labels
    are (checked before training: `kzoo.core.labels`). Constructor
    arguments are checked before `__init__` runs (`check_argument_values`,
    `kzoo.core.arguments`).

    Example:
    ```python
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=2, load_weights=False,
        sequence_length=16)
    classifier.save_to_preset("my_classifier")
    # The preset's task.json names the class and its arguments.
    restored = kzoo.BertTextClassifier.from_preset("my_classifier")
    assert restored.count_params() == classifier.count_params()
    ```
    """

    backbone_cls = Backbone
    preprocessor_cls = None
    extra_input_names = ()
    # Heads that pretraining trained (an MLM head, NSP): loaded from the
    # preset, and named in a warning or error when it has none.
    pretrained_heads = ()
    # The kind a family has one of ("masked_lm", "sequence_classifier"):
    # set by the kind's base class (kzoo.tasks.task_wiring), read by
    # kzoo.core.family.
    task_kind = None

    def __init__(self, *args, outputs=None, **kwargs):
        super().__init__(*args, outputs=_float32_outputs(outputs), **kwargs)

    @classmethod
    def check_argument_values(cls, values):
        # Before any layer is built: a backbone of another family fails
        # deep inside the functional graph, and a preprocessor whose rows
        # outgrow the position table fails (or, on JAX, clamps) later.
        backbone = values.get("backbone")
        preprocessor = values.get("preprocessor")
        name = cls.__name__
        if not isinstance(backbone, cls.backbone_cls):
            raise ArgumentError(
                f"{name} needs a {cls.backbone_cls.__name__} as its "
                f"backbone; got {describe(backbone)}. Build one with "
                f"{cls.backbone_cls.__name__}.from_preset(...).")
        expected = cls.preprocessor_cls or Preprocessor
        if preprocessor is not None and not isinstance(preprocessor,
                                                       expected):
            raise ArgumentError(
                f"{name} needs a {expected.__name__} as its preprocessor "
                f"(or None, to feed token-id dicts); got "
                f"{describe(preprocessor)}. Build it from the backbone's "
                f"preset: {expected.__name__}.from_preset(...).")
        if preprocessor is not None:
            backbone.check_preprocessor(preprocessor, name)

    def call(self, inputs, training=None, mask=None):
        # A preprocessor may give inputs this task does not read (the span
        # boundaries of masking="span" feed the span boundary objective,
        # not a plain masked LM); the functional graph takes its own, by
        # name (Keras would match a larger dict by position).
        # `training` must be a named parameter: Keras passes it to `call`
        # only when the signature names it, and the functional graph hands
        # it on to dropout and to random draws (ELECTRA's sampler) only
        # when it arrives; behind a bare **kwargs, fit ran every layer in
        # inference mode (no dropout, the same "random" draws each step).
        if isinstance(inputs, dict):
            inputs = {name: inputs[name] for name in self.input_names
                      if name in inputs}
        return super().call(inputs, training=training, mask=mask)

    def label_spec(self):
        """What `fit`/`evaluate` labels must be (a `kzoo.core.labels`
        spec), or None: not checked."""
        return None

    def _finish_init(self, backbone, preprocessor):
        # Called by subclasses after the functional super().__init__.
        self.backbone = backbone
        self.preprocessor = preprocessor
        # The task computes in its backbone's precision (as keras-hub's
        # tasks), not in the global policy of the moment it was built.
        self.dtype_policy = backbone.dtype_policy

    # ------------------------------------------------------------------
    # Compile defaults
    # ------------------------------------------------------------------
    def default_compile_args(self):
        raise NotImplementedError

    def compile(self, optimizer="auto", loss="auto", metrics="auto",
                weighted_metrics="auto", loss_weights="auto", **kwargs):
        # Under tf.distribute the default optimizer must be made in the
        # strategy the task was built in, even when compile happens lazily
        # (first fit) outside `strategy.scope()`.
        with compile_scope(self):
            defaults = self.default_compile_args()
            default_loss = isinstance(loss, str) and loss == "auto"
            chosen = {"optimizer": optimizer, "loss": loss, "metrics": metrics,
                      "weighted_metrics": weighted_metrics}
            for key, value in chosen.items():
                if isinstance(value, str) and value == "auto":
                    chosen[key] = defaults.get(key)
            # The default loss weights belong to the default losses (a
            # two-headed task's); a user's own losses get none by default.
            if isinstance(loss_weights, str) and loss_weights == "auto":
                loss_weights = defaults.get("loss_weights") \
                    if default_loss else None
            chosen["loss_weights"] = loss_weights
            # Labels are checked against the default loss only.
            self._kzoo_default_loss = default_loss
            super().compile(**chosen, **kwargs)

    def _ensure_compiled(self):
        if not self.compiled:
            self.compile()

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        # TensorFlow only: Keras' own version breaks on dict inputs under
        # MultiWorkerMirroredStrategy (see tf_strategy.symbolic_build).
        # A private Keras hook (checked on Keras 3.15.1; listed in
        # kzoo/utils/private_apis.py): a Keras without it never calls
        # this, and builds the model its own way.
        symbolic_build(self, iterator=iterator, data_batch=data_batch)

    # ------------------------------------------------------------------
    # Data: raw text through the preprocessor, in tf.data
    # ------------------------------------------------------------------
    @property
    def input_names(self):
        return tuple(self.backbone.input_names) + tuple(self.extra_input_names)

    def _check_model_inputs(self, x):
        if not isinstance(x, dict):
            raise ValueError(
                f"{type(self).__name__} has no preprocessor, so it takes a "
                f"dict with keys {sorted(self.input_names)}; got "
                f"{type(x).__name__}. Pass a preprocessor to use raw text.")
        expected = set(self.input_names)
        if set(x) != expected:
            raise ValueError(
                f"{type(self).__name__} takes inputs {sorted(expected)}; got "
                f"{sorted(x)} (missing: {sorted(expected - set(x))}, "
                f"unexpected: {sorted(set(x) - expected)}).")
        self.backbone.check_inputs(
            {k: x[k] for k in self.backbone.input_names})

    def _make_dataset(self, x, y=None, sample_weight=None, batch_size=None,
                      shuffle=False):
        """Raw data -> a preprocessed, batched dataset (or x unchanged)."""
        if not isinstance(x, tf.data.Dataset):
            labels.check_in_memory(self, x, y, sample_weight)
        if self.preprocessor is None:
            if not isinstance(x, tf.data.Dataset) and not hasattr(x, "__next__"):
                self._check_model_inputs(x)
            return None
        autotune = tf.data.AUTOTUNE
        if isinstance(x, tf.data.Dataset):
            if y is not None or sample_weight is not None:
                raise ValueError(
                    "Pass labels inside the tf.data.Dataset, not as `y`.")
            dataset = labels.check_dataset(self, x).map(
                self.preprocessor, num_parallel_calls=autotune)
        else:
            data = keras.utils.pack_x_y_sample_weight(
                self._text_tensors(x), y, sample_weight)
            prepared = input_pipeline.preprocess_once(
                tf.data.Dataset.from_tensor_slices(data), self.preprocessor)
            batch_size = batch_size or DEFAULT_BATCH_SIZE
            if input_pipeline.batches_from_arrays(
                    self, maps_per_batch=self._maps_every_batch()):
                return InMemoryBatches(prepared, batch_size, shuffle)
            dataset = tf.data.Dataset.from_tensor_slices(prepared)
            if shuffle:
                dataset = dataset.shuffle(
                    int(dataset.cardinality()), reshuffle_each_iteration=True)
            dataset = dataset.batch(batch_size)
            if self.preprocessor.draws_per_call:  # fresh masks per batch
                dataset = dataset.map(self.preprocessor.traced("draw"),
                                      num_parallel_calls=autotune)
        return self.adapt_batches(dataset).prefetch(autotune)

    def _maps_every_batch(self):
        """Whether the pipeline maps each batch: a preprocessor that draws
        per batch (fresh masks), or a task that adapts the batches."""
        return bool(self.preprocessor.draws_per_call) or \
            type(self).adapt_batches is not Task.adapt_batches

    def adapt_batches(self, dataset):
        """The preprocessed batches as the task trains on them: unchanged,
        unless a task's targets are not its preprocessor's (the span
        boundary objective scores the masked-LM targets twice)."""
        return dataset

    def _ids_checked_before(self, x, also=True):
        """The backbone's per-call id checks off while Keras runs the
        steps on `x`, when `_make_dataset` has already vouched for every
        batch (`Backbone.ids_checked_before`): the preprocessor made them,
        or they are slices of in-memory arrays checked whole. A dataset or
        generator of ids is checked step by step, as before."""
        checked = self.preprocessor is not None or isinstance(x, dict)
        return self.backbone.ids_checked_before(checked and also)

    def _text_tensors(self, x):
        """Raw text checked by the preprocessor, eagerly (None, an empty
        list, numbers are refused here, not deep inside tf.data), as tf
        string tensors: one, or a tuple per text of a pair."""
        segments = self.preprocessor.text_segments(x)
        return segments if isinstance(x, tuple) else segments[0]

    def fit(self, x=None, y=None, batch_size=None, sample_weight=None,
            validation_split=0.0, validation_data=None, shuffle=True,
            **kwargs):
        """Keras' `fit`, on raw text through the preprocessor.

        `validation_split` works on every backend for in-memory examples
        (texts, pairs, word lists, arrays): as in Keras, the last fraction
        of them, in the order given, is held out before shuffling and
        scored after each epoch (`validation_data`, when given, wins).
        kzoo's learning-rate schedule then spans the training part's
        steps. A `tf.data.Dataset` has no last fraction: pass
        `validation_data`."""
        self._ensure_compiled()
        owner = f"{type(self).__name__}.fit"
        labels.check_fit_call(self, "fit", x, y, batch_size,
                              kwargs.get("epochs"))
        validation_split = input_pipeline.checked_validation_split(
            validation_split, x, owner)
        # The held-out part of input arrays is checked here, so the steps
        # need not check ids (as for the training part, `_make_dataset`).
        held_out_checked = False
        if validation_split and validation_data is None:
            # Whole, before slicing: a label count that does not match
            # the examples must fail as such, not as two odd halves.
            labels.check_in_memory(self, x, y, sample_weight)
            (x, y, sample_weight), validation_data = \
                input_pipeline.hold_out(x, y, sample_weight,
                                        validation_split, owner)
            if self.preprocessor is None:
                self._check_model_inputs(validation_data[0])
                held_out_checked = True
        dataset = self._make_dataset(x, y, sample_weight, batch_size, shuffle)
        if validation_data is not None and self.preprocessor is not None:
            if not isinstance(validation_data, tf.data.Dataset):
                validation_data = keras.utils.unpack_x_y_sample_weight(
                    tuple(validation_data))
            else:
                validation_data = (validation_data,)
            validation_data = self._make_dataset(
                *validation_data, batch_size=batch_size)
            if isinstance(validation_data, InMemoryBatches):
                validation_data = validation_data.data
            validation_data, kwargs = \
                input_pipeline.one_iterator_for_all_epochs(
                    self, validation_data, "validation_steps", kwargs)
        if isinstance(dataset, InMemoryBatches):
            self._plan_learning_rate(dataset.x, dataset.batch_size, kwargs)
        else:
            self._plan_learning_rate(dataset if dataset is not None else x,
                                     batch_size, kwargs)
        # Validation arrays without a preprocessor are not checked here
        # (unless held out of `x` above).
        checked = self._ids_checked_before(
            x, validation_data is None or self.preprocessor is not None
            or held_out_checked)
        with labels.reraise_label_errors(), checked, \
                FitValidation.during_fit(self, validation_data):
            if dataset is None:
                if isinstance(x, tf.data.Dataset):
                    # Already batched (pretraining batches, e.g.): the
                    # user's to shuffle; Keras warns on shuffle=True.
                    shuffle = False
                return super().fit(x, y, batch_size=batch_size,
                                   sample_weight=sample_weight,
                                   validation_data=validation_data,
                                   shuffle=shuffle, **kwargs)
            if isinstance(dataset, InMemoryBatches):
                return super().fit(**dataset.arrays(),
                                   batch_size=dataset.batch_size,
                                   shuffle=dataset.shuffle,
                                   validation_data=validation_data, **kwargs)
            # Shuffling happened in _make_dataset (a Dataset ignores
            # `shuffle`).
            dataset, kwargs = input_pipeline.one_iterator_for_all_epochs(
                self, dataset, "steps_per_epoch", kwargs)
            return super().fit(dataset, validation_data=validation_data,
                               shuffle=False, **kwargs)

    def _plan_learning_rate(self, data, batch_size, fit_kwargs):
        """Let kzoo's schedules (the default: warmup, then linear decay to
        0) span the steps this `fit` will take; see
        `kzoo.training.schedules`."""
        # Only kzoo's own schedule is planned, a user's is left as it is.
        schedule = planned_schedule_of(self.optimizer)
        if schedule is None:
            return
        steps = fit_kwargs.get("steps_per_epoch") or \
            input_pipeline.steps_per_epoch(data, batch_size)
        epochs = fit_kwargs.get("epochs", 1) - fit_kwargs.get(
            "initial_epoch", 0)
        total = steps * epochs if steps else None
        if schedule.plan(total, int(self.optimizer.iterations.numpy())):
            # The compiled train step read the old plan as constants.
            self.train_function = None

    def evaluate(self, x=None, y=None, batch_size=None, sample_weight=None,
                 **kwargs):
        if FitValidation.is_fits_validation(self, x, kwargs):
            # `fit`'s validation after each epoch: Keras evaluates the
            # dataset `fit` built from `validation_data` (preprocessed
            # there), and `x` is that dataset: it must not be preprocessed
            # a second time.
            return super().evaluate(x, y, batch_size=batch_size,
                                    sample_weight=sample_weight, **kwargs)
        self._ensure_compiled()
        labels.check_fit_call(self, "evaluate", x, y, batch_size)
        dataset = self._make_dataset(x, y, sample_weight, batch_size)
        with labels.reraise_label_errors(), self._ids_checked_before(x):
            if dataset is None:
                return super().evaluate(x, y, batch_size=batch_size,
                                        sample_weight=sample_weight,
                                        **kwargs)
            if isinstance(dataset, InMemoryBatches):
                return super().evaluate(**dataset.arrays(),
                                        batch_size=dataset.batch_size,
                                        **kwargs)
            return super().evaluate(dataset, **kwargs)

    def predict(self, x, batch_size=None, **kwargs):
        labels.check_fit_call(self, "predict", x, None, batch_size)
        dataset = self._make_dataset(x, batch_size=batch_size)
        with self._ids_checked_before(x):
            if dataset is None:
                return super().predict(x, batch_size=batch_size, **kwargs)
            if isinstance(dataset, InMemoryBatches):
                return super().predict(dataset.x,
                                       batch_size=dataset.batch_size,
                                       **kwargs)
            return super().predict(dataset, **kwargs)

    # ------------------------------------------------------------------
    # Export
    # ------------------------------------------------------------------
    def export(self, filepath, format="tf_saved_model", verbose=None,
               input_signature=None, num_texts=None, generator=None,
               max_length=None, sampler=None, generation_config=None,
               **kwargs):
        """Write the task for serving without kzoo (docs: serving.md).

        A task that generates (`GPT2CausalLM`, `T5Seq2SeqLM`,
        `BartSeq2SeqLM`) exports a **generator** (`generator=None` or
        True; False: the logits endpoints below): a SavedModel whose
        `generate` endpoint (also `serving_default`) takes `prompts` (raw
        strings) and returns `texts`, `token_ids` and `padding_mask` as
        `generate` makes them, decoding with the task's
        `generation_config` (or the one given) greedily or with beam
        search; `generate_max_new_tokens` takes `prompts` and
        `max_new_tokens` (an int32 scalar). `max_length` (the longest
        output, prompt included) and `sampler` ("greedy", "beam") default
        as in `generate`. `generator=True` on a task that does not
        generate raises `kzoo.ExportError`.

        `format="tf_saved_model"` (with a preprocessor) writes a
        TensorFlow SavedModel whose `serve` endpoint (also
        `serving_default`) takes **raw strings** and returns what
        `predict` returns: the tokenizer and the packing are tf ops inside
        the graph. Its string inputs are named by the preprocessor:
        `texts` (a classifier, an embedder; `num_texts=2`:
        `first_texts`, `second_texts` for sentence pairs), `questions`
        and `contexts` (`QuestionAnswerer`: each example's first window,
        as `predict` has it for contexts that fit), `sentences` (a token
        classifier: words split at whitespace, logits per token).
        `serve_token_ids` takes the input dict instead, at the
        preprocessor's `sequence_length`. Exported from the TensorFlow or
        JAX backend; torch raises `kzoo.ExportError`.

        Loading needs TensorFlow and tf-text (which registers the
        tokenizers' ops), not kzoo nor keras-hub:

        ```python
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (the tokenizer's ops)
        served = tf.saved_model.load(path)
        logits = served.serve(tf.constant(["a fine film"]))
        ```

        `format="onnx"` writes an ONNX graph on token ids (the input
        dict at `sequence_length`; ONNX has no tokenizer ops): from the
        TensorFlow backend with a free batch axis, from torch with every
        axis fixed in `input_signature`. Other formats, and a task
        without a preprocessor, go to `keras.Model.export` as they are.

        Example:
        ```python
        classifier = kzoo.BertTextClassifier.from_preset(
            "bert_tiny_en_uncased", num_classes=2, sequence_length=16,
            load_weights=False)
        classifier.export("classifier_savedmodel", verbose=False)
        # In any process with tensorflow and tensorflow_text:
        import tensorflow as tf, tensorflow_text  # noqa: E401, F401
        served = tf.saved_model.load("classifier_savedmodel")
        served.serve(tf.constant(["a fine film"]))  # (1, 2) logits
        ```
        """
        from kzoo.core import export, export_generator
        if generator is None:
            generator = format == "tf_saved_model" and \
                self.preprocessor is not None and \
                export_generator.can_generate(self)
        if generator:
            if format != "tf_saved_model" or input_signature is not None \
                    or num_texts is not None or kwargs:
                raise export.ExportError(
                    f"{type(self).__name__}.export: a generator is a "
                    "TensorFlow SavedModel on raw prompts; pass only "
                    "max_length, sampler, generation_config and verbose "
                    "with it (generator=False exports the logits).")
            return export_generator.export_generator(
                self, filepath, max_length=max_length, sampler=sampler,
                generation_config=generation_config, verbose=verbose)
        if (max_length, sampler, generation_config) != (None,) * 3:
            raise export.ExportError(
                f"{type(self).__name__}.export: max_length, sampler and "
                "generation_config set an exported generator's decoding; "
                "pass them with generator=True (on a task that generates).")
        if format == "tf_saved_model" and self.preprocessor is not None \
                and input_signature is None and not kwargs:
            return export.export_saved_model(self, filepath,
                                             num_texts=num_texts,
                                             verbose=verbose)
        if format == "onnx":
            return export.export_onnx(self, filepath, verbose=verbose,
                                      input_signature=input_signature,
                                      **kwargs)
        return super().export(filepath, format=format, verbose=verbose,
                              input_signature=input_signature, **kwargs)

    # ------------------------------------------------------------------
    # Config and presets
    # ------------------------------------------------------------------
    def task_config(self):
        """The subclass's own constructor arguments."""
        return {}

    def quantize(self, mode=None, config=None, filters=None, **kwargs):
        """Keras' `Model.quantize` on the backbone's and the heads' Dense
        projections: `"int8"` or `"float8"` (see
        `kzoo.core.quantization`). Once only: a second call is an error.
        The quantized task saves and loads as it is (`save_to_preset`,
        `.keras`).

        Example:
        ```python
        classifier = kzoo.BertTextClassifier.from_preset(
            "bert_tiny_en_uncased", num_classes=2, load_weights=False)
        classifier.quantize("int8")
        classifier.predict(["a fine film"])
        ```
        """
        if kwargs:
            raise ValueError(f"{type(self).__name__}.quantize: unexpected "
                             f"arguments {sorted(kwargs)}.")
        quantization.quantize(self, mode, config=config, filters=filters)

    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable,
                  **self.task_config()}
        # The heads' quantized layers (the backbone's are in its entry).
        quantized = quantization.quantized_layers(self, skip=(self.backbone,))
        if quantized:
            config[quantization.CONFIG_KEY] = quantized
        config["backbone"] = self.backbone.config_entry()
        config["preprocessor"] = None
        if self.preprocessor is not None:
            config["preprocessor"] = {
                **class_entry(self.preprocessor,
                              self.preprocessor.get_config()),
                "tokenizer": class_entry(
                    self.preprocessor.tokenizer,
                    self.preprocessor.tokenizer.get_config()),
            }
        return config

    @classmethod
    def from_config(cls, config, backbone=None, preprocessor=None):
        config = dict(config)
        backbone_entry = config.pop("backbone", None)
        preprocessor_entry = config.pop("preprocessor", None)
        quantized = config.pop(quantization.CONFIG_KEY, None)
        if backbone is None:
            backbone_cls = get_class(backbone_entry["class_name"], Backbone)
            backbone = backbone_cls.from_config(backbone_entry["config"])
        if preprocessor is None and preprocessor_entry:
            tokenizer_entry = preprocessor_entry["tokenizer"]
            tokenizer = get_class(tokenizer_entry["class_name"]).from_config(
                tokenizer_entry["config"])
            preprocessor = get_class(
                preprocessor_entry["class_name"]).from_config(
                    preprocessor_entry["config"], tokenizer=tokenizer)
        task = cls(backbone=backbone, preprocessor=preprocessor, **config)
        quantization.apply_saved_quantization(task, quantized)
        return task

    def config_entry(self):
        config = {k: v for k, v in self.get_config().items()
                  if k not in _PART_KEYS}
        return class_entry(self, config)

    @classmethod
    def from_preset(cls, preset, load_weights=True, sequence_length=None,
                    preprocessor="auto", dtype=None, **kwargs):
        """A task on a preset's backbone, with every head the preset has
        weights for.

        The backbone comes from `model.weights.h5`; heads from
        `task.weights.h5` (a saved task's, or the pretraining heads of a
        converted checkpoint: a `BertMaskedLM` gets the checkpoint's MLM
        head). A head the task declares as pretrained
        (`pretrained_heads`) that the preset lacks is an error when the
        preset says it provides it, and a `RandomHeadWarning` naming it
        otherwise; new heads (a classifier) start random, as expected.

        Args:
            preset: a preset name or folder.
            load_weights: load pretrained weights; False: random init.
            sequence_length: the preprocessor's sequence length.
            preprocessor: "auto" (the preset's tokenizer), None (no
                preprocessing: the task then takes input dicts), or a
                preprocessor instance.
            dtype: the backbone's dtype policy (e.g. "mixed_bfloat16");
                the heads follow it. None: as `Backbone.from_preset`, the
                global policy (a quantized preset keeps its own).
            **kwargs: task arguments (e.g. `num_classes=3`).
        """
        preset = presets.resolve(preset)
        if sequence_length is not None:
            cls.backbone_cls.check_preset_sequence_length(
                preset, sequence_length, f"{cls.__name__}.from_preset")
        saved_task = preset.has("task.json") and (
            preset.json("task.json")["class_name"] == cls.__name__)
        # A task's precision is its backbone's (the heads are built with
        # backbone.dtype_policy); handed to the task itself, Keras' model
        # would drop it without a word.
        backbone_overrides = {} if dtype is None else {"dtype": dtype}
        backbone = cls.backbone_cls.from_preset(
            preset, load_weights=load_weights, **backbone_overrides)
        if isinstance(preprocessor, str) and preprocessor == "auto":
            overrides = {}
            if sequence_length is not None:
                overrides["sequence_length"] = sequence_length
            preprocessor = cls.preprocessor_for(preset, **overrides)
        if saved_task:
            config = {**preset.json("task.json")["config"], **kwargs}
            config.pop("name", None)
            task = cls.from_config(config, backbone=backbone,
                                   preprocessor=preprocessor)
        else:
            task = cls(backbone=backbone, preprocessor=preprocessor, **kwargs)
        if load_weights:
            _load_heads(task, preset, saved_task)
        return task

    @classmethod
    def preprocessor_for(cls, preset, **kwargs):
        """The preprocessor `from_preset` gives the task for a preset
        (`preprocessor="auto"`); kwargs override its config."""
        return cls.preprocessor_cls.from_preset(preset, **kwargs)

    def save_to_preset(self, preset_dir, metadata=None):
        """Backbone, tokenizer, preprocessor and head, each file atomic."""
        from kzoo.core.preset_writer import write_task
        write_task(self, preset_dir, metadata)

    def save_weights_atomic(self, path):
        atomic_write(path, self.save_weights, suffix=".weights.h5")


def _float32_outputs(outputs):
    """A task's outputs (logits, scores, embeddings) in float32 whatever
    its compute dtype, as Keras' mixed-precision guide has models end: the
    head computes in bfloat16/float16, then the cast, so the loss, metrics
    and `predict` see float32 (numpy has no bfloat16 of its own). Under
    float32 nothing is added: the graph, and its results, stay as they
    were."""
    def cast(name, tensor):
        if keras.backend.is_float_dtype(tensor.dtype) and \
                keras.backend.standardize_dtype(tensor.dtype) != "float32":
            return keras.layers.Activation(
                "linear", dtype="float32", name=f"{name}_float32")(tensor)
        return tensor

    if isinstance(outputs, dict):
        return {key: cast(key, value) for key, value in outputs.items()}
    if isinstance(outputs, (list, tuple)):
        return type(outputs)(cast(f"output_{i}", value)
                             for i, value in enumerate(outputs))
    if outputs is None:
        return outputs
    return cast("logits", outputs)


def _load_heads(task, preset, saved_task):
    """Fill the task's heads from the preset's heads file, and say which
    pretrained heads it could not provide."""
    path = preset.find_weights_file(presets.TASK_WEIGHTS)
    loaded, foreign = [], {}
    if path is not None and head_weights.is_head_weights_file(path):
        loaded, foreign = head_weights.load_head_weights(
            task, path, presets.PresetError)
    elif path is not None and saved_task:
        # A task preset written before heads were stored on their own
        # (the whole task in one Keras weights file).
        load_weights_checked(task, path, presets.PresetError)
        return
    heads_with_weights = {key.split("/", 1)[0]
                          for key in head_weights.head_variables(task)}
    if saved_task:
        unsaved = sorted(heads_with_weights - set(loaded))
        if unsaved:
            raise presets.PresetError(
                f"Preset {preset.name!r} saved a {type(task).__name__} but "
                f"holds no weights for {', '.join(unsaved)} "
                f"({presets.TASK_WEIGHTS} missing or incomplete). Save the "
                "task again with `save_to_preset`.")
        return
    missing = [head for head in task.pretrained_heads
               if head in heads_with_weights and head not in loaded]
    promised = set(preset.metadata.get("heads", []))
    broken = [head for head in missing if head in promised]
    if broken:
        raise presets.PresetError(
            f"Preset {preset.name!r} provides pretrained {', '.join(broken)} "
            f"but its weights hold none ({presets.TASK_WEIGHTS} is missing "
            f"or lacks them; looked in "
            f"{', '.join(map(str, preset.weight_locations(presets.TASK_WEIGHTS)))}"
            "). A cache converted by an older kzoo lacks heads: delete "
            f"{presets.cache_dir() / preset.name} and load again.")
    for head, kind in foreign.items():
        warnings.warn(
            f"{type(task).__name__}.{head} is randomly initialised: preset "
            f"{preset.name!r} has a {head} head, but made for {kind}, not "
            f"for {head_weights.head_kinds(task)[head]}, so it was not "
            "loaded.", presets.RandomHeadWarning, stacklevel=3)
    why = preset.metadata.get("heads_note")
    for head in missing:
        if head in foreign:
            continue
        warnings.warn(
            f"{type(task).__name__}.{head} is randomly initialised: preset "
            f"{preset.name!r} has no pretrained weights for it"
            + (f" ({why})" if why else "") + ", so its "
            "outputs mean nothing until you train it.",
            presets.RandomHeadWarning, stacklevel=3)
