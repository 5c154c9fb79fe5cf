"""What the pretraining-run tests train: a tiny BERT preset with
bert_tiny_en_uncased's tokenizer (`make_mlm_preset`) and a corpus that
`kzoo.corpus.prepare_corpus` makes from paragraphs of the bundled Austen
excerpts (`prepare_text_corpus`), for the real "mlm" objective; and, for
the multi-process tests, a 125-word BERT preset, a corpus of random ids
and a small masked-LM objective ("tiny_mlm": a few random positions
masked per row, seeded by the batch's draw seed).

Run as a script it is `kzoo` with tiny_mlm registered (the subprocess
the kill tests start). With KZOO_TEST_PAUSE_AFTER_CHECKPOINT=N set it
stops still (sleeps) once checkpoint N is written, so that a test's
`kill -9` lands between two checkpoints whatever the machine's speed.
With KZOO_TEST_LOGICAL_CPUS=N (TensorFlow) the CPU is split into N
logical devices and `kzoo.distribution.strategy()` mirrors over them, as
it does over a machine's GPUs: a MirroredStrategy run on a CPU.
With KZOO_TEST_REPORT_SHARDING=1 (JAX) each checkpoint prints one line,
"sharding: {json}": the run's keras.distribution, its mesh, and every
variable whose value is split over devices (global and per-device shape).
"""

import os
import sys
import time
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


MLM_PRESET = "bert_tiny_en_uncased"


def make_mlm_preset(folder, **overrides):
    """A 2-layer, 32-wide BERT (dropout 0.1) with bert_tiny_en_uncased's
    tokenizer, saved as a preset; `overrides` go to the backbone."""
    import kzoo
    from helpers import make_tiny_bert
    folder = Path(folder)
    tokenizer = kzoo.BertTokenizer.from_preset(MLM_PRESET)
    make_tiny_bert(vocabulary_size=tokenizer.vocabulary_size,
                   **overrides).save_to_preset(folder)
    tokenizer.save_to_preset(folder)
    return folder


def prepare_text_corpus(folder, preset, paragraphs=24,
                        validation_documents=None, tokenizer=None):
    """`prepare_corpus` on the first `paragraphs` paragraphs of each
    bundled Austen excerpt (one document each), tokenized with `preset`'s
    tokenizer (or `tokenizer`, a preset name or Tokenizer)."""
    from kzoo.corpus import prepare_corpus
    from helpers import AUSTEN_NOVELS, austen_paragraphs
    folder = Path(folder)
    text = folder.parent / f"{folder.name}_text"
    text.mkdir(parents=True, exist_ok=True)
    for novel in AUSTEN_NOVELS:
        (text / f"{novel}.txt").write_text("\n\n".join(
            austen_paragraphs(novel, min_words=8)[:paragraphs]) + "\n",
            encoding="utf-8")
    prepare_corpus(str(text), str(folder), tokenizer or str(preset),
                   validation_documents=validation_documents, processes=1,
                   progress=False)
    return folder


def _pause_after_checkpoint(step):
    """Sleep for good once checkpoint `step` is written (the kill test
    kills the process there)."""
    from kzoo.pretraining import checkpoints
    write = checkpoints.write_checkpoint

    def write_then_pause(output, at, arrays, state):
        final = write(output, at, arrays, state)
        if at == step:
            print(f"paused after checkpoint {at}", flush=True)
            while True:
                time.sleep(60)
        return final

    checkpoints.write_checkpoint = write_then_pause


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
        register_objective(Objective(
            "tiny_mlm_uneven", "test masked LM, 1 to 4 masks a row",
            ("bert",), _make_task, _make_uneven_stream))


def _make_task(preset, load_weights, sequence_length, **options):
    import kzoo
    return kzoo.BertMaskedLM.from_preset(
        preset, load_weights=load_weights, preprocessor=None)


def _make_stream(task, corpus, batch_size, seed, process_index,
                 process_count, draw_groups, sequence_length, **options):
    return TinyMaskStream(corpus, batch_size, seed, process_index,
                          process_count, draw_groups,
                          sequence_length=sequence_length)


def _make_uneven_stream(task, corpus, batch_size, seed, process_index,
                        process_count, draw_groups, sequence_length,
                        **options):
    return TinyUnevenMaskStream(corpus, batch_size, seed, process_index,
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


class TinyUnevenMaskStream(TinyMaskStream):
    """TinyMaskStream whose rows carry 1 to PREDICTIONS real masks (a
    seeded draw per row; the other slots weigh 0 and stay unmasked): the
    processes and micro-batches of a step hold different numbers of
    masked tokens."""

    def finish(self, examples, seed):
        x, y, weights = super().finish(examples, seed)
        rng = np.random.default_rng([seed, 1])
        for row in range(len(examples)):
            real = int(rng.integers(1, PREDICTIONS + 1))
            weights[row, real:] = 0.0
            unused = x["mask_positions"][row, real:]
            x["token_ids"][row, unused] = y[row, real:]
        return x, y, weights


def _mirror_over_logical_cpus(count):
    """Split the CPU into `count` devices (before TensorFlow initialises)
    and make them `kzoo.distribution.strategy()`'s default devices."""
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * count)
    from kzoo import distribution
    strategy = distribution.strategy
    devices = [f"/cpu:{i}" for i in range(count)]

    def over_logical_cpus(devices_=None, **kwargs):
        chosen = strategy(devices_ or devices, **kwargs)
        print(f"{type(chosen).__name__}, {chosen.num_replicas_in_sync} "
              "replicas", flush=True)
        return chosen

    distribution.strategy = over_logical_cpus


def _report_sharding():
    """Print, at each checkpoint, how the run's variables lie on the
    devices (from the live jax arrays, not from the layout map)."""
    import json

    from kzoo.pretraining.run import Run
    save = Run.save_checkpoint

    def save_and_report(self, step, metrics):
        save(self, step, metrics)
        distribution = self.engine.distribution
        sharded = {}
        for variable in self.variables:
            sharding = getattr(variable.value, "sharding", None)
            if sharding is not None and not sharding.is_fully_replicated:
                sharded[variable.path] = [
                    list(variable.shape),
                    list(sharding.shard_shape(tuple(variable.shape))),
                    len(sharding.device_set)]
        print("sharding: " + json.dumps({
            "step": step,
            "distribution": type(distribution).__name__,
            "mesh": (list(distribution.device_mesh.shape)
                     if distribution is not None else None),
            "sharded": sharded}), flush=True)

    Run.save_checkpoint = save_and_report


if __name__ == "__main__":
    if os.environ.get("KZOO_TEST_REPORT_SHARDING"):
        _report_sharding()
    if os.environ.get("KZOO_TEST_LOGICAL_CPUS"):
        _mirror_over_logical_cpus(int(os.environ["KZOO_TEST_LOGICAL_CPUS"]))
    register_tiny_mlm()
    if os.environ.get("KZOO_TEST_PAUSE_AFTER_CHECKPOINT"):
        _pause_after_checkpoint(
            int(os.environ["KZOO_TEST_PAUSE_AFTER_CHECKPOINT"]))
    from kzoo.cli import main
    sys.exit(main(sys.argv[1:]))
