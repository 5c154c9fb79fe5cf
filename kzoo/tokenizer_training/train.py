"""`train_tokenizer`: a family's vocabulary trained on your text, written
as a preset folder that everything taking a named preset takes.

The preset holds the family tokenizer's files (vocab.txt; vocab.json and
merges.txt; or the SentencePiece model), `tokenizer.json`, the base
preset's `config.json` with `vocabulary_size` (and `pad_token_id`, where
the family's config has one) set to the new vocabulary's, and a
`metadata.json` recording the base preset, the files' sha256 and how the
vocabulary was trained. No weights: build the model with
`from_preset(folder, load_weights=False)` (or `kzoo pretrain
--from-scratch`).

What each family trains, and where its special tokens go, is declared by
the family's tokenizer class (`vocabulary_kinds`, and `trained_layout` or
a SentencePiece family's `trainer_options`), beside the code that reads
those tokens: this module knows no family by name.
"""

import shutil
import tempfile
import time
from pathlib import Path

import keras

from kzoo import presets
from kzoo.core.registry import get_class
from kzoo.core.sentencepiece_tokenizer import WORD_START
from kzoo.core.tokenizer import Tokenizer
from kzoo.tokenizer_training import trainers
from kzoo.tokenizer_training.texts import (TokenizerTrainingError,
                                           TrainingTexts)
from kzoo.utils.files import sha256_of, swap_into_place, write_json
from kzoo.version import __version__

# Token ids are int32 throughout kzoo (tokenizers, preprocessors, corpora
# up to uint32): the largest vocabulary they can number.
MAX_VOCABULARY_SIZE = 2 ** 31 - 1
# SentencePiece: sentences sampled from the stream for training, as the
# SentencePiece authors advise for large corpora (`input_sentence_size`,
# with `shuffle_input_sentence`); its memory is bounded by this.
DEFAULT_MAX_SENTENCES = 1_000_000


def train_tokenizer(family, inputs, output, vocabulary_size, *, kind=None,
                    from_preset=None, max_sentences=DEFAULT_MAX_SENTENCES,
                    documents="blank-lines", text_field="text",
                    overwrite=False):
    """Train a vocabulary of `vocabulary_size` tokens for `family` on the
    text of `inputs`, and write it with the base preset's architecture as
    the preset folder `output`.

    Args:
        family: a family name (`"bert"`, `"roberta"`, `"t5"`, ...); None
            to take `from_preset`'s.
        inputs: `.txt`/`.jsonl` files (and `.gz`), folders, glob
            patterns, or one prepared corpus folder (its source files are
            read).
        output: the preset folder to write (written whole or not at all).
        vocabulary_size: tokens in the vocabulary, special tokens
            included (T5's 100 sentinels too): the model's embedding rows.
        kind: `"wordpiece"`, `"byte-level-bpe"`, `"sentencepiece-unigram"`
            or `"sentencepiece-bpe"`; default: the family's own (the
            first of its tokenizer's `vocabulary_kinds`).
        from_preset: the preset whose architecture (and tokenizer
            options, e.g. lowercasing) to take; default: the family's
            smallest named preset.
        max_sentences: SentencePiece only: sentences sampled from the
            text for training (bounds its memory).
        documents, text_field: how documents are read (see
            `kzoo.corpus.prepare_corpus`).
        overwrite: replace an existing preset folder at `output`.

    Returns:
        The new tokenizer, read from `output`.

    Example:
    ```python
    import kzoo
    from kzoo.tokenizer_training import train_tokenizer
    from kzoo import datasets
    tokenizer = train_tokenizer(
        "bert", datasets.AUSTEN_DIR / "emma.txt", "emma_bert", 1000)
    assert tokenizer.vocabulary_size == 1000
    assert tokenizer.token_to_id("[PAD]") == 0
    model = kzoo.BertBackbone.from_preset("emma_bert", load_weights=False)
    assert model.vocabulary_size == 1000
    ```
    """
    started = time.perf_counter()
    base = _base_preset(family, from_preset)
    entry = base.json("tokenizer.json")
    tokenizer_cls = get_class(entry["class_name"], Tokenizer)
    kind = _checked_kind(tokenizer_cls, kind, base)
    config = {k: v for k, v in entry["config"].items()
              if k not in tokenizer_cls.asset_files}
    normalizer = tokenizer_cls.from_config(dict(config))
    vocabulary_size = _checked_size(vocabulary_size, normalizer, kind)
    output = _checked_output(output, overwrite)
    texts = TrainingTexts(inputs, documents, text_field)
    texts.check_not_empty()

    output.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=output.parent,
                                    prefix=f".{output.name}.staging-"))
    try:
        with presets.own_staging(staging):
            tokenizer = _train(kind, tokenizer_cls, config, normalizer,
                               texts, vocabulary_size, staging,
                               max_sentences)
            tokenizer.save_to_preset(staging)
        _write_model_files(base, tokenizer, staging)
        _write_metadata(base, tokenizer, staging, output.name, kind, texts,
                        time.perf_counter() - started, max_sentences)
        swap_into_place(staging, output)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Tokenizer.from_preset(output)


def _base_preset(family, from_preset):
    if from_preset is not None:
        base = presets.resolve(from_preset)
        found = base.metadata.get("family")
        if family is not None and found != family:
            raise TokenizerTrainingError(
                f"Preset {base.name!r} is a {found or 'unknown'} model, not "
                f"a {family} one; give a {family} preset, or no family.")
        return base
    if family is None:
        raise TokenizerTrainingError(
            "Name a family (e.g. 'bert') or a base preset (from_preset=...).")
    rows = [row for row in presets.list_presets(family=family)
            if row["params"]]
    if not rows:
        families = sorted({row["family"] for row in presets.list_presets()})
        raise TokenizerTrainingError(
            f"Unknown family {family!r}; the families are "
            f"{', '.join(families)}.")
    smallest = min(rows, key=lambda row: row["params"])
    return presets.resolve(smallest["name"])


def _checked_kind(tokenizer_cls, kind, base):
    kinds = getattr(tokenizer_cls, "vocabulary_kinds", ())
    if not kinds:
        raise TokenizerTrainingError(
            f"{base.name!r}'s tokenizer ({tokenizer_cls.__name__}) has no "
            "trainable subword vocabulary (its tokens are whole words or "
            "characters); train one for a transformer family (bert, "
            "roberta, gpt2, albert, t5, ...).")
    if kind is None:
        return kinds[0]
    if kind not in kinds:
        raise TokenizerTrainingError(
            f"kind={kind!r}: {tokenizer_cls.__name__} reads "
            f"{' or '.join(kinds)} vocabularies only.")
    return kind


def _checked_size(vocabulary_size, tokenizer, kind):
    if isinstance(vocabulary_size, bool) or not isinstance(
            vocabulary_size, int):
        raise TokenizerTrainingError(
            f"vocabulary_size must be a whole number; got "
            f"{vocabulary_size!r}.")
    if kind.startswith("sentencepiece"):
        specials = len(tokenizer.special_tokens)
    else:
        layout = tokenizer.trained_layout
        specials = len(layout["first"]) + len(layout["last"])
    if vocabulary_size <= specials:
        raise TokenizerTrainingError(
            f"vocabulary_size={vocabulary_size} leaves no room beside the "
            f"family's {specials} special tokens; ask for more (a few "
            "thousand is usual).")
    if vocabulary_size > MAX_VOCABULARY_SIZE:
        raise TokenizerTrainingError(
            f"vocabulary_size={vocabulary_size:,} is more ids than int32 "
            f"token ids hold (at most {MAX_VOCABULARY_SIZE:,}).")
    return vocabulary_size


def _checked_output(output, overwrite):
    output = Path(output)
    presets.check_destination(output)
    if output.is_dir() and any(output.iterdir()) and not overwrite:
        raise TokenizerTrainingError(
            f"{output} already holds a preset; pass overwrite=True "
            "(--overwrite) to replace it, or choose a new folder.")
    return output


def _train(kind, tokenizer_cls, config, normalizer, texts, vocabulary_size,
           folder, max_sentences):
    (asset_argument, filename), *_ = tokenizer_cls.asset_files.items()
    if kind.startswith("sentencepiece"):
        # The family may add tokens that are no piece of the model (T5's
        # sentinels, XLM-R's <pad> and <mask>): the model gets the rest.
        pieces = vocabulary_size - _tokens_added(normalizer)
        tokenizer = trainers.train_sentencepiece(
            tokenizer_cls, config, texts.sentences(), pieces,
            folder / filename, kind.split("-")[1], max_sentences)
    else:
        train = {"wordpiece": trainers.train_wordpiece,
                 "byte-level-bpe": trainers.train_byte_level_bpe}[kind]
        train(normalizer, texts.documents, vocabulary_size, folder)
        tokenizer = tokenizer_cls(**config, **{
            argument: folder / name
            for argument, name in tokenizer_cls.asset_files.items()})
    if tokenizer.vocabulary_size != vocabulary_size:
        raise TokenizerTrainingError(
            f"The trained vocabulary has {tokenizer.vocabulary_size:,} "
            f"tokens, not the {vocabulary_size:,} asked; the text is too "
            "small for that many. Ask for fewer, or give more text.")
    return tokenizer


def _tokens_added(tokenizer):
    """How many tokens the family's vocabulary has beyond its
    SentencePiece model's pieces: its `family_vocabulary` applied to a
    stand-in model laid out by its `trainer_options` (pieces at the ids
    SentencePiece gives them)."""
    options = tokenizer.trainer_options
    special = {"unk": ("<unk>", 0), "bos": ("<s>", 1), "eos": ("</s>", 2),
               "pad": ("<pad>", -1)}
    pieces = [f"{WORD_START}{i}" for i in range(64)]
    for name, (piece, default_id) in special.items():
        piece_id = options.get(f"{name}_id", default_id)
        if piece_id >= 0:
            pieces[piece_id] = options.get(f"{name}_piece", piece)
    for i, symbol in enumerate(options.get("control_symbols", ())):
        pieces[len(special) + i] = symbol
    return len(tokenizer.family_vocabulary(pieces)) - len(pieces)


def _write_model_files(base, tokenizer, folder):
    """The base preset's config with the new vocabulary's size (and
    padding id, where the family's config names one); its preprocessor
    configuration, when it has one."""
    entry = base.json("config.json")
    config = dict(entry["config"])
    if "vocabulary_size" not in config:
        raise TokenizerTrainingError(
            f"{base.name!r}'s config has no vocabulary_size to set.")
    config["vocabulary_size"] = tokenizer.vocabulary_size
    if "pad_token_id" in config:
        config["pad_token_id"] = tokenizer.pad_token_id
    write_json(folder / "config.json", {**entry, "config": config})
    if base.has("preprocessor.json"):
        write_json(folder / "preprocessor.json",
                   base.json("preprocessor.json"))


def _write_metadata(base, tokenizer, folder, name, kind, texts, seconds,
                    max_sentences):
    files = {}
    for filename in tokenizer.asset_files.values():
        files[filename] = {
            "sha256": sha256_of(folder / filename),
            "provenance": f"trained by kzoo {__version__} (kzoo "
                          "train-tokenizer) on the text listed under "
                          "tokenizer_training.inputs"}
    training = {
        "kind": kind,
        "vocabulary_size": tokenizer.vocabulary_size,
        "inputs": [str(path) for path in texts.paths],
        "documents": texts.documents_read,
        "characters": texts.characters_read,
        "seconds": round(seconds, 1),
    }
    if kind.startswith("sentencepiece"):
        training["sentences"] = texts.sentences_read
        training["max_sentences"] = int(max_sentences)
    base_metadata = base.metadata
    write_json(folder / "metadata.json", {
        "name": name,
        "family": base_metadata.get("family"),
        "class_name": base.json("config.json")["class_name"],
        "description": f"{base.name}'s architecture with a "
                       f"{tokenizer.vocabulary_size:,}-token {kind} "
                       "vocabulary trained on your text (no weights).",
        "base_preset": base.name,
        "keras_version": keras.__version__,
        "tokenizer": files,
        "tokenizer_training": training,
    })
