"""Heads every encoder takes (sequence and token classification,
question answering, multiple choice, probing, span boundary pretraining)
and the generic seq2seq LM, with their preprocessors.

A family's own tasks build on the bases exported here: its masked LM on
`MaskedLM`, its classifier on `SequenceClassifier`, its text packing on
`SegmentPreprocessor` and its masked-LM input on `MaskedLMPreprocessor`
(see docs/design.md, "Adding a family"). The finished heads are public
as `kzoo.TokenClassifier`, `kzoo.QuestionAnswerer`, ...
"""

from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.tasks.segment_preprocessor import SegmentPreprocessor
from kzoo.tasks.task_wiring import MaskedLM, SequenceClassifier

__all__ = ["MaskedLM", "MaskedLMPreprocessor", "SegmentPreprocessor",
           "SequenceClassifier"]
