"""A pretraining run on many devices and machines, through each backend's
own engine (`kzoo.distribution`), with the same `kzoo pretrain` command:

    python scripts/launch.py --backend jax --processes 2 \\
        -m kzoo pretrain PRESET CORPUS OUTPUT --max-steps 1000

How local batches enter, per backend. Every process walks the same global
order of the corpus and makes only its own rows of each global batch
(`BatchStream(process_index, process_count)`): the ids are read from
memory maps, the dynamic draws (masks, noise) are made for its rows only.

    jax         keras.distribution.DataParallel over every device of every
                process (or ModelParallel with `model_parallel` > 1: the
                backbone's layout rules). Keras' JAX trainer takes each
                process' batch as its local part of the global array
                (`jax.make_array_from_process_local_data`): the local rows
                go in as they are.
    tensorflow  MultiWorkerMirroredStrategy over the launched processes
                (TF_CONFIG), or MirroredStrategy over one process' GPUs
                (`kzoo.distribution.strategy()`). Fed a distributed
                dataset made per worker (`distribute_datasets_from_
                function`, auto-sharding off), each worker's pipeline its
                own rows, split among its devices; every iterator of it
                starts at the run's next batch (`feed` says why).
    torch       DistributedDataParallel (`torch_ddp.wrap(...,
                per_process_batches=True)`): each process' step takes its
                local batch whole; DDP averages the gradients.

Files. One process (index 0) writes: checkpoints, metrics.jsonl,
TensorBoard, the preset; the others wait at a barrier after each write and
read the same folder (on many hosts OUTPUT must be a shared file system).
The stream state a checkpoint holds is the global walk's, the same in
every process, so a run can resume on another process count (the draws
stay those of `draw_groups`, which the checkpoint records).

Every process has its own dropout generator: a P-process run draws other
dropout masks than one process would (the numbers, not the rate), so the
P-process = 1-process equality holds without dropout only.
"""

import contextlib
import tempfile
from pathlib import Path

import numpy as np


def backend():
    import keras
    return keras.backend.backend()


class Engine:
    """This process' place in the run and its backend's engine."""

    def __init__(self, index=0, count=1, model_parallel=1):
        self.index = index
        self.count = count
        self.model_parallel = model_parallel or 1
        self.distribution = None   # jax: a keras.distribution
        self.strategy = None       # tensorflow: a tf.distribute strategy
        self._all_reduce = None    # tensorflow: the barrier's collective
        self.accumulation = 1      # micro-batches per step (`prepare`)

    @classmethod
    def start(cls, model_parallel=1):
        """Join the launched process group (no-op when launched alone)."""
        from kzoo import distribution
        index, count = distribution.initialize()
        return cls(index, count, model_parallel)

    @property
    def chief(self):
        return self.index == 0

    # --- building and training under the engine ---------------------------
    def setup(self, backbone_cls=None):
        """Choose the distribution / strategy (before the model is built)."""
        name = backend()
        if name == "jax":
            import jax
            import keras

            from kzoo import distribution
            devices = jax.device_count()
            if self.model_parallel > 1:
                if devices % self.model_parallel:
                    raise ValueError(
                        f"model_parallel={self.model_parallel} must divide "
                        f"the {devices} devices.")
                self.distribution = distribution.model_parallel(
                    backbone_cls, (devices // self.model_parallel,
                                   self.model_parallel))
            elif devices > 1:
                self.distribution = distribution.DataParallel(
                    devices=keras.distribution.list_devices())
            if self.distribution is not None:
                # The stream made this process' rows already: Keras must
                # not shard them again.
                self.distribution.auto_shard_dataset = False
        elif name == "tensorflow":
            import tensorflow as tf

            from kzoo import distribution
            strategy = distribution.strategy()
            if strategy is not tf.distribute.get_strategy():
                self.strategy = strategy
        elif self.model_parallel > 1:
            raise ValueError("model_parallel needs the jax backend.")

    def scope(self):
        if self.distribution is not None:
            return self.distribution.scope()
        if self.strategy is not None:
            return self.strategy.scope()
        return contextlib.nullcontext()

    def prepare(self, task):
        """The compiled task, made to divide its token losses by the
        step's count of weighted tokens over every replica and
        micro-batch (`kzoo.training.global_loss`; `feed(...,
        training=True)` hands the counts in); on torch in a process
        group, run through DDP on each process' own rows."""
        from kzoo.distribution.processes import in_torch_process_group
        from kzoo.training import global_loss
        optimizer = task.optimizer
        self.accumulation = getattr(
            optimizer, "gradient_accumulation_steps", None) or 1
        ddp = in_torch_process_group()
        global_loss.install(
            task, self.accumulation, replica_sum=self.replica_sum,
            averaged_replicas=self.count if ddp else 1)
        if ddp:
            from kzoo.distribution.torch_ddp import wrap
            return wrap(task, per_process_batches=True)
        return task

    def replica_sum(self, value):
        """`value` (a scalar of this replica's step) summed over the
        replicas, inside a training step: torch's process group or the
        tf.distribute replicas; on JAX the step computes the global batch
        already (`None` would do; the value comes back)."""
        name = backend()
        if name == "torch" and self.count > 1:
            import torch.distributed as dist
            total = value.detach().clone()
            dist.all_reduce(total)
            return total
        if name == "tensorflow" and self.strategy is not None:
            import tensorflow as tf
            context = tf.distribute.get_replica_context()
            if context is not None and context.num_replicas_in_sync > 1:
                return context.all_reduce(tf.distribute.ReduceOp.SUM, value)
        return value

    def feed(self, make_batches, training=False, variable_rows=False):
        """What `fit` is given. `make_batches()` makes a generator of this
        process' local batches from the run's next one on, starting over
        at each call (run.py, `Run._batches`). Without a strategy: one
        such generator. On TensorFlow under a strategy: a distributed
        dataset of them, each worker's pipeline its own rows. Training
        batches (`training`, from an optimizer step's first micro-batch
        on) carry their step's count of weighted tokens
        (`kzoo.training.global_loss.count_steps`).

        The dataset calls `make_batches` anew for each of its iterators,
        and there are two: Keras' TensorFlow `fit` (Keras 3.15.1,
        backend/tensorflow/trainer.py, `fit`) builds the model from one
        batch of a first iterator (`_maybe_symbolic_build(iterator=...)`),
        then `epoch_iterator.reset()` drops it and the epochs train from a
        second one, kept across epochs (trainers/epoch_iterator.py,
        `_enumerate_iterator`). Over one shared Python generator the
        first iterator read batches ahead that the second never saw, and
        when TensorFlow finalized it, its `yield from` closed the shared
        generator: the second ended early ("input ran out of data").

        `variable_rows`: the batches' rows change from step to step (a
        batch-size ramp). Keras' TensorFlow adapter of a generator fixes
        every dimension its first two batches agree on, so on TensorFlow
        the batches go in as a dataset whose row count is left open.
        """
        if training:
            from kzoo.training.global_loss import count_steps
            make_local = make_batches
            accumulation = getattr(self, "accumulation", 1)

            def make_batches():
                return count_steps(make_local(), accumulation)
        if self.strategy is None and not (variable_rows and
                                          backend() == "tensorflow"):
            return make_batches()
        import tensorflow as tf
        first = next(make_batches())
        signature = tf.nest.map_structure(
            lambda a: None if a is None else tf.TensorSpec(
                (None,) + a.shape[1:], tf.as_dtype(a.dtype)), first)
        if self.strategy is None:
            return tf.data.Dataset.from_generator(
                make_batches, output_signature=signature)
        if variable_rows and self.strategy.num_replicas_in_sync > \
                self.count:
            # dataset.rebatch below splits by the first batch's rows.
            raise ValueError(
                "--batch-ramp with several devices per TensorFlow worker "
                "is not supported; run one process per device "
                "(scripts/launch.py) or drop --batch-ramp.")

        def dataset_fn(context):
            dataset = tf.data.Dataset.from_generator(
                make_batches, output_signature=signature)
            options = tf.data.Options()
            options.experimental_distribute.auto_shard_policy = \
                tf.data.experimental.AutoShardPolicy.OFF
            dataset = dataset.with_options(options)
            replicas = self.strategy.num_replicas_in_sync // max(
                context.num_input_pipelines, 1)
            if replicas > 1:  # several devices per worker: split its rows
                rows = first_rows(first)
                dataset = dataset.rebatch(rows // replicas)
            return dataset

        return self.strategy.distribute_datasets_from_function(dataset_fn)

    # --- files --------------------------------------------------------------
    def barrier(self, name):
        """Every process waits here until all have arrived."""
        if self.count == 1:
            return
        name_ = backend()
        if name_ == "torch":
            import torch.distributed as dist
            dist.barrier()
        elif name_ == "jax":
            from jax.experimental import multihost_utils
            multihost_utils.sync_global_devices(name)
        elif self.strategy is not None:
            # A collective all-reduce: returns once every worker ran it
            # (traced once: run eagerly, TensorFlow warns of its cost).
            if self._all_reduce is None:
                import tensorflow as tf
                self._all_reduce = tf.function(lambda: self.strategy.reduce(
                    tf.distribute.ReduceOp.SUM,
                    self.strategy.run(lambda: tf.constant(1.0)), axis=None))
            self._all_reduce()

    def to_numpy(self, variable):
        """A variable's whole value in this process (a collective on JAX
        when the value is sharded over processes: call it everywhere)."""
        value = variable.value
        if backend() == "jax" and hasattr(value, "is_fully_addressable") \
                and not value.is_fully_addressable:
            if value.is_fully_replicated:
                return np.array(value.addressable_data(0))
            from jax.experimental import multihost_utils
            return np.array(multihost_utils.process_allgather(
                value, tiled=True))
        return np.array(variable.numpy())

    def private_folder(self):
        """Where a process other than 0 puts what only process 0 keeps
        (its metrics file, TensorBoard events)."""
        return Path(tempfile.mkdtemp(prefix=f"kzoo-process-{self.index}-"))


def first_rows(batch):
    import keras
    return int(keras.tree.flatten(batch)[0].shape[0])
