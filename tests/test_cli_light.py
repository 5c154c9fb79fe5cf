"""`kzoo presets`, `kzoo info` and `kzoo env` read JSON and package
metadata without importing Keras or a backend (a fraction of a second
instead of ~6 s), `kzoo finetune` checks its data file before the backends
start, and an unknown preset's error names three presets at most.

The command layer does not depend on the backend: run once per suite."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kzoo import cli, presets

pytestmark = pytest.mark.once

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("keras", "tensorflow", "jax", "torch")

# Each command runs through kzoo_launcher, as the installed `kzoo` does;
# then the process reports which heavy packages it imported.
RUN_AND_REPORT = """
import json, sys
import kzoo_launcher
codes = [kzoo_launcher.main(argv) for argv in json.loads(sys.argv[1])]
print("REPORT " + json.dumps(
    {"codes": codes, "imported": [m for m in %r if m in sys.modules]}))
""" % (HEAVY,)


def run_commands(*commands, env=None):
    """Run the `kzoo` commands in one fresh process: (report, stdout,
    stderr), the report's codes and imported heavy packages."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_AND_REPORT, json.dumps(commands)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**os.environ, **(env or {})})
    lines = done.stdout.splitlines()
    assert lines and lines[-1].startswith("REPORT "), done.stderr[-3000:]
    return (json.loads(lines[-1][len("REPORT "):]),
            "\n".join(lines[:-1]), done.stderr)


def test_presets_info_env_import_no_backend():
    report, out, err = run_commands(
        ["presets", "--json"], ["info", "bert_base", "--json"],
        ["env", "--json"], ["info", "bert_bsae"])
    assert report["imported"] == [], report
    assert report["codes"] == [0, 0, 0, 1], err
    listed, info, env = [json.loads(line) for line in out.splitlines()]
    assert {row["name"] for row in listed} == {
        path.name for path in (ROOT / "presets").iterdir()
        if (path / "metadata.json").is_file()}
    assert info["name"] == "bert_base_en_uncased"
    assert info["config"]["num_layers"] == 12
    # The backend Keras would pick, read from its settings, not by
    # importing it; the devices only on request.
    assert env["backend"] == os.environ.get("KERAS_BACKEND", env["backend"])
    assert env["devices"] is None
    # One line, naming the three closest presets and not all of them.
    assert err.count("\n") == 1, err
    assert err.startswith("kzoo info: error: Unknown preset 'bert_bsae'. "
                          "Did you mean: bert_base, "), err
    assert err.count(", ") <= 2 and len(err) < 200, err


def test_unknown_preset_names_three_at_most():
    with pytest.raises(presets.PresetError) as error:
        presets.resolve("roberta_bsae_en")
    message = str(error.value)
    suggested = message.split("Did you mean: ")[1].split("?")[0].split(", ")
    assert suggested[0] == "roberta_base_en" and len(suggested) <= 3
    assert "kzoo presets" in message and "xlm_roberta_large" not in message


def test_env_lists_devices_on_request(capsys):
    assert cli.main(["env", "--json", "--devices"]) == 0
    assert json.loads(capsys.readouterr().out)["devices"]


def test_info_shows_generation_settings(tmp_path, capsys):
    folder = tmp_path / "gpt2_greedy"
    shutil.copytree(presets.resolve("gpt2_base_en").path, folder)
    settings = {"max_length": 40, "sampler": "top_k", "k": 5}
    (folder / "generation.json").write_text(json.dumps(settings))
    assert cli.main(["info", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "generation (generation.json): max_length 40, sampler top_k, " \
        "k 5" in out
    assert cli.main(["info", str(folder), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["generation"] == settings


def test_finetune_checks_its_data_before_the_backends(tmp_path):
    bad = tmp_path / "data.csv"
    bad.write_text("text,label\nA fine day.,good\n,bad\n")
    one_label = tmp_path / "one.csv"
    one_label.write_text("text,label\nA fine day.,good\nRain.,good\n")
    report, _, err = run_commands(
        ["finetune", "bert_tiny", str(bad), str(tmp_path / "out")],
        ["finetune", "bert_tiny", str(one_label), str(tmp_path / "out")],
        ["finetune", "bert_tiny", str(tmp_path / "none.csv"),
         str(tmp_path / "out")])
    assert report == {"codes": [1, 1, 1], "imported": []}, err
    assert err.splitlines() == [
        "kzoo finetune: error: data.csv line 3: no text.",
        f"kzoo finetune: error: {one_label} has one label ('good'); a "
        "classifier needs at least two.",
        f"kzoo finetune: error: cannot read {tmp_path / 'none.csv'}: No "
        "such file or directory."]


def test_finetune_help_shows_the_defaults(capsys):
    with pytest.raises(SystemExit):
        cli.main(["finetune", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option, default in (("--epochs", 3), ("--batch-size", 16),
                            ("--learning-rate", 5e-05),
                            ("--sequence-length", 128),
                            ("--validation-split", 0.1), ("--seed", 0)):
        after = text.split(f"{option} ")[-1]
        assert f"(default {default}" in after.split(" --")[0], option
