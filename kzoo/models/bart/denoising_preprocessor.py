"""BART's pretraining objective as a preprocessor: raw text in, (noised
text -> original text) pairs out, fresh noise at every call."""

import numpy as np
import tensorflow as tf

from kzoo.models.bart.preprocessor import BartSeq2SeqLMPreprocessor
from kzoo.core.arguments import OneOf, check_spec
from kzoo.core.registry import register
from kzoo.preprocessing.text_infilling import (permute_sentences,
                                               text_infilling,
                                               token_deletion)

# Tokens after which a sentence ends (byte-level BPE spells them alone).
SENTENCE_END_TOKENS = (".", "!", "?")

# The two known settings of BART's noise (text infilling and sentence
# permutation, the paper's choice for the large model, section 5.1):
# - "paper": as the paper describes text infilling (Lewis et al., 2020,
#   section 2.2): 30% of the words, span lengths ~ Poisson(lambda = 3),
#   each span one <mask>.
# - "released": what trained the released bart.large, per its first
#   author's fairseq command (facebookresearch/fairseq issue 1899, comment
#   1069429320: `--mask 0.3 --mask-random 0.1 --poisson-lambda 3.5
#   --permute-sentences 1 --mask-length span-poisson --replace-length 1
#   --rotate 0.0 --insert 0.0`): lambda 3.5, and one span in ten becomes a
#   random token instead of <mask> (fairseq's `mask_random`). fairseq's
#   denoising task defaults (`poisson_lambda` 3.0, `mask_random` 0.0) and
#   BART's README do not say it.
RECIPES = {
    "paper": {"noise_density": 0.3, "poisson_lambda": 3.0,
              "random_token_ratio": 0.0, "sentence_permutation": True},
    "released": {"noise_density": 0.3, "poisson_lambda": 3.5,
                 "random_token_ratio": 0.1, "sentence_permutation": True},
}


@register
class BartDenoisingPreprocessor(BartSeq2SeqLMPreprocessor):
    """Texts -> BART's denoising pretraining examples: the encoder reads
    `<s> noised </s>`, the decoder learns `<s> text </s>` (the text cut to
    `sequence_length`), as `BartSeq2SeqLM` trains on any pair.

    The noise is BART's (`kzoo.preprocessing.text_infilling`): sentence
    permutation, then token deletion when asked (`deletion_rate` of the
    tokens removed, nothing in their place: the model must find where),
    then text infilling over whole words (30% of the words in spans whose
    lengths are Poisson-distributed, each span one `<mask>`;
    `noise_density=0` for deletion alone, the paper's token-deletion
    objective). It is drawn in `tf.data` with NumPy at each call, so every
    epoch sees new noise; `seed` makes the sequence of draws reproducible.

    Two recipes (`RECIPES`) set text infilling's numbers:

    | `recipe` | `poisson_lambda` | `random_token_ratio` | source |
    |---|---|---|---|
    | `"paper"` (default) | 3.0 | 0.0 | the paper (Lewis et al., 2020, section 2.2): Poisson(3) spans, each one `<mask>` |
    | `"released"` | 3.5 | 0.1 | the released `bart.large`'s fairseq pretraining (`--poisson-lambda 3.5 --mask-random 0.1`, as its first author gave it: fairseq issue 1899) |

    Both noise 30% of the words and permute the sentences. An argument
    given explicitly wins over its recipe's value.

    Args:
        tokenizer: a `BartTokenizer`.
        sequence_length: encoder and decoder length.
        noise_density, poisson_lambda: text infilling's share of words and
            mean span length (None: the recipe's).
        sentence_permutation: shuffle the sentences first (None: the
            recipe's, True).
        deletion_rate: the share of the text's tokens deleted (rounded
            up per text; 0: none).
        random_token_ratio: the share of spans that become a random token
            instead of `<mask>` (fairseq's `mask_random`; None: the
            recipe's).
        seed: seed of the noise.
        recipe: `"paper"` or `"released"`: the defaults of the four
            arguments above (see the table).

    Example:
    ```python
    import json
    from kzoo import presets
    # bart_base_en's vocab.json comes with its weights (downloaded once).
    # Offline: GPT-2's BPE (kzoo ships it) in BART's layout.
    gpt2 = presets.resolve("gpt2")
    tokens = ["<s>", "<pad>", "</s>", "<unk>",
              *json.loads(gpt2.file("vocab.json").read_text()), "<mask>"]
    with open("vocab.json", "w") as f:
        json.dump({token: i for i, token in enumerate(tokens)}, f)
    tokenizer = kzoo.BartTokenizer("vocab.json", gpt2.file("merges.txt"))
    preprocessor = kzoo.BartDenoisingPreprocessor(
        tokenizer, sequence_length=32, seed=0)
    x, y, weights = preprocessor(["The cat sat on the mat and purred."])
    print(tokenizer.detokenize(x["encoder_token_ids"][0]))  # noised
    print(tokenizer.detokenize(y[0]))                       # the original
    # kzoo.BartDenoisingLM trains on it from raw texts.
    # The released bart.large's noise: Poisson(3.5) spans, 10% random.
    released = kzoo.BartDenoisingPreprocessor(
        tokenizer, sequence_length=32, recipe="released")
    assert (released.poisson_lambda, released.random_token_ratio) == \
        (3.5, 0.1)
    ```
    """

    argument_spec = {"recipe": OneOf(tuple(RECIPES), noun="recipe")}
    RECIPES = RECIPES

    min_segments = 1
    max_segments = 1
    segments_hint = ("Pass raw texts: the noised input and its target are "
                     "both made from each.")
    draws_per_call = True  # fresh noise on every call (every epoch)

    def __init__(self, tokenizer, sequence_length=512, target_length=None,
                 noise_density=None, poisson_lambda=None,
                 sentence_permutation=None, random_token_ratio=None,
                 deletion_rate=0.0, seed=None, recipe="paper", **kwargs):
        check_spec(type(self), {"recipe": recipe})
        super().__init__(tokenizer, sequence_length,
                         target_length=target_length, **kwargs)
        # What was given, apart from the recipe (get_config saves these,
        # so a saved preprocessor loaded with another recipe takes that
        # recipe's numbers for the rest).
        self._given = {name: value for name, value in (
            ("noise_density", noise_density),
            ("poisson_lambda", poisson_lambda),
            ("sentence_permutation", sentence_permutation),
            ("random_token_ratio", random_token_ratio)) if value is not None}
        values = {**RECIPES[recipe], **self._given}
        noise_density = values["noise_density"]
        poisson_lambda = values["poisson_lambda"]
        sentence_permutation = values["sentence_permutation"]
        random_token_ratio = values["random_token_ratio"]
        for name, value in (("noise_density", noise_density),
                            ("random_token_ratio", random_token_ratio),
                            ("deletion_rate", deletion_rate)):
            if not isinstance(value, (int, float)) or \
                    isinstance(value, bool) or not 0 <= value < 1:
                raise ValueError(f"{type(self).__name__}: {name} must be in "
                                 f"[0, 1); got {value!r}.")
        if not isinstance(poisson_lambda, (int, float)) or \
                isinstance(poisson_lambda, bool) or poisson_lambda <= 0:
            raise ValueError(f"{type(self).__name__}: poisson_lambda must "
                             f"be > 0; got {poisson_lambda!r}.")
        self.noise_density = float(noise_density)
        self.poisson_lambda = float(poisson_lambda)
        self.sentence_permutation = bool(sentence_permutation)
        self.random_token_ratio = float(random_token_ratio)
        self.deletion_rate = float(deletion_rate)
        self.seed = seed
        self.recipe = recipe

    def setup(self):
        super().setup()
        tokenizer = self.tokenizer
        self._rng = np.random.default_rng(self.seed)
        self._word_starts = tokenizer.word_start_table()
        self._mask_token_id = tokenizer.mask_token_id
        size = tokenizer.vocabulary_size
        ends = np.zeros(size, bool)
        for token in SENTENCE_END_TOKENS:
            token_id = tokenizer.token_to_id(token)
            if token_id is not None and 0 <= token_id < size:
                ends[token_id] = True
        self._sentence_ends = ends
        self._random_token_ids = np.setdiff1d(
            np.arange(size), tokenizer.special_token_ids)

    def noise(self, token_ids, rng=None, sentence_ends=None):
        """One text's ids (no special tokens) -> its noised ids (NumPy).

        Args:
            token_ids: the text's ids.
            rng: the `np.random.Generator` of the draws; None: the
                preprocessor's own (seeded by `seed`).
            sentence_ends: bools, True at each sentence's last id (a
                prepared corpus knows its sentences); None: after `.`,
                `!` and `?`.
        """
        self._ensure_setup()
        rng = self._rng if rng is None else rng
        ids = np.asarray(token_ids, "int64")
        if self.sentence_permutation:
            ends = self._sentence_ends[ids] if sentence_ends is None \
                else np.asarray(sentence_ends, bool)
            ids = permute_sentences(ids, ends, rng)
        if self.deletion_rate:
            ids = token_deletion(ids, rng, self.deletion_rate)
        return text_infilling(
            ids, rng, self._mask_token_id,
            word_starts=self._word_starts[ids],
            noise_density=self.noise_density,
            poisson_lambda=self.poisson_lambda,
            random_token_ratio=self.random_token_ratio,
            random_token_ids=self._random_token_ids)

    def _noise_batch(self, values, row_splits):
        rows = [self.noise(values[a:b])
                for a, b in zip(row_splits[:-1], row_splits[1:])]
        splits = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
        flat = np.concatenate(rows) if rows else np.zeros(0, "int64")
        return flat.astype("int64"), splits.astype("int64")

    # `fit` tokenizes in-memory text once (`prepare`) and noises every
    # batch of every epoch (`draw`); a direct call does both.
    def prepare(self, x, y=None, sample_weight=None):
        """Texts -> their token ids, cut to leave room for `<s>` and
        `</s>`, right-padded with -1 to that room: `(batch, room)`."""
        ids, single = self._tokenize(x)
        room = self.sequence_length - self.special_token_count(1)
        dense = tf.cast(ids[:, :room], "int32").to_tensor(
            default_value=-1, shape=[None, room])
        return dense[0] if single else dense

    def draw(self, prepared):
        """`prepare`'s ids -> `(x, labels, weights)`: the encoder reads
        them noised, the decoder learns them as they are."""
        single = prepared.shape.rank == 1
        if single:
            prepared = prepared[tf.newaxis]
        ids = tf.RaggedTensor.from_tensor(tf.cast(prepared, "int64"),
                                          padding=-1)
        values, splits = tf.numpy_function(
            self._noise_batch, [ids.flat_values, ids.row_splits],
            [tf.int64, tf.int64], stateful=True)
        noised = tf.RaggedTensor.from_row_splits(
            tf.reshape(values, [-1]), tf.reshape(splits, [-1]))
        outputs = self.pack_ids(noised, ids)
        if single:
            outputs = tf.nest.map_structure(lambda t: t[0], outputs)
        return outputs

    def call(self, x, y=None, sample_weight=None):
        return self.draw(self.prepare(x))

    def get_config(self):
        config = super().get_config()
        # The recipe, and only the values given beside it (None: the
        # recipe's), so that from_preset(..., recipe=...) changes them.
        config.update({name: self._given.get(name) for name in (
            "noise_density", "poisson_lambda", "sentence_permutation",
            "random_token_ratio")})
        config.update({"deletion_rate": self.deletion_rate,
                       "seed": self.seed, "recipe": self.recipe})
        return config
