"""Training: the default fine-tuning recipe and the seeds' techniques
(layer-wise learning rates, slanted triangular rates, gradual
unfreezing), shared by every task. Probing every layer of a backbone
is `kzoo.tasks.probing`."""

from kzoo.training.adam import Adam, AdamW
from kzoo.training.layerwise import (
    GradualUnfreezing, LayerwiseAdam, LayerwiseAdamW, LayerwiseMixin,
    LayerwiseSGD, decayed_scales, layer_groups)
from kzoo.training.optimizers import (
    OPTIMIZER_ARGUMENTS, default_optimizer, make_optimizer)
from kzoo.training.schedules import (
    PlannedSchedule, SlantedTriangular, WarmupLinearDecay)

__all__ = [
    "Adam", "AdamW", "GradualUnfreezing", "LayerwiseAdam", "LayerwiseAdamW",
    "LayerwiseMixin", "LayerwiseSGD", "PlannedSchedule", "SlantedTriangular",
    "OPTIMIZER_ARGUMENTS", "WarmupLinearDecay", "decayed_scales",
    "default_optimizer", "layer_groups", "make_optimizer",
]
