"""Samplers: how the next token is chosen from the model's logits.

A token sampler maps `logits (batch, vocab)` (and, if it is random,
uniform noise of the same shape) to token ids `(batch,)`. Randomness enters
as noise drawn by the generation loop from an explicit seed, so a sampler
is a pure function (keras.ops only) that compiles on every backend and
repeats itself exactly for the same seed. Random choices use the Gumbel-max
trick: `argmax(logits + Gumbel noise)` is a draw from `softmax(logits)`.

`BeamSampler` is different: beam search keeps several hypotheses per
prompt, so it has its own loop (`kzoo.generation.loop.beam_search_loop`);
the object only carries its settings.

Samplers by name (`get_sampler`): "greedy", "random", "top_k", "top_p",
"beam".
"""

import math
import numbers

from keras import ops

_NEG_INF = -1e9


def whole_number(name, value, minimum=1, owner="generate()", below=None):
    """`value` as an int, when it is a whole number >= `minimum` (not a
    bool, not 2.5, not "3": `int()` would quietly truncate or parse them);
    else a ValueError naming `name` (`below`: the message for an int under
    `minimum`, "{value}" filled in)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(
            f"{owner}: {name} must be a whole number (an int) >= {minimum}; "
            f"got {value!r} ({type(value).__name__}).")
    if value < minimum:
        raise ValueError(
            below.format(value=value) if below else
            f"{owner}: {name} must be >= {minimum}, got {value}.")
    return int(value)


def _finite(name, value, owner):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            not math.isfinite(value):
        raise ValueError(
            f"{owner}: {name} must be a finite number; got {value!r} "
            f"({type(value).__name__}).")
    return float(value)


def gumbel_noise(uniform):
    """Standard Gumbel noise from uniform(0, 1) noise."""
    tiny = 1e-20
    uniform = ops.clip(uniform, tiny, 1.0 - 1e-7)
    return -ops.log(-ops.log(uniform))


class Sampler:
    """Base class. Subclasses set `name`, `needs_noise`, implement
    `__call__(logits, noise)` and list their arguments in `get_config`.

    Example:
    ```python
    from kzoo import generation

    class Lowest(generation.Sampler):
        # The least likely token (a toy: samplers map logits to ids).

        name = "lowest"

        def __call__(self, logits, noise=None):
            return keras.ops.argmin(logits, axis=-1)

    ids = Lowest()(keras.ops.convert_to_tensor([[0.1, 2.0, -1.0]]))
    assert keras.ops.convert_to_numpy(ids).tolist() == [2]
    ```
    """

    name = None
    needs_noise = False
    is_beam = False

    def __call__(self, logits, noise=None):
        raise NotImplementedError

    def get_config(self):
        return {}

    def cache_key(self):
        """Hashable: equal keys share one compiled generate function."""
        return (type(self).__name__,) + tuple(sorted(self.get_config().items()))

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


def _check_temperature(temperature, owner):
    temperature = _finite("temperature", temperature, owner)
    if not temperature > 0:
        raise ValueError(
            f"{owner}: temperature must be > 0, got {temperature} (1.0 "
            "samples from the model's distribution; lower is greedier).")
    return temperature


class GreedySampler(Sampler):
    """The most likely token, every step (deterministic).

    Example:
    ```python
    from kzoo import generation
    logits = keras.ops.convert_to_tensor([[0.1, 2.0, -1.0], [3.0, 0.0, 0.0]])
    ids = generation.GreedySampler()(logits)
    assert keras.ops.convert_to_numpy(ids).tolist() == [1, 0]
    ```
    """

    name = "greedy"

    def __call__(self, logits, noise=None):
        return ops.cast(ops.argmax(logits, axis=-1), "int32")


class RandomSampler(Sampler):
    """A draw from `softmax(logits / temperature)` over the whole
    vocabulary.

    Example:
    ```python
    from kzoo import generation
    logits = keras.ops.convert_to_tensor([[0.0, 0.0, -1e9]])
    noise = keras.random.uniform((1, 3), seed=0)   # the loop draws it
    ids = generation.RandomSampler(temperature=0.7)(logits, noise)
    assert int(keras.ops.convert_to_numpy(ids)[0]) in (0, 1)
    ```
    """

    name = "random"
    needs_noise = True

    def __init__(self, temperature=1.0):
        self.temperature = _check_temperature(temperature, "RandomSampler")

    def __call__(self, logits, noise=None):
        scores = logits / self.temperature + gumbel_noise(noise)
        return ops.cast(ops.argmax(scores, axis=-1), "int32")

    def get_config(self):
        return {"temperature": self.temperature}


class TopKSampler(Sampler):
    """A draw among the `k` most likely tokens only (Fan et al., 2018),
    from `softmax(logits / temperature)` renormalised over them.

    Example:
    ```python
    from kzoo import generation
    logits = keras.ops.convert_to_tensor([[5.0, 4.0, -3.0, -4.0]])
    noise = keras.random.uniform((1, 4), seed=0)
    ids = generation.TopKSampler(k=2)(logits, noise)
    assert int(keras.ops.convert_to_numpy(ids)[0]) in (0, 1)   # the top 2
    ```
    """

    name = "top_k"
    needs_noise = True

    def __init__(self, k=5, temperature=1.0):
        self.k = whole_number("k", k, 1, "TopKSampler",
                              below="TopKSampler: top_k needs k >= 1, got "
                                    "{value}.")
        self.temperature = _check_temperature(temperature, "TopKSampler")

    def __call__(self, logits, noise=None):
        k = min(self.k, logits.shape[-1])
        values, indices = ops.top_k(logits, k=k)  # (batch, k), sorted
        scores = values / self.temperature + gumbel_noise(noise[:, :k])
        choice = ops.argmax(scores, axis=-1)
        chosen = ops.take_along_axis(
            indices, ops.expand_dims(ops.cast(choice, "int32"), -1), axis=-1)
        return ops.cast(ops.squeeze(chosen, -1), "int32")

    def get_config(self):
        return {"k": self.k, "temperature": self.temperature}


class TopPSampler(Sampler):
    """Nucleus sampling (Holtzman et al., 2019): a draw among the smallest
    set of most likely tokens whose probability reaches `p`, after
    `temperature`.

    Args:
        p: the nucleus' probability mass, in (0, 1].
        temperature: logits are divided by it first.
        k: optionally look only at the `k` most likely tokens (sorting the
            whole vocabulary every step is the expensive part); `None`
            sorts all of it, which is exact.

    Example:
    ```python
    from kzoo import generation
    logits = keras.ops.log(keras.ops.convert_to_tensor([[0.7, 0.25, 0.05]]))
    noise = keras.random.uniform((1, 3), seed=0)
    ids = generation.TopPSampler(p=0.9)(logits, noise)
    assert int(keras.ops.convert_to_numpy(ids)[0]) in (0, 1)   # 0.7 + 0.25
    ```
    """

    name = "top_p"
    needs_noise = True

    def __init__(self, p=0.9, temperature=1.0, k=None):
        p = _finite("p", p, "TopPSampler (top_p)")
        if not 0.0 < p <= 1.0:
            raise ValueError(
                f"TopPSampler: top_p needs 0 < p <= 1, got {p}.")
        self.p = p
        self.temperature = _check_temperature(temperature, "TopPSampler")
        self.k = None if k is None else whole_number("k", k, 1,
                                                     "TopPSampler")

    def __call__(self, logits, noise=None):
        vocabulary_size = logits.shape[-1]
        k = vocabulary_size if self.k is None else min(self.k, vocabulary_size)
        values, indices = ops.top_k(logits / self.temperature, k=k)
        probabilities = ops.softmax(values, axis=-1)
        # A token is in the nucleus when the mass strictly before it is < p;
        # the most likely token always is.
        mass_before = ops.cumsum(probabilities, axis=-1) - probabilities
        in_nucleus = ops.less(mass_before, self.p)
        scores = ops.where(in_nucleus, values, _NEG_INF)
        scores = scores + gumbel_noise(noise[:, :k])
        choice = ops.argmax(scores, axis=-1)
        chosen = ops.take_along_axis(
            indices, ops.expand_dims(ops.cast(choice, "int32"), -1), axis=-1)
        return ops.cast(ops.squeeze(chosen, -1), "int32")

    def get_config(self):
        return {"p": self.p, "temperature": self.temperature, "k": self.k}


class BeamSampler(Sampler):
    """Beam search: keep the `num_beams` best partial sequences by summed
    log-probability; return the best finished one.

    The bookkeeping follows Hugging Face `transformers` (its vectorised beam
    search of 2025): each step looks at the `2 * num_beams` best
    continuations, so `num_beams` stay alive when some hit a stop token;
    finished hypotheses score `sum log p / generated_length **
    length_penalty`.

    Args:
        num_beams: beams per prompt.
        length_penalty: exponent of the length normalisation; > 0 favours
            longer sequences, < 0 shorter ones.
        early_stopping: `False` (stop when no running beam can beat the
            finished ones, judged at the current length), `True` (stop once
            `num_beams` hypotheses finished) or `"never"` (judge at the
            longest possible length).
        return_all_beams: return every beam (best first) and their scores
            instead of the best sequence only.

    Example:
    ```python
    # A causal LM's generate takes it (or sampler="beam"):
    backbone = kzoo.GPT2Backbone.from_preset(
        "gpt2", load_weights=False, num_layers=1, num_heads=2, hidden_dim=32,
        intermediate_dim=64)
    lm = kzoo.GPT2CausalLM(backbone, preprocessor=kzoo.GPT2CausalLMPreprocessor
                           .from_preset("gpt2", sequence_length=16))
    text = lm.generate("It is a truth", max_new_tokens=4,
                       sampler=kzoo.generation.BeamSampler(num_beams=3))
    assert text.startswith("It is a truth")
    ```
    """

    name = "beam"
    is_beam = True

    def __init__(self, num_beams=4, length_penalty=1.0, early_stopping=False,
                 return_all_beams=False):
        num_beams = whole_number("num_beams", num_beams, 1,
                                 "BeamSampler (beam search)")
        length_penalty = _finite("length_penalty", length_penalty,
                                 "BeamSampler")
        if early_stopping not in (True, False, "never"):
            raise ValueError(
                "early_stopping must be True, False or 'never', got "
                f"{early_stopping!r}.")
        self.num_beams = int(num_beams)
        self.length_penalty = float(length_penalty)
        self.early_stopping = early_stopping
        self.return_all_beams = bool(return_all_beams)

    def get_config(self):
        return {"num_beams": self.num_beams,
                "length_penalty": self.length_penalty,
                "early_stopping": self.early_stopping,
                "return_all_beams": self.return_all_beams}


SAMPLERS = {
    "greedy": GreedySampler,
    "random": RandomSampler,
    "top_k": TopKSampler,
    "top_p": TopPSampler,
    "beam": BeamSampler,
}


def get_sampler(sampler):
    """A sampler from a name ("top_k"), a `{"name": ..., **args}` dict, or
    a `Sampler` (returned as is).

    Example:
    ```python
    from kzoo import generation
    assert isinstance(generation.get_sampler("top_k"), generation.TopKSampler)
    sampler = generation.get_sampler({"name": "top_p", "p": 0.8})
    assert sampler.p == 0.8
    ```
    """
    if isinstance(sampler, Sampler):
        return sampler
    if isinstance(sampler, str):
        name, kwargs = sampler, {}
    elif isinstance(sampler, dict) and "name" in sampler:
        kwargs = dict(sampler)
        name = kwargs.pop("name")
    else:
        raise ValueError(
            f"sampler must be a name ({', '.join(SAMPLERS)}), a dict with a "
            f"'name', or a kzoo.generation.Sampler; got {sampler!r}.")
    if name not in SAMPLERS:
        import difflib
        close = difflib.get_close_matches(str(name), SAMPLERS, n=2)
        hint = f" Did you mean {' or '.join(map(repr, close))}?" if close \
            else ""
        raise ValueError(
            f"Unknown sampler {name!r}.{hint} Known samplers: "
            f"{', '.join(SAMPLERS)}.")
    sampler_cls = SAMPLERS[name]
    import inspect
    known = [p for p in inspect.signature(sampler_cls).parameters]
    unknown = [key for key in kwargs if key not in known]
    if unknown:
        raise ValueError(
            f"Sampler {name!r} ({sampler_cls.__name__}) takes "
            f"{', '.join(known) or 'no arguments'}; got unknown "
            f"{', '.join(map(repr, unknown))}.")
    return sampler_cls(**kwargs)
