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
- the language model trains on independent windows (each from zero
  state, `corpus_windows`), where fastai carries the LSTM state across
  consecutive BPTT windows;
- the vocabulary is made once, for the general and the target text
  together; fastai re-maps a pretrained model's embedding to the target
  vocabulary (`convert_weights`: rows of new words start at the mean);
- no AR/TAR activation regularisation, and the classifier reads whole
  texts of `sequence_length` tokens rather than BPTT chunks.

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
#   ulmfit.pretrain_language_model(lm, general_texts, epochs=1)
#   ulmfit.fine_tune_language_model(lm, target_texts, epochs=1)
#   classifier = ulmfit.classifier_from_language_model(lm, num_classes=2)
#   ulmfit.train_classifier(classifier, texts, labels, epochs=6)
```
"""

import keras

from kzoo.models.awd_lstm import (AwdLstmBackbone, AwdLstmPreprocessor,
                                  AwdLstmTextClassifier)
from kzoo.training import (GradualUnfreezing, LayerwiseAdam,
                           SlantedTriangular, layer_groups)

# ULMFiT's factor between the learning rates of neighbouring layer groups.
DECAY = 1 / 2.6
# fastai's classifier config (`awd_lstm_clas_config`): stronger dropouts
# than the language model's.
CLASSIFIER_DROPOUTS = {"embedding_dropout": 0.05, "input_dropout": 0.4,
                       "hidden_dropout": 0.3, "weight_dropout": 0.5}


def corpus_windows(texts, words=70):
    """Texts joined into one stream and cut into windows of `words` words
    (fastai's BPTT is 70), the language model's training examples.

    Example:
    ```python
    from kzoo.recipes import ulmfit
    windows = ulmfit.corpus_windows(["one two three", "four five six seven"],
                                    words=3)
    assert windows == ["one two three", "four five six"]  # the rest: out
    ```
    """
    stream = " ".join(texts).split()
    return [" ".join(stream[i:i + words])
            for i in range(0, len(stream) - words + 1, words)]


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
                        words, verbose):
    windows = corpus_windows(texts, words)
    lm.compile(optimizer=ulmfit_optimizer(learning_rate,
                                          language_model_groups(lm), decay))
    return lm.fit(windows, epochs=epochs, batch_size=batch_size,
                  verbose=verbose)


def pretrain_language_model(lm, texts, epochs=1, batch_size=32,
                            learning_rate=1e-2, words=70, verbose=0):
    """Stage 1: the language model on general-domain text (every group at
    the same rate; a slanted triangular schedule). Returns the history.

    Example:
    ```python
    # Setup: the example of kzoo.recipes.ulmfit (texts, tokenizer, lm).
    history = ulmfit.pretrain_language_model(lm, texts, words=20)
    assert len(history.history["loss"]) == 1   # one epoch
    ```
    """
    return _fit_language_model(lm, texts, epochs, batch_size, learning_rate,
                               1.0, words, verbose)


def fine_tune_language_model(lm, texts, epochs=1, batch_size=32,
                             learning_rate=4e-3, decay=DECAY, words=70,
                             verbose=0):
    """Stage 2: the language model on the target domain's text, with
    discriminative (`decay` per group) and slanted triangular rates.

    Example:
    ```python
    # Setup: the example of kzoo.recipes.ulmfit (texts, tokenizer, lm).
    # (after pretrain_language_model on general-domain text)
    history = ulmfit.fine_tune_language_model(lm, texts, words=20)
    print(history.history["perplexity"])
    ```
    """
    return _fit_language_model(lm, texts, epochs, batch_size, learning_rate,
                               decay, words, verbose)


def classifier_from_language_model(lm, num_classes, sequence_length=None,
                                   dropouts=CLASSIFIER_DROPOUTS, **kwargs):
    """Stage 3's model: a new `AwdLstmTextClassifier` whose encoder starts
    from the language model's (with the classifier's dropouts), reading
    text with the language model's tokenizer. `kwargs` go to the
    classifier (`hidden_dims`, `pooled_dropout`, `dropout`).

    Example:
    ```python
    # Setup: the example of kzoo.recipes.ulmfit (texts, tokenizer, lm).
    classifier = ulmfit.classifier_from_language_model(lm, num_classes=2)
    # The encoder starts from the language model's weights.
    np.testing.assert_array_equal(
        classifier.backbone.get_weights()[0], lm.backbone.get_weights()[0])
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
            sequence_length=sequence_length or lm.preprocessor.sequence_length)
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
    classifier = ulmfit.classifier_from_language_model(lm, num_classes=2)
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
    classifier = ulmfit.classifier_from_language_model(lm, num_classes=2)
    score = ulmfit.accuracy(classifier, texts[:4], [0, 1, 0, 1])
    assert score in (0.0, 0.25, 0.5, 0.75, 1.0)
    ```
    """
    import numpy as np
    logits = keras.ops.convert_to_numpy(
        classifier.predict(texts, batch_size=batch_size, verbose=0))
    return float(np.mean(np.argmax(logits, -1) == np.asarray(labels)))
