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
from kzoo.convert import export_hf
from kzoo.convert.safetensors import load_file
from convert_helpers import make_hf_bert
from convert_helpers import random_inputs as bert_inputs
from test_albert_parity import make_hf_albert
from test_albert_parity import random_inputs as albert_inputs
from test_deberta_v3_parity import make_hf_deberta
from test_deberta_v3_parity import random_inputs as deberta_inputs
from test_distil_bert_parity import make_hf_distil_bert
from test_distil_bert_parity import random_inputs as distil_bert_inputs
from test_electra_parity import make_hf_electra
from test_electra_parity import random_inputs as electra_inputs
from test_roberta_parity import make_hf_roberta
from test_roberta_parity import random_inputs as roberta_inputs
from test_xlm_roberta_parity import CONFIGS as XLMR_CONFIGS

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
BATCH, CHOICES, SEQ = 2, 3, 9
# family: (HF architecture prefix, make(architecture), inputs(config, n)).
FAMILIES = {
    "bert": ("Bert", lambda a: make_hf_bert(a, "odd36"),
             lambda c, n: bert_inputs(c, batch=n, seq=SEQ)),
    "albert": ("Albert", lambda a: make_hf_albert(a, "groups"),
               lambda c, n: albert_inputs(c, batch=n, seq=SEQ)),
    "roberta": ("Roberta", lambda a: make_hf_roberta(a, "odd36"),
                lambda c, n: roberta_inputs(c, batch=n, seq=SEQ)),
    "xlm_roberta": ("XLMRoberta", lambda a: make_hf_roberta(
        a, "odd39", configs=XLMR_CONFIGS),
        lambda c, n: roberta_inputs(c, batch=n, seq=SEQ)),
    "distil_bert": ("DistilBert", lambda a: make_hf_distil_bert(a, "odd36"),
                    lambda c, n: distil_bert_inputs(c, batch=n, seq=SEQ)),
    "electra": ("Electra", lambda a: make_hf_electra(a, "odd36"),
                lambda c, n: electra_inputs(c, batch=n, seq=SEQ)),
    "deberta_v3": ("DebertaV2", lambda a: make_hf_deberta(a, "odd36"),
                   lambda c, n: deberta_inputs(c, SEQ, batch=n)),
}
HEADS = {"ForTokenClassification": kzoo.TokenClassifier,
         "ForMultipleChoice": kzoo.MultipleChoice}
HF_NAMES = {"token_ids": "input_ids", "padding_mask": "attention_mask",
            "segment_ids": "token_type_ids"}
CASES = [(family, head) for family in FAMILIES for head in HEADS]


def hf_logits(model, inputs):
    with torch.no_grad():
        out = model(**{HF_NAMES[k]: torch.tensor(v).long()
                       for k, v in inputs.items()})
    return out.logits.numpy()


def case_inputs(family, head, config):
    """Token classification: `(batch, seq)`; multiple choice: the same
    random rows as `(batch, choices, seq)`."""
    make_inputs = FAMILIES[family][2]
    if head == "ForTokenClassification":
        return make_inputs(config, 3)
    rows = make_inputs(config, BATCH * CHOICES)
    return {k: v.reshape(BATCH, CHOICES, -1) for k, v in rows.items()}


@pytest.mark.parametrize("family,head", CASES)
def test_head_parity_and_round_trip(family, head, tmp_path):
    prefix, make, _ = FAMILIES[family]
    architecture = prefix + head
    hf_model = make(architecture)
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
