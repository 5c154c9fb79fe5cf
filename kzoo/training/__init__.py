"""Training: the default fine-tuning recipe and the seeds' techniques
(layer-wise learning rates, slanted triangular rates, gradual
unfreezing, probing every layer), shared by every task."""

from kzoo.training.layerwise import (
    GradualUnfreezing, LayerwiseAdam, LayerwiseAdamW, LayerwiseMixin,
    LayerwiseSGD, decayed_scales, layer_groups)
from kzoo.training.optimizers import default_optimizer
from kzoo.training.probing import (
    LayerProbe, hidden_states, hidden_states_model, layer_features,
    probe_layers)
from kzoo.training.schedules import (
    PlannedSchedule, SlantedTriangular, WarmupLinearDecay)

__all__ = [
    "GradualUnfreezing", "LayerProbe", "LayerwiseAdam", "LayerwiseAdamW",
    "LayerwiseMixin", "LayerwiseSGD", "PlannedSchedule", "SlantedTriangular",
    "WarmupLinearDecay", "decayed_scales", "default_optimizer",
    "hidden_states", "hidden_states_model", "layer_features",
    "layer_groups", "probe_layers",
]
