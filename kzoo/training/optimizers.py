"""The optimizer the original papers fine-tuned with."""

import keras

# BERT-style weight decay spares biases and LayerNorm parameters.
NO_DECAY_NAMES = ["bias", "gamma", "beta"]


def default_optimizer(learning_rate=5e-5, weight_decay=0.01):
    """AdamW with BERT's decay exclusions (the paper's fine-tuning recipe)."""
    optimizer = keras.optimizers.AdamW(
        learning_rate=learning_rate, weight_decay=weight_decay)
    optimizer.exclude_from_weight_decay(var_names=NO_DECAY_NAMES)
    return optimizer
