"""Training on many devices and many machines with each backend's engine.

- Layouts (JAX `keras.distribution`): every backbone's
  `get_layout_map(device_mesh)` builds a `LayoutMap` from its
  `layout_rules()`; `model_parallel(BertBackbone, (2, 4))` gives the
  `ModelParallel` distribution; see `layouts.py`.
- TensorFlow `tf.distribute`: `strategy()` (TPU, multi-worker, mirrored or
  default); see `tf_strategy.py`.
- PyTorch: DistributedDataParallel under torchrun; see `torch_ddp.py`.
- One script, any launch: `initialize()`, `data_parallel()`, `prepare()`;
  see `processes.py`, and `scripts/launch.py` for the launcher.

Nothing here reimplements parallelism: each function hands the model to an
engine that exists (XLA sharding, tf.distribute, torch DDP).
"""

from kzoo.distribution.layouts import (
    COLUMN,
    COLUMN_BIAS,
    EMBEDDING,
    REPLICATED,
    ROLES,
    ROW,
    layout_map_from_rules,
    transformer_rules,
    unmatched_rules,
)
from kzoo.distribution.processes import (
    DataParallel,
    ModelParallel,
    data_parallel,
    initialize,
    launched_processes,
    model_parallel,
    prepare,
)
from kzoo.distribution.tf_strategy import compile_scope, strategy

__all__ = [
    "COLUMN", "COLUMN_BIAS", "EMBEDDING", "REPLICATED", "ROLES", "ROW",
    "DataParallel", "ModelParallel",
    "compile_scope", "data_parallel", "initialize", "launched_processes",
    "layout_map_from_rules", "model_parallel", "prepare", "strategy",
    "transformer_rules", "unmatched_rules",
]
