"""ELMo (Peters et al., 2018): a character-CNN word encoder under a
bidirectional LSTM language model, whose layers are the contextual word
vectors."""

import keras
from keras import ops

from kzoo.layers import CharacterCNN, Highway, ProjectedLSTM
from kzoo.layers.dropout import Dropout
from kzoo.core.arguments import (
    BOOLEAN, FRACTION, NON_NEGATIVE_INT, POSITIVE_INT, ArgumentError,
    Constraint, OneOf, Optional, Real)
from kzoo.core.backbone import Backbone
from kzoo.core.registry import register

CHARACTERS_PER_TOKEN = 50
NUM_CHARACTERS = 262  # 256 bytes, 4 markers, padding (+1: id 0 pads tokens)


class Filters(Constraint):
    """A non-empty list of `[width, count]` pairs of positive integers."""

    expected = "a non-empty list of [width, count] pairs of positive integers"
    bad_examples = ([], [[1]], [[0, 4]], [[1, 2.5]], "1,4")

    def accepts(self, value):
        if not isinstance(value, (list, tuple)) or not value:
            return False
        return all(isinstance(pair, (list, tuple)) and len(pair) == 2 and
                   all(POSITIVE_INT.accepts(v) for v in pair)
                   for pair in value)


POSITIVE_CLIP = Optional(Real(0.0, None, low_open=True))


@register
class ElmoBackbone(Backbone):
    """ELMo's biLM: character ids -> the token layer and every LSTM layer.

    As the original (bilm-tf): each token's characters are embedded and
    run through a CNN filter bank (max-pooled over the characters, then
    `cnn_activation`), `num_highway` highway layers (relu; the gate
    multiplies the transform) and a linear projection to `projection_dim`:
    the context-free token layer. A forward and a backward stack of
    `num_layers` LSTMs with projection (cell `lstm_dim`, output
    `projection_dim`, clipped to `cell_clip` / `projection_clip`) read it;
    from the second layer on, each layer's input is added to its output
    (`use_skip_connections`). No weights are shared between directions.

    Padding is exact (right padding, `padding_mask` 0): each row gets the
    vectors it gets alone; the backward LSTM starts at the row's last real
    token.

    **State.** By default every call starts both directions from zero
    state (`stateful=False`): a sentence's vectors depend on that sentence
    only, what most uses want. The original biLM was trained and run
    statefully: with `stateful=True` (and a fixed `batch_size`) the final
    LSTM states of each batch row carry into the next call, as the
    original's and allennlp's did (the forward state at the row's last real
    token, the backward one at its first). That mode reproduces the
    original's published outputs, which were made that way; call
    `reset_states()` to start afresh.

    Inputs (a dict):
        character_ids: `(batch, tokens, characters_per_token)` int, the
            original's character ids (`ElmoPreprocessor` makes them, with
            `<S>`/`</S>` around each sentence).
        padding_mask: `(batch, tokens)`, 1 for real tokens.

    Outputs (a dict):
        sequence_output: `(batch, tokens, 2 * projection_dim)`, the top
            layer (forward ‖ backward).
        layer_outputs: `(batch, tokens, num_layers + 1, 2 * projection_dim)`:
            the token layer (duplicated to both halves, as the original),
            then each LSTM layer (forward ‖ backward). Zero at padding.

    Args:
        num_characters, characters_per_token: the character table and the
            characters per token (262 and 50 in every released model).
        character_embedding_dim: width of a character vector.
        filters: the CNN filter bank, `[[width, count], ...]`.
        num_highway: highway layers after the CNN.
        cnn_activation: "relu" or "tanh".
        projection_dim: the token layer's width and each LSTM direction's
            output width.
        lstm_dim: LSTM cell size.
        num_layers: LSTM layers per direction.
        cell_clip, projection_clip: LSTM clipping (None: none).
        use_skip_connections: residual connections from layer 2 on.
        dropout: dropout on each LSTM layer's input, in training.
        stateful, batch_size: see "State" above.

    Example:
    ```python
    # elmo_small_en's vocabulary comes with its weights (downloaded
    # once); offline, a word list of our own:
    words = ["<S>", "</S>", "<UNK>", "the", "cat", "sat", "."]
    with open("vocab.txt", "w") as f:
        f.write("\\n".join(words))
    tokenizer = kzoo.ElmoTokenizer("vocab.txt")
    # from_preset("elmo_small_en") loads the released biLM (downloaded
    # once); offline, a small random one:
    backbone = kzoo.ElmoBackbone(filters=[[1, 4], [2, 8]], projection_dim=8,
                                 lstm_dim=16)   # small, random
    preprocessor = kzoo.ElmoPreprocessor(tokenizer, sequence_length=8)
    outputs = backbone(preprocessor(["The cat sat ."]))
    # The token layer and both LSTM layers, forward and backward.
    assert outputs["layer_outputs"].shape == (1, 8, 3, 16)
    ```
    """

    input_names = ("character_ids", "padding_mask")
    input_axes = {"character_ids": ("batch", "sequence", "characters")}
    family = "elmo"
    argument_spec = {
        "num_characters": POSITIVE_INT,
        "characters_per_token": POSITIVE_INT,
        "character_embedding_dim": POSITIVE_INT,
        "filters": Filters(),
        "num_highway": NON_NEGATIVE_INT,
        "cnn_activation": OneOf(("relu", "tanh"), noun="activation"),
        "projection_dim": POSITIVE_INT,
        "lstm_dim": POSITIVE_INT,
        "num_layers": POSITIVE_INT,
        "cell_clip": POSITIVE_CLIP,
        "projection_clip": POSITIVE_CLIP,
        "use_skip_connections": BOOLEAN,
        "dropout": FRACTION,
        "stateful": BOOLEAN,
        "batch_size": Optional(POSITIVE_INT),
    }
    argument_rules = ()

    def __init__(self, filters, projection_dim, lstm_dim, num_layers=2,
                 num_highway=2, character_embedding_dim=16,
                 cnn_activation="relu", cell_clip=3.0, projection_clip=3.0,
                 use_skip_connections=True, dropout=0.0,
                 num_characters=NUM_CHARACTERS,
                 characters_per_token=CHARACTERS_PER_TOKEN, stateful=False,
                 batch_size=None, dtype=None, **kwargs):
        # === Layers ===
        character_cnn = CharacterCNN(
            num_characters, character_embedding_dim, filters,
            activation=cnn_activation, dtype=dtype, name="character_cnn")
        highway = Highway(num_highway, activation="relu", dtype=dtype,
                          name="highway")
        token_projection = keras.layers.Dense(
            projection_dim, dtype=dtype, name="token_projection")
        lstm_dropout = Dropout(dropout, dtype=dtype,
                               name="lstm_dropout")

        def lstm(direction, i):
            return ProjectedLSTM(
                lstm_dim, projection_dim=projection_dim, cell_clip=cell_clip,
                projection_clip=projection_clip,
                go_backwards=direction == "backward", stateful=stateful,
                batch_size=batch_size, dtype=dtype,
                name=f"{direction}_lstm_{i}")

        stacks = {d: [lstm(d, i) for i in range(num_layers)]
                  for d in ("forward", "backward")}

        # === Functional model ===
        character_ids = keras.Input((None, characters_per_token),
                                    dtype="int32", name="character_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")
        mask = ops.cast(padding_mask, "bool")
        real = ops.expand_dims(ops.cast(padding_mask, self._float(dtype)), -1)

        tokens = token_projection(highway(character_cnn(character_ids)))
        tokens = tokens * real  # (batch, seq, projection_dim)
        layers = [ops.concatenate([tokens, tokens], axis=-1)]
        inputs = {"forward": tokens, "backward": tokens}
        for i in range(num_layers):
            outputs = {}
            for direction, stack in stacks.items():
                x = inputs[direction]
                y, _ = stack[i](lstm_dropout(x), mask=mask)
                if use_skip_connections and i > 0:
                    y = y + x
                outputs[direction] = y  # (batch, seq, projection_dim)
            layers.append(ops.concatenate(
                [outputs["forward"], outputs["backward"]], axis=-1))
            inputs = outputs
        layer_outputs = ops.stack(layers, axis=2)

        super().__init__(
            inputs={"character_ids": character_ids,
                    "padding_mask": padding_mask},
            outputs={"sequence_output": layers[-1],
                     "layer_outputs": layer_outputs},
            dtype=dtype, **kwargs)

    @staticmethod
    def _float(dtype):
        policy = keras.dtype_policies.get(dtype) if dtype is not None else \
            keras.config.dtype_policy()
        return policy.compute_dtype

    @classmethod
    def check_argument_values(cls, values):
        name = cls.__name__
        width = values.get("characters_per_token")
        filters = values.get("filters")
        if isinstance(width, int) and Filters().accepts(filters):
            widest = max(w for w, _ in filters)
            if widest > width:
                raise ArgumentError(
                    f"{name}: a filter of width {widest} is wider than a "
                    f"token (characters_per_token={width}); use filters no "
                    "wider than the token.")
        if values.get("stateful") and not values.get("batch_size"):
            raise ArgumentError(
                f"{name}: stateful=True keeps the LSTM state per batch row, "
                "so it needs batch_size (every call's batch size); pass "
                "batch_size=..., or stateful=False.")

    def id_limits(self):
        return {"character_ids": self.num_characters}

    def check_inputs(self, inputs):
        super().check_inputs(inputs)
        if self.stateful:
            batch = inputs["character_ids"].shape[0]
            if batch is not None and batch != self.batch_size:
                raise ValueError(
                    f"{type(self).__name__} is stateful with batch_size="
                    f"{self.batch_size}: every call must have that batch "
                    f"size (its state is kept per row); got {batch}. Pad "
                    "the batch with empty rows, or use stateful=False.")

    def reset_states(self):
        """Zero the carried LSTM states (`stateful=True` only)."""
        for layer in self.layers:
            if isinstance(layer, ProjectedLSTM):
                layer.reset_states()

    @property
    def output_dim(self):
        """Width of every layer's vectors (`2 * projection_dim`)."""
        return 2 * self.projection_dim

    @property
    def hidden_dim(self):
        return self.output_dim

    @property
    def token_embedding(self):
        raise AttributeError(
            "ElmoBackbone has no token embedding table: it reads "
            "characters (see `character_cnn`).")

    def kernel_initializer(self):
        return keras.initializers.GlorotUniform()

    @classmethod
    def layout_rules(cls):
        # LSTM kernels are split per gate and the recurrence needs the whole
        # state at every step: ELMo is trained data parallel only.
        return {}
