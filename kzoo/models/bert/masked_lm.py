"""BERT with its masked-LM head."""

import warnings

import keras
import numpy as np

from kzoo.models.bert.backbone import BertBackbone
from kzoo.models.bert.masked_lm_preprocessor import BertMaskedLMPreprocessor
from kzoo.models.registry import register
from kzoo.models.task import Task
from kzoo.models.task_wiring import (
    masked_lm_compile_args, masked_lm_head, task_inputs)

# Masked LM does not use the pooler, so it gets no gradient; that is
# expected, not the user's mistake Keras warns about.
warnings.filterwarnings(
    "ignore", message=r"Gradients do not exist for variables \['pooler/")


@register
class BertMaskedLM(Task):
    """Masked-LM pretraining (or continued pretraining) of BERT.

    The head's output projection is tied to the token embedding. Fit on raw
    strings: the preprocessor masks 15% of the tokens (80/10/10).

    Example:
    ```python
    mlm = kzoo.BertMaskedLM.from_preset("bert_tiny_en_uncased",
                                         load_weights=False,
                                         sequence_length=64)
    mlm.fit(["Some text.", "More text."], epochs=1)
    ```
    """

    backbone_cls = BertBackbone
    preprocessor_cls = BertMaskedLMPreprocessor
    extra_input_names = ("mask_positions",)
    pretrained_heads = ("mlm_head",)

    def __init__(self, backbone, preprocessor=None, **kwargs):
        # === Layers ===
        head = masked_lm_head(backbone)
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone,
                                              self.extra_input_names)
        outputs = backbone(backbone_inputs)
        logits = head(outputs["sequence_output"], inputs["mask_positions"])
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.mlm_head = head

    def default_compile_args(self):
        return masked_lm_compile_args(learning_rate=5e-5)

    def fill_mask(self, texts, top_k=5):
        """Predict the tokens behind each "[MASK]" in `texts`.

        Returns, per text, a list with one entry per [MASK]: the `top_k`
        `(token, probability)` pairs, most likely first.
        """
        if self.preprocessor is None:
            raise ValueError("fill_mask needs the task's preprocessor.")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or \
                top_k < 1:
            raise ValueError(
                f"fill_mask: top_k must be a positive integer (candidates "
                f"per [MASK]); got {top_k!r} ({type(top_k).__name__}).")
        if isinstance(texts, str):
            texts = [texts]
        elif isinstance(texts, tuple) or hasattr(texts, "__next__"):
            texts = list(texts)
        packed = self.preprocessor.pack(texts)
        packed = {k: keras.ops.convert_to_numpy(v) for k, v in packed.items()}
        mask_id = self.preprocessor.tokenizer.mask_token_id
        is_mask = packed["token_ids"] == mask_id
        if not is_mask.any(axis=1).all():
            raise ValueError('Every text needs at least one "[MASK]".')
        width = int(is_mask.sum(axis=1).max())
        positions = np.zeros((len(texts), width), "int32")
        for row, mask_row in enumerate(is_mask):
            found = np.flatnonzero(mask_row)
            positions[row, :len(found)] = found
        logits = self.predict_on_batch({**packed, "mask_positions": positions})
        probabilities = keras.ops.convert_to_numpy(
            keras.ops.softmax(logits, axis=-1))
        tokenizer = self.preprocessor.tokenizer
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
