"""ULMFiT (Howard & Ruder, 2018): universal language-model fine-tuning for
text classification, with kzoo's AWD-LSTM.

Three stages, each a function here (`guides/ulmfit.py` runs them end to
end):

1. `pretrain_language_model`: a language model on general-domain text
   (fastai's is WikiText-103: the `awd_lstm_wt103_en` preset).
2. `fine_tune_language_model`: the same language model on the target
   domain's text, with discriminative learning rates (each layer group's
   rate 2.6 times smaller than the group above: `LayerwiseAdam`,
   `decay=1/2.6`) and slanted triangular rates (`SlantedTriangular`).
3. `classifier_from_language_model` + `train_classifier`: the encoder
   under ULMFiT's concat-pooling classifier, trained with discriminative
   and slanted triangular rates and gradual unfreezing (the top group in
   the first epoch, one more group each epoch: `GradualUnfreezing`).

What differs from fastai's implementation (and why):

- each stage is one `fit` call; fastai's classifier recipe is several
  one-cycle calls, one per unfreezing step. Here the slanted triangular
  schedule spans the whole call and `GradualUnfreezing` unfreezes a group
  at each epoch;
- the language model trains on independent windows of 70 tokens (each
  from zero state, `corpus_windows`), where fastai carries the LSTM state
  across consecutive BPTT windows;
- the vocabulary is made once, for the general and the target text
  together; fastai re-maps a pretrained model's embedding to the target
  vocabulary (`convert_weights`: rows of new words start at the mean);
- no AR/TAR activation regularisation;
- the classifier reads up to 1,440 tokens of a document in one pass
  where fastai reads them in BPTT chunks, carrying the state: the same
  outputs, but fastai cuts the gradient between chunks
  (`classifier_from_language_model`).

Example:
```python
from kzoo import datasets
from kzoo.models.awd_lstm.tokenizer import build_vocabulary
from kzoo.recipes import ulmfit
# A tiny language model on a few passages: the functions' examples start
# from it (guides/ulmfit.py runs the recipe at its real size).
texts = datasets.austen_passages("emma", words=20)[:16]
build_vocabulary(texts, "vocab.txt", max_size=200)
tokenizer = kzoo.AwdLstmTokenizer(vocabulary="vocab.txt")
lm = kzoo.AwdLstmLanguageModel(
    kzoo.AwdLstmBackbone(tokenizer.vocabulary_size, embedding_dim=8,
                         lstm_dim=16),
    preprocessor=kzoo.AwdLstmLanguageModelPreprocessor(
        tokenizer, sequence_length=24))
# The recipe:
#   ulmfit.pretrain_language_model(lm, general_texts, epochs=1, bptt=24)
#   ulmfit.fine_tune_language_model(lm, target_texts, epochs=1, bptt=24)
#   classifier = ulmfit.classifier_from_language_model(lm, num_classes=2)
#   ulmfit.train_classifier(classifier, texts, labels, epochs=6)
```
"""

import keras

from kzoo.models.awd_lstm import (AwdLstmBackbone, AwdLstmPreprocessor,
                                  AwdLstmTextClassifier)
from kzoo.models.awd_lstm.tokenizer import BOS
from kzoo.training import (GradualUnfreezing, LayerwiseAdam,
                           SlantedTriangular, layer_groups)

# ULMFiT's factor between the learning rates of neighbouring layer groups.
DECAY = 1 / 2.6
# fastai's classifier config (`awd_lstm_clas_config`): stronger dropouts
# than the language model's.
CLASSIFIER_DROPOUTS = {"embedding_dropout": 0.05, "input_dropout": 0.4,
                       "hidden_dropout": 0.3, "weight_dropout": 0.5}
# ULMFiT's language-model window, in tokens (the paper's and fastai v1's
# `bptt`; fastai v2's `seq_len` is 72).
BPTT = 70
# The most tokens of a document fastai's classifier pools over
# (`get_text_classifier(max_len=72 * 20)`).
MAX_LENGTH = 72 * 20
# Texts tokenized at a time when cutting a corpus into windows.
_TOKENIZE_BATCH = 256


def corpus_windows(texts, tokenizer, bptt=BPTT):
    """Texts as fastai's language model reads them: one stream of tokens
    (the tokenizer's rules applied, `xxbos` before each text), cut into
    windows of `bptt` tokens (fastai's 70). Returns each window as text,
    its tokens joined by spaces; the rules leave such text as it is, so
    the language model's preprocessor reads exactly `bptt` tokens back
    (and puts its own `xxbos` first). A last, shorter window is left out.

    Counted in tokens, not words: on Austen 70 words are ~93 tokens
    (punctuation and `xxmaj` are tokens of their own), which a 72-token
    preprocessor would cut, leaving a fifth of each window untrained.

    Example:
    ```python
    # Setup: the example of kzoo.recipes.ulmfit (texts, tokenizer, lm).
    windows = ulmfit.corpus_windows(["One two.", "Three"], tokenizer, bptt=3)
    assert windows == ["xxbos xxmaj one", "two . xxbos"]  # the rest: out
    ```
    """
    stream = []
    for start in range(0, len(texts), _TOKENIZE_BATCH):
        batch = list(texts[start:start + _TOKENIZE_BATCH])
        for tokens in tokenizer.split(batch).to_list():
            stream.append(BOS)
            stream.extend(token.decode("utf-8") for token in tokens)
    return [" ".join(stream[i:i + bptt])
            for i in range(0, len(stream) - bptt + 1, bptt)]


def language_model_groups(lm):
    """fastai's language-model groups (`awd_lstm_lm_split`): each LSTM,
    bottom to top, then the embedding with the decoder tied to it (they
    are one matrix, so it takes the top group's rate).

    Example:
    ```python
    # Setup: the example of kzoo.recipes.ulmfit (texts, tokenizer, lm).
    groups = ulmfit.language_model_groups(lm)
    assert len(groups) == 4   # the 3 LSTMs, then embedding + decoder
    ```
    """
    groups = layer_groups(lm)  # [embedding], [lstm_0], ..., [lm_head]
    return groups[1:-1] + [groups[0] + groups[-1]]


def ulmfit_optimizer(learning_rate, groups, decay=DECAY, cut_fraction=0.1,
                     ratio=32.0):
    """Adam (beta_1 0.7, beta_2 0.99, as the paper) with a slanted
    triangular rate peaking at `learning_rate` for the top group, each
    group below `decay` times the one above.

    Example:
    ```python
    # Setup: the example of kzoo.recipes.ulmfit (texts, tokenizer, lm).
    optimizer = ulmfit.ulmfit_optimizer(
        1e-2, ulmfit.language_model_groups(lm))
    assert np.allclose(optimizer.scales, [2.6 ** -3, 2.6 ** -2, 1 / 2.6, 1])
    lm.compile(optimizer=optimizer)
    ```
    """
    return LayerwiseAdam(
        SlantedTriangular(learning_rate, cut_fraction=cut_fraction,
                          ratio=ratio),
        beta_1=0.7, beta_2=0.99, layer_groups=groups, decay=decay)


def _fit_language_model(lm, texts, epochs, batch_size, learning_rate, decay,
                        bptt, verbose):
    preprocessor = lm.preprocessor
    if preprocessor is None or preprocessor.sequence_length < bptt:
        raise ValueError(
            f"ULMFiT: windows of bptt={bptt} tokens need a language model "
            "whose preprocessor reads at least that many; this one reads "
            f"{getattr(preprocessor, 'sequence_length', None)}. Build it "
            f"with AwdLstmLanguageModelPreprocessor(tokenizer, "
            f"sequence_length={bptt}), or pass a smaller bptt.")
    windows = corpus_windows(texts, preprocessor.tokenizer, bptt)
    lm.compile(optimizer=ulmfit_optimizer(learning_rate,
                                          language_model_groups(lm), decay))
    return lm.fit(windows, epochs=epochs, batch_size=batch_size,
                  verbose=verbose)


def pretrain_language_model(lm, texts, epochs=1, batch_size=32,
                            learning_rate=1e-2, bptt=BPTT, verbose=0):
    """Stage 1: the language model on general-domain text, cut into
    windows of `bptt` tokens (`corpus_windows`; the language model's
    preprocessor must read at least `bptt`), every group at the same
    rate, a slanted triangular schedule. Returns the history.

    Example:
    ```python
    # Setup: the example of kzoo.recipes.ulmfit (texts, tokenizer, lm).
    history = ulmfit.pretrain_language_model(lm, texts, bptt=24)
    assert len(history.history["loss"]) == 1   # one epoch
    ```
    """
    return _fit_language_model(lm, texts, epochs, batch_size, learning_rate,
                               1.0, bptt, verbose)


def fine_tune_language_model(lm, texts, epochs=1, batch_size=32,
                             learning_rate=4e-3, decay=DECAY, bptt=BPTT,
                             verbose=0):
    """Stage 2: the language model on the target domain's text (windows
    of `bptt` tokens, as stage 1), with discriminative (`decay` per
    group) and slanted triangular rates.

    Example:
    ```python
    # Setup: the example of kzoo.recipes.ulmfit (texts, tokenizer, lm).
    # (after pretrain_language_model on general-domain text)
    history = ulmfit.fine_tune_language_model(lm, texts, bptt=24)
    print(history.history["perplexity"])
    ```
    """
    return _fit_language_model(lm, texts, epochs, batch_size, learning_rate,
                               decay, bptt, verbose)


def classifier_from_language_model(lm, num_classes,
                                   sequence_length=MAX_LENGTH,
                                   dropouts=CLASSIFIER_DROPOUTS, **kwargs):
    """Stage 3's model: a new `AwdLstmTextClassifier` whose encoder starts
    from the language model's (with the classifier's dropouts), reading
    text with the language model's tokenizer: up to `sequence_length`
    tokens of each document (fastai's `max_len`, 1,440), pooled over all
    of them. `kwargs` go to the classifier (`hidden_dims`,
    `pooled_dropout`, `dropout`).

    fastai's `SentenceEncoder` feeds a long document to the LSTMs in
    chunks of 72 tokens, carrying their state from one chunk to the next,
    which computes what one pass over the whole document does; kzoo makes
    that one pass. Two differences, both in training only: fastai cuts
    the gradient at each chunk boundary and draws new dropout masks per
    chunk, where kzoo back-propagates through the whole document with one
    mask. fastai reads all of a longer document and pools over its last
    `max_len` tokens; kzoo reads and pools its first `sequence_length`.

    Example:
    ```python
    # Setup: the example of kzoo.recipes.ulmfit (texts, tokenizer, lm).
    classifier = ulmfit.classifier_from_language_model(lm, num_classes=2)
    # The encoder starts from the language model's weights.
    np.testing.assert_array_equal(
        classifier.backbone.get_weights()[0], lm.backbone.get_weights()[0])
    assert classifier.preprocessor.sequence_length == 1440
    assert classifier.predict(texts[:2], verbose=0).shape == (2, 2)
    ```
    """
    config = {**lm.backbone.get_config(), **dropouts}
    config.pop("name", None)
    backbone = AwdLstmBackbone.from_config(config)
    backbone.set_weights(lm.backbone.get_weights())
    preprocessor = None
    if lm.preprocessor is not None:
        preprocessor = AwdLstmPreprocessor(
            lm.preprocessor.tokenizer,
            sequence_length=sequence_length)
    return AwdLstmTextClassifier(backbone, num_classes,
                                 preprocessor=preprocessor, **kwargs)


def train_classifier(classifier, texts, labels, epochs=6, batch_size=16,
                     learning_rate=1e-2, decay=DECAY, unfreeze=True,
                     epochs_per_group=1, validation_data=None, verbose=0):
    """Stage 3: train the classifier with discriminative and slanted
    triangular rates, unfreezing one layer group per `epochs_per_group`
    epochs from the top (`unfreeze=False`: every group trains from the
    start). With 5 groups (embedding, 3 LSTMs, head), 5 epochs reach the
    whole model. Returns the history.

    Example:
    ```python
    # Setup: the example of kzoo.recipes.ulmfit (texts, tokenizer, lm).
    classifier = ulmfit.classifier_from_language_model(
        lm, num_classes=2, sequence_length=32)   # passages of 20 words
    labels = [i % 2 for i in range(len(texts))]
    history = ulmfit.train_classifier(classifier, texts, labels, epochs=2,
                                      batch_size=8)
    assert len(history.history["loss"]) == 2
    ```
    """
    classifier.compile(optimizer=ulmfit_optimizer(
        learning_rate, layer_groups(classifier), decay))
    callbacks = [GradualUnfreezing(epochs_per_group)] if unfreeze else []
    return classifier.fit(texts, labels, epochs=epochs,
                          batch_size=batch_size, callbacks=callbacks,
                          validation_data=validation_data, verbose=verbose)


def accuracy(classifier, texts, labels, batch_size=64):
    """The share of `texts` whose predicted class is `labels`'.

    Example:
    ```python
    # Setup: the example of kzoo.recipes.ulmfit (texts, tokenizer, lm).
    classifier = ulmfit.classifier_from_language_model(
        lm, num_classes=2, sequence_length=32)
    score = ulmfit.accuracy(classifier, texts[:4], [0, 1, 0, 1])
    assert score in (0.0, 0.25, 0.5, 0.75, 1.0)
    ```
    """
    import numpy as np
    logits = keras.ops.convert_to_numpy(
        classifier.predict(texts, batch_size=batch_size, verbose=0))
    return float(np.mean(np.argmax(logits, -1) == np.asarray(labels)))
