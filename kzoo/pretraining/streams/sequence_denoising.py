"""BART's denoising, streamed from a prepared corpus: the "denoising"
objective (BART's default).

Blocks as fairseq's denoising task cuts them (`TokenBlockDataset` with
`--sample-break-mode complete_doc`, `--tokens-per-sample 512`): whole
sentences of ONE document, as many as fit in `sequence_length - 2` ids
(room for `<s>` and `</s>`); a block never crosses a document, and a
sentence longer than a block is cut into block-sized pieces (fairseq would
make an over-long block of it).

Each block is noised by `BartDenoisingPreprocessor.noise` (the same code as
the in-memory objective): its sentences permuted (the corpus' own sentence
boundaries), then text infilling over whole words (30% of the words, span
lengths ~ Poisson(lambda), each span one `<mask>`). `recipe` picks the
numbers as the preprocessor does: "paper" (default, kzoo's in-memory
default: lambda 3, every span a `<mask>`) or "released" (what trained
`bart.large`: lambda 3.5, one span in ten a random token). The encoder reads
`<s> noised </s>`, the decoder learns `<s> block </s>`
(`BartDenoisingPreprocessor.pack_ids`). The noise of batch `step` is drawn
from `np.random.default_rng(seed)` of its row group (`BatchStream.draw_seed`).
"""

import numpy as np

from kzoo.corpus.shards import CorpusError
from kzoo.core.families import families_with_objective
from kzoo.pretraining.objectives import Objective, register_objective
from kzoo.pretraining.streams.base import BatchStream
from kzoo.pretraining.streams.sequence_packing import (
    compiled_packing, corpus_preprocessor, make_preset_task, numpy_batch,
    preset_task_class, ragged, stream_arguments)
from kzoo.tasks.seq2seq_lm import Seq2SeqLM

SEQUENCE_LENGTH = 512  # fairseq's --tokens-per-sample for BART


class DenoisingStream(BatchStream):
    """BART denoising batches from a corpus (see the module doc).

    Args:
        corpus: a `kzoo.corpus.Corpus` of BART's tokenizer's ids.
        preprocessor: a `BartDenoisingPreprocessor` (its noise, recipe and
            `pack_ids`; its `sequence_length` is the block's, with `<s>`
            and `</s>`).
        batch_size, seed, process_index, process_count, draw_groups:
            see `BatchStream`.
    """

    # The block being cut: its document, next sentence and, inside an
    # over-long sentence, the next id.
    state_fields = ("block",)

    def __init__(self, corpus, preprocessor, batch_size, seed=0, **kwargs):
        super().__init__(corpus, batch_size, seed=seed, **kwargs)
        self.preprocessor = preprocessor
        self._pack = compiled_packing(preprocessor)
        self.room = preprocessor.sequence_length - \
            preprocessor.special_token_count(1)
        self.block = {"document": None, "sentence": 0, "offset": 0}

    def _sentences(self, document):
        shard, local = self.corpus.locate(document)
        first, end = shard.document_sentence_range(local)
        return shard, first, end - first

    def next_example(self):
        """`{"ids", "ends"}`: a block of whole sentences of one document
        and where each sentence ends in it."""
        block, room = self.block, self.room
        for _ in range(self.corpus.num_documents + 2):
            if block["document"] is None:
                block.update(document=int(self.walk.next_document()[0]),
                             sentence=0, offset=0)
            shard, first, count = self._sentences(block["document"])
            pieces, total = [], 0
            while block["sentence"] < count:
                sentence = shard.sentence(first + block["sentence"])
                rest = sentence[block["offset"]:]
                if total + rest.size <= room:
                    pieces.append(rest)
                    total += rest.size
                    block["sentence"] += 1
                    block["offset"] = 0
                elif total == 0:  # a sentence longer than a block: cut
                    pieces.append(rest[:room])
                    total = room
                    block["offset"] += room
                    break
                else:
                    break
            if block["sentence"] >= count:
                block["document"] = None  # the next block: the next document
            pieces = [p for p in pieces if p.size]
            if pieces:
                ends = np.concatenate([np.arange(p.size) == p.size - 1
                                       for p in pieces])
                return {"ids": np.concatenate(pieces).astype(np.int64),
                        "ends": ends}
        raise CorpusError(f"{self.corpus.folder} holds no token ids.")

    def finish(self, examples, seed):
        rng = np.random.default_rng(seed)
        noised = [self.preprocessor.noise(example["ids"], rng=rng,
                                          sentence_ends=example["ends"])
                  for example in examples]
        return numpy_batch(self._pack(
            ragged(noised), ragged([e["ids"] for e in examples])))


def _denoises(task_cls):
    return hasattr(task_cls.preprocessor_cls, "noise")


def make_task(preset, load_weights=True, sequence_length=None, **options):
    task_cls = preset_task_class(preset, "denoising", Seq2SeqLM,
                                 accept=_denoises)
    return make_preset_task(task_cls, preset, load_weights, sequence_length)


def make_stream(task, corpus, batch_size, seed=0, process_index=0,
                process_count=1, draw_groups=None, sequence_length=None,
                recipe="paper", noise_density=None):
    preprocessor_cls = type(task).preprocessor_cls
    if not hasattr(preprocessor_cls, "noise"):
        raise ValueError(
            f"The 'denoising' objective needs a denoising task; got a "
            f"{type(task).__name__}.")
    length = sequence_length or SEQUENCE_LENGTH
    # noise_density None: the recipe's (30% of the words).
    preprocessor = corpus_preprocessor(task, corpus, sequence_length=length,
                                       recipe=recipe,
                                       noise_density=noise_density)
    return DenoisingStream(
        corpus, preprocessor,
        **stream_arguments(batch_size, seed, process_index, process_count,
                           draw_groups))


OBJECTIVE = register_objective(Objective(
    name="denoising",
    description=("BART's denoising: blocks of whole sentences of one "
                 "document, sentences permuted, 30% of the words infilled "
                 "in Poisson spans of one <mask> each"),
    families=families_with_objective("denoising"),
    make_task=make_task,
    make_stream=make_stream,
    options={"recipe": "paper", "noise_density": None},
    mask_rate_option="noise_density"))
