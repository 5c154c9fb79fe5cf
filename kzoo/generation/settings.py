"""Generation settings: a checkpoint's own (`transformers`' key names, as
its `generation_config.json` has them; a preset keeps them in
`generation.json`, the model in `generation_config`) merged with what the
caller passes, and checked before any work.

The caller wins key by key. Of a checkpoint's settings these are applied
(`APPLIED`); the others (token ids the tokenizer already gives,
`task_specific_params`, ...) are kept for `kzoo info` to show:

    max_length, max_new_tokens          how long (unless the caller says)
    num_beams, length_penalty,          beam search (when the caller names
    early_stopping                      no sampler, or names "beam" alone)
    min_length, min_new_tokens,         the decoding controls of
    no_repeat_ngram_size,               `controls.py`
    repetition_penalty,
    forced_bos_token_id,
    forced_eos_token_id, bad_words_ids

A checkpoint's `min_length` longer than a `max_length` the caller asks
for is shortened to it (the caller's length wins, as transformers lets
`max_length` cut short); contradictions among the caller's own values, or
within the checkpoint's, are errors.
"""

import math
import numbers

from kzoo.generation.controls import DecodingControls
from kzoo.generation.samplers import get_sampler, whole_number

# The decoding controls, each a `generate` keyword argument.
CONTROLS = ("min_length", "min_new_tokens", "no_repeat_ngram_size",
            "repetition_penalty", "forced_bos_token_id",
            "forced_eos_token_id", "bad_words_ids")
BEAM_SETTINGS = ("num_beams", "length_penalty", "early_stopping")
LENGTHS = ("max_length", "max_new_tokens")
APPLIED = LENGTHS + BEAM_SETTINGS + CONTROLS
# The file a preset keeps them in.
FILENAME = "generation.json"


def check_controls_names(controls):
    """Unknown keyword arguments of `generate` -> one clear error."""
    unknown = sorted(set(controls) - set(CONTROLS))
    if unknown:
        import difflib
        hints = [difflib.get_close_matches(name, CONTROLS, n=1)
                 for name in unknown]
        hint = "".join(f" (did you mean {h[0]!r}?)" for h in hints if h)
        raise TypeError(
            f"generate() got unknown argument(s) "
            f"{', '.join(map(repr, unknown))}{hint}; its decoding controls "
            f"are {', '.join(CONTROLS)}.")


def checked_config(config, owner="generation_config"):
    """A model's settings: a dict (or None: none), copied."""
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise ValueError(
            f"{owner} must be a dict of transformers' generation settings "
            f"(e.g. {{'num_beams': 4}}) or None; got "
            f"{type(config).__name__}.")
    return dict(config)


def resolve_sampler(sampler, settings):
    """The caller's sampler; None: beam search when the settings ask for
    beams, else greedy. A sampler named "beam" (alone, or in a dict) takes
    the beam settings it does not give from `settings`."""
    if sampler is None:
        if "num_beams" in settings:
            beams = whole_number("num_beams", settings["num_beams"], 1,
                                 "generate() (the model's generation "
                                 "settings)")
            sampler = "beam" if beams > 1 else "greedy"
        else:
            sampler = "greedy"
    named_beam = sampler == "beam" if isinstance(sampler, str) else (
        isinstance(sampler, dict) and sampler.get("name") == "beam")
    if named_beam:
        given = {} if isinstance(sampler, str) else dict(sampler)
        sampler = {"name": "beam",
                   **{key: settings[key] for key in BEAM_SETTINGS
                      if key in settings},
                   **given}
    return get_sampler(sampler)


def requested_lengths(max_length, max_new_tokens, settings):
    """`(max_length, max_new_tokens)`: the caller's, else the
    settings'."""
    if max_length is not None or max_new_tokens is not None:
        return max_length, max_new_tokens
    return settings.get("max_length"), settings.get("max_new_tokens")


def _count(name, value, where):
    return whole_number(name, value, 0, f"generate() ({where})")


def _token_id(name, value, vocabulary_size, where):
    token = whole_number(name, value, 0, f"generate() ({where})")
    if vocabulary_size is not None and token >= vocabulary_size:
        raise ValueError(
            f"generate() ({where}): {name}={token} is outside the "
            f"vocabulary [0, {vocabulary_size - 1}]; pass an id the "
            "tokenizer makes.")
    return token


def _token_ids(name, value, vocabulary_size, where):
    values = value if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise ValueError(f"generate() ({where}): {name} is empty; pass an "
                         "id, a list of ids, or None.")
    return tuple(_token_id(name, v, vocabulary_size, where) for v in values)


def _bad_words(value, vocabulary_size, where):
    if not isinstance(value, (list, tuple)) or not value or not all(
            isinstance(w, (list, tuple)) and w for w in value):
        raise ValueError(
            f"generate() ({where}): bad_words_ids must be a non-empty list "
            f"of non-empty lists of token ids; got {value!r}.")
    return tuple(tuple(_token_id("bad_words_ids", t, vocabulary_size, where)
                       for t in word) for word in value)


def _penalty(value, where):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            not math.isfinite(value) or value <= 0:
        raise ValueError(
            f"generate() ({where}): repetition_penalty must be a number > 0 "
            f"(1.0 is none; > 1 discourages repeats); got {value!r}.")
    return float(value)


def resolve_controls(controls, settings, vocabulary_size, max_length,
                     max_new_tokens, longest_prompt):
    """`DecodingControls` from the caller's `controls` and the model's
    `settings`, every value checked (`max_length`: the resolved decoder
    length; `max_new_tokens`: the caller's or None)."""
    values, origin = {}, {}
    for name in CONTROLS:
        if controls.get(name) is not None:
            values[name], origin[name] = controls[name], "caller"
        elif settings.get(name) is not None:
            values[name], origin[name] = settings[name], "settings"

    def where(name):
        return ("its arguments" if origin[name] == "caller" else
                "the model's generation settings")

    fields = {}
    for name in ("min_length", "min_new_tokens", "no_repeat_ngram_size"):
        if name in values:
            fields[name] = _count(name, values[name], where(name))
    if "repetition_penalty" in values:
        fields["repetition_penalty"] = _penalty(values["repetition_penalty"],
                                                where("repetition_penalty"))
    if "forced_bos_token_id" in values:
        fields["forced_bos_token_id"] = _token_id(
            "forced_bos_token_id", values["forced_bos_token_id"],
            vocabulary_size, where("forced_bos_token_id"))
    if "forced_eos_token_id" in values:
        fields["forced_eos_token_ids"] = _token_ids(
            "forced_eos_token_id", values["forced_eos_token_id"],
            vocabulary_size, where("forced_eos_token_id"))
    if "bad_words_ids" in values:
        fields["bad_words_ids"] = _bad_words(values["bad_words_ids"],
                                             vocabulary_size,
                                             where("bad_words_ids"))
    # Minimum lengths against the maximum.
    for name, limit, what in (
            ("min_length", max_length, f"max_length={max_length}"),
            ("min_new_tokens", max_new_tokens,
             f"max_new_tokens={max_new_tokens}")):
        if name not in fields or limit is None or fields[name] <= limit:
            continue
        if origin[name] == "settings":
            fields[name] = limit  # the caller's maximum wins
            continue
        raise ValueError(
            f"generate(): {name}={fields[name]} is more than {what}, so no "
            f"output could satisfy both; lower {name} or raise the maximum.")
    if "min_new_tokens" in fields and origin["min_new_tokens"] == "caller" \
            and longest_prompt + fields["min_new_tokens"] > max_length:
        raise ValueError(
            f"generate(): min_new_tokens={fields['min_new_tokens']} after a "
            f"{longest_prompt}-token prompt is more than "
            f"max_length={max_length} allows; lower min_new_tokens or raise "
            "max_length.")
    return DecodingControls(**fields)
