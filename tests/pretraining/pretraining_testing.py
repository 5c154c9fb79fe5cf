"""A tiny BERT preset, a tiny prepared corpus with its tokenizer, and a
small masked-LM objective ("tiny_mlm": a few random positions masked per
row, seeded by the batch's draw seed) for the pretraining-run tests; run
as a script it is `kzoo` with that objective registered (the subprocess
the kill tests start)."""

import sys
from pathlib import Path

import numpy as np

WORDS = [f"w{i}" for i in range(120)]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PREDICTIONS = 4


def make_preset(folder, sequence_length=32):
    """A 2-layer, 32-wide BertMaskedLM with dropout and a 125-word
    vocabulary, saved as a preset."""
    import kzoo
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder.parent / f"{folder.name}_vocab.txt"
    vocab.write_text("\n".join(SPECIALS + WORDS) + "\n")
    tokenizer = kzoo.BertTokenizer(vocabulary=str(vocab))
    backbone = kzoo.BertBackbone(
        vocabulary_size=len(SPECIALS) + len(WORDS), num_layers=2,
        num_heads=2, hidden_dim=32, intermediate_dim=64,
        max_sequence_length=64, dropout=0.1)
    preprocessor = kzoo.BertMaskedLMPreprocessor(
        tokenizer, sequence_length=sequence_length)
    task = kzoo.BertMaskedLM(backbone=backbone, preprocessor=preprocessor)
    task.save_to_preset(folder)
    return folder


def make_corpus(folder, preset, documents=40, seed=0):
    """A prepared corpus of random ids in `preset`'s vocabulary."""
    from kzoo.core.tokenizer import Tokenizer
    from kzoo.corpus import tokenizer_hash
    from kzoo.corpus.shards import SHARDS_FOLDER, write_manifest, \
        write_shard
    rng = np.random.default_rng(seed)
    folder = Path(folder)
    shards = []
    for name in ("a", "b"):
        docs = [[rng.integers(len(SPECIALS), len(SPECIALS) + len(WORDS),
                              rng.integers(3, 12))
                 for _ in range(rng.integers(1, 5))]
                for _ in range(documents // 2)]
        shards.append(write_shard(folder / SHARDS_FOLDER, name, docs,
                                  np.uint16))
    tokenizer = Tokenizer.from_preset(str(preset))
    write_manifest(folder, {"shards": shards, "tokenizer": {
        "sha256": tokenizer_hash(tokenizer)}})
    return folder


def register_tiny_mlm():
    from kzoo.pretraining.objectives import (
        OBJECTIVES, Objective, register_objective)
    if "tiny_mlm" not in OBJECTIVES:
        register_objective(Objective(
            "tiny_mlm", "test masked LM", ("bert",), _make_task,
            _make_stream))


def _make_task(preset, load_weights, sequence_length, **options):
    import kzoo
    return kzoo.BertMaskedLM.from_preset(
        preset, load_weights=load_weights, preprocessor=None)


def _make_stream(task, corpus, batch_size, seed, process_index,
                 process_count, draw_groups, sequence_length, **options):
    return TinyMaskStream(corpus, batch_size, seed, process_index,
                          process_count, draw_groups,
                          sequence_length=sequence_length)


def _stream_base():
    from kzoo.pretraining.streams.base import BatchStream
    return BatchStream


class TinyMaskStream(_stream_base()):
    """Rows of consecutive sentences ([CLS] ids [SEP], padded), with
    PREDICTIONS positions set to [MASK]."""

    def __init__(self, *args, sequence_length=32, **kwargs):
        super().__init__(*args, **kwargs)
        self.sequence_length = sequence_length

    def next_example(self):
        ids = []
        while len(ids) < PREDICTIONS + 1:
            ids += list(self.walk.next_sentence()[0])
        ids = ids[:self.sequence_length - 2]
        return np.array([2] + ids + [3], np.int32)

    def finish(self, examples, seed):
        rng = np.random.default_rng(seed)
        rows = len(examples)
        length = self.sequence_length
        x = {"token_ids": np.zeros((rows, length), np.int32),
             "segment_ids": np.zeros((rows, length), np.int32),
             "padding_mask": np.zeros((rows, length), np.int32),
             "mask_positions": np.zeros((rows, PREDICTIONS), np.int32)}
        y = np.zeros((rows, PREDICTIONS), np.int32)
        for row, ids in enumerate(examples):
            x["token_ids"][row, :len(ids)] = ids
            x["padding_mask"][row, :len(ids)] = 1
            positions = np.sort(rng.choice(
                np.arange(1, len(ids) - 1), PREDICTIONS, replace=False))
            x["mask_positions"][row] = positions
            y[row] = ids[positions]
            x["token_ids"][row, positions] = 4
        return x, y, np.ones((rows, PREDICTIONS), np.float32)


if __name__ == "__main__":
    register_tiny_mlm()
    from kzoo.cli import main
    sys.exit(main(sys.argv[1:]))
