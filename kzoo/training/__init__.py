"""Training defaults shared by every task."""

from kzoo.training.optimizers import default_optimizer

__all__ = ["default_optimizer"]
