"""ELECTRA's pretraining as the original (google-research/electra) does it:
the replaced-token loss averaged over the real tokens only
(`run_pretraining.py`, `_get_discriminator_output`), the generator's input
masked 85% [MASK] / 15% unchanged (`pretrain/pretrain_helpers.py`,
`mask`), one embedding LayerNorm shared by generator and discriminator
(`model/modeling.py`: both build their embeddings in the "electra/embeddings"
scope), and a pretrainer on a released discriminator getting the released
generator that goes with it."""

import warnings

import keras
import numpy as np
import pytest

import kzoo
from electra_testing import ELECTRA_PRESET, VOCABULARY, make_tiny_electra
from helpers import (AUSTEN_NOVELS, BERT_SPECIAL_IDS, austen_paragraphs,
                     austen_passages, to_numpy)
from kzoo import presets

# ELECTRA's pretrainer samples replacements inside its step (each backend
# its own draws), so the cross-backend check leaves it out: its tests run
# in every backend's pass.
pytestmark = pytest.mark.every_backend

SEQ = 24


@pytest.fixture(scope="module")
def texts():
    # Paragraphs of unequal length: every row but the longest has padding.
    return austen_paragraphs("pride_and_prejudice", min_words=3)[:16]


def discriminator_with(texts, **backbone_overrides):
    task = kzoo.ElectraDiscriminator(
        make_tiny_electra(**backbone_overrides),
        preprocessor=kzoo.ElectraPreprocessor.from_preset(
            ELECTRA_PRESET, sequence_length=SEQ))
    # Logits far from 0, so that labels decide the loss (at random init
    # every logit is ~0 and every token costs ~ln 2, labelled or not).
    task.discriminator_predictions.dense_prediction.bias.assign([2.0])
    return task


def labels_with_junk_in_the_padding(texts, padding_label):
    """Random 0/1 labels on the real tokens, `padding_label` elsewhere,
    and the padding mask."""
    x = kzoo.ElectraPreprocessor.from_preset(ELECTRA_PRESET,
                                             sequence_length=SEQ)(texts)
    real = to_numpy(x["padding_mask"]).astype("float32")
    assert 0.2 < real.mean() < 0.95  # padding enough to matter
    labels = np.random.default_rng(0).integers(0, 2, real.shape)
    return np.where(real > 0, labels, padding_label).astype("float32"), real


def test_discriminator_loss_and_accuracy_count_real_tokens_only(texts):
    task = discriminator_with(texts)
    labels, real = labels_with_junk_in_the_padding(texts, padding_label=1.0)
    logits = to_numpy(task.predict(texts, batch_size=16, verbose=0))
    # The original: sigmoid cross-entropy times input_mask, summed over the
    # batch, divided by the number of real tokens; accuracy weighted by
    # input_mask (its disc_accuracy metric).
    bce = (np.maximum(logits, 0) - logits * labels
           + np.log1p(np.exp(-np.abs(logits))))
    loss = (bce * real).sum() / real.sum()
    accuracy = (((logits > 0) == labels) * real).sum() / real.sum()
    # Guard: averaging over every position would give another number.
    assert abs(bce.mean() - loss) > 0.1
    assert abs(((logits > 0) == labels).mean() - accuracy) > 0.05
    got = task.evaluate(texts, labels, batch_size=16, verbose=0,
                        return_dict=True)
    np.testing.assert_allclose(got["loss"], loss, rtol=1e-5)
    np.testing.assert_allclose(got["accuracy"], accuracy, rtol=1e-6)


def test_discriminator_does_not_train_on_padding(texts):
    """Labels that differ only at padded positions give the same training
    step on raw text."""
    steps = []
    for padding_label in (0.0, 1.0):
        keras.utils.set_random_seed(1)
        task = discriminator_with(texts, dropout=0.0, attention_dropout=0.0)
        task.compile(optimizer=keras.optimizers.SGD(learning_rate=0.5))
        labels, _ = labels_with_junk_in_the_padding(texts, padding_label)
        task.fit(texts, labels, batch_size=16, epochs=1, shuffle=False,
                 verbose=0)
        steps.append([to_numpy(w) for w in task.trainable_weights])
    for a, b in zip(*steps):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-7)


def test_discriminator_keeps_a_users_per_example_weights(texts):
    """A per-example sample weight multiplies the padding mask: a row of
    weight 0 drops out of the loss."""
    task = discriminator_with(texts)
    labels, real = labels_with_junk_in_the_padding(texts, padding_label=1.0)
    logits = to_numpy(task.predict(texts, batch_size=16, verbose=0))
    weights = np.r_[np.ones(8), np.zeros(8)].astype("float32")
    bce = (np.maximum(logits, 0) - logits * labels
           + np.log1p(np.exp(-np.abs(logits))))
    both = real * weights[:, None]
    got = task.evaluate(texts, labels, sample_weight=weights, batch_size=16,
                        verbose=0, return_dict=True)
    np.testing.assert_allclose(got["loss"], (bce * both).sum() / both.sum(),
                               rtol=1e-5)


# ----------------------------------------------------------------------
# The generator's input
# ----------------------------------------------------------------------
def test_generator_input_is_masked_the_originals_way():
    # pretrain_helpers.mask puts [MASK] where tf.random.uniform < 0.85 and
    # leaves the rest of the selected tokens as they were: no random token.
    preprocessor = kzoo.ElectraPretrainer.preprocessor_cls.from_preset(
        ELECTRA_PRESET, sequence_length=64)
    assert type(preprocessor) is kzoo.ElectraMaskedLMPreprocessor
    assert (preprocessor.mask_token_rate, preprocessor.random_token_rate) \
        == (0.85, 0.0)
    keras.utils.set_random_seed(0)  # seeds the masker's draws
    texts = [t for novel in AUSTEN_NOVELS
             for t in austen_passages(novel, words=40)]
    masked, kept = [], []
    for _ in range(3):  # fresh masks on every call: more draws
        x, original, weights = to_numpy(preprocessor(texts))
        real = weights > 0
        at_masks = np.take_along_axis(x["token_ids"], x["mask_positions"], 1)
        masked.append((at_masks == BERT_SPECIAL_IDS["[MASK]"])[real])
        kept.append((at_masks == original)[real])
    masked, kept = np.concatenate(masked), np.concatenate(kept)
    n = len(masked)
    assert n > 8000, n
    assert not (masked & kept).any()
    assert (masked | kept).all()  # never a random token: exact
    # The share of [MASK] is binomial: sd sqrt(0.85 * 0.15 / n) = 0.0038
    # for the 9,066 masks here. Measured, seeds 0-4 (torch): 0.8455,
    # 0.8487, 0.8542, 0.8476, 0.8522 (mean 0.8496, sd 0.0035). The bar, 4
    # binomial sd (0.015), is 4.3 measured sd from 0.85; BERT's 0.8 sits
    # 13 binomial sd below.
    sd = np.sqrt(0.85 * 0.15 / n)
    assert abs(masked.mean() - 0.85) < 4 * sd, masked.mean()


# ----------------------------------------------------------------------
# What the generator shares
# ----------------------------------------------------------------------
def original_parameter_count(v, e, h, i, layers, g_h, g_i, positions=64,
                             types=2):
    """The variables the original's PretrainingModel creates (small
    generator, untied_generator_embeddings=False): "electra/embeddings"
    once (word, position, token type, LayerNorm), the discriminator's
    projection and blocks and `discriminator_predictions`, and the
    generator's own projection, blocks and `generator_predictions` (dense
    to e, LayerNorm, output bias; the word embeddings are its output
    matrix)."""
    embeddings = (v + positions + types) * e + 2 * e

    def encoder(hidden, inner):
        project = e * hidden + hidden if e != hidden else 0
        block = (4 * (hidden * hidden + hidden) + 4 * hidden
                 + (hidden * inner + inner) + (inner * hidden + hidden))
        return project + layers * block

    discriminator_head = (h * h + h) + (h + 1)
    generator_head = (g_h * e + e) + 2 * e + v
    return (embeddings + encoder(h, i) + discriminator_head
            + encoder(g_h, g_i) + generator_head)


def test_generator_shares_the_embeddings_and_their_layer_norm():
    backbone = make_tiny_electra()
    task = kzoo.ElectraPretrainer(backbone, generator_size=0.5)
    names = [layer.name for layer in task.layers]
    assert "generator_embeddings_layer_norm" not in names
    norm = backbone.get_layer("embeddings_layer_norm")
    for variable in norm.weights:
        assert sum(w is variable for w in task.weights) == 1, variable.path
    assert task.count_params() == original_parameter_count(
        VOCABULARY, e=24, h=32, i=64, layers=2, g_h=16, g_i=64)

    # The generator reads the shared LayerNorm: changing it changes the
    # generator's logits.
    ids = np.array([[101, 2023, 103, 2003, 102, 0]], "int32")
    inputs = {"token_ids": ids, "segment_ids": np.zeros_like(ids),
              "padding_mask": (ids > 0).astype("int32"),
              "mask_positions": np.array([[2]], "int32")}
    before = to_numpy(task.predict_on_batch(inputs)["generator"])
    norm.beta.assign(norm.beta + 0.5)
    after = to_numpy(task.predict_on_batch(inputs)["generator"])
    assert np.abs(after - before).max() > 1e-3


# ----------------------------------------------------------------------
# The released generator with a released discriminator
# ----------------------------------------------------------------------
def save_pair(root, generator_embeddings_as_discriminators=True):
    """A tiny discriminator preset and, beside it, the generator preset of
    the same name with "generator" for "discriminator" (as the released
    pairs are named). Returns (discriminator task, generator task,
    discriminator folder)."""
    keras.utils.set_random_seed(2)
    preprocessor = kzoo.ElectraPreprocessor.from_preset(ELECTRA_PRESET,
                                                        sequence_length=16)
    discriminator = kzoo.ElectraDiscriminator(make_tiny_electra(),
                                              preprocessor=preprocessor)
    generator = kzoo.ElectraMaskedLM(
        make_tiny_electra(hidden_dim=16, num_heads=1, intermediate_dim=64),
        preprocessor=kzoo.ElectraMaskedLMPreprocessor.from_preset(
            ELECTRA_PRESET, sequence_length=16))
    if generator_embeddings_as_discriminators:
        # The released pairs: one "electra/embeddings" in the original
        # checkpoint, converted into both (transformers'
        # load_tf_weights_in_electra reads the generator's embeddings from
        # it).
        for name in ("token_embedding", "position_embedding",
                     "segment_embedding", "embeddings_layer_norm"):
            generator.backbone.get_layer(name).set_weights(
                discriminator.backbone.get_layer(name).get_weights())
    folder = root / "tiny_electra_discriminator"
    discriminator.save_to_preset(folder)
    generator.save_to_preset(root / "tiny_electra_generator")
    return discriminator, generator, folder


def masked_inputs():
    ids = np.array([[101, 2023, 103, 2003, 1037, 103, 102, 0]], "int32")
    return {"token_ids": ids, "segment_ids": np.zeros_like(ids),
            "padding_mask": (ids > 0).astype("int32"),
            "mask_positions": np.array([[2, 5]], "int32")}


def test_pretrainer_loads_the_matching_generator(tmp_path):
    discriminator, generator, folder = save_pair(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", presets.RandomHeadWarning)
        task = kzoo.ElectraPretrainer.from_preset(folder, sequence_length=16)
    assert task.generator_size == 0.5  # the generator's 16 of 32
    inputs = masked_inputs()
    out = to_numpy(task.predict_on_batch(inputs))
    # The generator's logits are the released generator's.
    expected = to_numpy(generator.predict_on_batch(
        {k: inputs[k] for k in generator.input_names}))
    np.testing.assert_allclose(out["generator"], expected, atol=1e-5)
    np.testing.assert_allclose(
        to_numpy(task.get_layer("generator_transformer_layer_1").weights[0]),
        to_numpy(generator.backbone.get_layer(
            "transformer_layer_1").weights[0]))
    # The discriminator is the discriminator preset's, on the text with
    # the generator's samples in place.
    corrupted = inputs["token_ids"].copy()
    corrupted[0, [2, 5]] = out["sampled_ids"][0]
    expected = to_numpy(discriminator.predict_on_batch(
        {**{k: inputs[k] for k in discriminator.input_names},
         "token_ids": corrupted}))
    np.testing.assert_allclose(out["discriminator"], expected, atol=1e-5)


def test_a_pretrainer_without_its_generator_warns_by_name(tmp_path):
    _, _, folder = save_pair(tmp_path)
    (tmp_path / "tiny_electra_generator").rename(tmp_path / "elsewhere")
    with pytest.warns(presets.RandomHeadWarning,
                      match="ElectraPretrainer's generator is randomly "
                            "initialised.*tiny_electra_discriminator.*"
                            "tiny_electra_generator"):
        task = kzoo.ElectraPretrainer.from_preset(folder, sequence_length=16)
    assert task.generator_size == 0.25  # the default
    # Named explicitly, it loads.
    with warnings.catch_warnings():
        warnings.simplefilter("error", presets.RandomHeadWarning)
        task = kzoo.ElectraPretrainer.from_preset(
            folder, sequence_length=16,
            generator_preset=tmp_path / "elsewhere")
    assert task.generator_size == 0.5


def test_a_generator_of_another_shape_warns(tmp_path):
    _, _, folder = save_pair(tmp_path)
    with pytest.warns(presets.RandomHeadWarning,
                      match="generator_size=0.25.*16 hidden"):
        kzoo.ElectraPretrainer.from_preset(folder, sequence_length=16,
                                           generator_size=0.25)
    # Named explicitly, a generator that does not fit is an error.
    with pytest.raises(ValueError, match="generator_size=0.25 makes a "
                       "generator of 2 layers, 8 hidden.*holds 2 layers, 16 "
                       "hidden"):
        kzoo.ElectraPretrainer.from_preset(
            folder, sequence_length=16, generator_size=0.25,
            generator_preset=tmp_path / "tiny_electra_generator")


def test_released_discriminators_name_their_generators():
    """Each released discriminator finds its generator, and the generator
    fits the pretrainer `from_preset` builds: hidden size over the
    discriminator's as generator_size, the same depth and embeddings."""
    from kzoo.models.electra.pretrainer import (generator_shape,
                                                matching_generator_preset)
    for size in ("small", "base", "large"):
        discriminator = presets.resolve(f"electra_{size}")
        found = matching_generator_preset(discriminator)
        assert found.name == f"electra_{size}_generator_en_uncased"
        d = discriminator.json("config.json")["config"]
        g = found.json("config.json")["config"]
        assert generator_shape(d["hidden_dim"],
                               g["hidden_dim"] / d["hidden_dim"]) == \
            (g["hidden_dim"], g["num_heads"], g["intermediate_dim"])
        for key in ("num_layers", "embedding_size", "vocabulary_size",
                    "max_sequence_length"):
            assert g[key] == d[key], (size, key)
    assert matching_generator_preset(
        presets.resolve("electra_small_generator")) is None
