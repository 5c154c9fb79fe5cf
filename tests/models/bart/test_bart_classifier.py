"""BartTextClassifier from raw text: packing as transformers' BART
tokenizer and `shift_tokens_right` give it, fit lowers the loss on real
labelled text, predict on texts and pairs, the preset round trip; the
generic encoder heads refuse BART's backbone."""

import numpy as np
import pytest

import kzoo
from bart_testing import BART_PRESET, fit_batch_losses, make_tiny_bart
from helpers import (austen_passages, check_task, check_task_preset,
                     to_numpy)
from kzoo.core.arguments import ArgumentError


def _preprocessor(sequence_length=24):
    return kzoo.BartPreprocessor.from_preset(
        str(BART_PRESET), sequence_length=sequence_length)


def _labelled(n_per_novel):
    """Real passages, labelled by the novel they come from."""
    texts, labels = [], []
    for label, novel in enumerate(("pride_and_prejudice",
                                   "sense_and_sensibility")):
        passages = austen_passages(novel, words=12)[:n_per_novel]
        texts += passages
        labels += [label] * len(passages)
    return texts, np.asarray(labels, "int32")


def test_packing_is_transformers_bart():
    """Encoder `<s> A </s>` / `<s> A </s></s> B </s>` (long pairs cut
    longest first) as transformers' BartTokenizer packs them; decoder the
    same ids shifted right after `</s>`."""
    transformers = pytest.importorskip("transformers")
    import torch
    from transformers.models.bart.modeling_bart import shift_tokens_right
    hf_tokenizer = transformers.BartTokenizer(
        str(BART_PRESET / "vocab.json"), str(BART_PRESET / "merges.txt"))
    preprocessor = _preprocessor(sequence_length=20)
    first = ["It is a truth universally acknowledged.",
             "Mr. Bennet was so odd a mixture of quick parts, sarcastic "
             "humour, reserve, and caprice, that the experience",
             "Hi"]
    second = ["A single man in want of a wife.", "of three and twenty years",
              "there"]
    for x in (first, (first, second)):
        inputs = to_numpy(preprocessor(x))
        expected = hf_tokenizer(*((x,) if isinstance(x, list) else x),
                                padding="max_length", truncation=True,
                                max_length=20)
        np.testing.assert_array_equal(inputs["encoder_token_ids"],
                                      expected["input_ids"])
        np.testing.assert_array_equal(inputs["encoder_padding_mask"],
                                      expected["attention_mask"])
        shifted = shift_tokens_right(torch.tensor(expected["input_ids"]),
                                     1, 2).numpy()
        np.testing.assert_array_equal(inputs["decoder_token_ids"], shifted)
        # The decoder reads no padding up to the last `</s>`.
        mask = inputs["decoder_padding_mask"]
        np.testing.assert_array_equal(mask[:, 0], 1)
        np.testing.assert_array_equal(mask[:, 1:],
                                      inputs["encoder_padding_mask"][:, :-1])


@pytest.mark.convergence
def test_fit_lowers_the_loss_and_saves(tmp_path):
    import keras
    keras.utils.set_random_seed(0)
    classifier = kzoo.BartTextClassifier(
        make_tiny_bart(dropout=0.0), num_classes=2,
        preprocessor=_preprocessor())
    texts, labels = _labelled(8)
    order = np.random.default_rng(0).permutation(len(texts))
    texts, labels = [texts[i] for i in order], labels[order]
    # A tiny model from scratch, 8 full-batch steps at a constant rate
    # over the same 16 passages in one epoch (a new epoch, a new tf.data
    # pipeline: slow to start for byte-level BPE): the last steps' loss is
    # well below the first ones' (~0.25 against ~0.68), and it tells the
    # novels apart.
    classifier.compile(optimizer=keras.optimizers.Adam(1e-2))
    losses = fit_batch_losses(classifier, texts * 8, batch_size=16,
                              y=np.tile(labels, 8))
    assert len(losses) == 8
    assert losses[:2].mean() > 0.6  # started near log(2)
    assert losses[-2:].mean() < losses[:2].mean() - 0.3, losses
    # (Eager calls: compiling predict is the slow part; fit and predict on
    # text pairs run in the large test below.)
    logits = to_numpy(classifier(classifier.preprocessor(texts)))
    assert (logits.argmax(axis=-1) == labels).mean() >= 0.8
    # A pair is not its first text alone: the decoder reads both.
    paired = to_numpy(classifier(classifier.preprocessor((texts,
                                                          texts[::-1]))))
    assert np.abs(logits - paired).max() > 1e-3
    check_task_preset(classifier, tmp_path)


@pytest.mark.large  # compiles fit and predict once more (~1 min)
def test_pairs_fit_predict_and_preset(tmp_path):
    import keras
    keras.utils.set_random_seed(1)
    classifier = kzoo.BartTextClassifier(
        make_tiny_bart(), num_classes=3, preprocessor=_preprocessor())
    texts, _ = _labelled(2)
    # fit/predict on pairs, on a tf.data.Dataset too, and
    # save_to_preset -> from_preset bit for bit.
    check_task(classifier, (texts, texts[::-1]),
               np.array([0, 1, 2, 1], "int32"), tmp_path=tmp_path)


def test_generic_heads_refuse_bart():
    backbone = make_tiny_bart()
    for head in (kzoo.TokenClassifier, kzoo.QuestionAnswerer):
        with pytest.raises(ArgumentError, match="packs text as BERT does"):
            head(backbone, preprocessor=None, **(
                {"num_classes": 2} if head is kzoo.TokenClassifier else {}))
