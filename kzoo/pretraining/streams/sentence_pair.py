"""BERT's MLM + next-sentence prediction ("mlm_nsp") and ALBERT's MLM +
sentence-order prediction ("mlm_sop") from a prepared corpus, the
instances built as the originals' `create_pretraining_data.py`
(`create_instances_from_document`, google-research/bert and /albert):

- a document's target length is `sequence_length - 3`, or with
  probability `short_seq_prob` (0.1) a random length in [2, that];
- a chunk takes the document's sentences from where the last one ended
  until it reaches the target or the document ends;
- A is its first `a_end` sentences, `a_end` uniform in [1, len(chunk) - 1]
  (1 for a chunk of one sentence);
- NSP: with probability 0.5 (always for a chunk of one sentence) B is
  NotNext: sentences from a random other document, from a random sentence
  on, until B reaches the target less A; the chunk's sentences after A
  are put back (the next chunk begins with them). Else B is the rest of
  the chunk (IsNext).
- SOP: B is the rest of the chunk, and with probability 0.5 A and B are
  swapped; a chunk of one sentence takes B from another document, as
  NSP's, and is labelled 1 too (ALBERT's code, `random_next_sentence`
  off, does so);
- `truncate_seq_pair`: while A + B is longer than `sequence_length - 3`,
  a token leaves the longer one (B on a tie), from its front or its back
  with probability 0.5 each.

Labels as `kzoo.preprocessing.sentence_pairs` (NSP: 0 IsNext, 1 NotNext;
SOP: 0 in order, 1 swapped). The original draws "another document" by
trying 10 times; here it is drawn among the others at once. The stream's
state between instances is the walk's position and the current
document's target length.
"""

import numpy as np

from kzoo.preprocessing.sentence_pairs import (IN_ORDER, IS_NEXT, NOT_NEXT,
                                               SWAPPED)
from kzoo.corpus.shards import CorpusError
from kzoo.core.families import families_with_objective
from kzoo.pretraining.objectives import Objective, register_objective
from kzoo.pretraining.streams.base import DocumentSentences
from kzoo.pretraining.streams.encoder import (EncoderStream, build_task,
                                              family_task_class,
                                              masking_preprocessor)

SHORT_SEQ_PROB = 0.1


def truncation(length_a, length_b, limit):
    """How many tokens `truncate_seq_pair` takes from A and from B: from
    the longer one (B on a tie) until A + B fits `limit`."""
    excess = length_a + length_b - limit
    if excess <= 0:
        return 0, 0
    if length_a > length_b:  # A down to B's length, then B, A, B, ...
        first = min(excess, length_a - length_b)
        rest = excess - first
        return first + rest // 2, (rest + 1) // 2
    # B down to one below A's length (ties go to B), then A, B, A, ...
    first = min(excess, length_b - length_a + 1)
    rest = excess - first
    return (rest + 1) // 2, first + rest // 2


def truncate_seq_pair(a, b, limit, rng):
    """A and B truncated as the original's `truncate_seq_pair`: each token
    taken from the front or the back with probability 0.5 (the number
    from the front drawn at once: a binomial count)."""
    cut_a, cut_b = truncation(len(a), len(b), limit)
    front_a = int(rng.binomial(cut_a, 0.5)) if cut_a else 0
    front_b = int(rng.binomial(cut_b, 0.5)) if cut_b else 0
    return (a[front_a:len(a) - (cut_a - front_a)],
            b[front_b:len(b) - (cut_b - front_b)])


class SentencePairStream(EncoderStream):
    """MLM + NSP (`sentence_task="nsp"`) or MLM + SOP (`"sop"`) batches.

    Args:
        corpus: a `kzoo.corpus.Corpus` of at least two documents.
        preprocessor: the family's pretrainer preprocessor (its packing,
            masking and `sequence_length`).
        batch_size: the global batch.
        sentence_task: "nsp" or "sop".
        short_seq_prob: the share of documents given a shorter target.
        seed, process_index, process_count, draw_groups, shuffle: as
            `BatchStream`'s.

    Each example also records where A and B came from (`"a"`, `"b"`:
    `(document, first sentence, end)`, before truncation), its chunk's
    sentence count and its document's target length, which the tests
    read.
    """

    state_fields = ("target_length",)

    def __init__(self, corpus, preprocessor, batch_size, sentence_task,
                 short_seq_prob=SHORT_SEQ_PROB, **kwargs):
        super().__init__(corpus, preprocessor, batch_size, **kwargs)
        if sentence_task not in ("nsp", "sop"):
            raise ValueError(f"sentence_task must be 'nsp' or 'sop'; got "
                             f"{sentence_task!r}.")
        if not 0.0 <= short_seq_prob <= 1.0:
            raise ValueError(f"short_seq_prob must be in [0, 1]; got "
                             f"{short_seq_prob!r}.")
        if corpus.num_documents < 2:
            raise CorpusError(
                f"{corpus.folder} holds {corpus.num_documents} document(s); "
                f"{sentence_task.upper()} instances take a sentence from "
                "another document. Prepare a corpus of two documents or "
                "more (documents are separated by blank lines or files).")
        self.sentence_task = sentence_task
        self.short_seq_prob = float(short_seq_prob)
        self.max_num_tokens = self.sequence_length - 3  # [CLS] A [SEP] B [SEP]
        if self.max_num_tokens < 2:
            raise ValueError(
                f"sequence_length {self.sequence_length} leaves no room for "
                "two segments; use 5 or more.")
        self.target_length = self.max_num_tokens

    def _draw_target(self):
        if self.rng.random() < self.short_seq_prob:
            return int(self.rng.integers(2, self.max_num_tokens + 1))
        return self.max_num_tokens

    def _chunk(self):
        """The next chunk of the current document: `(document, first
        sentence, its sentences)`; the walk moves past it."""
        walk = self.walk
        ids, document, first, _ = walk.next_sentence()
        if first == 0:  # a document begins: its target length
            self.target_length = self._draw_target()
        _, sentences = walk.current_document()
        chunk, length, last = [ids], len(ids), len(sentences) - 1
        index = first
        while index < last and length < self.target_length:
            index += 1
            chunk.append(sentences[index])
            length += len(sentences[index])
        walk.sentence = index + 1
        return document, first, chunk

    def _random_segment(self, document, target):
        """Sentences of a random other document, from a random one on,
        until `target` tokens: `(ids, (document, first, end))`."""
        count = self.corpus.num_documents
        for _ in range(10):
            other = int(self.rng.integers(count - 1))
            other += other >= document  # any document but this one
            sentences = DocumentSentences(self.corpus, other)
            if sentences:
                break
        else:
            raise CorpusError(
                f"{self.corpus.folder}: found no document with sentences "
                "besides the current one in 10 draws.")
        start = int(self.rng.integers(len(sentences)))
        taken, length, end = [], 0, start
        while end < len(sentences):
            taken.append(sentences[end])
            length += len(sentences[end])
            end += 1
            if length >= target:
                break
        return np.concatenate(taken), (other, start, end)

    def next_example(self):
        document, first, chunk = self._chunk()
        rng = self.rng
        a_end = int(rng.integers(1, len(chunk))) if len(chunk) >= 2 else 1
        a = np.concatenate(chunk[:a_end])
        a_from = (document, first, first + a_end)
        b_from = (document, first + a_end, first + len(chunk))
        nsp = self.sentence_task == "nsp"
        if len(chunk) == 1 or (nsp and rng.random() < 0.5):
            b, b_from = self._random_segment(
                document, self.target_length - len(a))
            self.walk.sentence = first + a_end  # put the rest back
            label = NOT_NEXT if nsp else SWAPPED
        elif not nsp and rng.random() < 0.5:
            b = np.concatenate(chunk[a_end:])
            a, b, a_from, b_from = b, a, b_from, a_from
            label = SWAPPED
        else:
            b = np.concatenate(chunk[a_end:])
            label = IS_NEXT if nsp else IN_ORDER
        kept = truncate_seq_pair(a, b, self.max_num_tokens, rng)
        # The corpus' ids that B's other document lent are not its own.
        corpus_ids = len(a) + (len(b) if b_from[0] == document else 0)
        self.cut("truncate_seq_pair (BERT's: a pair longer than "
                 "sequence_length - 3)", corpus_ids - len(kept[0]) - (
                     len(kept[1]) if b_from[0] == document else 0))
        a, b = kept
        return {"segments": (a, b), "label": label, "a": a_from,
                "b": b_from, "chunk": len(chunk),
                "target": self.target_length}


def _objective(name, pretrainer, sentence_task, description):
    def make_task(preset, load_weights, sequence_length, masking=None,
                  short_seq_prob=SHORT_SEQ_PROB, mask_selection_rate=None):
        return build_task(family_task_class(preset, pretrainer), preset,
                          load_weights, sequence_length)

    def make_stream(task, corpus, batch_size, seed, process_index,
                    process_count, draw_groups, sequence_length,
                    masking=None, short_seq_prob=SHORT_SEQ_PROB,
                    mask_selection_rate=None):
        preprocessor = masking_preprocessor(
            task, corpus, sequence_length, masking=masking,
            mask_selection_rate=mask_selection_rate)
        return SentencePairStream(
            corpus, preprocessor, batch_size, sentence_task,
            short_seq_prob=short_seq_prob, seed=seed,
            process_index=process_index, process_count=process_count,
            draw_groups=draw_groups)

    return register_objective(Objective(
        name=name, description=description,
        families=families_with_objective(name),
        make_task=make_task, make_stream=make_stream,
        options={"masking": None, "short_seq_prob": SHORT_SEQ_PROB,
                 "mask_selection_rate": None},
        mask_rate_option="mask_selection_rate"))


MLM_NSP = _objective(
    "mlm_nsp", "BertPretrainer", "nsp",
    "BERT's masked LM + next-sentence prediction, instances as "
    "create_pretraining_data.py builds them")
MLM_SOP = _objective(
    "mlm_sop", "AlbertPretrainer", "sop",
    "ALBERT's masked LM (n-grams) + sentence-order prediction, instances "
    "as ALBERT's create_pretraining_data.py builds them")
