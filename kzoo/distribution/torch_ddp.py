"""PyTorch: train a kzoo task with `torch.distributed` DistributedDataParallel.

Launch one process per device with `torchrun` (or `scripts/launch.py
--backend torch`, which calls it), then in the training script:

    from kzoo import distribution
    distribution.initialize()           # init_process_group: gloo / NCCL
    classifier = kzoo.BertTextClassifier.from_preset(...)
    classifier = distribution.prepare(classifier)    # -> wrap() below
    classifier.fit(texts, labels, batch_size=64)      # the global batch

`wrap` keeps everything Keras gives (`fit` on raw strings through the
preprocessor, the task's default optimizer, callbacks, metrics) and changes
one thing: the forward pass of each training step runs through
`torch.nn.parallel.DistributedDataParallel`, whose backward hooks average
the gradients over all processes before the Keras optimizer applies them.
DDP broadcasts rank 0's weights when it wraps, so every process starts from
the same model.

Every process reads the same data; each training step takes this process's
contiguous share of the global batch (the same split tf.distribute and
Keras-on-JAX make). With `wrap(task, per_process_batches=True)` each
process is fed its own rows instead (a pretraining stream made with the
process' index makes only those, `kzoo.pretraining`): the step takes the
whole local batch, and every process' local batch must be the same size. Shares of unequal size (a short last batch) are
weighted so the averaged gradient is the gradient of the global-batch mean.
The logged loss is the global batch's; other metrics are those of the
local share.
"""

import inspect
import os

import keras
import numpy as np
import torch
import torch.distributed as dist
from keras import tree
from torch.nn.parallel import DistributedDataParallel

from kzoo.utils import private_apis

# Keras' private parts of its torch train step that `wrap` repeats (checked
# on Keras 3.15.1; kzoo/utils/private_apis.py); the public fallbacks below.
_TRAIN_STEP_PARTS = "keras:Trainer.torch-train-step"


def initialize_process_group():
    """`init_process_group` from torchrun's variables: NCCL when this host
    has GPUs (one per local rank), gloo otherwise."""
    if dist.is_initialized():
        return
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
        dist.init_process_group("nccl")
    else:
        dist.init_process_group("gloo")


def call_takes_training(task):
    """Whether `task.call` names a `training` argument (Keras passes it
    only then)."""
    if private_apis.has(_TRAIN_STEP_PARTS):
        return task._call_has_training_arg
    return "training" in inspect.signature(task.call).parameters


def training_loss(task, x, y, y_pred, sample_weight):
    """The step's loss, as Keras' train step computes it: `compute_loss`
    with `training=True` where the override takes it (Keras 3.3 added
    the argument)."""
    if private_apis.has(_TRAIN_STEP_PARTS):
        return task._compute_loss(x=x, y=y, y_pred=y_pred,
                                  sample_weight=sample_weight, training=True)
    if "training" in inspect.signature(task.compute_loss).parameters:
        return task.compute_loss(x, y, y_pred, sample_weight, training=True)
    return task.compute_loss(x, y, y_pred, sample_weight)


def loss_tracker(task):
    """The metric that logs the loss (Keras lists it first among a
    compiled model's metrics, named "loss")."""
    if private_apis.has(_TRAIN_STEP_PARTS):
        return task._loss_tracker
    return next(m for m in task.metrics if m.name == "loss")


def share_bounds(batch_size, rank, world_size):
    """This rank's [start, stop) of a global batch, and the weight its loss
    gets so that averaging gradients over ranks gives the global mean.

    An empty share borrows the batch's last example with weight 0: every
    rank must still run forward and backward for DDP's all-reduce.
    """
    edges = np.linspace(0, batch_size, world_size + 1).round().astype(int)
    start, stop = int(edges[rank]), int(edges[rank + 1])
    if stop == start:
        return batch_size - 1, batch_size, 0.0
    return start, stop, (stop - start) * world_size / batch_size


def _take(structure, start, stop):
    return tree.map_structure(
        lambda t: None if t is None else t[start:stop], structure)


def wrap(task, find_unused_parameters=True, per_process_batches=False):
    """Make `task.fit` a DistributedDataParallel training loop.

    Args:
        task: a built kzoo task (or any Keras model) on the torch backend.
        find_unused_parameters: DDP's option; True because tasks leave some
            backbone weights out of their loss (a masked LM never uses
            BERT's pooler).
        per_process_batches: False: every process is given the global
            batch and takes its share; True: each process is given its
            own rows (equal sizes on every process) and takes them all.

    Returns:
        The same task, whose `train_step` now runs through DDP.
    """
    if keras.backend.backend() != "torch":
        raise ValueError("torch_ddp.wrap needs KERAS_BACKEND=torch.")
    if not dist.is_initialized():
        raise RuntimeError(
            "torch.distributed is not initialised: launch with torchrun "
            "(or scripts/launch.py --backend torch) and call "
            "kzoo.distribution.initialize() first.")
    device_ids = None
    if torch.cuda.is_available():
        device_ids = [torch.cuda.current_device()]
    ddp = DistributedDataParallel(
        task, device_ids=device_ids,
        find_unused_parameters=find_unused_parameters)
    rank, world_size = dist.get_rank(), dist.get_world_size()

    def train_step(data):
        # Keras' own torch train step (keras/src/backend/torch/trainer.py)
        # with the forward through DDP and this rank's share of the batch.
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        batch_size = int(tree.flatten(x)[0].shape[0])
        if per_process_batches:
            # Equal local batches: DDP's average of the local gradients is
            # the gradient of the global batch's mean.
            weight = 1.0
            batch_size *= world_size
        else:
            start, stop, weight = share_bounds(batch_size, rank, world_size)
            x, y, sample_weight = _take((x, y, sample_weight), start, stop)
        if call_takes_training(task):
            y_pred = ddp(x, training=True)
        else:
            y_pred = ddp(x)
        task.zero_grad()
        loss = training_loss(task, x, y, y_pred, sample_weight)
        weighted_loss = loss * weight
        # Log the loss of the global batch, as the other backends do.
        global_loss = weighted_loss.detach().clone()
        dist.all_reduce(global_loss)
        loss_tracker(task).update_state(global_loss / world_size,
                                        sample_weight=batch_size)
        task.optimizer.scale_loss(weighted_loss).backward()
        trainable_weights = task.trainable_weights[:]
        gradients = [v.value.grad for v in trainable_weights]
        with torch.no_grad():
            task.optimizer.apply(gradients, trainable_weights)
        return task.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    # An instance attribute, looked up by Keras at every step; the DDP
    # module lives in this closure, not as a sub-module of the task.
    object.__setattr__(task, "train_step", train_step)
    task.train_function = None
    return task
