"""Every guide's page shows the output of a recorded run
(docs/runs/<name>.txt, written by scripts/record_guide.py, shown by
docs/guides_hook.py), labelled a full run or a smoke run on random
weights, and the record says how it was made; the recording script
keeps the log noise out and writes nothing for a failed run.
"""

import datetime
import re
from pathlib import Path

import pytest

from script_loading import load_script

pytestmark = pytest.mark.once

ROOT = Path(__file__).resolve().parent.parent

# Guides without a record yet, each with why (a new guide comes with its
# record, so this stays empty). A guide listed here must not have one:
# a test below fails until it is removed.
NOT_RECORDED_YET = {}


record_guide = load_script("scripts/record_guide.py")
guides_hook = load_script("docs/guides_hook.py")
RECORDED = [name for name in record_guide.guide_names()
            if (record_guide.RUNS / f"{name}.txt").is_file()]


def test_every_guide_has_a_recorded_run():
    missing = [name for name in record_guide.guide_names()
               if name not in RECORDED and name not in NOT_RECORDED_YET]
    assert not missing, (
        f"no docs/runs/<name>.txt for {missing}: run `python "
        "scripts/record_guide.py NAME` (or `--smoke WHY` where the full "
        "run is out of reach) and commit the record")
    landed = sorted(set(RECORDED) & set(NOT_RECORDED_YET))
    assert not landed, (
        f"{landed} now have a record: remove them from NOT_RECORDED_YET")
    strays = sorted(path.name for path in record_guide.RUNS.glob("*.txt")
                    if path.stem not in record_guide.guide_names())
    assert not strays, f"docs/runs/ holds records of no guide: {strays}"


@pytest.mark.parametrize("name", RECORDED)
def test_record_says_how_it_was_made(name):
    record = record_guide.read_record(record_guide.RUNS / f"{name}.txt")
    assert record["label"] in ("A full run", "A smoke run on random weights")
    # The mode the header names is the one the command ran.
    command = record["command"]
    assert re.fullmatch(rf"KERAS_BACKEND=(\w+) python guides/{name}\.py\b.*",
                        command), command
    assert command.split()[0] == f"KERAS_BACKEND={record['backend']}"
    assert ("--smoke" in command.split()) == (record["kind"] == "smoke"), (
        record["mode"], command)
    datetime.datetime.strptime(record["date"], "%Y-%m-%d %H:%M UTC")
    assert re.fullmatch(r".+, \d+ cores", record["machine"]), record
    assert re.fullmatch(r"\d+ s", record["wall"]), record
    # The run went to the end: every guide's last line says it is done
    # (most name the backend they ran on), or the record says where it
    # stopped ("[Stopped here: ...]"); and no log noise got in.
    last = record["output"].splitlines()[-1]
    assert re.match(rf"(?:{record['backend']} )?done\b|\[Stopped here: ",
                    last), last
    noisy = [line for line in record["output"].splitlines()
             if record_guide.NOISE.match(line)]
    assert not noisy, noisy


def test_page_ends_with_the_labelled_output(tmp_path):
    path = tmp_path / "gpt2.txt"
    path.write_text(record_guide.header(
        datetime.datetime(2026, 11, 28, 21, 47), "jax", "full", 312.4,
        "KERAS_BACKEND=jax python guides/gpt2.py", "AMD EPYC, 2 cores")
        + "\nheld-out accuracy 81.0%\njax done\n")
    record = record_guide.read_record(path)
    assert record["wall"] == "312 s" and record["kind"] == "full"
    section = guides_hook.recorded_run_markdown(record)
    assert section.startswith("## Output of a recorded run\n")
    assert f"**{record['label']}**" in section
    assert record["command"] in section and record["output"] in section
    smoke = guides_hook.recorded_run_markdown(
        {**record, "kind": "smoke", "why": "no hub here",
         "label": record_guide.LABELS["smoke"],
         "output": "a ``` fence inside\ndone"})
    assert "**A smoke run on random weights**, not the full run: no hub " \
           "here." in smoke
    # The output cannot close the block it is shown in.
    assert "\n````text\na ``` fence inside\ndone\n````" in smoke


def _fake_guides(tmp_path, monkeypatch, source):
    guides, runs = tmp_path / "guides", tmp_path / "runs"
    guides.mkdir()
    (guides / "fake.py").write_text(source)
    monkeypatch.setattr(record_guide, "GUIDES", guides)
    monkeypatch.setattr(record_guide, "RUNS", runs)
    return runs / "fake.txt"


def test_script_records_stdout_without_log_noise(tmp_path, monkeypatch):
    # What TensorFlow, absl and jax print around a guide's own lines.
    record = _fake_guides(tmp_path, monkeypatch, r'''
import os, sys
print("E0000 00:00:1764360000.123456   12345 cuda_dnn.cc:8310] Unable to register cuDNN")
print("WARNING: All log messages before absl::InitializeLog() is called are written to STDERR")
print("2026-11-28 20:00:00.123456: I tensorflow/core/util/port.cc:153] oneDNN custom operations are on.")
print("To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.")
print("WARNING:absl:Compiled the loaded model, but the compiled metrics have yet to be built.")
print("[Gloo] Rank 1 is connected to 1 peer ranks. Expected number of connected peer ranks is : 1")
print("held-out accuracy 0.75", "smoke" if "--smoke" in sys.argv else "full",
      os.environ.get("KZOO_GUIDE_SMOKE"))
print("epoch 1\r  epoch 2")
print("\x1b[1m13/13\x1b[0m \x1b[32m━━\x1b[0m 3s - loss: 0.29")
print("a warning on stderr", file=sys.stderr)
print(os.environ["KERAS_BACKEND"], "done")
''')
    monkeypatch.setenv("KZOO_GUIDE_SMOKE", "1")  # the command says the mode
    record_guide.main(["fake", "--backend", "torch", "--smoke", "no hub"])
    read = record_guide.read_record(record)
    assert read["output"] == "held-out accuracy 0.75 smoke None\n" \
                             "  epoch 2\n13/13 ━━ 3s - loss: 0.29\n" \
                             "torch done"
    assert read["command"] == "KERAS_BACKEND=torch python guides/fake.py " \
                              "--smoke"
    assert (read["kind"], read["why"]) == ("smoke", "no hub")
    assert read["machine"] == record_guide.machine()
    record_guide.main(["fake", "--backend", "jax", "--", "--out", "a b"])
    read = record_guide.read_record(record)
    assert read["mode"] == "full" and read["label"] == "A full run"
    assert read["command"] == \
        "KERAS_BACKEND=jax python guides/fake.py --out 'a b'"
    assert read["output"].splitlines()[0] == \
        "held-out accuracy 0.75 full None"


def test_failed_run_leaves_the_record_alone(tmp_path, monkeypatch):
    record = _fake_guides(tmp_path, monkeypatch,
                          "print('half')\nraise SystemExit(3)\n")
    record.parent.mkdir()
    record.write_text("the old record\n")
    with pytest.raises(SystemExit, match="exited with 3; nothing recorded"):
        record_guide.main(["fake"])
    assert record.read_text() == "the old record\n"
    assert [p.name for p in record.parent.iterdir()] == ["fake.txt"]


def test_timeout_is_a_one_line_error(tmp_path, monkeypatch):
    record = _fake_guides(tmp_path, monkeypatch,
                          "import time\nprint('half')\ntime.sleep(60)\n")
    with pytest.raises(SystemExit) as stopped:
        record_guide.main(["fake", "--timeout", "0.5"])
    message = str(stopped.value.code)
    assert "ran past --timeout 0.5 s and was stopped; nothing recorded" \
        in message and "\n" not in message, message
    # No traceback chained onto it: TimeoutExpired is not its cause.
    assert stopped.value.__cause__ is None
    assert stopped.value.__suppress_context__
    assert not record.exists()


def test_a_record_made_elsewhere_is_accepted(tmp_path, monkeypatch):
    # The lead's hours-long run, captured to a log, recorded afterwards.
    record = _fake_guides(tmp_path, monkeypatch, "")
    log = tmp_path / "run.log"
    log.write_text("2026-11-28 20:00:00.123456: W tensorflow/x.cc:1] noise\n"
                   "goal (a): 1.61 nats below the entropy\ntorch done\n")
    command = "KERAS_BACKEND=torch python guides/fake.py --work runs/guide"
    record_guide.main(["fake", "--backend", "torch", "--from-log", str(log),
                       "--wall", "14400", "--command", command])
    read = record_guide.read_record(record)
    assert read["wall"] == "14400 s" and read["command"] == command
    assert read["output"] == "goal (a): 1.61 nats below the entropy\n" \
                             "torch done"


@pytest.mark.parametrize("first_line, problem", [
    ("# kzoo guide record | date 2026-11-28 21:47 UTC | backend jax",
     "not a record header"),
    ("# kzoo guide record | date 2026-11-28 21:47 UTC | backend jax | "
     "machine AMD EPYC, 2 cores | mode quick | wall 3 s | command x",
     "neither 'full' nor"),
    ("# kzoo guide record | date 2026-11-28 21:47 UTC | backend jax | "
     "machine AMD EPYC, 2 cores | mode smoke on random weights:  | wall 3 s"
     " | command x", "neither 'full' nor"),
])
def test_malformed_record_is_refused(tmp_path, first_line, problem):
    path = tmp_path / "guide.txt"
    path.write_text(first_line + "\njax done\n")
    with pytest.raises(record_guide.RecordError, match=problem):
        record_guide.read_record(path)


def test_script_refuses_bad_arguments(capsys):
    for argv, message in [
            (["no_such_guide"], "no guide guides/no_such_guide.py"),
            (["gpt2", "--smoke", " "], "--smoke needs WHY"),
            (["gpt2", "--from-log", "x.log"], "--from-log needs --wall"),
            (["gpt2", "--backend", "torch", "--from-log", __file__, "--wall",
              "1", "--command", "python guides/gpt2.py"],
             "should start with KERAS_BACKEND=torch"),
            (["gpt2", "--smoke", "a | b", "--from-log", __file__,
              "--wall", "1", "--command", "KERAS_BACKEND=jax c",
              "--backend", "jax"], "holds ' | '")]:
        with pytest.raises(SystemExit):
            record_guide.main(argv)
        assert message in capsys.readouterr().err, argv
