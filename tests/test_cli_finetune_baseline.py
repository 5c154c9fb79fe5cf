"""`kzoo finetune`'s majority-class baseline is the best constant
predictor learnt from the training split (its most common label), scored
on the validation split (issue 31, item 7b); it was the validation
split's own majority, which no predictor trained on the training data
could know. The data here puts a different majority in each split.

Run once per suite, as tests/test_cli_commands.py: the command layer."""

import csv

import numpy as np
import pytest

import kzoo
from kzoo import cli
from kzoo.cli import finetune
from text_testing import TINY

pytestmark = pytest.mark.once

BERT = "bert_tiny_en_uncased"
SEED = 0
SHARE = 0.25
COUNT = 12


@pytest.fixture(scope="module")
def backbone_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("presets") / "backbone"
    kzoo.BertBackbone.from_preset(BERT, load_weights=False,
                                  **TINY).save_to_preset(root)
    kzoo.BertTokenizer.from_preset(BERT).save_to_preset(root)
    return root


def labelled_rows():
    """12 examples whose split (the command's, with --seed 0 and
    --validation-split 0.25) holds 6 "apple" and 3 "pear" for training
    and "pear", "pear", "apple" for validation: the training majority is
    "apple", right on 1 of 3 validation examples (33.3%); the
    validation split's own majority, "pear", would score 66.7%."""
    order = np.random.default_rng(SEED).permutation(COUNT)
    held = int(round(COUNT * SHARE))
    labels = [None] * COUNT
    for i, label in zip(order[:held], ("pear", "pear", "apple")):
        labels[i] = label
    for i, label in zip(order[held:], ["apple"] * 6 + ["pear"] * 3):
        labels[i] = label
    return [(f"passage number {i} of the orchard", label)
            for i, label in enumerate(labels)]


def test_rows_split_as_described():
    # The data is built against the command's own split: check it is what
    # the test claims, so a change to `split` shows here first.
    rows = labelled_rows()
    names = ["apple", "pear"]
    ids = [names.index(label) for _, label in rows]
    (_, train_y), (_, val_y) = finetune.split(
        [text for text, _ in rows], ids, SHARE, SEED)
    assert np.bincount(train_y).tolist() == [6, 3]
    assert sorted(val_y.tolist()) == [0, 1, 1]


def test_baseline_is_the_training_majority_scored_on_validation(
        backbone_folder, tmp_path, capsys):
    data = tmp_path / "fruit.csv"
    with open(data, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label"])
        writer.writerows(labelled_rows())
    code = cli.main(["finetune", str(backbone_folder), str(data),
                     str(tmp_path / "out"), "--epochs", "1",
                     "--sequence-length", "12", "--batch-size", "4",
                     "--validation-split", str(SHARE), "--seed", str(SEED)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "9 training and 3 validation examples" in out, out
    # Always "apple" (the training majority): right on 1 of the 3.
    assert "majority-class baseline 33.3%" in out, out
    assert "'apple'" in out, out
