"""Checkpoints' generation settings and the decoding controls, token for
token against `transformers`' `generate`.

Each tiny random checkpoint is saved by transformers with a real
preset's generation settings (its `generation_config.json`), converted
by kzoo (which reads them into the preset's `generation.json`), and then
decoded by both sides with no decoding argument at all: each side must
follow the checkpoint's settings by itself.

  - BART with bart_large_cnn_en's settings: 4 beams, length_penalty 2.0,
    early stopping, 56 to 142 decoder tokens, no repeated trigram, `<s>`
    forced first and `</s>` forced at the length limit.
  - T5 with t5_small_multi's summarisation settings (config.json's
    `task_specific_params`): 4 beams, length_penalty 2.0, early
    stopping, 30 to 200 tokens, no repeated trigram.
  - GPT-2 (whose presets set no decoding control) with 3 beams and every
    other control: repetition penalty, bad words of one and two tokens, a
    minimum of new tokens, bigram blocking, a forced last token.

Each is also decoded greedily with the same controls (beams are one
loop, greedy and sampling the other). The long decodes (T5's 200 tokens,
BART's greedy 142) run with the large tests: BART's beams and GPT-2's
both loops cover every control in the default run. Batches of encoder inputs differ
in length; GPT-2's prompts are of one length (transformers left-pads a
decoder-only batch and counts lengths and n-grams over the padding).
"""

import json
from pathlib import Path

import numpy as np
import pytest

import kzoo

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

PRESETS = Path(kzoo.presets.builtin_presets_dir())


def preset_settings(name, task=None):
    """A shipped preset's generation settings (a task's, for T5)."""
    settings = json.loads((PRESETS / name / "generation.json").read_text())
    tasks = settings.pop("task_specific_params", {})
    if task is not None:
        settings.update({k: v for k, v in tasks[task].items()
                         if k != "prefix"})
    return settings


class Case:
    def __init__(self, hf_model, lm, inputs, hf_inputs, new_from, pad):
        self.hf_model, self.lm = hf_model, lm
        self.inputs, self.hf_inputs = inputs, hf_inputs
        self.new_from = new_from  # where new tokens start (kzoo, hf)
        self.pad = pad

    def hf_generate(self, **overrides):
        with torch.no_grad():
            out = self.hf_model.generate(**self.hf_inputs, **overrides)
        return out[:, self.new_from[1]:].tolist()

    def compare(self, got, expected):
        """New tokens equal; transformers pads what kzoo ends."""
        for row, (ids, hf_ids) in enumerate(zip(got, expected)):
            new = ids[self.new_from[0] if isinstance(self.new_from[0], int)
                      else self.new_from[0][row]:]
            assert hf_ids[:len(new)] == new, (row, new, hf_ids)
            assert all(t == self.pad for t in hf_ids[len(new):]), \
                (row, new, hf_ids)
        return [len(ids) for ids in got]


def _right_padded(rows, pad):
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, :len(row)] = torch.tensor(row)
        mask[i, :len(row)] = 1
    return {"input_ids": ids, "attention_mask": mask}


def _converted(tmp_path_factory, hf_model, settings, lm_cls):
    hf_model.generation_config = transformers.GenerationConfig(**settings)
    folder = tmp_path_factory.mktemp("hf_checkpoint")
    hf_model.save_pretrained(folder)
    return lm_cls.from_preset(str(folder), preprocessor=None)


def _bart(tmp_path_factory):
    from bart_testing import HF_CONFIGS, make_hf_bart
    settings = preset_settings("bart_large_cnn_en")
    # A position table long enough for max_length=142.
    hf_model = make_hf_bart("odd24", max_position_embeddings=144)
    lm = _converted(tmp_path_factory, hf_model, settings, kzoo.BartSeq2SeqLM)
    rng = np.random.default_rng(7)
    vocabulary_size = HF_CONFIGS["odd24"]["vocab_size"]
    sources = [[0] + rng.integers(4, vocabulary_size, n).tolist() + [2]
               for n in (3, 12)]
    return Case(hf_model, lm, sources, _right_padded(sources, 1), (1, 1),
                pad=1)


def _t5(tmp_path_factory):
    from t5_testing import HF_CONFIGS, make_hf_t5
    settings = preset_settings("t5_small_multi", "summarization")
    hf_model = make_hf_t5("v1_1")
    lm = _converted(tmp_path_factory, hf_model, settings, kzoo.T5Seq2SeqLM)
    rng = np.random.default_rng(7)
    vocabulary_size = HF_CONFIGS["v1_1"]["vocab_size"]
    sources = [rng.integers(2, vocabulary_size, n).tolist() + [1]
               for n in (4, 9)]
    return Case(hf_model, lm, sources, _right_padded(sources, 0), (1, 1),
                pad=0)


# GPT-2: beams and the controls no GPT-2 preset sets (ids of the tiny
# vocabulary; 1 is its end of text).
GPT2_CONTROLS = {"num_beams": 3, "repetition_penalty": 1.3,
                 "no_repeat_ngram_size": 2, "min_new_tokens": 4,
                 "bad_words_ids": [[5], [7, 8]], "forced_eos_token_id": 1,
                 "max_new_tokens": 12}


def _gpt2(tmp_path_factory):
    from gpt2_testing import EOS, HF_CONFIGS, PAD, hf_pair, random_prompts
    hf_model, lm = hf_pair("a")
    prompts = random_prompts([6, 6, 6], HF_CONFIGS["a"]["vocab_size"],
                             seed=3)
    hf_model.generation_config = transformers.GenerationConfig(
        bos_token_id=EOS, eos_token_id=EOS, pad_token_id=PAD,
        **GPT2_CONTROLS)
    lm.generation_config = dict(GPT2_CONTROLS)
    hf_inputs = {"input_ids": torch.tensor(prompts),
                 "attention_mask": torch.ones((3, 6), dtype=torch.long)}
    return Case(hf_model, lm, prompts, hf_inputs, (6, 6), pad=PAD)


BUILDERS = {"bart": _bart, "t5": _t5, "gpt2": _gpt2}
LARGE = pytest.mark.large  # hundreds of steps, one program each


def _names(large):
    return [pytest.param(name, marks=LARGE) if name in large else name
            for name in sorted(BUILDERS)]


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    transformers.logging.set_verbosity_error()
    made = {}

    def case(name):
        if name not in made:
            made[name] = BUILDERS[name](tmp_path_factory)
        return made[name]
    return case


@pytest.mark.parametrize("name", _names(large=("t5",)))
def test_checkpoint_settings_decode_as_transformers(cases, name):
    case = cases(name)
    got = case.lm.generate(case.inputs)  # the checkpoint's settings alone
    expected = case.hf_generate()
    lengths = case.compare(got, expected)
    print(f"\n{name}: {case.lm.generation_config} -> lengths {lengths}")
    if name == "bart":
        # 4 beams, 56 to 142 tokens, <s> first, </s> last.
        assert all(56 <= n <= 142 for n in lengths)
        assert all(ids[1] == 0 and ids[-1] == 2 for ids in got)


@pytest.mark.parametrize("name", _names(large=("t5", "bart")))
def test_controls_in_greedy_decoding_as_transformers(cases, name):
    case = cases(name)
    got = case.lm.generate(case.inputs, sampler="greedy")
    case.compare(got, case.hf_generate(num_beams=1))
