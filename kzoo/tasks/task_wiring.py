"""Task pieces every family shares: functional inputs, the masked-LM head
and its training defaults, and the sequence-classifier task.

A family's task is then configuration: which backbone output a classifier
reads (`pool`), how its dense layer is initialised, whether it has a bias.
"""

import warnings

import keras
import numpy as np

from kzoo.layers import MaskedLMHead, get_activation
from kzoo.layers.dropout import Dropout
from kzoo.core import classification, labels
from kzoo.core.arguments import FRACTION, Optional
from kzoo.core.classification import SINGLE_LABEL, check_problem_type
from kzoo.core.family import MASKED_LM, SEQUENCE_CLASSIFIER
from kzoo.core.task import Task
from kzoo.training import default_optimizer
from kzoo.training.losses import token_loss


def task_inputs(backbone, extra_names=()):
    """Fresh functional inputs for the backbone plus the task's own.

    Returns `(inputs, backbone_inputs)`: every input by name, and the
    subset the backbone takes.
    """
    names = tuple(backbone.input_names) + tuple(extra_names)
    # (batch, sequence) unless the backbone says otherwise (ELMo's
    # (batch, sequence, characters) character ids).
    axes = {name: backbone.input_axes.get(name, ("batch", "sequence"))
            for name in names}
    inputs = {name: keras.Input((None,) * (len(axes[name]) - 1),
                                dtype="int32", name=name)
              for name in names}
    return inputs, {name: inputs[name] for name in backbone.input_names}


# ----------------------------------------------------------------------
# Masked LM
# ----------------------------------------------------------------------
# Tasks that do not read the pooler (masked LM; RoBERTa's classifier,
# which has its own dense layer on <s>) give it no gradient; that is
# expected, not the user's mistake Keras warns about.
warnings.filterwarnings(
    "ignore", message=r"Gradients do not exist for variables \['pooler/")


def masked_lm_head(backbone, activation=None, output_embedding=None):
    """BERT's MLM head (dense + activation + LayerNorm, logits through the
    tied token embedding plus a bias), configured from the backbone.
    `activation`: the head's own where the family fixes it (RoBERTa's is
    always GELU); by default the backbone's. `output_embedding`: a
    `TokenEmbedding` of the head's own to take the logits through, in
    place of the backbone's (RemBERT's decoupled output embedding)."""
    return MaskedLMHead(
        output_embedding or backbone.token_embedding,
        activation=activation or backbone.activation,
        layer_norm_epsilon=backbone.layer_norm_epsilon,
        kernel_initializer=backbone.kernel_initializer(),
        dtype=backbone.dtype_policy,
        name="mlm_head",
    )


def masked_lm_compile_args(learning_rate):
    """AdamW with the warmup/decay schedule; the loss and accuracy over
    the real masked tokens only."""
    return {
        "optimizer": default_optimizer(learning_rate),
        # Averaged over the real masked tokens, as BERT and transformers do.
        "loss": token_loss(),
        "weighted_metrics": [keras.metrics.SparseCategoricalAccuracy()],
    }


class MaskedLM(Task):
    """A backbone with its masked-LM head, scoring the tokens at
    `mask_positions`; `fill_mask` for prompts.

    Subclasses set `backbone_cls` and `preprocessor_cls` (a masked-LM
    preprocessor: it masks raw text and gives the original ids as
    labels), and `head_activation` where the family fixes the head's.

    Example:
    ```python
    mlm = kzoo.BertMaskedLM.from_preset("bert_tiny_en_uncased",
                                        load_weights=False,
                                        sequence_length=16)
    assert isinstance(mlm, kzoo.tasks.MaskedLM)   # BERT's own subclass
    x, y, sample_weight = mlm.preprocessor(["The fox jumped."])
    logits = mlm(x)   # (batch, masks, vocabulary)
    assert logits.shape[:2] == x["mask_positions"].shape
    ```
    """

    task_kind = MASKED_LM  # kzoo.core.family finds a family's own by it

    extra_input_names = ("mask_positions",)
    pretrained_heads = ("mlm_head",)
    head_activation = None  # None: the backbone's activation

    def __init__(self, backbone, preprocessor=None, **kwargs):
        # === Layers ===
        head = self.make_head(backbone)
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone,
                                              self.extra_input_names)
        outputs = backbone(backbone_inputs)
        logits = head(outputs["sequence_output"], inputs["mask_positions"])
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.mlm_head = head

    def make_head(self, backbone):
        """The head layer, named `mlm_head`: BERT's, tied to the token
        embedding (`masked_lm_head`); a family whose head has its own
        output embedding makes that instead (RemBERT's)."""
        return masked_lm_head(backbone, self.head_activation)

    def default_compile_args(self):
        return masked_lm_compile_args(learning_rate=5e-5)

    def fill_mask(self, texts, top_k=5):
        """Predict the tokens behind each mask token ("[MASK]", "<mask>")
        in `texts`.

        Returns, per text, a list with one entry per mask: the `top_k`
        `(token, probability)` pairs, most likely first.
        """
        if self.preprocessor is None:
            raise ValueError("fill_mask needs the task's preprocessor.")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or \
                top_k < 1:
            raise ValueError(
                f"fill_mask: top_k must be a positive integer (candidates "
                f"per mask); got {top_k!r} ({type(top_k).__name__}).")
        if isinstance(texts, str):
            texts = [texts]
        elif isinstance(texts, tuple) or hasattr(texts, "__next__"):
            texts = list(texts)
        packed = self.preprocessor.pack(texts)
        packed = {k: keras.ops.convert_to_numpy(v) for k, v in packed.items()}
        tokenizer = self.preprocessor.tokenizer
        mask_id = tokenizer.mask_token_id
        is_mask = packed["token_ids"] == mask_id
        if not is_mask.any(axis=1).all():
            raise ValueError(f'Every text needs at least one '
                             f'"{tokenizer.id_to_token(mask_id)}".')
        width = int(is_mask.sum(axis=1).max())
        positions = np.zeros((len(texts), width), "int32")
        for row, mask_row in enumerate(is_mask):
            found = np.flatnonzero(mask_row)
            positions[row, :len(found)] = found
        logits = self.predict_on_batch({**packed, "mask_positions": positions})
        probabilities = keras.ops.convert_to_numpy(
            keras.ops.softmax(logits, axis=-1))
        results = []
        for row, mask_row in enumerate(is_mask):
            per_mask = []
            for slot in range(int(mask_row.sum())):
                best = np.argsort(-probabilities[row, slot])[:top_k]
                per_mask.append([(tokenizer.id_to_token(i),
                                  float(probabilities[row, slot, i]))
                                 for i in best])
            results.append(per_mask)
        return results


# ----------------------------------------------------------------------
# Sequence classification
# ----------------------------------------------------------------------
class SequenceClassifier(Task):
    """A vector per text (the family's `pool`) -> dropout ->
    dense(num_classes), for classification, multi-label classification or
    regression (`problem_type`, see `kzoo.core.classification`).

    Subclasses set `backbone_cls`/`preprocessor_cls`, `classifier_use_bias`,
    `hidden_activation`, and implement `pool(inputs, backbone_outputs)`;
    the classifier's kernels start from the backbone's
    `kernel_initializer()`.

    Args:
        backbone: the family's backbone.
        num_classes: number of labels (outputs, for regression).
        preprocessor: the family's preprocessor, or None to feed input
            dicts.
        dropout: dropout before the classifier; None: the family's
            default, what `transformers` puts there for the family
            (`default_dropout`: `head_dropout` where the family's
            original has its own rate, else the backbone's dropout).
        problem_type: "single_label_classification" (integer labels),
            "multi_label_classification" (0/1 labels of width
            `num_classes`) or "regression" (real targets).

    Example:
    ```python
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=3, load_weights=False,
        sequence_length=16)
    assert isinstance(classifier, kzoo.tasks.SequenceClassifier)
    assert classifier.predict(["A fine day."], verbose=0).shape == (1, 3)
    ```
    """

    # kzoo.core.family finds a family's own by it.
    task_kind = SEQUENCE_CLASSIFIER

    classifier_use_bias = True
    # Heads with a hidden layer of their own before the projection
    # (RoBERTa's, and ELECTRA's and BART's: dropout -> dense + activation
    # -> dropout -> projection) name its activation; None: no such layer.
    hidden_activation = None
    # Whether the dropout also runs before that hidden layer (RoBERTa's
    # head); DistilBERT's drops out only after it.
    dropout_before_hidden = True
    # The dropout `transformers` puts before the family's classifiers
    # when the config sets none, where it is not the backbone's hidden
    # dropout (BERT's heads fall back to `hidden_dropout_prob`, so BERT's
    # families leave these None). `head_dropout`: this sequence
    # classifier's (ALBERT's `classifier_dropout_prob`, 0.1; DistilBERT's
    # `seq_classif_dropout`, 0.2; GPT-2's head has none, 0.0).
    # `token_head_dropout`: the family's `*ForTokenClassification`'s, which
    # kzoo.TokenClassifier asks the family for
    # (kzoo.core.family.token_classifier_dropout): ALBERT's 0.1 again, where
    # the backbone's dropout is 0 in ALBERT v2.
    head_dropout = None
    token_head_dropout = None
    # Checked before __init__ (kzoo.core.arguments); num_classes and
    # problem_type by check_problem_type, whose messages say more.
    argument_spec = {"dropout": Optional(FRACTION)}

    def __init__(self, backbone, num_classes, preprocessor=None, dropout=None,
                 problem_type=SINGLE_LABEL, pooling_layers=(), **kwargs):
        # `pooling_layers`: the layers of a subclass's pooling that hold
        # settings or weights, made by its __init__ before this one builds
        # the graph; `pool` gets them after the backbone's outputs. (Set
        # as attributes before the model exists, Keras' and torch's
        # tracking would refuse them; the functional graph owns them.)
        check_problem_type(problem_type, num_classes, type(self).__name__)
        dropout = self.default_dropout(backbone) if dropout is None \
            else float(dropout)
        # === Layers ===
        dropout_layer = Dropout(
            dropout, dtype=backbone.dtype_policy, name="classifier_dropout")
        classifier = keras.layers.Dense(
            num_classes, use_bias=self.classifier_use_bias,
            kernel_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name="classifier")
        hidden = None
        if self.hidden_activation is not None:
            hidden = keras.layers.Dense(
                backbone.hidden_dim,
                kernel_initializer=backbone.kernel_initializer(),
                dtype=backbone.dtype_policy, name="classifier_dense")
            hidden_activation = get_activation(self.hidden_activation)
        # The dtype policy every head layer takes, `pool`'s included (a
        # policy, not a layer: an attribute before the model exists).
        self.head_dtype = backbone.dtype_policy
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone,
                                              self.extra_input_names)
        pooled = self.pool(inputs, backbone(backbone_inputs), *pooling_layers)
        if hidden is not None:
            # (dropout ->) dense + activation, then the same dropout again.
            if self.dropout_before_hidden:
                pooled = dropout_layer(pooled)
            pooled = hidden_activation(hidden(pooled))
        logits = classifier(dropout_layer(pooled))  # (batch, num_classes)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        # === Config ===
        self.num_classes = int(num_classes)
        self.dropout = dropout
        self.problem_type = problem_type

    def pool(self, inputs, backbone_outputs, *pooling_layers):
        """`(batch, hidden)`: the one vector the classifier reads, from the
        task's inputs, the backbone's outputs and the `pooling_layers` the
        subclass made. A layer without settings or weights may be made
        here, with `dtype=self.head_dtype`."""
        raise NotImplementedError

    def default_dropout(self, backbone):
        """The head's dropout when `dropout=None`: the family's
        `head_dropout`, else the backbone's (as BERT's
        `classifier_dropout` falls back to `hidden_dropout_prob`)."""
        if self.head_dropout is not None:
            return float(self.head_dropout)
        return backbone.dropout

    def task_config(self):
        return {"num_classes": self.num_classes, "dropout": self.dropout,
                "problem_type": self.problem_type}

    def default_compile_args(self):
        return classification.compile_args(self.problem_type,
                                           learning_rate=5e-5)

    def label_spec(self):
        return labels.for_problem_type(self.problem_type, self.num_classes)
