"""ELECTRA's replaced-token detection ("rtd") from a prepared corpus: the
`ElectraPretrainer`'s inputs, the generator's masked text (ELECTRA's
masking: 15% selected, 85% [MASK], 15% kept), with the original ids and
mask weights; the pretrainer samples the replacements in its own step.

Examples are built as the original's `build_pretraining_dataset.py`
(google-research/electra, `ExampleBuilder`): sentences of one document
are gathered until they reach the target length (`sequence_length`, or
with probability 0.05, set after each example, a random length in
[5, sequence_length]) or the document ends; with probability 0.1 they
all go to one segment, else a sentence goes to the first segment while it
fits (`(target - 3) // 2`), or, the second still empty, with probability
0.5 when it does not; the first segment is cut to `sequence_length - 2`
tokens, the second to what is left. The target length is the state the
stream carries between examples, besides the walk's position.
"""

import numpy as np

from kzoo.core.families import families_with_objective
from kzoo.pretraining.objectives import Objective, register_objective
from kzoo.pretraining.streams.encoder import (EncoderStream, build_task,
                                              family_task_class,
                                              masking_preprocessor)

ONE_SEGMENT_PROB = 0.1
RANDOM_LENGTH_PROB = 0.05
MIN_RANDOM_LENGTH = 5


class ElectraStream(EncoderStream):
    """ELECTRA pretraining batches: `(x, original ids, mask weights)` as
    `ElectraMaskedLMPreprocessor` gives them.

    Args:
        corpus: a `kzoo.corpus.Corpus`.
        preprocessor: an `ElectraMaskedLMPreprocessor` (its packing,
            masking rates and `sequence_length`).
        batch_size, seed, process_index, process_count, draw_groups,
            shuffle: as `BatchStream`'s.
    """

    state_fields = ("target_length",)

    def __init__(self, corpus, preprocessor, batch_size, **kwargs):
        super().__init__(corpus, preprocessor, batch_size, **kwargs)
        self.target_length = self.sequence_length

    def _sentences(self):
        """The next example's sentences: from the walk's position in its
        document until the target length or the document's end."""
        walk = self.walk
        ids, _, index, _ = walk.next_sentence()
        _, sentences = walk.current_document()
        taken, length = [ids], len(ids)
        while length < self.target_length and index + 1 < len(sentences):
            index += 1
            taken.append(sentences[index])
            length += len(sentences[index])
        walk.sentence = index + 1
        return taken

    def next_example(self):
        rng, limit = self.rng, self.sequence_length
        if rng.random() < ONE_SEGMENT_PROB:
            first_target = float("inf")
        else:
            first_target = (self.target_length - 3) // 2
        first, second = [], []
        length = 0  # of the first segment
        for sentence in self._sentences():
            if (not first or length + len(sentence) < first_target or (
                    not second and length < first_target
                    and rng.random() < 0.5)):
                first.append(sentence)
                length += len(sentence)
            else:
                second.append(sentence)
        whole = sum(len(sentence) for sentence in first + second)
        first = np.concatenate(first)[:limit - 2]
        second = (np.concatenate(second) if second
                  else first[:0])[:max(0, limit - len(first) - 3)]
        self.cut("segments cut to sequence_length (ELECTRA's "
                 "build_pretraining_dataset.py)",
                 whole - len(first) - len(second))
        if rng.random() < RANDOM_LENGTH_PROB:
            self.target_length = int(rng.integers(MIN_RANDOM_LENGTH,
                                                  limit + 1))
        else:
            self.target_length = limit
        segments = (first, second) if len(second) else (first,)
        return {"segments": segments}


def make_task(preset, load_weights, sequence_length, generator_preset="auto",
              mask_selection_rate=None):
    return build_task(family_task_class(preset, "ElectraPretrainer"), preset,
                      load_weights, sequence_length,
                      generator_preset=generator_preset)


def make_stream(task, corpus, batch_size, seed, process_index,
                process_count, draw_groups, sequence_length,
                generator_preset="auto", mask_selection_rate=None):
    return ElectraStream(
        corpus, masking_preprocessor(
            task, corpus, sequence_length,
            mask_selection_rate=mask_selection_rate),
        batch_size, seed=seed, process_index=process_index,
        process_count=process_count, draw_groups=draw_groups)


RTD = register_objective(Objective(
    name="rtd",
    description=("ELECTRA's replaced-token detection (generator MLM + "
                 "discriminator), examples as build_pretraining_dataset.py"),
    families=families_with_objective("rtd"),
    make_task=make_task,
    make_stream=make_stream,
    options={"generator_preset": "auto", "mask_selection_rate": None},
    mask_rate_option="mask_selection_rate"))
