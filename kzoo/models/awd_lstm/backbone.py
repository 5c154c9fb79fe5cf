"""AWD-LSTM (Merity et al., 2018), as fastai's `AWD_LSTM` builds it for
ULMFiT (Howard & Ruder, 2018): a word embedding under a stack of LSTMs,
regularised by four kinds of dropout."""

import keras
from keras import ops

from kzoo.distribution.layouts import EMBEDDING
from kzoo.layers import ProjectedLSTM, RowDropoutEmbedding
from kzoo.layers.dropout import Dropout
from kzoo.core.arguments import (
    FRACTION, NON_NEGATIVE_INT, POSITIVE_INT, ArgumentError)
from kzoo.core.backbone import Backbone
from kzoo.core.registry import register

# fastai draws every new weight of the encoder from U(-0.1, 0.1).
EMBEDDING_INIT_RANGE = 0.1


def locked_dropout(rate, dtype, name):
    """Variational ("locked") dropout on `(batch, time, features)`: one mask
    per sequence and feature, the same at every step (Gal & Ghahramani,
    2016; fastai's `RNNDropout`)."""
    return Dropout(rate, noise_shape=(None, 1, None),
                   dtype=dtype, name=name)


@register
class AwdLstmBackbone(Backbone):
    """ULMFiT's encoder: fastai's `AWD_LSTM` (forward, unidirectional).

    Token ids are embedded (`embedding_dim`) and read by `num_layers`
    LSTMs, each `lstm_dim` wide except the last, which is
    `embedding_dim` wide so that a language model can tie its decoder to
    the embedding. In training, four dropouts regularise it, as fastai's:

    - `embedding_dropout`: whole rows of the embedding matrix (a dropped
      word is dropped everywhere in the batch);
    - `input_dropout`: variational (one mask per sequence, the same at
      every step) on the embedded input;
    - `hidden_dropout`: variational, between LSTM layers;
    - `weight_dropout`: DropConnect on each LSTM's hidden-to-hidden
      matrix, a fresh mask per batch.

    All are off in inference (`training=False`), where the backbone is a
    deterministic function of its inputs. The language model adds output
    dropout on the top layer (`AwdLstmLanguageModel`).

    Padding is exact (right padding, `padding_mask` 0): each row gets what
    it gets alone; a padded step carries the LSTM state unchanged and
    outputs zeros. Every call starts from zero state: fastai's language
    model carries the state from one BPTT window to the next, kzoo's
    trains on independent windows (`AwdLstmLanguageModelPreprocessor`).

    Inputs (a dict):
        token_ids: `(batch, tokens)` int ids.
        padding_mask: `(batch, tokens)`, 1 for real tokens.

    Outputs (a dict):
        sequence_output: `(batch, tokens, embedding_dim)`, the top layer.
        lstm_{i}_output: `(batch, tokens, width of layer i)`, every
            layer's output (before the dropout between layers). Zero at
            padding.

    Args:
        vocabulary_size: rows of the embedding table.
        embedding_dim: embedding width, and the top LSTM's (400).
        lstm_dim: width of the other LSTMs (fastai's `n_hid`, 1152).
        num_layers: LSTM layers (3).
        pad_token_id: the padding token's id (`xxpad`, 1).
        embedding_dropout, input_dropout, hidden_dropout, weight_dropout:
            fastai's `embed_p`, `input_p`, `hidden_p`, `weight_p`; the
            defaults are its `AWD_LSTM` constructor's.

    Example:
    ```python
    # from_preset("awd_lstm_wt103_en") loads fastai's WikiText-103 model
    # (downloaded once); offline, a small random one:
    backbone = kzoo.AwdLstmBackbone(vocabulary_size=100, embedding_dim=16,
                                    lstm_dim=24)
    outputs = backbone({"token_ids": np.array([[2, 10, 11, 12]]),
                        "padding_mask": np.ones((1, 4), "int32")})
    assert outputs["sequence_output"].shape == (1, 4, 16)  # embedding_dim
    ```
    """

    input_names = ("token_ids", "padding_mask")
    family = "awd_lstm"
    argument_spec = {
        "vocabulary_size": POSITIVE_INT,
        "embedding_dim": POSITIVE_INT,
        "lstm_dim": POSITIVE_INT,
        "num_layers": POSITIVE_INT,
        "pad_token_id": NON_NEGATIVE_INT,
        "embedding_dropout": FRACTION,
        "input_dropout": FRACTION,
        "hidden_dropout": FRACTION,
        "weight_dropout": FRACTION,
    }
    argument_rules = ()

    def __init__(self, vocabulary_size, embedding_dim=400, lstm_dim=1152,
                 num_layers=3, pad_token_id=1, embedding_dropout=0.1,
                 input_dropout=0.6, hidden_dropout=0.2, weight_dropout=0.5,
                 dtype=None, **kwargs):
        # === Layers ===
        init = keras.initializers.RandomUniform(-EMBEDDING_INIT_RANGE,
                                                EMBEDDING_INIT_RANGE)
        embedding = RowDropoutEmbedding(
            vocabulary_size, embedding_dim, row_dropout=embedding_dropout,
            embeddings_initializer=init, dtype=dtype, name="token_embedding")
        input_dp = locked_dropout(input_dropout, dtype, "input_dropout")
        # torch.nn.LSTM's initialisation: U(-1/sqrt(width), 1/sqrt(width))
        # for every weight; the forget-gate bias of 1 is the shared layer's.
        lstms, hidden_dps = [], []
        for i in range(num_layers):
            width = embedding_dim if i == num_layers - 1 else lstm_dim
            bound = 1.0 / width ** 0.5
            uniform = keras.initializers.RandomUniform(-bound, bound)
            lstms.append(ProjectedLSTM(
                width, kernel_initializer=uniform,
                recurrent_initializer=uniform,
                recurrent_kernel_dropout=weight_dropout, dtype=dtype,
                name=f"lstm_{i}"))
            if i < num_layers - 1:
                hidden_dps.append(locked_dropout(
                    hidden_dropout, dtype, f"hidden_dropout_{i}"))

        # === Functional model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")
        mask = ops.cast(padding_mask, "bool")
        x = input_dp(embedding(token_ids))  # (batch, seq, embedding_dim)
        outputs = {}
        for i, lstm in enumerate(lstms):
            y, _ = lstm(x, mask=mask)  # (batch, seq, width of layer i)
            outputs[f"lstm_{i}_output"] = y
            x = hidden_dps[i](y) if i < num_layers - 1 else y
        super().__init__(
            inputs={"token_ids": token_ids, "padding_mask": padding_mask},
            outputs={"sequence_output": x, **outputs},
            dtype=dtype, **kwargs)

    @classmethod
    def check_argument_values(cls, values):
        size, pad = values.get("vocabulary_size"), values.get("pad_token_id")
        if isinstance(size, int) and isinstance(pad, int) and pad >= size:
            raise ArgumentError(
                f"{cls.__name__}: pad_token_id={pad} is not a row of the "
                f"embedding table (vocabulary_size={size}); use the id of "
                "`xxpad` in the vocabulary (1 in fastai's).")

    @property
    def hidden_dim(self):
        """Width of the top layer (what a classifier pools)."""
        return self.embedding_dim

    @property
    def lstm_layers(self):
        return [self.get_layer(f"lstm_{i}") for i in range(self.num_layers)]

    def kernel_initializer(self):
        # torch.nn.Linear's default, which fastai's heads keep.
        return keras.initializers.VarianceScaling(
            1.0 / 3.0, mode="fan_in", distribution="uniform")

    @classmethod
    def layout_rules(cls):
        # The recurrence needs the whole state at every step, so the LSTMs
        # stay whole; the embedding (tied to the decoder: over half of
        # WT103's weights) splits as the transformers' does.
        return {r"(.*/)?token_embedding/embeddings": EMBEDDING}
