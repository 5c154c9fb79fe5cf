"""TensorFlow: pick the `tf.distribute` strategy the machine supports.

    strategy = kzoo.distribution.strategy()
    with strategy.scope():
        classifier = kzoo.BertTextClassifier.from_preset("bert_base",
                                                         num_classes=2)
    classifier.fit(texts, labels, batch_size=32)   # global batch

Order of preference:

1. a TPU, when one is reachable (a TPU VM, `TPU_NAME`, or an explicit
   `tpu=` address): `TPUStrategy`;
2. several workers in `TF_CONFIG` (set by `scripts/launch.py`, or by your
   cluster): `MultiWorkerMirroredStrategy`;
3. explicit `devices`, or more than one GPU: `MirroredStrategy`;
4. otherwise the default (no-op) strategy.

Whichever is chosen, the model code, the preset loading and the task's
`compile` defaults are the same: kzoo tasks compile under the strategy they
were built in (see `compile_scope`), so the lazily created default optimizer
lands in the right scope.
"""

import contextlib
import glob
import os

import keras
import tensorflow as tf

from kzoo.utils import private_apis
from kzoo.utils.files import TF_CONFIG_FIX, loads_json

# Strategies own devices (TPU initialisation, collective ops); make each once.
_STRATEGIES = {}


def tf_config_workers():
    """The worker addresses in `TF_CONFIG`, or [] when it names none."""
    config = os.environ.get("TF_CONFIG")
    if not config:
        return []
    config = loads_json(config, "TF_CONFIG", TF_CONFIG_FIX)
    return list(config.get("cluster", {}).get("worker", []))


def tpu_address(tpu=None):
    """Where a TPU is, or None when none is reachable from here.

    Only looks where a TPU announces itself, so machines without one never
    wait on a metadata server: an explicit `tpu`, `TPU_NAME` (Cloud TPU
    nodes, GKE), `COLAB_TPU_ADDR` (older Colab runtimes), or TPU devices on
    this host (a TPU VM, including today's Colab TPU runtimes: "local").
    """
    if tpu:
        return tpu
    if os.environ.get("TPU_NAME"):
        return os.environ["TPU_NAME"]
    if os.environ.get("COLAB_TPU_ADDR"):
        return "grpc://" + os.environ["COLAB_TPU_ADDR"]
    if glob.glob("/dev/accel*") or glob.glob("/dev/vfio/[0-9]*"):
        return "local"
    return None


def strategy(devices=None, tpu=None):
    """The `tf.distribute.Strategy` for this machine (see the module doc).

    Args:
        devices: devices for a `MirroredStrategy` (e.g. `["/gpu:0",
            "/gpu:1"]`, or logical CPUs in tests); None: all GPUs.
        tpu: a TPU name or `grpc://` address; None: look for one.

    Example:
    ```python
    from kzoo import distribution
    tf_strategy = distribution.strategy()
    # Here one CPU: TensorFlow's default strategy, one replica.
    assert tf_strategy.num_replicas_in_sync == 1
    with tf_strategy.scope():   # TensorFlow: build the model in it
        classifier = kzoo.BertTextClassifier.from_preset(
            "bert_tiny_en_uncased", num_classes=2, load_weights=False)
    ```
    """
    address = tpu_address(tpu)
    if address is not None:
        key = ("tpu", address)
        make = lambda: _tpu_strategy(address)  # noqa: E731
    elif len(tf_config_workers()) > 1:
        key = ("multi_worker", os.environ["TF_CONFIG"])
        make = tf.distribute.MultiWorkerMirroredStrategy
    else:
        if devices is None:
            gpus = tf.config.list_logical_devices("GPU")
            devices = [gpu.name for gpu in gpus] if len(gpus) > 1 else None
        if not devices:
            return tf.distribute.get_strategy()
        devices = tuple(devices)
        key = ("mirrored", devices)
        make = lambda: tf.distribute.MirroredStrategy(list(devices))  # noqa
    if key not in _STRATEGIES:
        _STRATEGIES[key] = make()
    return _STRATEGIES[key]


def _tpu_strategy(address):
    # The one path the test machines cannot reach: three documented calls,
    # then the TPUStrategy is used exactly like the tested MirroredStrategy.
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=address)
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


def compile_scope(model):
    """The scope a model must compile in: its strategy's, when it was built
    under one (Keras records it), else nothing.

    Example:
    ```python
    from kzoo import distribution
    with distribution.strategy().scope():
        classifier = kzoo.BertTextClassifier.from_preset(
            "bert_tiny_en_uncased", num_classes=2, load_weights=False)
    with distribution.compile_scope(classifier):   # the same strategy
        classifier.compile(optimizer="adam")
    ```
    """
    built_under = model_strategy(model)
    if built_under is None:
        return contextlib.nullcontext()
    return built_under.scope()


def model_strategy(model):
    """The `tf.distribute` strategy `model` was built under, or None
    (built outside any, or not on TensorFlow).

    Keras records it in the private `_distribute_strategy` (checked on
    Keras 3.15.1; kzoo/utils/private_apis.py). Without it, the public
    `distribute_strategy` gives the recorded strategy, or else the one
    in force now: TensorFlow's default strategy outside any scope, which
    means none here."""
    if keras.backend.backend() != "tensorflow":
        return None
    if private_apis.has("keras:Model._distribute_strategy"):
        return model._distribute_strategy
    strategy = getattr(model, "distribute_strategy", None)
    if strategy is None or (not tf.distribute.has_strategy()
                            and strategy is tf.distribute.get_strategy()):
        return None
    return strategy


def symbolic_build(model, iterator=None, data_batch=None):
    """Keras' `_maybe_symbolic_build` for models built under a strategy,
    reading the first batch from one replica.

    Keras (3.15) all-reduces the whole first batch across workers just to
    learn its shapes; MultiWorkerMirroredStrategy cannot reduce a dict of
    inputs (keras-team/keras#20329), so every kzoo task would fail there.
    One replica's batch has the same structure and dtypes.

    `_maybe_symbolic_build` (the hook `Task` overrides) and
    `_symbolic_build` are Keras' private methods (checked on Keras 3.15.1;
    kzoo/utils/private_apis.py). Without `_symbolic_build`, Keras builds
    the model when it traces the train function, as it does for a model
    built outside any strategy.
    """
    strategy = model_strategy(model)
    if strategy is None or not private_apis.has(
            "keras:Model._maybe_symbolic_build"):
        return  # Keras builds when the train function is traced.
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        _log_rank1_metrics(model)
    if iterator is not None:
        for _, _, batches in iterator:
            data_batch = tf.nest.map_structure(
                _one_replica(strategy), next(batches))
            break
    with strategy.scope():
        model._symbolic_build(data_batch=data_batch)


def _one_replica(strategy):
    def first(value):
        if isinstance(value, tf.distribute.DistributedValues):
            return strategy.experimental_local_results(value)[0]
        return value
    return first


def _log_rank1_metrics(model):
    """Let Keras reduce the logged metrics across workers.

    Under MultiWorkerMirroredStrategy Keras 3 reduces each logged value with
    `strategy.reduce("MEAN", value, axis=0)`, which fails on scalars
    (tensorflow/tensorflow#72388). The values are already global (metric
    variables are all-reduced when updated), so giving each a length-1 axis
    makes that reduction a no-op mean of equal numbers.
    """
    if getattr(model, "_kzoo_rank1_logs", False):
        return
    for name in ("train_step", "test_step"):
        object.__setattr__(model, name, _rank1(getattr(model, name)))
    object.__setattr__(model, "_kzoo_rank1_logs", True)


def _rank1(step):
    def step_with_rank1_logs(data):
        return {key: tf.reshape(value, [1])
                for key, value in step(data).items()}
    return step_with_rank1_logs
