"""Kernel initialisers the families share."""

import keras


def truncated_normal(stddev=0.02):
    """N(0, stddev) truncated at 2 stddev: how BERT initialises every
    kernel (its `initializer_range` is the stddev), and with it RoBERTa,
    ALBERT, ELECTRA, DistilBERT and DeBERTa-v3."""
    return keras.initializers.TruncatedNormal(stddev=stddev)
