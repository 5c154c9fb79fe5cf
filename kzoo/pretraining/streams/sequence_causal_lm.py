"""GPT-2's causal LM, streamed from a prepared corpus: the "causal_lm"
objective (GPT-2's default).

As GPT-2 and nanoGPT train: the documents' ids joined into one stream with
`<|endoftext|>` after each document (nanoGPT's `prepare.py` appends
`enc.eot_token` to every document), read in contiguous blocks of
`sequence_length + 1` ids: the model reads the first `sequence_length`,
and learns each next id (`y` is `x` shifted by one). Consecutive blocks
overlap by that one id, so the blocks tile the stream and every id after
the first is a target exactly once (nanoGPT samples random offsets
instead; a seeded sequential order is what resumes exactly). No padding:
every position is a real token.

The batch is what `GPT2CausalLMPreprocessor` gives: `token_ids`,
`padding_mask`, labels and their weights, all `(batch, sequence_length)`.
"""

import numpy as np

from kzoo.core.task import Task
from kzoo.core.families import families_with_objective
from kzoo.pretraining.objectives import Objective, register_objective
from kzoo.pretraining.streams.sequence_packing import (
    IdsStream, corpus_tokenizer, make_preset_task, new_cursor,
    preset_task_class, stream_arguments)

SEQUENCE_LENGTH = 1024  # GPT-2's context


class CausalLMStream(IdsStream):
    """Causal-LM batches from a corpus (see the module doc).

    Args:
        corpus: a `kzoo.corpus.Corpus`.
        end_token_id: the id joining documents (`<|endoftext|>`).
        sequence_length: the model's input length.
        batch_size, seed, process_index, process_count, draw_groups:
            see `BatchStream`.
    """

    state_fields = ("cursor",)

    def __init__(self, corpus, end_token_id, sequence_length, batch_size,
                 seed=0, **kwargs):
        super().__init__(corpus, batch_size, seed=seed,
                         suffix=[end_token_id], **kwargs)
        self.sequence_length = int(sequence_length)
        self.cursor = new_cursor()

    def next_example(self):
        block = self.read(self.cursor, self.sequence_length + 1)
        self.rewind(self.cursor, 1)  # the last id starts the next block
        return {"ids": block}

    def finish(self, examples, seed):
        blocks = np.stack([e["ids"] for e in examples]).astype(np.int32)
        x = {"token_ids": blocks[:, :-1],
             "padding_mask": np.ones_like(blocks[:, :-1])}
        return x, blocks[:, 1:], np.ones(blocks[:, 1:].shape, np.float32)


def _is_causal_lm(task_cls):
    return task_cls.__name__.endswith("CausalLM")


def make_task(preset, load_weights=True, sequence_length=None, **options):
    task_cls = preset_task_class(preset, "causal_lm", Task,
                                 accept=_is_causal_lm)
    return make_preset_task(task_cls, preset, load_weights, sequence_length)


def make_stream(task, corpus, batch_size, seed=0, process_index=0,
                process_count=1, draw_groups=None, sequence_length=None):
    length = sequence_length or min(
        SEQUENCE_LENGTH, task.backbone.max_sequence_length)
    tokenizer = corpus_tokenizer(task, corpus)
    return CausalLMStream(
        corpus, tokenizer.end_token_id, length,
        **stream_arguments(batch_size, seed, process_index, process_count,
                           draw_groups))


OBJECTIVE = register_objective(Objective(
    name="causal_lm",
    description=("GPT-2's causal LM: contiguous blocks of the corpus, "
                 "documents joined by <|endoftext|>, each next token "
                 "learnt"),
    families=families_with_objective("causal_lm"),
    make_task=make_task,
    make_stream=make_stream))
