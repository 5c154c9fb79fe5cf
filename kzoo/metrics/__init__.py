"""Evaluation metrics beyond Keras' own: entity-level scores for token
classification, correlations for sentence-pair regression (STS)."""

from kzoo.metrics.correlation import PearsonCorrelation, pearson, spearman
from kzoo.metrics.entities import entity_scores

__all__ = ["PearsonCorrelation", "entity_scores", "pearson", "spearman"]
