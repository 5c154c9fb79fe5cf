"""The three trainers: each writes a family tokenizer's asset files into a
folder, from a stream of text, and leaves the layout of the special tokens
to the family's tokenizer class (its `trained_layout`, or a SentencePiece
family's `trainer_options`).

- WordPiece and byte-level BPE: the Hugging Face `tokenizers` trainers
  (`WordPieceTrainer`, `BpeTrainer`), which keep one count per distinct
  word (or pre-token) and nothing of the text itself, so memory follows
  the number of distinct words, not the bytes read.
- SentencePiece (unigram or BPE): `SentencePieceTrainer` through the
  family's `from_texts`, which samples `input_sentence_size` sentences
  from the stream (reservoir sampling) and holds only those.

Texts are normalised by the family tokenizer's own `normalize` (the tf
ops it runs before tokenizing), so the vocabulary is learnt on the text
the tokenizer will see: lowercased for uncased BERT, accents stripped,
and so on.
"""

import json

import tensorflow as tf
from tokenizers import Tokenizer as HubTokenizer
from tokenizers import models, normalizers, pre_tokenizers, trainers

from kzoo.tokenizer_training.texts import (MAX_SENTENCE_BYTES,
                                           TokenizerTrainingError, batched)

# Texts handed to the tokenizer's tf normalisation at once.
_BATCH = 1024
# Pairs seen fewer times than this are not merged (Hugging Face's
# BertWordPieceTokenizer and ByteLevelBPETokenizer train with 2).
MIN_FREQUENCY = 2


def normalized_texts(tokenizer, texts):
    """`texts` through `tokenizer.normalize`, in batches, as strings."""
    for batch in batched(texts, _BATCH):
        for text in tokenizer.normalize(tf.constant(batch)).numpy():
            yield text.decode("utf-8")


def _train(model, pre_tokenizer, trainer, texts, normalizer=None):
    hub = HubTokenizer(model)
    hub.normalizer = normalizer
    hub.pre_tokenizer = pre_tokenizer
    hub.train_from_iterator(texts, trainer=trainer)
    return hub


def _too_large(vocabulary_size, learnt):
    return TokenizerTrainingError(
        f"The text yields only {learnt:,} tokens (pairs seen at least "
        f"{MIN_FREQUENCY} times), fewer than vocabulary_size="
        f"{vocabulary_size:,}. Ask for at most {learnt:,}, or give more "
        "text.")


def _too_small(vocabulary_size, alphabet, what):
    return TokenizerTrainingError(
        f"vocabulary_size={vocabulary_size:,} is below the alphabet: the "
        f"{what} alone take {alphabet:,} entries. Ask for more (a few "
        "thousand is usual).")


def train_wordpiece(tokenizer, texts, vocabulary_size, folder):
    """WordPiece as BERT tokenizes: the text normalised by `tokenizer`,
    split at whitespace, punctuation and around CJK characters (as
    keras-hub's WordPieceTokenizer splits), "##" before a piece that
    continues a word. `texts()` gives the documents (read twice, see
    below). Writes `vocab.txt`."""
    first = list(tokenizer.trained_layout["first"])
    last = list(tokenizer.trained_layout["last"])

    def train(size, seeds, documents):
        trainer = trainers.WordPieceTrainer(
            vocab_size=size, special_tokens=first + seeds,
            min_frequency=MIN_FREQUENCY, continuing_subword_prefix="##",
            show_progress=False)
        # Case and accents were handled by `tokenizer.normalize`; only the
        # splitting around CJK characters is left to do.
        normalizer = normalizers.BertNormalizer(
            clean_text=False, handle_chinese_chars=True,
            strip_accents=False, lowercase=False)
        return _train(
            models.WordPiece(unk_token=tokenizer.trained_layout["unknown"]),
            pre_tokenizers.BertPreTokenizer(), trainer,
            normalized_texts(tokenizer, documents), normalizer).get_vocab()

    # `tokenizers` numbers the "##" form of each character in hash-map
    # order, which differs from run to run, and breaks ties between
    # equally frequent merges by those numbers: the same text gave
    # another vocabulary each time (huggingface/tokenizers#1794, fixed by
    # the unreleased #2066; seen on 0.23.3). A first pass that merges
    # nothing finds those "##" characters; the second numbers them in
    # sorted order, as the trainer's special tokens, before it merges.
    continuations = sorted(token for token in train(0, [], texts(False))
                           if token.startswith("##"))
    learnt = train(vocabulary_size - len(last), continuations, texts(True))
    tokens = sorted(learnt, key=learnt.get) + last
    _check_size(tokens, vocabulary_size, "characters and special tokens")
    (folder / "vocab.txt").write_text(
        "".join(token + "\n" for token in tokens), encoding="utf-8")


def train_byte_level_bpe(tokenizer, texts, vocabulary_size, folder):
    # (Deterministic: every byte is in the initial alphabet, which
    # `tokenizers` numbers in sorted order; no "##" forms.)
    """Byte-level BPE as GPT-2 tokenizes: GPT-2's pre-tokenizer pattern,
    every byte a token from the start (no text is ever unknown); the
    family's special tokens around the learnt ones. Writes `vocab.json`
    and `merges.txt`."""
    first = list(tokenizer.trained_layout["first"])
    last = list(tokenizer.trained_layout["last"])
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    specials = len(first) + len(last)
    if vocabulary_size < len(alphabet) + specials:
        raise _too_small(vocabulary_size, len(alphabet) + specials,
                         "byte tokens and special tokens")
    trainer = trainers.BpeTrainer(
        vocab_size=vocabulary_size - specials, initial_alphabet=alphabet,
        min_frequency=MIN_FREQUENCY, show_progress=False)
    hub = _train(models.BPE(), pre_tokenizers.ByteLevel(
        add_prefix_space=False, use_regex=True), trainer,
        normalized_texts(tokenizer, texts(True)))
    model = json.loads(hub.to_str())["model"]
    learnt = sorted(model["vocab"], key=model["vocab"].get)
    tokens = first + learnt + last
    _check_size(tokens, vocabulary_size, "byte tokens and special tokens")
    # `tokenizers` writes a merge as "a b" or ["a", "b"] (newer releases).
    merges = [m if isinstance(m, str) else " ".join(m)
              for m in model["merges"]]
    with open(folder / "vocab.json", "w", encoding="utf-8") as f:
        json.dump({token: i for i, token in enumerate(tokens)}, f,
                  ensure_ascii=False)
    (folder / "merges.txt").write_text(
        "#version: 0.2\n" + "".join(m + "\n" for m in merges),
        encoding="utf-8")


def _check_size(tokens, vocabulary_size, what):
    if len(tokens) > vocabulary_size:
        # The trainers keep every character (byte) they saw, whatever the
        # size asked: the alphabet alone is larger.
        raise _too_small(vocabulary_size, len(tokens), what)
    if len(tokens) < vocabulary_size:
        raise _too_large(vocabulary_size, len(tokens))
    if len(set(tokens)) != len(tokens):
        clash = next(t for t in tokens if tokens.count(t) > 1)
        raise TokenizerTrainingError(
            f"The trained vocabulary holds {clash!r} twice (the text "
            "spells a special token as a word); remove it from the text.")


def train_sentencepiece(tokenizer_cls, config, texts, vocabulary_size, path,
                        model_type, max_sentences):
    """A SentencePiece model (`model_type` "unigram" or "bpe") laid out as
    the family's (`tokenizer_cls.trainer_options`), trained on a sample of
    at most `max_sentences` sentences drawn uniformly from the stream.
    Writes the model file at `path`; returns the tokenizer."""
    options = {
        "model_type": model_type,
        "input_sentence_size": int(max_sentences),
        "shuffle_input_sentence": True,
        "max_sentence_length": MAX_SENTENCE_BYTES,
        # Every character of the text a piece of its own, as the scripts
        # of a multilingual corpus need (SentencePiece's default drops the
        # rarest 0.05% to <unk>).
        "character_coverage": 1.0,
    }
    try:
        return tokenizer_cls.from_texts(
            texts, path, vocabulary_size=vocabulary_size,
            trainer_options=options, **config)
    except RuntimeError as error:
        # SentencePiece's own checks: the size against the text's
        # characters (too small) and against what the text holds (too
        # large); its messages name the bound.
        message = str(error).strip().splitlines()[-1]
        raise TokenizerTrainingError(
            f"SentencePiece cannot train vocabulary_size="
            f"{vocabulary_size:,} on this text: {message}") from None
