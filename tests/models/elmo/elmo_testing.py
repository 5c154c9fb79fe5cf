"""Shared ELMo test data: the original biLM fixture (tests/data/elmo) and
tiny configs."""

import json

import h5py
import numpy as np

from helpers import DATA_DIR

ELMO_DIR = DATA_DIR / "elmo"
VOCABULARY = ELMO_DIR / "vocab_test.txt"
# A tiny biLM of our own (odd sizes, one highway layer, tanh).
TINY_ELMO = dict(filters=[[1, 4], [2, 6], [3, 8]], projection_dim=6,
                 lstm_dim=10, num_layers=2, num_highway=1,
                 character_embedding_dim=5, cnn_activation="tanh",
                 cell_clip=2.0, projection_clip=2.5)


def original_sentences():
    """3 lists of 10 sentences (each a list of words)."""
    with open(ELMO_DIR / "sentences.json", encoding="utf-8") as f:
        return [[s.split() for s in group] for group in json.load(f)]


def original_outputs():
    """expected[k][i]: `(words, 32)` top layer (forward ‖ backward) of the
    original TensorFlow biLM for sentence i of list k."""
    expected = []
    for k in range(3):
        with h5py.File(ELMO_DIR / f"lm_embeddings_{k}.hdf5", "r") as f:
            expected.append([np.concatenate([f[str(i)][0], f[str(i)][1]], -1)
                             for i in range(10)])
    return expected


def character_batch(sentences, length):
    """Sentences (lists of words) -> backbone inputs with `<S>`/`</S>`,
    right-padded to `length` tokens, as the original's batcher makes them."""
    from kzoo.models.elmo.characters import word_character_ids
    chars = np.zeros((len(sentences), length, 50), "int32")
    mask = np.zeros((len(sentences), length), "int32")
    for row, words in enumerate(sentences):
        tokens = ["<S>"] + list(words) + ["</S>"]
        for j, word in enumerate(tokens):
            chars[row, j] = word_character_ids(word)
        mask[row, :len(tokens)] = 1
    return {"character_ids": chars, "padding_mask": mask}
