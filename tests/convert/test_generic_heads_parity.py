"""kzoo's generic heads vs `transformers`' `*ForTokenClassification` and
`*ForMultipleChoice`, for every encoder family, on each family's odd
random checkpoint (the one its own parity test uses): HF -> kzoo through
the converter gives the same logits within 1e-5 on the backend
KERAS_BACKEND names, and kzoo -> HF gives back every tensor bit for bit,
which `transformers` loads with the same logits."""

import keras
import numpy as np
import pytest

import kzoo
from family_references import families_converting, reference
from kzoo.convert import export_hf
from kzoo.convert.safetensors import load_file

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
BATCH, CHOICES, SEQ = 2, 3, 9
HEADS = {"ForTokenClassification": kzoo.TokenClassifier,
         "ForMultipleChoice": kzoo.MultipleChoice}
HF_NAMES = {"token_ids": "input_ids", "padding_mask": "attention_mask",
            "segment_ids": "token_type_ids"}
# Every family whose converter reads the head, by its HF architecture
# name (e.g. ("albert", "AlbertForMultipleChoice")); each family's odd
# checkpoint and inputs are its REFERENCE (tests/family_references.py).
CASES = [(family, architecture) for head in HEADS
         for family, architecture in families_converting(head).items()]


def test_every_family_with_the_generic_heads_is_covered():
    """The families come from the converters: BERT's and its kin's."""
    covered = {family for family, _ in CASES}
    assert {"bert", "albert", "roberta", "xlm_roberta", "distil_bert",
            "electra", "deberta_v3"} <= covered
    assert not covered & {"gpt2", "t5", "bart", "elmo", "awd_lstm"}


def hf_logits(model, inputs):
    with torch.no_grad():
        out = model(**{HF_NAMES[k]: torch.tensor(v).long()
                       for k, v in inputs.items()})
    return out.logits.numpy()


def case_inputs(family, head, config):
    """Token classification: `(batch, seq)`; multiple choice: the same
    random rows as `(batch, choices, seq)`."""
    make_inputs = reference(family).odd_inputs
    if head == "ForTokenClassification":
        return make_inputs(config, 3, SEQ)
    rows = make_inputs(config, BATCH * CHOICES, SEQ)
    return {k: v.reshape(BATCH, CHOICES, -1) for k, v in rows.items()}


@pytest.mark.parametrize("family,architecture", CASES)
def test_head_parity_and_round_trip(family, architecture, tmp_path):
    head = next(head for head in HEADS if architecture.endswith(head))
    hf_model = reference(family).odd_model(architecture)
    folder = tmp_path / "hf"
    hf_model.save_pretrained(folder)
    inputs = case_inputs(family, head, hf_model.config)
    expected = hf_logits(hf_model, inputs)

    # HF -> kzoo: the converter builds the generic head on the family's
    # backbone, with every head tensor used.
    task = HEADS[head].from_preset(str(folder), preprocessor=None)
    assert type(task) is HEADS[head]
    inputs = {k: v for k, v in inputs.items() if k in task.input_names}
    actual = keras.ops.convert_to_numpy(task(inputs))
    assert actual.shape == expected.shape
    difference = float(np.max(np.abs(actual - expected)))
    print(f"{architecture}: max abs {difference:.2e}")
    assert difference <= ATOL, (architecture, difference)
    if head == "ForTokenClassification":
        assert task.num_classes == hf_model.config.num_labels

    # kzoo -> HF: the same tensors bit for bit; transformers loads them.
    out = export_hf(task, tmp_path / "exported", verbose=False)
    original = {k: v.numpy() for k, v in hf_model.state_dict().items()}
    exported = load_file(out / "model.safetensors")
    assert set(exported) <= set(original), set(exported) - set(original)
    missing = {k for k in set(original) - set(exported)
               if not k.endswith(("position_ids", "token_type_ids"))}
    assert not missing, missing
    for name, value in exported.items():
        np.testing.assert_array_equal(value, original[name], err_msg=name)
    reloaded = getattr(transformers, architecture).from_pretrained(
        out, attn_implementation="eager").eval()
    # (The tensors are equal bit for bit above; torch's own kernels may
    # differ in the last bit between two model instances.)
    np.testing.assert_allclose(hf_logits(reloaded, inputs), expected,
                               rtol=0, atol=1e-6)
