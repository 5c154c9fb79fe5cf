"""The masked LM ("mlm") from a prepared corpus: RoBERTa's FULL-SENTENCES
rows (whole sentences in corpus order, across documents, a separator
between two documents; `kzoo.preprocessing.packing.FullSentencesRow`),
masked afresh every step with the family's masking (token, whole-word,
n-gram, or span with SpanBERT's boundary inputs).

The only state a row carries into the next is where the walk stands: a
sentence that does not fit a row is put back (the walk's sentence index
steps back one) and begins the next row; one longer than a row fills a
row and its rest (`offset`: the ids already packed) begins the next, so
every id of the corpus is in a row once per epoch, and a checkpoint holds
positions, never ids.
"""

from kzoo.core.families import families_with_objective
from kzoo.pretraining.objectives import Objective, register_objective
from kzoo.pretraining.streams.encoder import (EncoderStream, build_task,
                                              masked_lm_task_class,
                                              masking_preprocessor,
                                              task_adapt)
from kzoo.preprocessing.packing import FullSentencesRow


class FullSentencesStream(EncoderStream):
    """Masked-LM batches of FULL-SENTENCES rows.

    Args:
        corpus: a `kzoo.corpus.Corpus`.
        preprocessor: the family's masked-LM preprocessor (its packing,
            masking and `sequence_length`; see `masking_preprocessor`).
        batch_size, seed, process_index, process_count, draw_groups,
            shuffle: as `BatchStream`'s.
        adapt: the task's last step on a batch (SBO targets), or None.
    """

    # Ids of the walk's current sentence packed in earlier rows (a
    # sentence longer than a row).
    state_fields = ("offset",)

    def __init__(self, corpus, preprocessor, batch_size, **kwargs):
        super().__init__(corpus, preprocessor, batch_size, **kwargs)
        self.offset = 0
        tokenizer = preprocessor.tokenizer
        # The row's content only: pack_ids adds [CLS]/<s> and [SEP]/</s>;
        # between documents the end token, as RoBERTa's.
        self.row = FullSentencesRow(self.sequence_length,
                                    tokenizer.cls_token_id,
                                    tokenizer.sep_token_id,
                                    tokenizer.pad_token_id)

    def next_example(self):
        row, walk = self.row, self.walk
        while True:
            ids, _, _, starts_document = walk.next_sentence()
            if self.offset:  # the rest of a sentence longer than a row
                ids, starts_document = ids[self.offset:], False
            if not len(ids):
                continue
            taken = row.add(ids, starts_document)
            if taken < len(ids):
                walk.sentence -= 1  # put back: it (or its rest) goes on
                self.offset += taken
                break
            self.offset = 0
            if len(row.content) >= row.capacity:
                break
        content, row.content = row.content, []
        return {"segments": (content,)}


def make_task(preset, load_weights, sequence_length, masking=None,
              mask_selection_rate=None):
    return build_task(masked_lm_task_class(preset, masking), preset,
                      load_weights, sequence_length)


def make_stream(task, corpus, batch_size, seed, process_index,
                process_count, draw_groups, sequence_length, masking=None,
                mask_selection_rate=None):
    preprocessor = masking_preprocessor(
        task, corpus, sequence_length, masking=masking,
        mask_selection_rate=mask_selection_rate)
    if task_adapt(task) is not None and preprocessor.masking != "span":
        raise ValueError(
            f"{type(task).__name__} trains on span masking; got "
            f"masking={preprocessor.masking!r}.")
    return FullSentencesStream(
        corpus, preprocessor, batch_size, adapt=task_adapt(task), seed=seed,
        process_index=process_index, process_count=process_count,
        draw_groups=draw_groups)


MLM = register_objective(Objective(
    name="mlm",
    description=("masked LM on FULL-SENTENCES rows (RoBERTa), masking "
                 "token / whole_word / ngram / span (+ SpanBERT's SBO)"),
    families=families_with_objective("mlm"),
    make_task=make_task,
    make_stream=make_stream,
    options={"masking": None, "mask_selection_rate": None},
    mask_rate_option="mask_selection_rate"))
