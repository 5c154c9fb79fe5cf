"""One training script, any launch: the backend's own engines, chosen here.

    import kzoo
    from kzoo import distribution

    distribution.initialize()              # many processes: join the group
    with distribution.data_parallel():     # this backend's data parallelism
        classifier = kzoo.BertTextClassifier.from_preset(...)
        classifier = distribution.prepare(classifier)
        classifier.fit(texts, labels, batch_size=64)   # the global batch

What each backend does:

    backend     initialize()                       data_parallel()
    ----------  ---------------------------------  ---------------------------
    jax         keras.distribution.initialize()    keras.distribution.
                (KERAS_DISTRIBUTION_* variables)   DataParallel over all
                                                   devices of all processes
    tensorflow  MultiWorkerMirroredStrategy        strategy().scope(): TPU,
                (TF_CONFIG)                        multi-worker, several GPUs
    torch       torch.distributed.init_process_    nothing; prepare() wraps
                group (torchrun's variables),      the task's train step in
                gloo on CPU, NCCL on GPU           DistributedDataParallel

Every process is given the same data and the *global* batch size; each
engine gives each replica its share (Keras' dataset auto-sharding on JAX,
tf.distribute's on TensorFlow, `torch_ddp` on PyTorch). `scripts/launch.py`
sets the variables above for local runs and for each host of a cluster.

`fit` and `evaluate` work under every launch. `predict` under several JAX
processes does not (Keras 3.15 turns the cross-process output into numpy,
which JAX refuses); predict on one process, e.g. after saving a preset.
"""

import contextlib
import os

import keras

from kzoo.utils.files import TF_CONFIG_FIX, loads_json


def backend():
    return keras.backend.backend()


def _env_int(name, default):
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def launched_processes():
    """(process index, process count) as the launcher described them, read
    from the backend's own variables; (0, 1) when launched plainly.

    Example:
    ```python
    from kzoo import distribution
    index, count = distribution.launched_processes()
    assert (index, count) == (0, 1)   # a plain `python script.py`
    ```
    """
    if os.environ.get("KERAS_DISTRIBUTION_NUM_PROCESSES"):
        return (_env_int("KERAS_DISTRIBUTION_PROCESS_ID", 0),
                _env_int("KERAS_DISTRIBUTION_NUM_PROCESSES", 1))
    if os.environ.get("TF_CONFIG"):
        config = loads_json(os.environ["TF_CONFIG"], "TF_CONFIG",
                            TF_CONFIG_FIX)
        workers = config.get("cluster", {}).get("worker", [])
        if len(workers) > 1:
            return int(config["task"]["index"]), len(workers)
    if os.environ.get("WORLD_SIZE"):
        return _env_int("RANK", 0), _env_int("WORLD_SIZE", 1)
    return 0, 1


_INITIALIZED = False


def initialize():
    """Join the process group this process was launched into (no-op when
    launched alone). Call it first, before building any model.

    Returns:
        (process index, process count).

    Example:
    ```python
    from kzoo import distribution
    index, count = distribution.initialize()   # first thing in a script
    assert (index, count) == (0, 1)   # launched alone: nothing to join
    ```
    """
    global _INITIALIZED
    index, count = launched_processes()
    if count == 1 or _INITIALIZED:
        return index, count
    name = backend()
    if name == "jax":
        _initialize_jax()
    elif name == "tensorflow":
        from kzoo.distribution.tf_strategy import strategy
        strategy()  # MultiWorkerMirroredStrategy must exist before any op.
    elif name == "torch":
        from kzoo.distribution.torch_ddp import initialize_process_group
        initialize_process_group()
    _INITIALIZED = True
    return index, count


def _initialize_jax():
    import jax
    # Cross-process all-reduce between CPU devices needs a collectives
    # implementation (gloo ships with jaxlib; GPUs and TPUs ignore this).
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    keras.distribution.initialize()


class _BatchShares:
    """Keras' multi-process input split, found at run time.

    With several processes, Keras gives each one its share of every global
    batch, but it reads the batch size statically from the `tf.data` graph,
    and any `map` (a task's preprocessor) hides it: Keras then refuses the
    dataset. This makes the same split (process i takes the i-th
    contiguous slice of each global batch) from the batch's actual size.
    """

    def distribute_tf_dataset(self, dataset):
        import tensorflow as tf

        replicas = self.num_model_replicas
        if replicas == 1:
            return dataset.prefetch(tf.data.AUTOTUNE)
        if replicas >= self.num_processes:
            # Keras' public `data_shard_id` is then the process' index.
            shards, index = self.num_processes, self.data_shard_id
        else:  # A replica spans processes: they read the same share.
            shards, index = replicas, self.data_shard_id

        def take_share(*batch):
            size = tf.shape(tf.nest.flatten(batch)[0])[0]
            tf.debugging.assert_equal(
                size % shards, 0, message=(
                    f"The global batch size must be a multiple of {shards} "
                    "(the number of data shards) on every step."))
            start, stop = size * index // shards, size * (index + 1) // shards
            batch = tf.nest.map_structure(lambda t: t[start:stop], batch)
            return batch if len(batch) > 1 else batch[0]

        return dataset.map(take_share).prefetch(tf.data.AUTOTUNE)


class DataParallel(_BatchShares, keras.distribution.DataParallel):
    """`keras.distribution.DataParallel` that also splits preprocessed
    (mapped) datasets across processes.

    Example:
    ```python
    from kzoo import distribution
    # JAX; devices=None: every device of every process. Here one CPU.
    dist = distribution.DataParallel(devices=["cpu:0"])
    assert dist.device_mesh.shape == (1,)
    # keras.distribution.set_distribution(dist), then build and fit.
    ```
    """


class ModelParallel(_BatchShares, keras.distribution.ModelParallel):
    """`keras.distribution.ModelParallel` that also splits preprocessed
    (mapped) datasets across processes.

    Example:
    ```python
    from kzoo import distribution
    # JAX; e.g. shape (2, 4) over 8 devices. Here one CPU.
    mesh = keras.distribution.DeviceMesh(
        shape=(1, 1), axis_names=("batch", "model"), devices=["cpu:0"])
    layout_map = distribution.layout_map_from_rules(
        distribution.transformer_rules(), mesh)
    dist = distribution.ModelParallel(layout_map=layout_map,
                                      batch_dim_name="batch")
    assert dist.device_mesh.shape == (1, 1)
    ```
    """


@contextlib.contextmanager
def data_parallel(devices=None):
    """Build (and, on JAX, train) inside this: data parallelism with the
    backend's engine.

    Args:
        devices: the devices of one process to replicate over (e.g. logical
            CPUs in tests); None: all of them.

    Example:
    ```python
    from kzoo import distribution
    distribution.initialize()
    with distribution.data_parallel():
        classifier = kzoo.BertTextClassifier.from_preset(
            "bert_tiny_en_uncased", num_classes=2, load_weights=False,
            sequence_length=16)
        classifier = distribution.prepare(classifier)
        history = classifier.fit(["great film", "dull film"], [1, 0],
                                 batch_size=2, epochs=1, verbose=0)
    assert len(history.history["loss"]) == 1
    ```
    """
    name = backend()
    if name == "jax":
        dist = DataParallel(devices=devices)
        with dist.scope():
            yield dist
    elif name == "tensorflow":
        from kzoo.distribution.tf_strategy import strategy
        tf_strategy = strategy(devices=devices)
        with tf_strategy.scope():
            yield tf_strategy
    else:
        yield None


def model_parallel(backbone_cls, mesh_shape, axis_names=("batch", "model"),
                   devices=None):
    """A `keras.distribution.ModelParallel` for a backbone family (JAX).

    Args:
        backbone_cls: a backbone class (or instance) with `get_layout_map`.
        mesh_shape: e.g. `(2, 4)`: 2-way data parallel x 4-way model
            parallel over 8 devices.
        axis_names: the (data, model) axis names of the mesh.

    Example:
    ```python
    from kzoo import distribution
    # JAX: 2-way data x 4-way model parallel over 8 devices would be
    # model_parallel(kzoo.BertBackbone, (2, 4)). Here one CPU.
    dist = distribution.model_parallel(kzoo.BertBackbone, (1, 1),
                                       devices=["cpu:0"])
    assert isinstance(dist, keras.distribution.ModelParallel)
    assert dist.device_mesh.shape == (1, 1)
    # keras.distribution.set_distribution(dist), then build and fit.
    ```
    """
    devices = devices or keras.distribution.list_devices()
    mesh = keras.distribution.DeviceMesh(
        shape=tuple(mesh_shape), axis_names=tuple(axis_names),
        devices=devices)
    layout_map = backbone_cls.get_layout_map(
        mesh, model_parallel_dim_name=axis_names[1],
        data_parallel_dim_name=axis_names[0])
    return ModelParallel(layout_map=layout_map, batch_dim_name=axis_names[0])


def prepare(task):
    """Hand the task to the backend's data-parallel engine where it needs
    one: on PyTorch with several processes, `DistributedDataParallel`.
    Elsewhere (and with one process) the task is returned unchanged.

    Example:
    ```python
    from kzoo import distribution
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=2, load_weights=False)
    classifier = distribution.prepare(classifier)   # before fit
    assert isinstance(classifier, kzoo.BertTextClassifier)  # one process
    ```
    """
    if in_torch_process_group():
        from kzoo.distribution.torch_ddp import wrap
        return wrap(task)
    return task


def in_torch_process_group():
    """Whether this is one of several torch.distributed processes (DDP):
    the torch backend, an initialised process group, a world above 1."""
    if backend() != "torch":
        return False
    import torch.distributed as dist
    return dist.is_available() and dist.is_initialized() and \
        dist.get_world_size() > 1
