"""kzoo's BartTextClassifier against `transformers`'
`BartForSequenceClassification` on random checkpoints with odd configs
(a 3-class head; a regression head with its own dropout): logits within
1e-5 for single texts and text pairs of unequal lengths; conversion
HF -> kzoo -> HF bit-exact."""

import numpy as np
import pytest

import kzoo
from bart_testing import HF_CONFIGS, make_hf_bart
from convert_helpers import check_exported_weights, max_abs_differences
from helpers import to_numpy, without_names
from kzoo.convert import export_hf
from kzoo.convert.safetensors import load_file

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
# name -> config overrides of the classification checkpoint.
CASES = {"odd24": dict(num_labels=3),
         "odd20": dict(num_labels=1, classifier_dropout=0.2)}


def packed_rows(vocabulary_size, pairs, seed=0, length=21):
    """`(ids, mask)`, `(3, length)`: rows packed as BART packs them
    (`<s> A </s>` or `<s> A </s></s> B </s>`), of unequal lengths,
    right-padded with `<pad>` (1)."""
    rng = np.random.default_rng(seed)
    ids = np.ones((3, length), "int32")
    for row, n in enumerate((5, 12, 3)):
        text = [0] + rng.integers(4, vocabulary_size, n).tolist() + [2]
        if pairs:
            text += [2] + rng.integers(4, vocabulary_size, 9 - n // 2
                                       ).tolist() + [2]
        ids[row, :len(text)] = text
    return ids, (ids != 1).astype("int32")


def kzoo_inputs(ids, mask):
    """BartPreprocessor's outputs for packed ids: the decoder reads them
    shifted right after `</s>` (transformers' `shift_tokens_right`)."""
    from transformers.models.bart.modeling_bart import shift_tokens_right
    decoder = shift_tokens_right(torch.tensor(ids).long(), 1, 2).numpy()
    decoder_mask = np.concatenate([np.ones((len(mask), 1), "int32"),
                                   mask[:, :-1]], axis=1)
    return {"encoder_token_ids": ids, "encoder_padding_mask": mask,
            "decoder_token_ids": decoder.astype("int32"),
            "decoder_padding_mask": decoder_mask}


def hf_logits(model, ids, mask):
    with torch.no_grad():  # no decoder input: transformers shifts itself
        return model(input_ids=torch.tensor(ids).long(),
                     attention_mask=torch.tensor(mask).long()).logits.numpy()


@pytest.fixture(scope="module", params=sorted(CASES))
def pair(request, tmp_path_factory):
    name = request.param
    hf_model = make_hf_bart(name, architecture="BartForSequenceClassification",
                            **CASES[name])
    folder = tmp_path_factory.mktemp(f"hf_bart_cls_{name}")
    hf_model.save_pretrained(folder)
    classifier = kzoo.BartTextClassifier.from_preset(str(folder),
                                                     preprocessor=None)
    return name, hf_model, folder, classifier


def test_config_read_as_the_original(pair):
    name, hf_model, _, classifier = pair
    config = hf_model.config
    assert classifier.num_classes == config.num_labels
    assert classifier.problem_type == (
        "regression" if config.num_labels == 1
        else "single_label_classification")
    assert classifier.dropout == config.classifier_dropout


@pytest.mark.parametrize("pairs", [False, True], ids=["texts", "pairs"])
def test_logits_match_transformers(pair, pairs):
    name, hf_model, _, classifier = pair
    ids, mask = packed_rows(HF_CONFIGS[name]["vocab_size"], pairs)
    expected = hf_logits(hf_model, ids, mask)
    got = to_numpy(classifier(kzoo_inputs(ids, mask), training=False))
    differences = max_abs_differences({"logits": got},
                                      {"logits": expected})
    print(f"\nBART classifier {name} "
          f"{'pairs' if pairs else 'texts'}: max abs {differences}")
    assert differences["logits"] <= ATOL


def test_round_trip_is_bit_exact(pair, tmp_path):
    name, hf_model, folder, classifier = pair
    out = export_hf(classifier, tmp_path / "exported", verbose=False)
    original = load_file(folder / "model.safetensors")
    check_exported_weights(out, original)
    # Both folders loaded alike (a model fresh from its constructor can
    # differ from its own saved copy in the last bit: transformers'
    # layout, not the weights).
    load = transformers.BartForSequenceClassification.from_pretrained
    reloaded = load(out, attn_implementation="eager").eval()
    source = load(folder, attn_implementation="eager").eval()
    assert reloaded.config.num_labels == hf_model.config.num_labels
    assert reloaded.config.problem_type == classifier.problem_type
    assert reloaded.config.classifier_dropout == classifier.dropout
    ids, mask = packed_rows(HF_CONFIGS[name]["vocab_size"], True, seed=3)
    np.testing.assert_array_equal(hf_logits(reloaded, ids, mask),
                                  hf_logits(source, ids, mask))
    back = kzoo.BartTextClassifier.from_preset(str(out), preprocessor=None)
    assert without_names(back.get_config()) == \
        without_names(classifier.get_config())
    for a, b in zip(back.weights, classifier.weights):
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
