"""Reading what `generate` is given (text, token ids, or a dict of padded
arrays) into lists of token ids, with the checks that come before any work.

Shared by the decoder-only driver (`generate.py`, the prompts) and the
encoder-decoder driver (`seq2seq.py`, the encoder inputs).
"""

import numpy as np


def _is_text(x):
    return isinstance(x, (str, bytes))


def to_numpy(x):
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        try:
            return x.numpy()
        except Exception:  # noqa: BLE001 - torch tensors need .cpu()
            pass
    try:
        import keras
        if keras.ops.is_tensor(x):
            return keras.ops.convert_to_numpy(x)
    except Exception:  # noqa: BLE001
        pass
    return x


def prompt_kind(prompts):
    """("text" | "ids" | "dict", single?)"""
    if isinstance(prompts, dict):
        return "dict", False
    if _is_text(prompts):
        return "text", True
    try:
        import tensorflow as tf
        if isinstance(prompts, (tf.Tensor, tf.RaggedTensor)):
            if prompts.dtype == tf.string:
                return "text", prompts.shape.rank == 0
            prompts = prompts.to_list() if isinstance(
                prompts, tf.RaggedTensor) else prompts.numpy()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(prompts, np.ndarray):
        if prompts.dtype.kind in "USO":
            return "text", prompts.ndim == 0
        if prompts.ndim == 1:
            return "ids", True
        return "ids", False
    if isinstance(prompts, (list, tuple)):
        if len(prompts) == 0:
            raise ValueError(
                "generate() got an empty list of prompts; pass at least one "
                "prompt (a string, or a list of token ids).")
        first = prompts[0]
        if _is_text(first):
            if not all(_is_text(p) for p in prompts):
                raise ValueError("generate() prompts mix strings and other "
                                 "types; pass all strings or all id lists.")
            return "text", False
        if isinstance(first, (int, np.integer)):
            return "ids", True
        return "ids", False
    raise ValueError(
        f"generate() takes a string, a list of strings, token ids (a list "
        f"of ints or of lists of ints, or an int array) or a dict with "
        f"'token_ids' and 'padding_mask'; got {type(prompts).__name__}.")


def id_lists(prompts, kind, single):
    """Token-id prompts (`kind` "ids" or "dict") as lists of ints."""
    if kind == "dict":
        if "token_ids" not in prompts:
            raise ValueError(
                "generate(): a dict of prompts needs 'token_ids' (and "
                f"optionally 'padding_mask'); got keys {sorted(prompts)}.")
        token_ids = np.asarray(to_numpy(prompts["token_ids"]))
        if "padding_mask" in prompts:
            mask = np.asarray(to_numpy(prompts["padding_mask"])).astype(bool)
        else:
            mask = np.ones_like(token_ids, dtype=bool)
        if token_ids.ndim != 2:
            raise ValueError("generate(): 'token_ids' must be (batch, seq).")
        if token_ids.shape[0] == 0:
            raise ValueError("generate() got an empty batch of prompts.")
        return [row[m].tolist() for row, m in zip(token_ids, mask)]
    prompts = to_numpy(prompts)
    if single:
        prompts = [prompts]
    lists = []
    for prompt in prompts:
        prompt = np.asarray(to_numpy(prompt))
        if prompt.ndim != 1 or (prompt.size and prompt.dtype.kind not in "iu"):
            raise ValueError(
                "generate(): each prompt of token ids must be a flat list of "
                f"ints; got an array of shape {prompt.shape} and dtype "
                f"{prompt.dtype}.")
        lists.append([int(t) for t in prompt])
    if not lists:
        raise ValueError("generate() got an empty batch of prompts.")
    return lists


def check_ids(lists, vocabulary_size, noun="Prompt", empty_hint=None):
    """Every list non-empty and inside the vocabulary."""
    empty_hint = empty_hint or (
        "a prompt needs at least one token to condition on (text prompts "
        "get a start token from the preprocessor).")
    for i, ids in enumerate(lists):
        if len(ids) == 0:
            raise ValueError(f"{noun} {i} is empty: {empty_hint}")
        if vocabulary_size is not None:
            low, high = min(ids), max(ids)
            if low < 0 or high >= vocabulary_size:
                raise ValueError(
                    f"{noun} {i} holds token id "
                    f"{high if high >= vocabulary_size else low}, "
                    f"outside the vocabulary [0, {vocabulary_size - 1}].")


def read_prompts(prompts, preprocessor, vocabulary_size, noun="Prompt",
                 empty_hint=None):
    """`(id_lists, kind, single)`: text is tokenized by
    `preprocessor.generate_preprocess(texts)`; ids and dicts are read as
    they are."""
    kind, single = prompt_kind(prompts)
    if kind == "text":
        if preprocessor is None:
            raise ValueError(
                "generate() got text, but the model has no preprocessor to "
                "tokenize it; pass token ids, or build the model with a "
                "preprocessor (e.g. from_preset).")
        texts = [prompts] if single else list(to_numpy(prompts))
        texts = [t.decode("utf-8") if isinstance(t, bytes) else str(t)
                 for t in texts]
        lists = preprocessor.generate_preprocess(texts)
    else:
        lists = id_lists(prompts, kind, single)
    check_ids(lists, vocabulary_size, noun, empty_hint)
    return lists, kind, single
