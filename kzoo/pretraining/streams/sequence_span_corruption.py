"""T5's span corruption, streamed from a prepared corpus: the "span_corruption"
objective (T5's default).

As T5's pretraining pipeline (`t5.data.preprocessors.span_corruption`):
the documents' ids are concatenated into one stream and split into chunks
of `span_corruption_lengths(inputs_length)[0]` raw tokens (568 for T5's
512-token inputs: `random_spans_helper`), each chunk corrupted into an
input of exactly `inputs_length` ids (kept tokens, one sentinel per noise
span, `</s>`) and a target of `targets_length` ids (114 for 512: one
sentinel per kept span, the noise tokens, `</s>`), with 15% noise in spans
of mean length 3 (`kzoo.preprocessing.span_corruption`, whose numbers
follow the original's float32 rounding). Documents are joined with `</s>`
between them, as Hugging Face's `run_t5_mlm_flax.py` concatenates texts
that its tokenizer ended with `</s>`; a chunk crosses documents freely.

The spans of batch `step` are drawn from `np.random.default_rng(seed)` of
its row group (`BatchStream.draw_seed`): fresh every step, the same after a
resume or over several processes. Batches are `T5Preprocessor.pack_ids`'s:
`encoder_token_ids`, `encoder_padding_mask`, `decoder_token_ids`,
`decoder_padding_mask`, the labels and their weights.
"""

import numpy as np

from kzoo.core.families import families_with_objective
from kzoo.pretraining.objectives import Objective, register_objective
from kzoo.pretraining.streams.sequence_packing import (
    IdsStream, compiled_packing, corpus_preprocessor, make_preset_task,
    new_cursor, numpy_batch, preset_task_class, ragged, stream_arguments)
from kzoo.preprocessing.span_corruption import (corrupt_spans,
                                                random_spans_noise_mask,
                                                span_corruption_lengths)
from kzoo.tasks.seq2seq_lm import Seq2SeqLM

INPUTS_LENGTH = 512  # T5's
NUM_SENTINELS = 100


class SpanCorruptionStream(IdsStream):
    """T5 span-corruption batches from a corpus (see the module doc).

    Args:
        corpus: a `kzoo.corpus.Corpus` of the T5 tokenizer's ids.
        preprocessor: a `T5Preprocessor` (its `pack_ids` frames the
            batches); its `sequence_length` is the inputs' length.
        batch_size, seed, process_index, process_count, draw_groups:
            see `BatchStream`.
        noise_density, mean_noise_span_length: the original's 0.15, 3.
    """

    state_fields = ("cursor",)

    def __init__(self, corpus, preprocessor, batch_size, seed=0,
                 noise_density=0.15, mean_noise_span_length=3.0, **kwargs):
        tokenizer = preprocessor.tokenizer
        super().__init__(corpus, batch_size, seed=seed,
                         suffix=[tokenizer.end_token_id], **kwargs)
        self.preprocessor = preprocessor
        self._pack = compiled_packing(preprocessor)
        self.noise_density = float(noise_density)
        self.mean_noise_span_length = float(mean_noise_span_length)
        self.inputs_length = preprocessor.sequence_length
        self.tokens_length, self.targets_length = span_corruption_lengths(
            self.inputs_length, self.noise_density,
            self.mean_noise_span_length)
        self.end_token_id = tokenizer.end_token_id
        self.sentinel_ids = np.asarray(
            [tokenizer.sentinel_id(i) for i in range(NUM_SENTINELS)])
        self.cursor = new_cursor()

    def next_example(self):
        return {"ids": self.read(self.cursor, self.tokens_length)}

    def corrupt(self, ids, rng):
        """One chunk -> `(inputs, targets)` without their `</s>` (the
        packing adds it)."""
        mask = random_spans_noise_mask(len(ids), rng, self.noise_density,
                                       self.mean_noise_span_length)
        inputs, targets = corrupt_spans(ids, mask, self.sentinel_ids,
                                        self.end_token_id)
        return inputs[:-1], targets[:-1]

    def finish(self, examples, seed):
        rng = np.random.default_rng(seed)
        pairs = [self.corrupt(example["ids"], rng) for example in examples]
        return numpy_batch(self._pack(
            ragged([p[0] for p in pairs]), ragged([p[1] for p in pairs])))


def _task_class(preset):
    return preset_task_class(preset, "span_corruption", Seq2SeqLM)


def make_task(preset, load_weights=True, sequence_length=None, **options):
    return make_preset_task(_task_class(preset), preset, load_weights,
                            sequence_length)


def make_stream(task, corpus, batch_size, seed=0, process_index=0,
                process_count=1, draw_groups=None, sequence_length=None,
                noise_density=0.15, mean_noise_span_length=3.0):
    inputs_length = sequence_length or INPUTS_LENGTH
    _, targets_length = span_corruption_lengths(
        inputs_length, noise_density, mean_noise_span_length)
    preprocessor = corpus_preprocessor(task, corpus,
                                       sequence_length=inputs_length,
                                       target_length=targets_length)
    return SpanCorruptionStream(
        corpus, preprocessor, noise_density=noise_density,
        mean_noise_span_length=mean_noise_span_length,
        **stream_arguments(batch_size, seed, process_index, process_count,
                           draw_groups))


OBJECTIVE = register_objective(Objective(
    name="span_corruption",
    description=("T5's span corruption: 568-token chunks of the "
                 "concatenated corpus -> 512 inputs + 114 targets, 15% "
                 "noise in spans of mean length 3"),
    families=families_with_objective("span_corruption"),
    make_task=make_task,
    make_stream=make_stream,
    options={"noise_density": 0.15, "mean_noise_span_length": 3.0},
    mask_rate_option="noise_density"))
