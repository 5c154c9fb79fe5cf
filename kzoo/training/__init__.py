"""Training defaults shared by every task."""

from kzoo.training.optimizers import default_optimizer
from kzoo.training.schedules import WarmupLinearDecay

__all__ = ["default_optimizer", "WarmupLinearDecay"]
