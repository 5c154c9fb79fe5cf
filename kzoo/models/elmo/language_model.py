"""ELMo's pretraining: a forward and a backward language model over words,
read from characters."""

import keras
import tensorflow as tf
from keras import ops

from kzoo.layers.sampled_softmax import (LogUniformSampler,
                                         sampled_softmax_losses)
from kzoo.core.arguments import POSITIVE_INT, Integer, Optional
from kzoo.models.elmo.backbone import ElmoBackbone
from kzoo.models.elmo.preprocessor import ElmoPreprocessor
from kzoo.core.registry import register
from kzoo.metrics.perplexity import Perplexity
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import task_inputs
from kzoo.training import default_optimizer
from kzoo.training.losses import token_loss

DIRECTIONS = ("forward", "backward")


@register
class ElmoLanguageModelPreprocessor(ElmoPreprocessor):
    """Raw text -> x (`character_ids`, `padding_mask`), the targets of
    both directions (word ids: the next word for the forward LM, the
    previous one for the backward LM; `<S>`/`</S>` are targets too) and
    their weights (1 where there is a real target).

    Makes its own labels: pass texts only.

    Example:
    ```python
    # elmo_small_en's vocabulary comes with its weights (downloaded
    # once); offline, a word list of our own:
    words = ["<S>", "</S>", "<UNK>", "the", "cat", "sat", "."]
    with open("vocab.txt", "w") as f:
        f.write("\\n".join(words))
    tokenizer = kzoo.ElmoTokenizer("vocab.txt")
    preprocessor = kzoo.ElmoLanguageModelPreprocessor(tokenizer,
                                                      sequence_length=8)
    x, y, sample_weight = preprocessor(["the cat sat ."])
    # Forward targets: each next word ("cat" after "the").
    forward = np.asarray(y["forward"])[0]
    assert tokenizer.id_to_token(forward[1]) == "cat"
    ```
    """

    takes_labels = False

    def call(self, x, y=None, sample_weight=None):
        words, padding_mask = self.pack_words(x)
        inputs = self._pack(x)
        # (..., seq); 0 at padding (its weight is 0 anyway)
        ids = self.tokenizer._hub().lookup(words) * padding_mask
        # Right padding: a real next token implies a real position; a real
        # previous one does not (the first padding position has one).
        targets = {"forward": _shift(ids, -1),
                   "backward": _shift(ids, 1) * padding_mask}
        weights = {"forward": _shift(padding_mask, -1),
                   "backward": _shift(padding_mask, 1) * padding_mask}
        weights = {k: tf.cast(v, "float32") for k, v in weights.items()}
        return inputs, targets, weights


def _shift(values, step):
    """Along the last axis: step -1 puts each next value at a position,
    step 1 each previous one; 0 fills the end left empty."""
    zeros = tf.zeros_like(values[..., :1])
    if step < 0:
        return tf.concat([values[..., 1:], zeros], axis=-1)
    return tf.concat([zeros, values[..., :-1]], axis=-1)


@register
class ElmoLanguageModel(Task):
    """ELMo's biLM objective: the forward LSTM stack predicts each next
    word, the backward one each previous word, through one softmax over
    the word vocabulary shared by both directions (Peters et al., 2018);
    the loss is the mean of the two directions' cross-entropies over the
    real targets, with a perplexity per direction.

    With `num_sampled`, training uses a sampled softmax, as the original
    (8192 samples over its 793k words): each token's loss is a softmax over
    its target and `num_sampled` words drawn for the batch from the
    log-uniform distribution (the vocabulary must be sorted by frequency,
    as ELMo's is); `kzoo.layers.sampled_softmax`. Evaluation and
    prediction always use the full softmax, so perplexities stay exact;
    training logs the sampled loss only.

    Outputs: `{"forward": logits, "backward": logits}`, each
    `(batch, tokens, vocabulary_size)`.

    Args:
        backbone: an `ElmoBackbone`.
        vocabulary_size: the softmax's size (the tokenizer's vocabulary).
        preprocessor: an `ElmoLanguageModelPreprocessor`, or None to feed
            input dicts (with targets and weights of your own).
        num_sampled: None (full softmax) or the number of negative words
            sampled per training step (fewer than the vocabulary).
        seed: seed of those draws.

    Example:
    ```python
    # Setup: the example of kzoo.ElmoLanguageModelPreprocessor (tokenizer).
    backbone = kzoo.ElmoBackbone(filters=[[1, 4], [2, 8]], projection_dim=8,
                                 lstm_dim=16)   # small, random
    lm = kzoo.ElmoLanguageModel(
        backbone, preprocessor=kzoo.ElmoLanguageModelPreprocessor(
            tokenizer, sequence_length=8))
    texts = ["the cat sat .", "the cat ."]
    lm.fit(texts, epochs=1, verbose=0)
    print(lm.evaluate(texts, verbose=0))   # loss, perplexities
    ```
    """

    backbone_cls = ElmoBackbone
    preprocessor_cls = ElmoLanguageModelPreprocessor
    pretrained_heads = ()
    argument_spec = {"num_sampled": Optional(POSITIVE_INT),
                     "seed": Optional(Integer(minimum=0))}

    def __init__(self, backbone, preprocessor=None, vocabulary_size=None,
                 num_sampled=None, seed=None, **kwargs):
        if vocabulary_size is None:
            if preprocessor is None:
                raise ValueError(
                    "ElmoLanguageModel needs vocabulary_size (the softmax's "
                    "size), or a preprocessor whose tokenizer gives it.")
            vocabulary_size = preprocessor.tokenizer.vocabulary_size
        if num_sampled is not None and num_sampled >= vocabulary_size:
            raise ValueError(
                f"ElmoLanguageModel: num_sampled={num_sampled} must be "
                f"smaller than the vocabulary ({vocabulary_size} words); "
                "leave it None for the full softmax.")
        # === Layers ===
        softmax = keras.layers.Dense(
            vocabulary_size, kernel_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name="softmax")
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone)
        top = backbone(backbone_inputs)["sequence_output"]
        half = backbone.projection_dim
        outputs = {"forward": softmax(top[..., :half]),
                   "backward": softmax(top[..., half:])}
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.softmax = softmax
        # Drawn in the forward pass (`call`), where every backend keeps a
        # seed generator's state: fresh negatives at each step.
        self.candidate_sampler = None if num_sampled is None else \
            LogUniformSampler(vocabulary_size, num_sampled, seed,
                              name="candidate_sampler")
        # === Config ===
        self.vocabulary_size = int(vocabulary_size)
        self.num_sampled = num_sampled
        self.seed = seed

    def task_config(self):
        return {"vocabulary_size": self.vocabulary_size,
                "num_sampled": self.num_sampled, "seed": self.seed}

    def call(self, inputs, training=None, mask=None):
        if not (training and self.candidate_sampler is not None):
            return super().call(inputs, training=training, mask=mask)
        # Sampled training: the top layer's halves and the draws; the loss
        # scores them (compute_loss), never the full vocabulary.
        inputs = {name: inputs[name] for name in self.backbone.input_names}
        top = self.backbone(inputs, training=True)["sequence_output"]
        half = self.backbone.projection_dim
        return {"forward": top[..., :half], "backward": top[..., half:],
                "candidates": self.candidate_sampler(top)}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        if not (isinstance(y_pred, dict) and "candidates" in y_pred):
            return super().compute_loss(x, y, y_pred, sample_weight,
                                        training=training)
        loss = 0.0
        for direction in DIRECTIONS:
            losses = sampled_softmax_losses(
                y_pred[direction], y[direction], self.softmax.kernel,
                self.softmax.bias, y_pred["candidates"],
                self.candidate_sampler.log_expected_count)
            weights = ops.cast(sample_weight[direction], "float32")
            # Per real target, as the full softmax's token_loss.
            loss = loss + 0.5 * ops.sum(losses * weights) / ops.maximum(
                ops.sum(weights), 1.0)
        if self.losses:
            loss = loss + ops.sum(self.losses)
        return loss

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        if isinstance(y_pred, dict) and "candidates" in y_pred:
            # No full logits in sampled training: the perplexities are
            # left to evaluate(), which uses the full softmax.
            return self.get_metrics_result()
        return super().compute_metrics(x, y, y_pred, sample_weight)

    def default_compile_args(self):
        # Each direction averaged over its real targets; Keras sums the two
        # losses, weighted 1/2 each: their mean, as the original.
        return {
            "optimizer": default_optimizer(learning_rate=1e-3),
            "loss": {d: token_loss(name=f"{d}_loss") for d in DIRECTIONS},
            "loss_weights": {d: 0.5 for d in DIRECTIONS},
            "weighted_metrics": {d: [Perplexity()] for d in DIRECTIONS},
        }
