"""The optimizer the original papers fine-tuned with."""

import keras

from kzoo.training.schedules import WarmupLinearDecay

# BERT-style weight decay spares biases and LayerNorm parameters.
NO_DECAY_NAMES = ["bias", "gamma", "beta"]


def default_optimizer(learning_rate=5e-5, weight_decay=0.01,
                      warmup_fraction=0.1):
    """AdamW with BERT's decay exclusions and its schedule: linear warmup
    over `warmup_fraction` of the steps, then linear decay to 0 (the
    paper's recipe). `Task.fit` sets the number of steps; see
    `kzoo.training.schedules`."""
    optimizer = keras.optimizers.AdamW(
        learning_rate=WarmupLinearDecay(learning_rate, warmup_fraction),
        weight_decay=weight_decay)
    optimizer.exclude_from_weight_decay(var_names=NO_DECAY_NAMES)
    return optimizer
