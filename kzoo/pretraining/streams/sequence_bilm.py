"""ELMo's biLM, streamed from a prepared corpus: the "bilm" objective
(ELMo's default).

As bilm-tf trained ELMo on the 1B Word Benchmark: every sentence framed
`<S> words </S>`, the sentences of the corpus end to end in one stream,
read in windows of `sequence_length` tokens (bilm-tf's `num_steps`, 20).
The forward LM learns each next token of the same sentence (`</S>` has
none), the backward LM each previous one (`<S>` has none); a target may lie
just outside its window (the first token's previous one, the last token's
next one), as bilm-tf's targets do. Windows tile the stream. What differs:
bilm-tf carries the LSTM states from one window to the next on each row;
kzoo's `ElmoLanguageModel` starts every window from zero state (it is not
stateful), so the first tokens of a window see less context.

The model reads characters, the softmax word ids; a prepared corpus holds
word ids (`ElmoTokenizer`). Each id is spelled back as its vocabulary word
(`tokenizer.character_ids`, bilm-tf's character ids). LIMITATION: a word
outside the vocabulary was stored as `<UNK>`'s id, so the character CNN
reads the five characters of `<UNK>` where the original read the word
itself (its target is `<UNK>` in both). With the released 793k-word
vocabulary of the 1B Word Benchmark that is rare in English news text;
with a small vocabulary, prepare the corpus with a larger one.

The batch is `ElmoLanguageModelPreprocessor`'s: `character_ids` `(batch,
sequence_length, 50)`, `padding_mask`, and `forward` / `backward` targets
and weights.
"""

import numpy as np

from kzoo.core.task import Task
from kzoo.core.families import families_with_objective
from kzoo.pretraining.objectives import Objective, register_objective
from kzoo.pretraining.streams.sequence_packing import (
    IdsStream, corpus_tokenizer, make_preset_task, new_cursor,
    preset_task_class, stream_arguments)

SEQUENCE_LENGTH = 20  # bilm-tf's num_steps
BOS, EOS = "<S>", "</S>"
# Spelled words kept (50 int32 each: 20 MB at most).
_CACHE_WORDS = 100_000


class BiLMStream(IdsStream):
    """ELMo biLM batches from a corpus (see the module doc).

    Args:
        corpus: a `kzoo.corpus.Corpus` of `ElmoTokenizer` word ids.
        tokenizer: that `ElmoTokenizer` (its words and `<S>`/`</S>`).
        sequence_length: tokens per window.
        batch_size, seed, process_index, process_count, draw_groups:
            see `BatchStream`.
    """

    unit = "sentence"
    state_fields = ("cursor",)

    def __init__(self, corpus, tokenizer, sequence_length, batch_size,
                 seed=0, **kwargs):
        super().__init__(corpus, batch_size, seed=seed,
                         prefix=[tokenizer.token_to_id(BOS)],
                         suffix=[tokenizer.token_to_id(EOS)], **kwargs)
        self.tokenizer = tokenizer
        self.sequence_length = int(sequence_length)
        self.words = tokenizer.get_vocabulary()
        self._characters = {}
        self.cursor = new_cursor()

    def next_example(self):
        cursor = self.cursor
        # The id before the window, when it is in the same sentence.
        before = -1
        if cursor["unit"] is not None and 0 < cursor["offset"] < \
                self.unit_length(cursor["unit"]):
            before = int(self.unit_slice(cursor["unit"], cursor["offset"] - 1,
                                         cursor["offset"])[0])
        ids, starts, ends = self.read(cursor, self.sequence_length + 1,
                                      marks=True)
        self.rewind(cursor, 1)  # the id after the window starts the next
        length = self.sequence_length
        forward = np.where(ends[:length], 0, ids[1:])
        backward = np.where(starts[:length], 0,
                            np.concatenate([[max(before, 0)], ids[:-2]]))
        return {"ids": ids[:length], "forward": forward,
                "backward": backward,
                "forward_weight": (~ends[:length]).astype(np.float32),
                "backward_weight": (~starts[:length]).astype(np.float32)}

    def character_ids(self, ids):
        """Word ids (any shape) -> their words' character ids (+ (50,))."""
        unique, inverse = np.unique(ids, return_inverse=True)
        missing = [int(i) for i in unique if int(i) not in self._characters]
        if missing:
            if len(self._characters) + len(missing) > _CACHE_WORDS:
                self._characters.clear()
            spelled = np.asarray(self.tokenizer.character_ids(
                [" ".join(self.words[i] for i in missing)]))[0]
            self._characters.update(zip(missing, spelled))
        table = np.stack([self._characters[int(i)] for i in unique])
        return table[inverse.reshape(-1)].reshape(ids.shape + (-1,)).astype(
            np.int32)

    def finish(self, examples, seed):
        ids = np.stack([e["ids"] for e in examples])
        x = {"character_ids": self.character_ids(ids),
             "padding_mask": np.ones(ids.shape, np.int32)}
        y = {d: np.stack([e[d] for e in examples]).astype(np.int32)
             for d in ("forward", "backward")}
        weights = {d: np.stack([e[f"{d}_weight"] for e in examples])
                   for d in ("forward", "backward")}
        return x, y, weights


def _is_language_model(task_cls):
    return task_cls.__name__.endswith("LanguageModel")


def make_task(preset, load_weights=True, sequence_length=None,
              num_sampled=None, **options):
    task_cls = preset_task_class(preset, "bilm", Task,
                                 accept=_is_language_model)
    tokenizer = task_cls.preprocessor_cls.tokenizer_cls.from_preset(preset)
    return make_preset_task(task_cls, preset, load_weights, sequence_length,
                            vocabulary_size=tokenizer.vocabulary_size,
                            num_sampled=num_sampled)


def make_stream(task, corpus, batch_size, seed=0, process_index=0,
                process_count=1, draw_groups=None, sequence_length=None,
                num_sampled=None):
    return BiLMStream(
        corpus, corpus_tokenizer(task, corpus),
        sequence_length or SEQUENCE_LENGTH,
        **stream_arguments(batch_size, seed, process_index, process_count,
                           draw_groups))


OBJECTIVE = register_objective(Objective(
    name="bilm",
    description=("ELMo's biLM: <S> sentence </S> end to end in windows of "
                 "20 tokens, forward and backward LM within each sentence"),
    families=families_with_objective("bilm"),
    make_task=make_task,
    make_stream=make_stream,
    # The original's sampled softmax drew 8192 words per step; None is
    # the full softmax (ElmoLanguageModel's num_sampled).
    options={"num_sampled": None}))
