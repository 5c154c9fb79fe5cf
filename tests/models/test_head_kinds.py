"""A head loads only into a head of the same kind: a sequence classifier's
`classifier` (a Dense of the same shapes) is not a token classifier's,
while an MLM head goes to every task that has one (kzoo.core.head_weights).
"""

import warnings

import h5py
import numpy as np
import pytest

import kzoo
from kzoo import presets
from kzoo.core.head_weights import head_kinds

pytestmark = pytest.mark.once   # file bookkeeping, no backend numerics

NUM_CLASSES = 3


def _kernel(task):
    return np.array(task.get_layer("classifier").kernel.numpy())


@pytest.fixture(scope="module")
def saved_classifier(tmp_path_factory):
    folder = tmp_path_factory.mktemp("saved") / "classifier"
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=NUM_CLASSES, load_weights=False,
        sequence_length=16)
    # A kernel no initializer draws (initializers may repeat across
    # models built in one process on some backends).
    kernel = classifier.get_layer("classifier").kernel
    kernel.assign(np.full(kernel.shape, 7.0, "float32"))
    classifier.save_to_preset(folder)
    return folder, _kernel(classifier)


def _load(cls, folder, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task = cls.from_preset(str(folder), num_classes=NUM_CLASSES,
                               sequence_length=16, **kwargs)
    return task, [str(w.message) for w in caught
                  if issubclass(w.category, presets.RandomHeadWarning)]


def test_a_token_classifier_does_not_take_a_sequence_classifiers_head(
        saved_classifier):
    folder, kernel = saved_classifier
    tagger, warned = _load(kzoo.TokenClassifier, folder)
    assert not np.allclose(_kernel(tagger), kernel)
    assert len(warned) == 1 and "classifier" in warned[0] and \
        "sequence_classifier" in warned[0]


def test_the_same_task_takes_its_own_head(saved_classifier):
    folder, kernel = saved_classifier
    classifier, warned = _load(kzoo.BertTextClassifier, folder)
    np.testing.assert_array_equal(_kernel(classifier), kernel)
    assert not warned


def test_a_file_without_kinds_loads_only_into_the_same_task(
        saved_classifier, tmp_path):
    # A heads file written before kinds were stored.
    import shutil
    folder, kernel = saved_classifier
    old = tmp_path / "old"
    shutil.copytree(folder, old)
    with h5py.File(old / presets.TASK_WEIGHTS, "r+") as f:
        for head in f:
            del f[head].attrs["head_kind"]
    tagger, warned = _load(kzoo.TokenClassifier, old)
    assert not np.allclose(_kernel(tagger), kernel) and warned
    classifier, _ = _load(kzoo.BertTextClassifier, old)
    np.testing.assert_array_equal(_kernel(classifier), kernel)


def test_a_masked_lm_takes_a_pretrainers_mlm_head(tmp_path):
    pretrainer = kzoo.BertPretrainer.from_preset(
        "bert_tiny_en_uncased", load_weights=False, sequence_length=16)
    pretrainer.save_to_preset(tmp_path / "pretrainer")
    masked_lm = kzoo.BertMaskedLM.from_preset(str(tmp_path / "pretrainer"),
                                              sequence_length=16)
    for ours, theirs in zip(masked_lm.get_layer("mlm_head").weights,
                            pretrainer.get_layer("mlm_head").weights):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert head_kinds(masked_lm)["mlm_head"] == "masked_lm"
