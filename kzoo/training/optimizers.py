"""The optimizer the original papers fine-tuned with, and the optimizers
pretraining picks by name (`make_optimizer`)."""

import keras

from kzoo.training.adam import AdamW
from kzoo.training.global_clip import GlobalClipMixin
from kzoo.training.schedules import WarmupLinearDecay
from kzoo.training.weight_decay import DecayRuleMixin


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


# --- Optimizers by name (`kzoo pretrain --optimizer`) ------------------------
# Each is Keras' own optimizer with kzoo's decay rule (biases and norms
# spared, `kzoo.training.weight_decay`), and the arguments it takes besides
# the learning rate, weight decay and clipping: asking one for an argument
# it does not have (Adafactor's beta_1) is an error, not a silent no-op.
OPTIMIZER_ARGUMENTS = {
    "adamw": ("beta_1", "beta_2", "epsilon"),
    "lamb": ("beta_1", "beta_2", "epsilon"),
    "adafactor": (),
    "adagrad": ("epsilon", "initial_accumulator_value"),
    "sgd": ("momentum",),
}


@keras.saving.register_keras_serializable(package="kzoo")
class Lamb(GlobalClipMixin, DecayRuleMixin, keras.optimizers.Lamb):
    """Keras' `Lamb` with `decay_norms_and_biases` (see `AdamW`)."""


@keras.saving.register_keras_serializable(package="kzoo")
class Adafactor(GlobalClipMixin, DecayRuleMixin,
                keras.optimizers.Adafactor):
    """Keras' `Adafactor` with `decay_norms_and_biases` (see `AdamW`)."""


@keras.saving.register_keras_serializable(package="kzoo")
class Adagrad(GlobalClipMixin, DecayRuleMixin, keras.optimizers.Adagrad):
    """Keras' `Adagrad` with `decay_norms_and_biases` (see `AdamW`)."""


@keras.saving.register_keras_serializable(package="kzoo")
class SGD(GlobalClipMixin, DecayRuleMixin, keras.optimizers.SGD):
    """Keras' `SGD` with `decay_norms_and_biases` (see `AdamW`)."""


_OPTIMIZER_CLASSES = {"adamw": AdamW, "lamb": Lamb, "adafactor": Adafactor,
                      "adagrad": Adagrad, "sgd": SGD}


def make_optimizer(name, learning_rate, weight_decay=0.0, clip_norm=None,
                   gradient_accumulation_steps=None, **arguments):
    """Optimizer `name` (a key of `OPTIMIZER_ARGUMENTS`) with BERT's decay
    exclusions, the global gradient norm clipped at `clip_norm` (None: no
    clipping) and `arguments` among those `OPTIMIZER_ARGUMENTS` lists for
    it (None values: Keras' defaults).

    Example:
    ```python
    from kzoo import training
    optimizer = training.make_optimizer("lamb", 1e-3, weight_decay=0.01,
                                        clip_norm=1.0, epsilon=1e-6)
    assert optimizer.global_clipnorm == 1.0
    ```
    """
    if name not in OPTIMIZER_ARGUMENTS:
        raise ValueError(f"Unknown optimizer {name!r}; pick one of "
                         f"{', '.join(OPTIMIZER_ARGUMENTS)}.")
    given = {k: v for k, v in arguments.items() if v is not None}
    foreign = sorted(set(given) - set(OPTIMIZER_ARGUMENTS[name]))
    if foreign:
        takes = ", ".join(OPTIMIZER_ARGUMENTS[name]) or "none"
        raise ValueError(f"The {name} optimizer has no {', '.join(foreign)} "
                         f"(its own arguments: {takes}).")
    if name == "adafactor":
        # Keras' Adafactor (3.15) steps by min(rate, 1/sqrt(step)) times
        # the parameter's scale whatever this says; under T5's schedule
        # the minimum is the schedule's rate.
        given["relative_step"] = False
    # Keras' AdamW needs a number; the others take None for no decay.
    decay = float(weight_decay or 0.0) if name == "adamw" else (
        weight_decay or None)
    return _OPTIMIZER_CLASSES[name](
        learning_rate=learning_rate, weight_decay=decay,
        decay_norms_and_biases=False, global_clipnorm=clip_norm,
        gradient_accumulation_steps=gradient_accumulation_steps, **given)
