"""Batches of each pretraining objective, streamed from a prepared corpus;
see `base.py` for the determinism and resumption rules they all keep."""

from kzoo.pretraining.streams.base import BatchStream, CorpusWalk
# The encoder objectives (MLM, NSP, SOP, RTD) register here; a family's
# default is the first registered for it, so BERT's mlm_nsp, ALBERT's
# mlm_sop and ELECTRA's rtd come before mlm.
from kzoo.pretraining.streams import sentence_pair  # noqa: F401
from kzoo.pretraining.streams import electra  # noqa: F401
from kzoo.pretraining.streams import masked_lm  # noqa: F401
# The sequence objectives (T5, BART, GPT-2, ELMo, AWD-LSTM) register here.
from kzoo.pretraining.streams import sequence_span_corruption  # noqa: F401
from kzoo.pretraining.streams import sequence_denoising  # noqa: F401
from kzoo.pretraining.streams import sequence_causal_lm  # noqa: F401
from kzoo.pretraining.streams import sequence_bilm  # noqa: F401
from kzoo.pretraining.streams import sequence_bptt  # noqa: F401

__all__ = ["BatchStream", "CorpusWalk"]
