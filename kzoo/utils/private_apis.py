"""Every private API of another library that kzoo relies on, in one table.

A private name (a leading underscore) can change in any release without a
deprecation. kzoo uses one only where no public API does the job, and
then behind a fence:

- a feature check (`has(key)`, answered by the entry's `present` check),
  so an installed release without it takes the entry's public fallback
  (slower, same numbers) instead of failing somewhere deep or silently
  computing something else; where no public fallback exists, the code
  fails with a message naming the entry;
- an entry in `PRIVATE_APIS` below: the library, the name, where kzoo
  uses it, what for, the fallback, and the release it was checked on;
- a tested range per library (`TESTED_RANGES`), matched by an upper bound
  in pyproject.toml. `tests/test_private_apis.py` fails when an installed
  release is outside it, and checks every fast path against its fallback.

Upgrading keras or keras-hub past a tested range: run
`tests/test_private_apis.py` on every backend (KERAS_BACKEND=tensorflow,
jax, torch), read each entry of the library below against the new
release's source, then raise `TESTED_RANGES` and the bound in
pyproject.toml together.

What used to be private and is public now (kept out of the table): the
fused torch AdamW step runs through `torch.optim.adamw.adamw(fused=True)`
(was `torch._fused_adamw_` and `torch.utils._foreach_utils`); a
multi-process `keras.distribution` is read from `num_processes` and
`data_shard_id` (were `_is_multi_process`, `_process_id`); the LSTM's
own variables come from `Layer.weights` (were `_trainable_variables`,
`_non_trainable_variables`).
"""

import contextlib
import dataclasses
import importlib.metadata
import re
from typing import Callable

# Library -> (first release, last minor release) its private APIs were
# checked on, both inclusive: the floor in pyproject.toml, and the release
# installed when the entries were last read against the library's source.
# pyproject.toml bounds each library below the next minor, so no install
# picks an unchecked release; one a user forces in makes
# tests/test_private_apis.py fail until it is checked.
TESTED_RANGES = {
    "keras": ("3.15.0", "3.15"),
    "keras-hub": ("0.32.0", "0.32"),
}

# The Adam slot lists kzoo's fused update reads (`keras.optimizers.Adam`
# and `AdamW` make them in `build`, the last with `amsgrad=True` only);
# see the "keras:optimizer-hooks" entry.
ADAM_SLOTS = ("_momentums", "_velocities", "_velocity_hats")


@dataclasses.dataclass(frozen=True)
class PrivateAPI:
    """One private API kzoo uses."""
    key: str          # what `has` takes
    library: str      # the distribution (as pip names it)
    name: str         # what kzoo touches
    used_in: str      # kzoo's files that use it
    purpose: str      # why kzoo needs it
    fallback: str     # the public path taken without it ("" = none)
    checked_on: str   # the release the entry was last read against
    present: Callable[[], bool]
    backends: tuple = ("tensorflow", "jax", "torch")  # where it is used


def _keras_backend():
    import keras
    return keras.backend.backend()


def _has_all(owner, names):
    return all(hasattr(owner, name) for name in names)


def _bpe_hook_present():
    import keras_hub
    return _has_all(keras_hub.tokenizers.BytePairTokenizer,
                    ("_set_vocabulary_and_merges_tokenizers",
                     "_maybe_initialized_tokenizers"))


def _sentencepiece_hook_present():
    import keras_hub
    return hasattr(keras_hub.tokenizers.SentencePieceTokenizer,
                   "_set_proto_tf")


def _optimizer_hooks_present():
    import keras
    return _has_all(keras.optimizers.Optimizer,
                    ("_backend_update_step", "_apply_weight_decay",
                     "_get_variable_index", "_use_weight_decay"))


# The checks below that need an object make one without weights where they
# can (they may run inside a user's distribution scope).
def _learning_rate_present():
    import keras
    optimizer = keras.optimizers.SGD(
        keras.optimizers.schedules.ExponentialDecay(1.0, 1, 0.5))
    return isinstance(getattr(optimizer, "_learning_rate", None),
                      keras.optimizers.schedules.LearningRateSchedule)


def _distribute_strategy_present():
    import keras
    return hasattr(keras.Sequential(), "_distribute_strategy")


def _symbolic_build_present():
    import keras
    return _has_all(keras.Model, ("_maybe_symbolic_build", "_symbolic_build"))


def _cached_eval_argument_present():
    import inspect

    import keras
    return "_use_cached_eval_dataset=True" in inspect.getsource(
        keras.Model.fit)


def _torch_train_step_parts_present():
    import keras
    model = keras.Sequential([keras.Input((1,)), keras.layers.Identity()])
    model.compile(loss="mse")
    return (_has_all(model, ("_call_has_training_arg", "_loss_tracker"))
            and hasattr(keras.Model, "_compute_loss"))


def _functional_nodes_present():
    import keras
    inputs = keras.Input((1,))
    model = keras.Model(inputs, keras.layers.Identity()(inputs))
    return isinstance(getattr(model, "_nodes_by_depth", None), dict)


def _text_layer_flags_present():
    import keras
    return _has_all(keras.layers.Layer(),
                    ("_convert_input_args",
                     "_allow_non_tensor_positional_args"))


PRIVATE_APIS = (
    PrivateAPI(
        key=("keras-hub:"
             "BytePairTokenizer._set_vocabulary_and_merges_tokenizers"),
        library="keras-hub",
        name="BytePairTokenizer._set_vocabulary_and_merges_tokenizers "
             "(overridden) and ._tokenizer",
        used_in="kzoo/models/gpt2/tokenizer.py",
        purpose="give keras-hub's eager path (the `tokenizers` library) "
                "GPT-2's pre-tokenizer instead of Llama 3's",
        fallback="eager calls run the traced TensorFlow path "
                 "(GPT2Tokenizer.tokenize_in_graph)",
        checked_on="0.32.0",
        present=_bpe_hook_present),
    PrivateAPI(
        key="keras-hub:SentencePieceTokenizer._set_proto_tf",
        library="keras-hub",
        name="SentencePieceTokenizer._set_proto_tf",
        used_in="kzoo/core/sentencepiece_tokenizer.py",
        purpose="remake tensorflow-text's model for each graph (a "
                "set_random_seed drops the one made before)",
        fallback="SentencePieceTokenizer.set_proto (also rebuilds the "
                 "vocabulary tables: slower)",
        checked_on="0.32.0",
        present=_sentencepiece_hook_present),
    PrivateAPI(
        key="keras:optimizer-hooks",
        library="keras",
        name="Optimizer._backend_update_step, ._apply_weight_decay "
             "(overridden), ._get_variable_index, ._use_weight_decay; "
             "Adam's " + ", ".join(ADAM_SLOTS),
        used_in="kzoo/training/adam.py, kzoo/training/layerwise.py",
        purpose="run Adam/AdamW as one fused kernel per parameter (torch, "
                "TensorFlow); scale each layer group's rate",
        fallback="adam.py: Keras' own update; layerwise.py: none (build "
                 "raises, naming this entry)",
        checked_on="3.15.1",
        present=_optimizer_hooks_present),
    PrivateAPI(
        key="keras:Optimizer._learning_rate",
        library="keras",
        name="Optimizer._learning_rate",
        used_in="kzoo/training/schedules.py (planned_schedule_of)",
        purpose="find the optimizer's kzoo schedule, to plan it over the "
                "steps of a fit",
        fallback="look for the schedule among the optimizer's attributes",
        checked_on="3.15.1",
        present=_learning_rate_present),
    PrivateAPI(
        key="keras:Model._distribute_strategy",
        library="keras",
        name="Model._distribute_strategy",
        used_in="kzoo/distribution/tf_strategy.py (model_strategy)",
        purpose="the tf.distribute strategy a model was built under, or "
                "None",
        fallback="the public Model.distribute_strategy, None for "
                 "TensorFlow's default strategy",
        checked_on="3.15.1",
        present=_distribute_strategy_present,
        backends=("tensorflow",)),
    PrivateAPI(
        key="keras:Model._maybe_symbolic_build",
        library="keras",
        name="TensorFlowTrainer._maybe_symbolic_build (overridden), "
             "Trainer._symbolic_build",
        used_in="kzoo/core/task.py, kzoo/distribution/tf_strategy.py",
        purpose="build from one replica's batch under a strategy "
                "(MultiWorkerMirroredStrategy cannot all-reduce a dict: "
                "keras-team/keras#20329)",
        fallback="Keras builds the model when it traces the train step",
        checked_on="3.15.1",
        present=_symbolic_build_present,
        backends=("tensorflow",)),
    PrivateAPI(
        key="keras:fit._use_cached_eval_dataset",
        library="keras",
        name="the _use_cached_eval_dataset argument fit passes to "
             "evaluate",
        used_in="kzoo/core/input_pipeline.py (FitValidation), "
                "kzoo/core/task.py (evaluate)",
        purpose="tell fit's per-epoch validation (data fit prepared) "
                "from a user's evaluate on raw text",
        fallback="recognise fit's validation_data by identity (Task.fit "
                 "turns validation_split into validation_data itself)",
        checked_on="3.15.1",
        present=_cached_eval_argument_present),
    PrivateAPI(
        key="keras:Trainer.torch-train-step",
        library="keras",
        name="Layer._call_has_training_arg, Trainer._compute_loss, "
             "Trainer._loss_tracker",
        used_in="kzoo/distribution/torch_ddp.py",
        purpose="Keras' torch train step, with the forward through DDP",
        fallback="call's signature, compute_loss, the metric named 'loss'",
        checked_on="3.15.1",
        present=_torch_train_step_parts_present,
        backends=("torch",)),
    PrivateAPI(
        key="keras:Functional._nodes_by_depth",
        library="keras",
        name="Functional._nodes_by_depth",
        used_in="kzoo/tasks/probing.py",
        purpose="each call of a transformer block in graph order (ALBERT "
                "calls one block many times; the public API lists layers)",
        fallback="",
        checked_on="3.15.1",
        present=_functional_nodes_present),
    PrivateAPI(
        key="keras:Layer.text-input-flags",
        library="keras",
        name="Layer._convert_input_args, "
             "Layer._allow_non_tensor_positional_args (set)",
        used_in="kzoo/core/tokenizer.py, kzoo/core/preprocessor.py",
        purpose="let text layers take strings (keras-hub's and Keras' own "
                "preprocessing layers set the same two flags)",
        fallback="",
        checked_on="3.15.1",
        present=_text_layer_flags_present),
)

_BY_KEY = {api.key: api for api in PRIVATE_APIS}
_ANSWERS = {}
_FORCED_FALLBACKS = set()


def entry(key):
    """The table entry of `key`."""
    return _BY_KEY[key]


def has(key):
    """Whether the installed library has the private API `key` (checked
    once per process): the fast path may run. False also while a test
    forces the fallback (`forced_fallback`)."""
    if key in _FORCED_FALLBACKS:
        return False
    if key not in _ANSWERS:
        try:
            _ANSWERS[key] = bool(_BY_KEY[key].present())
        except (AttributeError, ImportError, TypeError):
            _ANSWERS[key] = False
    return _ANSWERS[key]


def require(key, what):
    """Raise, naming the table entry, when `key` is missing: for uses with
    no public fallback."""
    if not has(key):
        api = _BY_KEY[key]
        raise RuntimeError(
            f"{what} needs {api.library}'s private {api.name}, which the "
            f"installed {api.library} {installed_version(api.library)} "
            f"lacks (checked on {api.checked_on}). Install a release in "
            f"kzoo's tested range, or see kzoo/utils/private_apis.py.")


@contextlib.contextmanager
def forced_fallback(*keys):
    """Within: `has(key)` is False for these keys, so the public fallback
    runs (tests compare it with the fast path)."""
    unknown = [key for key in keys if key not in _BY_KEY]
    if unknown:
        raise KeyError(f"not in PRIVATE_APIS: {unknown}")
    added = set(keys) - _FORCED_FALLBACKS
    _FORCED_FALLBACKS.update(added)
    try:
        yield
    finally:
        _FORCED_FALLBACKS.difference_update(added)


def installed_version(library):
    try:
        return importlib.metadata.version(library)
    except importlib.metadata.PackageNotFoundError:
        return None


def _release(version, parts=3):
    """'2.13.0+cpu' -> (2, 13, 0); missing parts are 0."""
    numbers = [int(n) for n in re.findall(r"\d+", version.split("+")[0])]
    numbers = (numbers + [0] * parts)[:parts]
    return tuple(numbers)


def outside_tested_ranges(versions=None):
    """One message per library whose installed release (or the one in
    `versions`, a {library: version} dict) lies outside its
    `TESTED_RANGES` entry; empty when all are inside."""
    problems = []
    for library, (first, last_minor) in TESTED_RANGES.items():
        version = (versions or {}).get(library) or installed_version(library)
        if version is None:
            continue
        release = _release(version)
        if _release(first) <= release and \
                release[:2] <= _release(last_minor, 2):
            continue
        names = "; ".join(api.name for api in PRIVATE_APIS
                          if api.library == library)
        problems.append(
            f"{library} {version} is outside the range kzoo's private-API "
            f"fences were checked on ({first} to {last_minor}.x). Check "
            f"{library}'s private APIs in kzoo/utils/private_apis.py "
            f"({names}) against this release and run "
            "tests/test_private_apis.py on every backend; then update "
            f"TESTED_RANGES[{library!r}] there and the {library} bound in "
            "pyproject.toml.")
    return problems


def missing(backend=None):
    """The entries used on `backend` (default: Keras' backend) whose
    private API the installed library lacks."""
    backend = backend or _keras_backend()
    return [api for api in PRIVATE_APIS
            if backend in api.backends and not has(api.key)]
