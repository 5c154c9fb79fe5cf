"""Beam search token for token against `transformers`' `generate`, for a
decoder-only family (GPT-2) and both encoder-decoders (T5, BART): random
tiny checkpoints converted to kzoo, one batch of prompts (or encoder
inputs) of unequal length, stop tokens that some beams hit, and every
beam of the result (with its score) compared.

How each side batches and pads (what the comparisons account for):
  - prompts: transformers left-pads a decoder-only batch and passes an
    attention mask (its GPT-2 derives positions from the mask); kzoo
    right-pads and runs each row from its own prompt length. Encoder
    inputs are right-padded with a mask on both sides.
  - finished beams: kzoo returns each beam's ids up to and including its
    stop token; transformers pads shorter beams to the longest with
    `pad_token_id`, or with the first stop token when the pad id is 0
    (its fill value is `pad_token_id or eos_token_id[0]`).

The stop tokens are picked from what beam search produces without any:
tokens that some returned beam makes after its first new token. Until
the first step where a stop token is among the candidates, the search
with stop tokens follows the same path (it keeps the same running beams
whatever the length penalty and early stopping), so such a token is
certainly hit by some beam during the search.
"""

import numpy as np
import pytest

import kzoo
from kzoo.generation import BeamSampler

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

NEW_TOKENS = 7
NUM_BEAMS = 3
# (length_penalty, early_stopping): transformers' defaults, then a
# shorter-favouring penalty with stopping at `num_beams` finished
# hypotheses, then a longer-favouring one judged at the longest length.
# Each setting is its own compiled program per family (most of the time
# here): the default run checks transformers' defaults, the other two
# run with the large tests.
SETTINGS = [pytest.param(1.0, False, id="lp1.0-False"),
            pytest.param(0.5, True, id="lp0.5-True", marks=pytest.mark.large),
            pytest.param(2.0, "never", id="lp2.0-never",
                         marks=pytest.mark.large)]


class Family:
    """One family's transformers model, its kzoo conversion, the batch in
    both sides' forms, and how to read transformers' output."""

    def __init__(self, hf_model, lm, prompts, hf_inputs, hf_kwargs,
                 pad_token_id, decoder_only):
        self.hf_model = hf_model
        self.lm = lm
        self.prompts = prompts  # kzoo's input: one id list per row
        self.hf_inputs = hf_inputs  # input_ids, attention_mask
        self.hf_kwargs = hf_kwargs
        self.pad_token_id = pad_token_id
        self.decoder_only = decoder_only

    def hf_new_from(self):
        """Where the new tokens start in a transformers output row: after
        the left-padded prompts, or after the decoder start token."""
        return self.hf_inputs["input_ids"].shape[1] if self.decoder_only \
            else 1

    def kzoo_new_from(self, row):
        """Where they start in a kzoo output row: after that row's prompt,
        or after the decoder start token."""
        return len(self.prompts[row]) if self.decoder_only else 1

    def hf_beams(self, stop_token_ids, length_penalty=1.0,
                 early_stopping=False):
        """`(beams, scores)`: per row, the new tokens of every beam (best
        first, as transformers pads them) and their scores."""
        with torch.no_grad():
            out = self.hf_model.generate(
                **self.hf_inputs, **self.hf_kwargs, do_sample=False,
                max_new_tokens=NEW_TOKENS, num_beams=NUM_BEAMS,
                num_return_sequences=NUM_BEAMS,
                length_penalty=length_penalty, early_stopping=early_stopping,
                eos_token_id=stop_token_ids, pad_token_id=self.pad_token_id,
                output_scores=True, return_dict_in_generate=True)
        sequences = out.sequences[:, self.hf_new_from():].reshape(
            len(self.prompts), NUM_BEAMS, -1).tolist()
        scores = out.sequences_scores.reshape(len(self.prompts),
                                              NUM_BEAMS).numpy()
        return sequences, scores


def _hf_left_padded(prompts, pad):
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, prompt in enumerate(prompts):
        ids[i, width - len(prompt):] = torch.tensor(prompt)
        mask[i, width - len(prompt):] = 1
    return {"input_ids": ids, "attention_mask": mask}


def _hf_right_padded(sources, pad):
    width = max(len(s) for s in sources)
    ids = torch.full((len(sources), width), pad, dtype=torch.long)
    mask = torch.zeros((len(sources), width), dtype=torch.long)
    for i, source in enumerate(sources):
        ids[i, :len(source)] = torch.tensor(source)
        mask[i, :len(source)] = 1
    return {"input_ids": ids, "attention_mask": mask}


def _gpt2(tmp_path_factory):
    from gpt2_testing import HF_CONFIGS, PAD, hf_pair, random_prompts
    hf_model, lm = hf_pair("a")
    prompts = random_prompts([4, 7, 2], HF_CONFIGS["a"]["vocab_size"],
                             seed=3)
    return Family(hf_model, lm, prompts, _hf_left_padded(prompts, PAD), {},
                  PAD, decoder_only=True)


def _seq2seq(tmp_path_factory, hf_model, lm_cls, sources, pad, start):
    folder = tmp_path_factory.mktemp("hf_checkpoint")
    hf_model.save_pretrained(folder)
    lm = lm_cls.from_preset(str(folder), preprocessor=None)
    # Beam search alone: neither side applies the checkpoint's decoding
    # controls (BART's config forces the EOS token by default; kzoo reads
    # it into lm.generation_config). test_generation_settings_parity
    # checks them.
    lm.generation_config = {}
    hf_kwargs = {"decoder_start_token_id": start,
                 "forced_bos_token_id": None, "forced_eos_token_id": None}
    return Family(hf_model, lm, sources, _hf_right_padded(sources, pad),
                  hf_kwargs, pad, decoder_only=False)


def _t5(tmp_path_factory):
    from t5_testing import HF_CONFIGS, make_hf_t5
    # v1.1: transformers' own cache fails on v1.0's deeper decoder.
    vocabulary_size = HF_CONFIGS["v1_1"]["vocab_size"]
    rng = np.random.default_rng(7)
    sources = [rng.integers(2, vocabulary_size, n).tolist() + [1]
               for n in (4, 9, 6)]
    return _seq2seq(tmp_path_factory, make_hf_t5("v1_1"), kzoo.T5Seq2SeqLM,
                    sources, pad=0, start=0)


def _bart(tmp_path_factory):
    from bart_testing import HF_CONFIGS, make_hf_bart
    vocabulary_size = HF_CONFIGS["odd24"]["vocab_size"]
    rng = np.random.default_rng(7)
    sources = [[0] + rng.integers(4, vocabulary_size, n).tolist() + [2]
               for n in (3, 12, 7)]
    return _seq2seq(tmp_path_factory, make_hf_bart("odd24"),
                    kzoo.BartSeq2SeqLM, sources, pad=1, start=2)


BUILDERS = {"gpt2": _gpt2, "t5": _t5, "bart": _bart}


@pytest.fixture(scope="module")
def families(tmp_path_factory):
    transformers.logging.set_verbosity_error()
    made = {}

    def family(name):
        if name not in made:
            made[name] = BUILDERS[name](tmp_path_factory)
        return made[name]
    return family


def pick_stop_tokens(family):
    """Two tokens that beams make after their first new token when no
    stop token ends them (see the module doc: so some beam hits one)."""
    free, _ = family.hf_beams(stop_token_ids=None)
    first = {beam[0] for row in free for beam in row}
    later = [t for row in free for beam in row for t in beam[1:]
             if t not in first]
    assert later, "the free beams only repeat their first tokens"
    counts = np.bincount(later)
    return [int(t) for t in np.argsort(-counts, kind="stable")[:2]
            if counts[t] > 0]


@pytest.mark.parametrize("length_penalty,early_stopping", SETTINGS)
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_beam_search_matches_transformers(families, name, length_penalty,
                                          early_stopping):
    family = families(name)
    stop = pick_stop_tokens(family)
    expected, expected_scores = family.hf_beams(stop, length_penalty,
                                                early_stopping)
    got = family.lm.generate(
        family.prompts, max_new_tokens=NEW_TOKENS, stop_token_ids=stop,
        sampler=BeamSampler(num_beams=NUM_BEAMS,
                            length_penalty=length_penalty,
                            early_stopping=early_stopping,
                            return_all_beams=True))
    fill = family.pad_token_id or stop[0]
    ended_early = 0
    for row, (beams, hf_beams) in enumerate(zip(got["sequences"],
                                                expected)):
        for beam, (ids, hf_ids) in enumerate(zip(beams, hf_beams)):
            new = ids[family.kzoo_new_from(row):]
            assert hf_ids[:len(new)] == new, (row, beam, new, hf_ids)
            assert all(t == fill for t in hf_ids[len(new):]), \
                (row, beam, new, hf_ids)
            if len(new) < NEW_TOKENS:
                assert new[-1] in stop
                ended_early += 1
    np.testing.assert_allclose(got["scores"], expected_scores, rtol=1e-5,
                               atol=1e-4)
    # The batch's rows are not all alike (a degenerate model would make
    # the comparison weak).
    assert len({tuple(beams[0][family.kzoo_new_from(row):])
                for row, beams in enumerate(got["sequences"])}) > 1
    score_difference = np.abs(got["scores"] - expected_scores).max()
    print(f"\n{name} lp={length_penalty} early_stopping={early_stopping}: "
          f"stop tokens {stop}, {ended_early} of "
          f"{NUM_BEAMS * len(family.prompts)} returned beams end early; "
          f"max |score - transformers'| {score_difference:.1e}")
