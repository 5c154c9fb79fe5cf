"""docs/finetune_csv.md's recorded run stays in step with the command and
the sample data it shows, without re-running the fine-tuning: the
commands parse with `kzoo finetune`'s and `kzoo classify`'s own options,
and what the page says the run printed before training (the split, the
labels, the majority-class baseline) is what `kzoo finetune` computes
from docs/examples/novels.csv with those options. A change to the CSV,
the split or the options' defaults makes the page's output stale, and
this fails until the run is recorded again.
"""

import argparse
import datetime
import re
import shlex
from pathlib import Path

import pytest

from kzoo.cli import classify, finetune

pytestmark = pytest.mark.once

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "finetune_csv.md").read_text(encoding="utf-8")


def _recorded_section():
    section = PAGE.split("## A recorded run\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```text\n", 1)[1].split("\n```", 1)[0]
    return section, block


def _commands_and_outputs(block):
    """{command name: (its arguments, the lines it printed)} from a
    terminal transcript ("$ kzoo ..." lines, continued with a backslash)."""
    runs, lines = {}, block.splitlines()
    i = 0
    while i < len(lines):
        assert lines[i].startswith("$ kzoo "), lines[i]
        command = lines[i][2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1] + lines[i].strip()
        i += 1
        printed = []
        while i < len(lines) and not lines[i].startswith("$ "):
            printed.append(lines[i])
            i += 1
        words = shlex.split(command)
        runs[words[1]] = (words[2:], printed)
    return runs


def _parse(module, arguments):
    parser = argparse.ArgumentParser(exit_on_error=False)
    module.add_arguments(parser)
    return parser.parse_args(arguments)


def test_recorded_run_names_when_where_and_how():
    section, _ = _recorded_section()
    date = re.search(r"recorded (\d{4}-\d\d-\d\d \d\d:\d\d UTC) on (.+?)\n?"
                     r"\((\d+) cores", " ".join(section.split()))
    assert date, "the run's date and machine"
    datetime.datetime.strptime(date.group(1), "%Y-%m-%d %H:%M UTC")
    backend = re.search(r"the (\w+) backend", section)
    assert backend and backend.group(1) in ("jax", "tensorflow", "torch")
    assert re.search(r"`kzoo finetune` took \d+ s wall", " ".join(
        section.split()))


def test_recorded_commands_are_the_pages_commands():
    _, block = _recorded_section()
    runs = _commands_and_outputs(block)
    assert set(runs) == {"finetune", "classify"}
    for name, (arguments, _) in runs.items():
        shown = re.search(rf"```bash\nkzoo {name} (.+?)\n```", PAGE,
                          re.DOTALL).group(1)
        assert shlex.split(shown.replace("\\\n", " ")) == arguments, name


def test_recorded_output_matches_the_data_and_the_options():
    _, block = _recorded_section()
    runs = _commands_and_outputs(block)
    arguments, printed = runs["finetune"]
    args = _parse(finetune, arguments)  # an unknown option fails here
    assert args.data == "docs/examples/novels.csv"
    texts, labels = finetune.read_labelled(ROOT / args.data)
    names = sorted(set(labels))
    ids = [names.index(label) for label in labels]
    (train_x, train_y), (val_x, val_y) = finetune.split(
        texts, ids, args.validation_split, args.seed)
    assert printed[0] == (
        f"{len(train_x)} training and {len(val_x)} validation examples, "
        f"{len(names)} labels: {', '.join(names)}")
    assert [line for line in printed if line.startswith("Epoch ")] == [
        f"Epoch {n}/{args.epochs}" for n in range(1, args.epochs + 1)]
    steps = -(-len(train_x) // args.batch_size)
    bars = [line for line in printed if re.match(r"\d+/\d+ ", line)]
    assert bars and all(line.startswith(f"{steps}/{steps} ")
                        for line in bars), bars
    # kzoo finetune's baseline: the training split's most common label,
    # scored on the held-out examples.
    counts = [int((train_y == k).sum()) for k in range(len(names))]
    majority = counts.index(max(counts))
    baseline = (val_y == majority).mean()
    validation = next(line for line in printed
                      if line.startswith("validation accuracy"))
    assert f"(majority-class baseline {baseline:.1%}: always " \
           f"{names[majority]!r}," in validation
    correct = float(re.search(r"accuracy: ([\d.]+)%", validation).group(1))
    # A share of the held-out examples, as printed to one decimal.
    assert any(f"{k / len(val_x):.1%}" == f"{correct:.1f}%"
               for k in range(len(val_x) + 1)), validation
    assert printed[-1].startswith(f"saved to {args.output}; ")

    arguments, printed = runs["classify"]
    args = _parse(classify, arguments)
    assert args.preset == "novel_classifier"
    assert len(printed) == len(args.texts)
    for line, text in zip(printed, args.texts):
        label, probability, shown = line.split("\t")
        assert label in names and shown == text
        assert 1 / len(names) <= float(probability) <= 1
