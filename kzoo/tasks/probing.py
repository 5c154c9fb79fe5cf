"""Probe every layer: what does each layer of a pretrained encoder know?

The seeds' probing recipe (Tenney et al., 2019, "BERT Rediscovers the
Classical NLP Pipeline"; Liu et al., 2019, "Linguistic Knowledge and
Transferability of Contextual Representations"): freeze the backbone, take
the representation every layer gives (the embeddings, then each block's
output), and train a linear classifier on each one alone. The accuracy per
layer says where in the stack the information a task needs appears.

`hidden_states_model(backbone)` gives the layers' outputs for any encoder
backbone, read off its functional graph (no per-family code), in the
convention of `transformers`' `output_hidden_states=True`: the input of
each layer, then the final `sequence_output` (`num_layers + 1` states).

`probe_layers(...)` runs the frozen backbone once over the data (every
layer's pooled features from one forward pass) and fits a softmax
classifier (one `keras.layers.Dense`) per layer on them.

```python
results = kzoo.tasks.probing.probe_layers(
    backbone, preprocessor, train_texts, train_labels,
    validation_data=(val_texts, val_labels), pooling="mean", epochs=20)
for result in results:
    print(result)  # embeddings: train 0.712, validation 0.690 ...
```
"""

import dataclasses

import keras
import numpy as np

from kzoo.core.backbone import _BLOCK_NAME, Backbone
from kzoo.layers.pooling import TokenPooling
from kzoo.utils import private_apis


# "token": no pooling, one example per labelled token (token-level probes).
PROBE_POOLING = ("cls", "mean", "token")


# ----------------------------------------------------------------------
# Every layer's hidden states
# ----------------------------------------------------------------------
def hidden_states(backbone):
    """The symbolic hidden states of `backbone`'s graph, bottom to top:
    `[embeddings, output of layer 1, ..., output of layer N]`, the last
    being the backbone's `sequence_output` itself.

    A layer's state is the input of its block's call, as `transformers`
    collects them (in a post-LayerNorm encoder, the previous block's
    output); the top state is the sequence output (after a final
    LayerNorm where the family has one, as `transformers` does). A block
    layer called several times (ALBERT's shared block) gives one state per
    call; where each of the `num_layers` layers runs `k` blocks in turn
    (ALBERT's inner groups), every k-th call starts a layer.
    """
    name = type(backbone).__name__
    if not isinstance(backbone, Backbone):
        hint = (" Pass its `.backbone`." if isinstance(
            getattr(backbone, "backbone", None), Backbone) else "")
        raise TypeError(f"Probing takes a kzoo Backbone; got {name}.{hint}")
    sequence_output = _sequence_output(backbone)
    calls = _block_calls(backbone)
    if not calls:
        raise ValueError(
            f"{name} has no numbered transformer blocks (layers named "
            "`..._<i>` with weights) in its graph, so it has no per-layer "
            "hidden states to probe. Probing needs a transformer encoder "
            "backbone (BERT, RoBERTa, DistilBERT, ALBERT, ELECTRA, "
            "DeBERTa-v3, ...).")
    for previous, call in zip(calls, calls[1:]):
        if _first_input(call) is not previous.outputs[0]:
            raise ValueError(
                f"{name}'s numbered blocks do not form one stack: "
                f"`{call.operation.name}` does not take the output of "
                f"`{previous.operation.name}` (parallel stacks, as in "
                "ELMo, or layers between blocks, as in AWD-LSTM). "
                "hidden_states_model probes a single stack of transformer "
                "blocks, one after the other.")
    num_layers = getattr(backbone, "num_layers", None) or len(calls)
    if len(calls) % num_layers:
        raise ValueError(
            f"{name} calls its blocks {len(calls)} times, which does not "
            f"split into its num_layers={num_layers} layers; cannot tell "
            "where each layer starts.")
    per_layer = len(calls) // num_layers
    states = [_first_input(calls[i * per_layer]) for i in range(num_layers)]
    return states + [sequence_output]


def hidden_states_model(backbone):
    """A `keras.Model` from `backbone`'s inputs to its `num_layers + 1`
    hidden states (a list, bottom to top; see `hidden_states`). It shares
    the backbone's layers and weights.

    Example:
    ```python
    model = kzoo.tasks.probing.hidden_states_model(backbone)
    states = model(inputs)  # [embeddings, layer 1, ..., sequence_output]
    len(states) == backbone.num_layers + 1
    ```
    """
    return keras.Model(backbone.input, hidden_states(backbone),
                       name=f"{backbone.name}_hidden_states")


def _sequence_output(backbone):
    outputs = backbone.output
    if isinstance(outputs, dict):
        if "sequence_output" not in outputs:
            raise ValueError(
                f"{type(backbone).__name__} has outputs {sorted(outputs)} "
                "and no `sequence_output`: probing takes an encoder "
                "backbone whose top layer is its `sequence_output` (an "
                "encoder-decoder such as T5 is not one).")
        return outputs["sequence_output"]
    if isinstance(outputs, (list, tuple)):
        raise ValueError(
            f"{type(backbone).__name__} has {len(outputs)} outputs and no "
            "`sequence_output` to probe.")
    return outputs  # a single (batch, seq, hidden) output (GPT-2)


def _block_calls(backbone):
    """The calls (graph nodes) of the backbone's numbered blocks, in the
    order the graph runs them."""
    # Keras' functional graph, as `map_graph` ordered it when the backbone
    # was built (the public API lists layers, not the calls of each: a
    # shared block's calls are out of its reach). Private to Keras
    # (checked on 3.15.1; kzoo/utils/private_apis.py), with no public
    # fallback: a Keras without it gets an error naming the entry.
    private_apis.require("keras:Functional._nodes_by_depth",
                         "kzoo.tasks.probing")
    by_depth = backbone._nodes_by_depth  # depth 0: the outputs' nodes
    nodes = [node for depth in sorted(by_depth, reverse=True)
             for node in by_depth[depth]]
    return [node for node in nodes
            if isinstance(node.operation, keras.layers.Layer)
            and node.operation.weights
            and _BLOCK_NAME.fullmatch(node.operation.name)]


def _first_input(node):
    return node.arguments.keras_tensors[0]


# ----------------------------------------------------------------------
# Probing
# ----------------------------------------------------------------------
@dataclasses.dataclass
class LayerProbe:
    """One layer's probe: `layer` 0 is the embeddings, `layer` i the
    output of the i-th block; accuracies are fractions in [0, 1] of the
    examples (of the labelled tokens, for token-level probes);
    `validation_accuracy` is None without validation data."""

    layer: int
    train_accuracy: float
    validation_accuracy: float = None

    @property
    def name(self):
        return "embeddings" if self.layer == 0 else f"layer {self.layer}"

    def __str__(self):
        text = f"{self.name}: train {self.train_accuracy:.3f}"
        if self.validation_accuracy is not None:
            text += f", validation {self.validation_accuracy:.3f}"
        return text


def layer_features(backbone, preprocessor, x, pooling="cls", batch_size=32):
    """Every layer's pooled features of `x` from one frozen forward pass:
    a list of `num_layers + 1` arrays `(examples, hidden)`, bottom to top.

    `x`: raw texts for `preprocessor` (a list, or a tuple of lists for
    pairs), or, with `preprocessor=None`, the backbone's input dict.
    `pooling`: "cls" (the first token) or "mean" (over real tokens).
    """
    if pooling == "token":
        raise ValueError("layer_features pools a vector per example; for "
                         "token-level features use hidden_states_model.")
    return _run_features(_feature_model(backbone, pooling), backbone,
                         preprocessor, x, batch_size)[0]


def _feature_model(backbone, pooling):
    """backbone inputs -> every layer's pooled `(batch, hidden)` state
    (`(batch, seq, hidden)` for "token")."""
    if pooling not in PROBE_POOLING:
        raise ValueError(f"pooling must be one of {PROBE_POOLING}; got "
                         f"{pooling!r}.")
    if "padding_mask" not in backbone.input_names:
        raise ValueError(
            f"{type(backbone).__name__} takes no `padding_mask`, so its "
            "real tokens cannot be told from padding for pooling.")
    if pooling == "token":
        return hidden_states_model(backbone)
    pool = TokenPooling(pooling, name="probe_pooling")
    mask = backbone.input["padding_mask"]
    return keras.Model(
        backbone.input,
        [pool(state, mask) for state in hidden_states(backbone)],
        name=f"{backbone.name}_layer_features")


def _run_features(model, backbone, preprocessor, x, batch_size,
                  token_labels=None):
    """Every layer's features of `x`, and with `token_labels` (`(examples,
    seq)`, negative: no label) the labelled real tokens' features and
    labels, in order."""
    features = [[] for _ in model.outputs]
    kept_labels = []
    count = _num_examples(x, preprocessor)
    for start in range(0, count, batch_size):
        batch = _slice(x, start, start + batch_size)
        if preprocessor is not None:
            batch = preprocessor(batch)
        batch = {name: np.asarray(value) for name, value in batch.items()}
        backbone.check_inputs(batch)
        rows = len(batch["padding_mask"])
        keep = None
        if token_labels is not None:
            labels = token_labels[start:start + rows]
            if labels.shape != batch["padding_mask"].shape:
                raise ValueError(
                    "probe_layers: token labels must have the shape of the "
                    f"preprocessed inputs, {batch['padding_mask'].shape} "
                    f"for examples {start}..{start + rows - 1}; got "
                    f"{labels.shape}. Label every position of the packed "
                    "sequence (-1 where there is no label).")
            keep = (labels >= 0) & (batch["padding_mask"] > 0)
            kept_labels.append(labels[keep])
        if start and rows < batch_size:
            # The last, short batch padded with copies of its first row:
            # one batch shape, so one compiled function (jax, tf).
            batch = {name: np.concatenate(
                [value, np.repeat(value[:1], batch_size - rows, axis=0)])
                for name, value in batch.items()}
        for layer, values in enumerate(model.predict_on_batch(batch)):
            values = np.asarray(values, "float32")[:rows]
            features[layer].append(values if keep is None else values[keep])
    return ([np.concatenate(layer) for layer in features],
            np.concatenate(kept_labels) if kept_labels else None)


def probe_layers(backbone, preprocessor, x, y, validation_data=None,
                 pooling="cls", epochs=20, batch_size=32,
                 learning_rate=1e-2, standardize=True, seed=0, verbose=1):
    """Train a linear softmax probe on every layer of a frozen backbone.

    The backbone runs once over `x` (and once over the validation texts):
    each layer's features are pooled and kept; then one
    `keras.layers.Dense(num_classes, activation="softmax")` is trained per
    layer on its features alone with Adam. The backbone is never trained.

    Args:
        backbone: an encoder backbone (see `hidden_states`).
        preprocessor: turns `x` into the backbone's inputs; None when `x`
            already is the backbone's input dict.
        x: texts (a list; a tuple of lists for pairs) or an input dict.
        y: integer class ids, one per example; with pooling="token", one
            per position of the packed sequence, `(examples, seq)`, a
            negative id where there is none (special tokens, padding,
            pieces after a word's first: `TokenClassifierPreprocessor`'s
            labels with -1 where its sample weight is 0).
        validation_data: `(x_val, y_val)`, or None.
        pooling: "cls" (first token) or "mean" (real tokens' mean), or
            "token": each labelled token is an example (token-level
            probing: tags, word identity). A left-to-right model's (GPT-2's)
            first token has seen nothing else: use "mean" there.
        epochs, batch_size, learning_rate: of each probe's training.
        standardize: scale each feature to zero mean and unit variance
            (training statistics) before the probe: still a linear probe,
            and it trains alike on every layer whatever its scale.
        seed: seeds each probe's initial weights.
        verbose: 1 prints one line per layer as it is probed; 0 nothing.

    Returns:
        A list of `LayerProbe`, bottom (embeddings) to top.

    Example:
    ```python
    backbone = kzoo.BertBackbone.from_preset("bert_tiny_en_uncased")
    preprocessor = kzoo.BertPreprocessor.from_preset("bert_tiny_en_uncased")
    results = kzoo.tasks.probing.probe_layers(
        backbone, preprocessor, texts, labels,
        validation_data=(val_texts, val_labels), pooling="mean")
    best = max(results, key=lambda r: r.validation_accuracy)
    ```
    """
    tokens = pooling == "token"
    y = _labels(y, _num_examples(x, preprocessor), "y", tokens)
    num_classes = int(y.max()) + 1
    if num_classes < 2:
        raise ValueError(
            "probe_layers: y holds a single class (0); a probe needs at "
            "least two classes, numbered 0, 1, ...")
    model = _feature_model(backbone, pooling)
    if preprocessor is not None:
        backbone.check_preprocessor(preprocessor, owner="probe_layers")
    validation = None
    if validation_data is not None:
        if not isinstance(validation_data, (tuple, list)) or \
                len(validation_data) != 2:
            raise ValueError(
                "probe_layers: validation_data must be a pair "
                "(x_val, y_val).")
        x_val, y_val = validation_data
        y_val = _labels(y_val, _num_examples(x_val, preprocessor), "y_val",
                        tokens)
        if y_val.max() >= num_classes:
            raise ValueError(
                f"probe_layers: y_val holds class {int(y_val.max())}, but "
                f"the training labels only go up to {num_classes - 1}; "
                "every validation class must occur in training.")
        validation = _run_features(model, backbone, preprocessor, x_val,
                                   batch_size, y_val if tokens else None)
        if not tokens:
            validation = (validation[0], y_val)
        elif not len(validation[1]):
            raise ValueError("probe_layers: y_val labels no real token.")
    features, token_y = _run_features(model, backbone, preprocessor, x,
                                      batch_size, y if tokens else None)
    if tokens:
        y = token_y
        if len(np.unique(y)) < 2:
            raise ValueError(
                "probe_layers: the labelled real tokens hold one class; a "
                "probe needs at least two.")
    val_features = None if validation is None else validation[0]
    if standardize:
        # Training statistics, applied to the validation features too.
        stats = [(f.mean(0), f.std(0) + 1e-6) for f in features]
        features = [(f - m) / s for f, (m, s) in zip(features, stats)]
        if val_features is not None:
            val_features = [(f - m) / s
                            for f, (m, s) in zip(val_features, stats)]
    kernels = _fit_probes(features, y, num_classes, epochs, batch_size,
                          learning_rate, seed)
    results = []
    for layer, (kernel, bias) in enumerate(kernels):
        result = LayerProbe(
            layer, _accuracy(features[layer], y, kernel, bias),
            None if val_features is None else
            _accuracy(val_features[layer], validation[1], kernel, bias))
        if verbose:
            print(f"probe {layer + 1}/{len(features)}: {result}", flush=True)
        results.append(result)
    return results


def _fit_probes(features, y, num_classes, epochs, batch_size, learning_rate,
                seed):
    """One softmax `Dense` per layer, trained side by side in one model
    (one compile, one pass over the batches): each probe's loss depends on
    its own weights only, and Adam's update is per weight, so each trains
    exactly as it would alone. Returns each probe's (kernel, bias)."""
    inputs = [keras.Input((f.shape[1],), name=f"layer_{i}")
              for i, f in enumerate(features)]
    probes = [keras.layers.Dense(
        num_classes, activation="softmax", name=f"probe_{i}",
        kernel_initializer=keras.initializers.GlorotUniform(seed=seed + i))
        for i in range(len(features))]
    model = keras.Model(
        inputs, {probe.name: probe(x) for probe, x in zip(probes, inputs)},
        name="layer_probes")
    model.compile(optimizer=keras.optimizers.Adam(learning_rate),
                  loss={probe.name: "sparse_categorical_crossentropy"
                        for probe in probes})
    model.fit(features, {probe.name: y for probe in probes}, epochs=epochs,
              batch_size=batch_size, verbose=0)
    return [[keras.ops.convert_to_numpy(w) for w in probe.weights]
            for probe in probes]


def _accuracy(features, labels, kernel, bias):
    # The probe's argmax: softmax keeps the order of the logits.
    predicted = np.argmax(features @ kernel + bias, axis=-1)
    return float(np.mean(predicted == labels))


def _labels(y, count, what, tokens=False):
    labels = np.asarray(y)
    if tokens:
        if labels.ndim != 2 or labels.shape[0] != count:
            raise ValueError(
                f"probe_layers: with pooling='token', {what} must hold a "
                f"row of token labels per example, ({count}, sequence); "
                f"got shape {labels.shape}.")
    elif labels.ndim != 1 or labels.shape[0] != count:
        raise ValueError(
            f"probe_layers: {what} must hold one class id per example "
            f"({count}); got shape {labels.shape}. Probing takes "
            "sentence-level labels (pooling='token' takes token-level "
            "ones).")
    if not count:
        raise ValueError(f"probe_layers: {what} is empty; nothing to probe.")
    if labels.dtype.kind not in "iub" and not (
            labels.dtype.kind == "f" and np.all(labels == np.round(labels))):
        raise ValueError(f"probe_layers: {what} must hold integer class ids "
                         f"0, 1, ...; got {labels.dtype} values.")
    labels = labels.astype("int64")
    if tokens:
        if labels.max() < 0:
            raise ValueError(f"probe_layers: {what} labels no token.")
        return labels
    if labels.min() < 0:
        raise ValueError(f"probe_layers: {what} holds {int(labels.min())}; "
                         "class ids are 0, 1, ...")
    return labels


def _num_examples(x, preprocessor):
    if isinstance(x, dict):
        if preprocessor is not None:
            raise ValueError(
                "probe_layers: x is an input dict, already preprocessed; "
                "pass preprocessor=None with it (or raw texts with a "
                "preprocessor).")
        return len(next(iter(x.values())))
    if preprocessor is None:
        raise ValueError(
            "probe_layers: x is raw data but preprocessor is None; pass the "
            "backbone's preprocessor, or x as the backbone's input dict.")
    if isinstance(x, tuple):
        return len(x[0])
    return len(x)


def _slice(x, start, stop):
    if isinstance(x, dict):
        return {name: value[start:stop] for name, value in x.items()}
    if isinstance(x, tuple):
        return tuple(list(part[start:stop]) for part in x)
    return list(x[start:stop])
