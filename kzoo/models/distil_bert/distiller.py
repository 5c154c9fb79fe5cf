"""Distillation of a masked LM into a smaller one (Sanh et al., 2019), and
the student's initialisation from the teacher.

It lives with DistilBERT, not in `kzoo/training/`: it drives two masked-LM
tasks and `init_student_from_teacher` knows the BERT and DistilBERT weight
layouts, while `kzoo/training/` is imported by the models and must know
none of them.
"""

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from kzoo.core.arguments import ArgumentError, Optional, Real, describe
from kzoo.models.bert.backbone import BertBackbone
from kzoo.models.distil_bert.backbone import DistilBertBackbone
from kzoo.models.distil_bert.masked_lm import DistilBertMaskedLM
from kzoo.models.distil_bert.preprocessor import \
    DistilBertMaskedLMPreprocessor
from kzoo.models.distil_bert.smoothed_masking import (
    SmoothedMaskingPreprocessor, count_tokens)
from kzoo.models.distil_bert.tokenizer import DistilBertTokenizer
from kzoo.core.task import Task
from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.tasks.task_wiring import MaskedLM, task_inputs
from kzoo.training import default_optimizer

NON_NEGATIVE = Real(0.0, None)
POSITIVE = Real(0.0, None, low_open=True)


class Distiller(Task):
    """Trains a student masked LM from a frozen teacher masked LM with
    DistilBERT's triple loss:

        loss = alpha_ce * L_ce + alpha_mlm * L_mlm + alpha_cos * L_cos

    - `L_ce`: the soft-target loss, KL(teacher || student) of the two
      output distributions at temperature `temperature`, times
      `temperature**2`, averaged over the real tokens (or only the masked
      ones with `restrict_ce_to_mask`), as Hugging Face's distillation
      script (`KLDivLoss(reduction="batchmean")` on the selected tokens);
    - `L_mlm`: the student's own masked-LM cross-entropy, over the masked
      tokens;
    - `L_cos`: `1 - cos(student, teacher)` of the last hidden states,
      averaged over the real tokens (needs equal hidden sizes).

    The defaults are the DistilBERT recipe (Hugging Face's
    `examples/research_projects/distillation`: temperature 2,
    `--alpha_ce 5.0 --alpha_mlm 2.0 --alpha_cos 1.0`, learning rate 5e-4,
    5% warmup, no weight decay, `--mlm_smoothing 0.7`,
    `--max_grad_norm 5.0`). The teacher runs in inference mode
    and is never updated. Fit on raw strings: the student's masked-LM
    preprocessor packs; both models see the same masked text (a teacher
    with segment ids gets segment 0), masked afresh every batch.

    Masking, as the recipe's (`mlm_smoothing`, see
    `kzoo.models.distil_bert.smoothed_masking`): each token's chance to be
    masked is proportional to `max(count, 1) ** -0.7`, its count in the
    training corpus (rare tokens more often; special tokens never), and
    the 15% is drawn over the whole batch at once (`ceil(0.15 * real
    tokens)`, [CLS] and [SEP] counted), as `prepare_batch_mlm` draws it;
    80/10/10 as BERT. The counts are `token_counts`, or else the texts of
    the first `fit` on in-memory text (`count_tokens`); a `tf.data` input
    needs them given. `mlm_smoothing=None` keeps the student
    preprocessor's own masking (BERT's 15% per row, every token alike).

    Gradient clipping: `compile` sets the optimizer's `global_clipnorm`
    to `max_grad_norm` (5.0), the recipe's
    `torch.nn.utils.clip_grad_norm_(student.parameters(), 5.0)` (the
    global norm over the student's weights; torch divides by `norm +
    1e-6`, Keras by `norm`: a relative 2e-7 at 5).

    Args:
        teacher: a masked-LM task (`kzoo.BertMaskedLM`, ...) with the same
            vocabulary as the student.
        student: a masked-LM task with its masked-LM preprocessor
            (`init_student_from_teacher` makes one).
        temperature: softmax temperature of the soft targets.
        alpha_ce, alpha_mlm, alpha_cos: the weights of the three losses.
        restrict_ce_to_mask: the soft-target loss on masked tokens only.
        mlm_smoothing: the exponent of the masking weights (0.7; 0: every
            token alike, over the batch; None: the student's own masking).
        token_counts: how often each token id occurs in the training
            corpus (`(vocabulary_size,)`; `count_tokens(texts)` counts
            them); None: counted from the first in-memory `fit`'s texts.
        max_grad_norm: clip the gradients to this global norm (None: no
            clipping beyond the optimizer's own).
        seed: seed of the masks (with `mlm_smoothing`).

    Example:
    ```python
    from kzoo import datasets
    # The released teacher: kzoo.BertMaskedLM.from_preset("bert_base").
    teacher = kzoo.BertMaskedLM.from_preset(
        "bert_tiny_en_uncased", load_weights=False, sequence_length=32)
    student = kzoo.init_student_from_teacher(teacher)
    distiller = kzoo.Distiller(teacher, student)
    texts = datasets.austen_paragraphs("emma")[:8]
    distiller.fit(texts, epochs=1, batch_size=4)   # counts these texts
    assert distiller.token_counts.sum() > 0
    assert distiller.optimizer.global_clipnorm == 5.0
    student.save_to_preset("my_distil_bert")
    ```
    """

    argument_spec = {"temperature": POSITIVE, "alpha_ce": NON_NEGATIVE,
                     "alpha_mlm": NON_NEGATIVE, "alpha_cos": NON_NEGATIVE,
                     "mlm_smoothing": Optional(NON_NEGATIVE),
                     "max_grad_norm": Optional(POSITIVE)}

    extra_input_names = ("mask_positions",)

    def __init__(self, teacher, student, temperature=2.0, alpha_ce=5.0,
                 alpha_mlm=2.0, alpha_cos=1.0, restrict_ce_to_mask=False,
                 mlm_smoothing=0.7, token_counts=None, max_grad_norm=5.0,
                 seed=None, **kwargs):
        teacher.trainable = False  # frozen: no gradient, no update
        # === Functional model ===
        inputs, _ = task_inputs(student.backbone, self.extra_input_names)
        teacher_logits, teacher_hidden = _EveryPositionLogits(
            teacher, frozen=True, name="teacher")(inputs)
        student_logits, student_hidden = _EveryPositionLogits(
            student, frozen=False, name="student")(inputs)
        super().__init__(inputs=inputs, outputs={
            "student_logits": student_logits,  # (batch, seq, vocab)
            "teacher_logits": teacher_logits,
            "student_hidden": student_hidden,  # (batch, seq, hidden)
            "teacher_hidden": teacher_hidden}, **kwargs)
        # The recipe's masking wraps the student's packing; without it the
        # student's preprocessor masks.
        preprocessor = student.preprocessor if mlm_smoothing is None else \
            SmoothedMaskingPreprocessor(
                student.preprocessor, mlm_smoothing=mlm_smoothing,
                token_counts=token_counts, seed=seed)
        self._finish_init(student.backbone, preprocessor)
        # === Config ===
        self.teacher = teacher
        self.student = student
        self.temperature = float(temperature)
        self.alpha_ce = float(alpha_ce)
        self.alpha_mlm = float(alpha_mlm)
        self.alpha_cos = float(alpha_cos)
        self.restrict_ce_to_mask = bool(restrict_ce_to_mask)
        self.mlm_smoothing = None if mlm_smoothing is None else \
            float(mlm_smoothing)
        self.max_grad_norm = None if max_grad_norm is None else \
            float(max_grad_norm)

    @classmethod
    def check_argument_values(cls, values):
        teacher, student = values.get("teacher"), values.get("student")
        for role, task in (("teacher", teacher), ("student", student)):
            if not isinstance(task, MaskedLM):
                raise ArgumentError(
                    f"Distiller: {role} must be a masked-LM task "
                    f"(kzoo.BertMaskedLM, kzoo.DistilBertMaskedLM, ...); got "
                    f"{describe(task)}.")
        if not isinstance(student.preprocessor, MaskedLMPreprocessor):
            raise ArgumentError(
                "Distiller: the student needs its masked-LM preprocessor "
                "(it masks the raw text both models read); got "
                f"{describe(student.preprocessor)}. Build the student with "
                "kzoo.init_student_from_teacher, or pass preprocessor=...")
        sizes = (teacher.backbone.vocabulary_size,
                 student.backbone.vocabulary_size)
        if sizes[0] != sizes[1]:
            raise ArgumentError(
                f"Distiller: the teacher's vocabulary ({sizes[0]} tokens) "
                f"and the student's ({sizes[1]}) differ; soft targets need "
                "one vocabulary.")
        widths = (teacher.backbone.hidden_dim, student.backbone.hidden_dim)
        if values.get("alpha_cos") and widths[0] != widths[1]:
            raise ArgumentError(
                f"Distiller: the cosine loss compares hidden states, but the "
                f"teacher's are {widths[0]} wide and the student's "
                f"{widths[1]}; pass alpha_cos=0.")
        if values.get("mlm_smoothing") is None:
            return
        masking = getattr(student.preprocessor, "masking", "token")
        if masking != "token":
            raise ArgumentError(
                f"Distiller: mlm_smoothing masks single tokens (the recipe's "
                f"masking), but the student's preprocessor masks "
                f"{masking!r}; pass mlm_smoothing=None to keep its masking, "
                "or give the student a preprocessor with masking='token'.")
        counts = values.get("token_counts")
        if counts is not None:
            counts = np.asarray(counts)
            size = student.backbone.vocabulary_size
            if counts.shape != (size,) or not np.issubdtype(
                    counts.dtype, np.number) or not np.all(
                    np.isfinite(counts)) or (counts < 0).any():
                raise ArgumentError(
                    f"Distiller: token_counts must be one count (>= 0) per "
                    f"token id, shape ({size},); got "
                    f"{describe(values.get('token_counts'))} of shape "
                    f"{counts.shape}. Count them with "
                    "distiller.count_tokens(texts).")

    # ------------------------------------------------------------------
    # Losses
    # ------------------------------------------------------------------
    def distillation_losses(self, x, y, y_pred, sample_weight):
        """The three losses (unweighted) of one batch, as a dict."""
        real = ops.cast(x["padding_mask"], "float32")  # (batch, seq)
        masked = _masked_positions(x["mask_positions"], sample_weight,
                                   ops.shape(real))
        student = ops.cast(y_pred["student_logits"], "float32")
        teacher = ops.cast(y_pred["teacher_logits"], "float32")
        t = self.temperature
        log_p_student = ops.log_softmax(student / t, axis=-1)
        log_p_teacher = ops.log_softmax(teacher / t, axis=-1)
        kl = ops.sum(ops.exp(log_p_teacher) * (log_p_teacher - log_p_student),
                     axis=-1)  # (batch, seq)
        ce_mask = masked if self.restrict_ce_to_mask else real
        loss_ce = _masked_mean(kl, ce_mask) * t ** 2

        # The student's masked-LM loss, at the masked positions.
        at_masks = ops.take_along_axis(
            student, ops.expand_dims(ops.cast(x["mask_positions"], "int32"),
                                     -1), axis=1)
        mlm = keras.losses.sparse_categorical_crossentropy(
            y, at_masks, from_logits=True)  # (batch, num_masks)
        loss_mlm = _masked_mean(mlm, ops.cast(sample_weight, "float32"))

        s_hidden = ops.cast(y_pred["student_hidden"], "float32")
        t_hidden = ops.cast(y_pred["teacher_hidden"], "float32")
        cosine = ops.sum(s_hidden * t_hidden, axis=-1) / ops.sqrt(
            ops.sum(s_hidden ** 2, axis=-1) * ops.sum(t_hidden ** 2, axis=-1)
            + 1e-12)
        loss_cos = _masked_mean(1.0 - cosine, real)
        return {"ce": loss_ce, "mlm": loss_mlm, "cos": loss_cos}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        losses = self.distillation_losses(x, y, y_pred, sample_weight)
        return (self.alpha_ce * losses["ce"] + self.alpha_mlm * losses["mlm"]
                + self.alpha_cos * losses["cos"])

    def default_compile_args(self):
        # The distillation script's optimizer: Adam, lr 5e-4, 5% warmup,
        # no weight decay.
        return {"optimizer": default_optimizer(
            learning_rate=5e-4, weight_decay=0.0, warmup_fraction=0.05)}

    def compile(self, optimizer="auto", **kwargs):
        for name in ("loss", "metrics", "weighted_metrics"):
            if kwargs.get(name) not in (None, "auto"):
                raise ValueError(
                    f"Distiller.compile: the loss is the distillation loss "
                    f"(alpha_ce, alpha_mlm, alpha_cos); `{name}` cannot be "
                    "set.")
            kwargs.pop(name, None)
        super().compile(optimizer=optimizer, loss=None, metrics=None,
                        weighted_metrics=None, **kwargs)
        self._clip_gradients_as_the_recipe()

    def _clip_gradients_as_the_recipe(self):
        """The recipe's `clip_grad_norm_(student.parameters(),
        max_grad_norm)` before each update: Keras' `global_clipnorm` on
        the optimizer (the inner one under loss scaling, which unscales
        the gradients before it clips)."""
        if self.max_grad_norm is None:
            return
        optimizer = getattr(self.optimizer, "inner_optimizer",
                            self.optimizer)
        own = {name: getattr(optimizer, name, None)
               for name in ("clipnorm", "clipvalue", "global_clipnorm")}
        own = {name: value for name, value in own.items() if value}
        if own and own != {"global_clipnorm": self.max_grad_norm}:
            setting = ", ".join(f"{k}={v}" for k, v in own.items())
            raise ValueError(
                f"Distiller.compile: the optimizer clips already ({setting}) "
                f"and max_grad_norm={self.max_grad_norm} asks for the "
                "recipe's clipping too; pass max_grad_norm=None to keep the "
                "optimizer's, or an optimizer without clipping.")
        # Read when the train step is traced, which compile resets.
        optimizer.global_clipnorm = self.max_grad_norm

    # ------------------------------------------------------------------
    # The recipe's token counts (mlm_smoothing)
    # ------------------------------------------------------------------
    @property
    def token_counts(self):
        """The training corpus' token counts the masking weighs by (None:
        not counted yet, or `mlm_smoothing=None`)."""
        return getattr(self.preprocessor, "token_counts", None) \
            if self.mlm_smoothing is not None else None

    def count_tokens(self, texts):
        """How often each token id occurs in `texts` (strings, pairs of
        string lists, or a finite `tf.data.Dataset` of strings): the
        `token_counts` of the recipe's masking, as its
        `scripts/token_counts.py` counts them."""
        return count_tokens(texts, self.student.preprocessor.tokenizer)

    def set_token_counts(self, token_counts):
        """Masks from now on weigh tokens by these counts."""
        if self.mlm_smoothing is None:
            raise ValueError("Distiller: token counts weigh the masks of "
                             "mlm_smoothing, which is None here.")
        self.preprocessor.set_token_counts(token_counts)

    def fit(self, x=None, y=None, **kwargs):
        if self.mlm_smoothing is not None and self.token_counts is None:
            if x is None or isinstance(x, tf.data.Dataset) or \
                    hasattr(x, "__next__"):
                raise ValueError(
                    "Distiller.fit: mlm_smoothing (the recipe's masking) "
                    "weighs each token by its count in the training corpus; "
                    "with a dataset or generator, count them first: "
                    "Distiller(..., token_counts=counts) or "
                    "distiller.set_token_counts(distiller.count_tokens("
                    "texts)); or pass mlm_smoothing=None for the student's "
                    "own masking.")
            # The corpus is the texts fit trains on, as the recipe counts
            # its binarized training data.
            self.preprocessor.text_segments(x)  # checked before counting
            self.set_token_counts(self.count_tokens(x))
        return super().fit(x, y, **kwargs)

    def predict(self, *args, **kwargs):
        raise NotImplementedError(
            "Distiller trains the student; predict with the student task.")

    def get_config(self):
        raise NotImplementedError(
            "A Distiller is not saved: save its student "
            "(distiller.student.save_to_preset(...)).")


class _EveryPositionLogits(keras.layers.Layer):
    """A masked-LM task's logits at every position and its last hidden
    states (`(batch, seq, vocab)`, `(batch, seq, hidden)`). A `frozen`
    task (the teacher) runs in inference mode whatever the caller's
    `training`, and gives no gradient. Inputs the task's backbone takes
    beyond the student's (a BERT teacher's segment ids) are 0."""

    def __init__(self, task, frozen, **kwargs):
        super().__init__(**kwargs)
        self.task = task
        self.frozen = frozen

    def call(self, inputs, training=None):
        token_ids = inputs["token_ids"]
        # 0, 1, ..., seq - 1 in every row.
        positions = ops.cumsum(ops.ones_like(token_ids), axis=1) - 1
        backbone = self.task.backbone
        backbone_inputs = {
            name: inputs[name] if name in inputs else ops.zeros_like(token_ids)
            for name in backbone.input_names}
        training = False if self.frozen else training
        hidden = backbone(backbone_inputs, training=training)[
            "sequence_output"]
        logits = self.task.mlm_head(hidden, positions)
        if self.frozen:
            return ops.stop_gradient(logits), ops.stop_gradient(hidden)
        return logits, hidden

    def compute_output_spec(self, inputs, training=None):
        batch, seq = inputs["token_ids"].shape
        backbone = self.task.backbone
        dtype = backbone.dtype_policy.compute_dtype
        return (keras.KerasTensor((batch, seq, backbone.vocabulary_size),
                                  dtype=dtype),
                keras.KerasTensor((batch, seq, backbone.hidden_dim),
                                  dtype=dtype))


def _masked_positions(mask_positions, sample_weight, shape):
    """(batch, seq) 1.0 where a real selection masked the token."""
    one_hot = ops.one_hot(ops.cast(mask_positions, "int32"), shape[1])
    weights = ops.cast(sample_weight, "float32")[..., None]
    return ops.minimum(ops.sum(one_hot * weights, axis=1), 1.0)


def _masked_mean(values, mask):
    return ops.sum(values * mask) / ops.maximum(ops.sum(mask), 1.0)


# ----------------------------------------------------------------------
# The student's initialisation
# ----------------------------------------------------------------------
def init_student_from_teacher(teacher, teacher_layers=None, name=None):
    """A `DistilBertMaskedLM` initialised from a BERT teacher, as
    DistilBERT was (Hugging Face's `extract_distilbert.py`).

    The student has the teacher's width, heads, FFN, vocabulary, position
    table, activation and epsilon, and one layer per entry of
    `teacher_layers` (default: every other teacher layer, 0, 2, 4, ...:
    half the depth; DistilBERT took 0, 2, 4, 7, 9, 11 of BERT-base's 12).
    Copied bit for bit: the word and position embeddings, the embedding
    LayerNorm, each chosen layer, and the MLM head (transform, LayerNorm,
    bias). The token-type embeddings are dropped, as the original did:
    DistilBERT has none, so the student's first embedding differs from the
    teacher's by the segment-0 row until distillation closes the gap.

    The student's preprocessor is a `DistilBertMaskedLMPreprocessor` with
    the teacher's vocabulary file, casing, sequence length and masking
    rates (None when the teacher has no preprocessor).

    Args:
        teacher: a `kzoo.BertMaskedLM` (or any BERT masked-LM task).
        teacher_layers: the teacher layers to copy, in order.
        name: the student's name.

    Example:
    ```python
    teacher = kzoo.BertMaskedLM.from_preset(
        "bert_tiny_en_uncased", load_weights=False, sequence_length=32)
    student = kzoo.init_student_from_teacher(teacher)  # layers 0, 2, ...
    assert isinstance(student, kzoo.DistilBertMaskedLM)
    assert student.backbone.num_layers == 1   # bert_tiny has 2 layers
    ```
    """
    backbone = teacher.backbone
    if not isinstance(teacher, MaskedLM) or \
            not isinstance(backbone, BertBackbone):
        raise ArgumentError(
            "init_student_from_teacher: teacher must be a BERT masked LM "
            f"(kzoo.BertMaskedLM); got {describe(teacher)}.")
    if teacher_layers is None:
        teacher_layers = list(range(0, backbone.num_layers, 2))
    teacher_layers = list(teacher_layers)
    bad = [i for i in teacher_layers
           if isinstance(i, bool) or not isinstance(i, int)
           or not 0 <= i < backbone.num_layers]
    if not teacher_layers or bad:
        raise ArgumentError(
            f"init_student_from_teacher: teacher_layers must be a non-empty "
            f"list of layer indices in [0, {backbone.num_layers - 1}]; got "
            f"{teacher_layers!r}.")
    student_backbone = DistilBertBackbone(
        vocabulary_size=backbone.vocabulary_size,
        num_layers=len(teacher_layers), num_heads=backbone.num_heads,
        hidden_dim=backbone.hidden_dim,
        intermediate_dim=backbone.intermediate_dim,
        dropout=backbone.dropout, attention_dropout=backbone.attention_dropout,
        max_sequence_length=backbone.max_sequence_length,
        activation=backbone.activation,
        layer_norm_epsilon=backbone.layer_norm_epsilon,
        initializer_range=backbone.initializer_range,
        dtype=backbone.dtype_policy)
    student = DistilBertMaskedLM(
        student_backbone, preprocessor=_student_preprocessor(teacher),
        name=name)

    pairs = [(name, name) for name in ("token_embedding", "position_embedding",
                                       "embeddings_layer_norm")]
    pairs += [(f"transformer_layer_{i}", f"transformer_layer_{j}")
              for j, i in enumerate(teacher_layers)]
    for source, dest in pairs:
        _copy_weights(backbone.get_layer(source),
                      student_backbone.get_layer(dest))
    head, student_head = teacher.mlm_head, student.mlm_head
    _copy_weights(head.transform, student_head.transform)
    _copy_weights(head.layer_norm, student_head.layer_norm)
    student_head.bias.assign(keras.ops.convert_to_numpy(head.bias.value))
    return student


def _copy_weights(source, dest):
    for a, b in zip(source.weights, dest.weights, strict=True):
        if a.path.split("/")[-1] != b.path.split("/")[-1] or \
                tuple(a.shape) != tuple(b.shape):
            raise ValueError(f"cannot copy {a.path} {a.shape} into "
                             f"{b.path} {b.shape}")
        # A copy: on JAX, a shared buffer would be donated twice by a
        # train step that holds both models.
        b.assign(keras.ops.convert_to_numpy(a.value))


def _student_preprocessor(teacher):
    preprocessor = teacher.preprocessor
    if preprocessor is None:
        return None
    tokenizer = preprocessor.tokenizer
    return DistilBertMaskedLMPreprocessor(
        DistilBertTokenizer(str(tokenizer.vocabulary),
                            lowercase=tokenizer.lowercase),
        sequence_length=preprocessor.sequence_length,
        truncate=preprocessor.truncate,
        **{name: getattr(preprocessor, name, default) for name, default in (
            ("mask_selection_rate", 0.15), ("mask_selection_length", None),
            ("mask_token_rate", 0.8), ("random_token_rate", 0.1))})
