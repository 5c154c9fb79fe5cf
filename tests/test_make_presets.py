"""scripts/make_presets.py and its table, scripts/preset_table.py: the
table names every shipped preset, and the writer writes the shipped
folders byte for byte (the small ones here, one or more per family and per
kind of row; `python scripts/make_presets.py --out DIR` and `diff -r DIR
presets` checks them all)."""

import filecmp
from pathlib import Path

import pytest

from script_loading import load_script

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "make_presets.py"

# Cheap to build, and between them every kind of row: a shipped vocabulary
# (BERT), a raw copy of one (ELECTRA), `assets_from` (ELECTRA generator,
# DistilBERT), remote files from the hub (ALBERT), a source kzoo cannot
# fetch (AWD-LSTM, ELMo), a parameter formula checked against the built
# model (DistilBERT) and one standing in for it (GPT-2, not built).
NAMED = ["bert_tiny_en_uncased", "electra_small_discriminator_en_uncased",
         "electra_small_generator_en_uncased", "albert_base_en_uncased",
         "awd_lstm_wt103_en", "elmo_small_en", "distil_bert_base_en_uncased",
         "gpt2_base_en", "gpt2_extra_large_en"]
# Written by scripts/make_minilm_preset.py (converted from a package).
NOT_IN_TABLE = {"all_minilm_l6_v2"}

pytestmark = pytest.mark.once


@pytest.fixture(scope="module")
def writer():
    return load_script(SCRIPT)


def assert_same_folders(written, shipped):
    comparison = filecmp.dircmp(written, shipped)
    assert not comparison.left_only and not comparison.right_only, (
        comparison.left_only, comparison.right_only)
    _, mismatch, errors = filecmp.cmpfiles(
        written, shipped, comparison.common_files, shallow=False)
    assert not mismatch and not errors, f"{shipped}: {mismatch + errors}"


def test_the_table_names_every_shipped_preset(writer):
    shipped = {p.parent.name for p in ROOT.glob("presets/*/metadata.json")}
    assert set(writer.rows()) == shipped - NOT_IN_TABLE
    for name in writer.rows(stand_ins=True):
        assert (ROOT / "tests/data/presets" / name / "metadata.json").is_file()
    # The table writes the converter's dropouts, not its own.
    from kzoo.models.awd_lstm.convert import LM_DROPOUTS
    config = writer.rows()["awd_lstm_wt103_en"]["config"]
    assert LM_DROPOUTS.items() <= config.items()


def test_writes_the_shipped_presets_byte_for_byte(writer, tmp_path, capsys):
    # GPT-2 unbuilt (--build-up-to 0): config and count from the formula.
    writer.main([*NAMED, "--out", str(tmp_path), "--build-up-to", "0"])
    for name in NAMED:
        assert_same_folders(tmp_path / name, ROOT / "presets" / name)
    assert "wrote" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(NAMED)


def test_writes_the_stand_in_byte_for_byte(writer, tmp_path):
    writer.main(["--stand-ins", "--out", str(tmp_path)])
    for name in writer.rows(stand_ins=True):
        assert_same_folders(tmp_path / name,
                            ROOT / "tests/data/presets" / name)


def test_rewriting_a_folder_replaces_it_whole(writer, tmp_path):
    stale = tmp_path / "bert_tiny_en_uncased" / "model.weights.h5"
    stale.parent.mkdir()
    stale.write_text("stale")
    writer.main(["bert_tiny_en_uncased", "--out", str(tmp_path)])
    assert not stale.exists()
    assert_same_folders(stale.parent, ROOT / "presets/bert_tiny_en_uncased")


def test_refuses_what_the_table_does_not_hold(writer, tmp_path):
    with pytest.raises(SystemExit, match="not in the table: bert_tiny"):
        writer.main(["bert_tiny", "--out", str(tmp_path)])
    other = tmp_path / "vocab.txt"
    other.write_text("[PAD]\n")
    with pytest.raises(SystemExit, match="is not the file 'bert-vocab'"):
        writer.main(["bert_tiny_en_uncased", "--out", str(tmp_path),
                     "--input", f"bert-vocab={other}"])
    assert not (tmp_path / "bert_tiny_en_uncased").exists()


def test_help_and_list(writer, capsys):
    with pytest.raises(SystemExit) as exit_:
        writer.main(["--help"])
    assert exit_.value.code == 0
    assert "preset_table.py" in capsys.readouterr().out
    writer.main(["--list", "--family", "t5"])
    assert capsys.readouterr().out.splitlines() == [
        f"{name}  (t5)" for name in writer.rows()
        if writer.rows()[name]["family"] == "t5"]
