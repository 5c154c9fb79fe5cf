"""T5 with its language-model head: (input, target) text pairs in, text
out."""

import keras

from kzoo.core.registry import register
from kzoo.tasks.seq2seq_lm import Seq2SeqLM
from kzoo.models.t5.backbone import T5Backbone
from kzoo.models.t5.preprocessor import T5Preprocessor


class T5LMHead(keras.layers.Layer):
    """T5's LM head: v1.0 (`tie_word_embeddings=True`) multiplies the
    decoder output by `hidden_dim ** -0.5` and projects it through the
    shared embedding (Mesh TensorFlow's rescale for the tied softmax);
    v1.1 / Flan-T5 have their own `(hidden, vocab)` kernel and no rescale.

    The tied embedding is referenced, not tracked (it is the backbone's).
    """

    def __init__(self, token_embedding, tied=True, initializer_factor=1.0,
                 **kwargs):
        super().__init__(**kwargs)
        self.__dict__["_token_embedding"] = token_embedding
        self.tied = bool(tied)
        self.initializer_factor = float(initializer_factor)

    def build(self, input_shape):
        self.kernel = None
        if not self.tied:
            self.kernel = self.add_weight(
                name="kernel",
                shape=(input_shape[-1], self.__dict__["_token_embedding"]
                       .input_dim),
                initializer=keras.initializers.RandomNormal(
                    stddev=self.initializer_factor))
        self.built = True

    def call(self, hidden):
        embedding = self.__dict__["_token_embedding"]
        if self.tied:
            hidden = hidden * (hidden.shape[-1] ** -0.5)
            return embedding.logits(hidden)
        return keras.ops.matmul(hidden, self.kernel)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (
            self.__dict__["_token_embedding"].input_dim,)


@register
class T5Seq2SeqLM(Seq2SeqLM):
    """T5 for text-to-text: `fit` on (input text, target text) pairs,
    `generate` targets for inputs.

    Task prefixes ("summarize: ", "translate English to German: ") are
    plain text in the input.

    Example:
    ```python
    from kzoo import datasets
    # t5_small_multi's spiece.model comes with its weights (downloaded
    # once). Offline: a small one in T5's layout, trained here.
    tokenizer = kzoo.T5Tokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spiece.model",
        vocabulary_size=300)
    backbone = kzoo.T5Backbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1,
        num_heads=2, hidden_dim=16, intermediate_dim=32)
    # from_preset("flan_t5_small_multi") is the released model.
    t5 = kzoo.T5Seq2SeqLM(backbone, preprocessor=kzoo.T5Preprocessor(
        tokenizer, sequence_length=16, target_length=8))
    # t5.fit((sources, targets)) fine-tunes it.
    text = t5.generate("summarize: a long text ...", max_new_tokens=4)
    assert isinstance(text, str)   # random weights: random pieces
    ```
    """

    backbone_cls = T5Backbone
    preprocessor_cls = T5Preprocessor
    # The paper fine-tunes at 1e-3 with Adafactor (constant rate, no
    # weight decay). kzoo's default is AdamW, and under AdamW T5 wants a
    # lower rate: transformers' T5 documentation ("Training tips")
    # recommends 1e-4 to 3e-4 for AdamW fine-tuning. 3e-4 is the top of
    # that range, the peak of kzoo's warmup-then-decay schedule.
    learning_rate = 3e-4
    pretrained_heads = ("lm_head",)

    def make_lm_head(self, backbone):
        return T5LMHead(backbone.token_embedding,
                        tied=backbone.tie_word_embeddings,
                        initializer_factor=backbone.initializer_factor,
                        dtype=backbone.dtype_policy, name="lm_head")
