"""What a backbone is called with: names, shapes, dtypes, id ranges,
lengths. Parametrised over every registered backbone (inputs made from its
`input_names` and `id_limits`)."""

import numpy as np
import pytest

from bad_input_models import shared_backbone
from kzoo.core.backbone import Backbone
from text_testing import registered

BACKBONES = registered(Backbone)


def input_shape(backbone, name, batch, seq):
    """`(batch, seq, ...)`: the backbone's own fixed trailing sizes (ELMo's
    50 characters per token)."""
    shape = {t.name: t.shape for t in backbone.inputs}.get(name)
    rest = tuple(d or 3 for d in shape[2:]) if shape is not None else ()
    return (batch, seq) + rest


def good_inputs(backbone, batch=2, seq=5):
    """Valid inputs: small ids in every id input, every other input 1."""
    ids = backbone.id_limits()
    return {name: (np.ones(input_shape(backbone, name, batch, seq), "int32")
                   if name not in ids else
                   np.zeros(input_shape(backbone, name, batch, seq), "int32")
                   + min(1, ids[name] - 1))
            for name in backbone.input_names}


def id_input(backbone):
    """The input the id cases change: token_ids, or the backbone's first
    id input (ELMo's character_ids)."""
    ids = backbone.id_limits()
    return "token_ids" if "token_ids" in ids else next(iter(ids))


def mask_input(backbone):
    """The input the mask cases change: padding_mask, or the backbone's
    first one that is not ids (an encoder-decoder's
    encoder_padding_mask)."""
    if "padding_mask" in backbone.input_names:
        return "padding_mask"
    ids = backbone.id_limits()
    return next(name for name in backbone.input_names if name not in ids)


def applies(backbone_cls, case):
    """Cases about a position table only for backbones that have one."""
    import inspect
    if case == "too_long":
        return "max_sequence_length" in inspect.signature(
            backbone_cls).parameters
    return True


def cases():
    def change(name, fn):
        def make(backbone, inputs):
            key = name or id_input(backbone)
            return {**inputs, key: fn(backbone, inputs[key])}
        return make
    ids = "([a-z_]*token_ids|character_ids)"
    return {
        "float_token_ids": (change(None,
                                   lambda b, x: x.astype("float32") + 0.7),
                            rf"`{ids}` must hold integer ids; got float32"),
        "string_token_ids": (change(None, lambda b, x: x.astype(str)),
                             f"`{ids}` must hold integer ids"),
        "token_id_too_large": (change(
            None, lambda b, x: x + max(b.id_limits().values())),
            rf"{ids} holds \d+, outside \[0, \d+\]"),
        "negative_token_id": (change(None, lambda b, x: x - 5),
                              rf"{ids} holds -\d+, outside"),
        "unbatched": (lambda b, inputs: {k: v[0] for k, v in inputs.items()},
                      r"must be \d-D \(batch, [a-z_]*sequence[a-z, ]*\); "
                      r"got shape \(5,"),
        "mismatched_shapes": (lambda b, inputs: {
            **inputs, mask_input(b): np.ones((2, 7), "int32")},
                              "every input must have the batch and "
                              "sequence length of"),
        "python_lists": (change(None, lambda b, x: x.tolist()),
                         "got a Python list"),
        "too_long": (lambda b, inputs: {
            k: np.zeros((1, b.max_sequence_length + 1), "int32")
            for k in inputs}, "is longer than .*max_sequence_length"),
        "missing_input": (lambda b, inputs: {
            k: v for k, v in inputs.items() if k != mask_input(b)},
            r"missing: \['(encoder_)?padding_mask'\]"),
        "misspelled_input": (lambda b, inputs: {
            ("input_ids" if k == id_input(b) else k): v
            for k, v in inputs.items()}, r"unexpected: \['input_ids'\]"),
        "not_a_dict": (lambda b, inputs: inputs[id_input(b)],
                       "takes a dict with keys"),
        "none": (lambda b, inputs: None, "takes a dict with keys.*got None"),
    }


CASES = cases()


@pytest.mark.parametrize("backbone_cls,case", [
    pytest.param(cls, case, id=f"{cls.__name__}-{case}")
    for cls in BACKBONES for case in sorted(CASES) if applies(cls, case)])
def test_bad_call(backbone_cls, case):
    backbone = shared_backbone(backbone_cls)
    make, phrase = CASES[case]
    bad = make(backbone, good_inputs(backbone))
    with pytest.raises(ValueError, match=phrase):
        backbone(bad)


@pytest.mark.parametrize("case", ["float_token_ids", "token_id_too_large",
                                  "none"])
@pytest.mark.parametrize("backbone_cls", BACKBONES,
                         ids=lambda c: c.__name__)
def test_bad_predict(backbone_cls, case):
    """`predict` checks the concrete arrays before its compiled step (where
    an id out of range would be clamped without a word on JAX)."""
    backbone = shared_backbone(backbone_cls)
    make, phrase = CASES[case]
    with pytest.raises(ValueError, match=phrase):
        backbone.predict(make(backbone, good_inputs(backbone)), verbose=0)


def test_extra_id_input_out_of_range():
    """Every id input the family declares (`id_limits`), not only
    token_ids: BERT's segment ids."""
    for cls in BACKBONES:
        backbone = shared_backbone(cls)
        for name, limit in backbone.id_limits().items():
            if name == "token_ids":
                continue
            inputs = good_inputs(backbone)
            inputs[name] = inputs[name] + limit
            with pytest.raises(ValueError,
                               match=rf"{name} holds {limit + 1}, outside"):
                backbone(inputs)
