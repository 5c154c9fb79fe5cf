"""Distillation of a masked LM into a smaller one (Sanh et al., 2019), and
the student's initialisation from the teacher.

It lives with DistilBERT, not in `kzoo/training/`: it drives two masked-LM
tasks and `init_student_from_teacher` knows the BERT and DistilBERT weight
layouts, while `kzoo/training/` is imported by the models and must know
none of them.
"""

import keras
from keras import ops

from kzoo.core.arguments import ArgumentError, Real, describe
from kzoo.models.bert.backbone import BertBackbone
from kzoo.models.distil_bert.backbone import DistilBertBackbone
from kzoo.models.distil_bert.masked_lm import DistilBertMaskedLM
from kzoo.models.distil_bert.preprocessor import \
    DistilBertMaskedLMPreprocessor
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
    5% warmup, no weight decay). The teacher runs in inference mode
    and is never updated. Fit on raw strings: the student's masked-LM
    preprocessor packs and masks (afresh each epoch); both models see the
    same masked text (a teacher with segment ids gets segment 0).

    Args:
        teacher: a masked-LM task (`kzoo.BertMaskedLM`, ...) with the same
            vocabulary as the student.
        student: a masked-LM task with its masked-LM preprocessor
            (`init_student_from_teacher` makes one).
        temperature: softmax temperature of the soft targets.
        alpha_ce, alpha_mlm, alpha_cos: the weights of the three losses.
        restrict_ce_to_mask: the soft-target loss on masked tokens only.

    Example:
    ```python
    from kzoo import datasets
    # The released teacher: kzoo.BertMaskedLM.from_preset("bert_base").
    teacher = kzoo.BertMaskedLM.from_preset(
        "bert_tiny_en_uncased", load_weights=False, sequence_length=32)
    student = kzoo.init_student_from_teacher(teacher)
    distiller = kzoo.Distiller(teacher, student)
    texts = datasets.austen_paragraphs("emma")[:8]
    distiller.fit(texts, epochs=1, batch_size=4)
    student.save_to_preset("my_distil_bert")
    ```
    """

    argument_spec = {"temperature": POSITIVE, "alpha_ce": NON_NEGATIVE,
                     "alpha_mlm": NON_NEGATIVE, "alpha_cos": NON_NEGATIVE}

    extra_input_names = ("mask_positions",)

    def __init__(self, teacher, student, temperature=2.0, alpha_ce=5.0,
                 alpha_mlm=2.0, alpha_cos=1.0, restrict_ce_to_mask=False,
                 **kwargs):
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
        self._finish_init(student.backbone, student.preprocessor)
        # === Config ===
        self.teacher = teacher
        self.student = student
        self.temperature = float(temperature)
        self.alpha_ce = float(alpha_ce)
        self.alpha_mlm = float(alpha_mlm)
        self.alpha_cos = float(alpha_cos)
        self.restrict_ce_to_mask = bool(restrict_ce_to_mask)

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
