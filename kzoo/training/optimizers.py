"""The optimizer the original papers fine-tuned with."""

from kzoo.training.adam import AdamW
from kzoo.training.schedules import WarmupLinearDecay


def default_optimizer(learning_rate=5e-5, weight_decay=0.01,
                      warmup_fraction=0.1):
    """AdamW (`kzoo.training.AdamW`: Keras', fused on torch and
    TensorFlow) with BERT's decay exclusions (biases and normalization
    parameters of every layer, found by role: `kzoo.training.weight_decay`)
    and its schedule: linear
    warmup over `warmup_fraction` of the steps, then linear decay to 0
    (the paper's recipe). `Task.fit` sets the number of steps; see
    `kzoo.training.schedules`.

    Example:
    ```python
    from kzoo import training
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=2, load_weights=False,
        sequence_length=16)
    classifier.compile(optimizer=training.default_optimizer(3e-5),
                       loss=keras.losses.SparseCategoricalCrossentropy(
                           from_logits=True))
    classifier.fit(["great film", "dull film"], [1, 0], epochs=1)
    ```
    """
    optimizer = AdamW(
        learning_rate=WarmupLinearDecay(learning_rate, warmup_fraction),
        weight_decay=weight_decay, decay_norms_and_biases=False)
    return optimizer
