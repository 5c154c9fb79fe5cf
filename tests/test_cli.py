"""The `kzoo` command, as a newcomer runs it."""

import re

import pytest

from kzoo import cli


def test_presets_command_lists_bert_presets(capsys):
    assert cli.main(["presets", "--family", "bert"]) == 0
    out = capsys.readouterr().out
    for name in ("bert_tiny_en_uncased", "bert_base_en_uncased"):
        assert name in out
    assert "alias: bert_base" in out


def test_presets_command_lines_up_every_family(capsys):
    # The longest names (ELECTRA's, ALBERT's) must not push their sizes
    # out of the column.
    assert cli.main(["presets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("electra_") for line in lines)
    size_columns = {re.search(r" +(\d+\.\dM|\?)  ", line).end()
                    for line in lines}
    assert len(size_columns) == 1, lines


@pytest.mark.once  # the tasks it runs are tested on every backend
def test_demo_quick_runs_every_stage(capsys):
    assert cli.main(["demo", "--quick", "--sequence-length", "32"]) == 0
    out = capsys.readouterr().out
    assert "all_minilm_l6_v2: 6 layers, hidden 384, 22,713,216" in out
    # Semantic search: two passages with their similarity per query.
    assert len(re.findall(r"\n  0\.\d{3}  .+\.\.\.", out)) == 4
    match = re.search(r"held-out accuracy: pretrained ([\d.]+)%, from "
                      r"scratch ([\d.]+)% \(majority-class baseline "
                      r"([\d.]+)%\)", out)
    assert match, out
    assert all(0 <= float(v) <= 100 for v in match.groups())
    assert "masked-LM loss:" in out


def test_unknown_command_exits_with_usage(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["nonsense"])
    assert exit_.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
