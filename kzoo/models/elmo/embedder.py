"""ELMo representations for downstream models: scalar mixes of the biLM's
layers."""

import keras
from keras import ops

from kzoo.layers import ScalarMix
from kzoo.layers.dropout import Dropout
from kzoo.core.arguments import BOOLEAN, FRACTION, POSITIVE_INT
from kzoo.models.elmo.backbone import ElmoBackbone
from kzoo.models.elmo.preprocessor import ElmoPreprocessor
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import task_inputs
from kzoo.training import default_optimizer


@register
class ElmoEmbedder(Task):
    """Contextual word vectors: `num_mixes` learned scalar mixes of the
    biLM's layers (`gamma * sum_j softmax(s)_j h_j`, Peters et al., 2018),
    one per downstream use (e.g. one at a model's input, one at its
    output), as allennlp's `Elmo(num_output_representations=...)`.

    Output: `(batch, tokens, num_mixes, 2 * projection_dim)`, zero at
    padding; position 0 is `<S>` and the last real one `</S>` (`embed`
    strips them).

    Args:
        backbone: an `ElmoBackbone` (its weights usually frozen:
            `backbone.trainable = False`).
        preprocessor: an `ElmoPreprocessor`, or None to feed input dicts.
        num_mixes: how many independent mixes.
        normalize_layers: normalise each layer over the batch's real
            tokens before mixing (allennlp's `do_layer_norm`).
        dropout: dropout on the mixed vectors in training (allennlp: 0.5).

    Example:
    ```python
    # elmo_small_en's vocabulary comes with its weights (downloaded
    # once); offline, a word list of our own:
    words = ["<S>", "</S>", "<UNK>", "the", "cat", "sat", "."]
    with open("vocab.txt", "w") as f:
        f.write("\\n".join(words))
    tokenizer = kzoo.ElmoTokenizer("vocab.txt")
    backbone = kzoo.ElmoBackbone(filters=[[1, 4], [2, 8]], projection_dim=8,
                                 lstm_dim=16)   # small, random
    # from_preset("elmo_small_en") is the released biLM.
    embedder = kzoo.ElmoEmbedder(backbone, preprocessor=kzoo.ElmoPreprocessor(
        tokenizer, sequence_length=8))
    vectors = embedder.embed(["The cat sat .", "Dogs bark ."])
    assert vectors[0].shape == (4, 16)   # one vector per word
    ```
    """

    backbone_cls = ElmoBackbone
    preprocessor_cls = ElmoPreprocessor
    argument_spec = {"num_mixes": POSITIVE_INT, "normalize_layers": BOOLEAN,
                     "dropout": FRACTION}

    def __init__(self, backbone, preprocessor=None, num_mixes=1,
                 normalize_layers=False, dropout=0.0, **kwargs):
        # === Layers ===
        dtype = backbone.dtype_policy
        mixes = [ScalarMix(backbone.num_layers + 1,
                           normalize_layers=normalize_layers, dtype=dtype,
                           name=f"scalar_mix_{i}") for i in range(num_mixes)]
        dropout_layer = Dropout(dropout, dtype=dtype,
                                name="mix_dropout")
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone)
        layers = backbone(backbone_inputs)["layer_outputs"]
        mask = inputs["padding_mask"]
        real = ops.expand_dims(ops.cast(mask, layers.dtype), -1)
        mixed = [dropout_layer(mix(layers, mask)) * real for mix in mixes]
        outputs = ops.stack(mixed, axis=2)  # (batch, seq, mixes, dim)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self._finish_init(backbone, preprocessor)
        # === Config ===
        self.num_mixes = int(num_mixes)
        self.normalize_layers = bool(normalize_layers)
        self.dropout = float(dropout)

    def task_config(self):
        return {"num_mixes": self.num_mixes,
                "normalize_layers": self.normalize_layers,
                "dropout": self.dropout}

    def default_compile_args(self):
        # Fitting the mixes to target vectors (a distillation); downstream
        # models usually train the mixes inside their own loss instead.
        return {"optimizer": default_optimizer(learning_rate=1e-3),
                "loss": keras.losses.MeanSquaredError()}

    def embed(self, texts, mix=0, batch_size=32):
        """One `(words, dim)` NumPy array per text: mix `mix`'s vectors of
        its words, `<S>`/`</S>` and padding removed."""
        if isinstance(texts, str):
            texts = [texts]
        x = self.preprocessor(list(texts))
        outputs = keras.ops.convert_to_numpy(
            self.predict(x, batch_size=batch_size, verbose=0)
            if self.preprocessor is None else
            self.predict(list(texts), batch_size=batch_size, verbose=0))
        lengths = keras.ops.convert_to_numpy(x["padding_mask"]).sum(-1)
        return [outputs[i, 1:n - 1, mix] for i, n in enumerate(lengths)]
