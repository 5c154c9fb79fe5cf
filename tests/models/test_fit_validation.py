"""`Task.fit(..., validation_data=(texts, labels))` scores raw held-out
text after every epoch: the preprocessor runs once on it (in `fit`), and
Keras' per-epoch evaluation reuses that dataset instead of preprocessing
it again (which failed: a dict of token ids is not text)."""

import numpy as np

import kzoo

TEXTS = ["The sun was shining.", "It rained all day.", "A cold wind blew.",
         "The garden was in bloom.", "Snow fell at night.", "A warm day."]
LABELS = np.array([0, 1, 1, 0, 1, 0])


def test_fit_scores_raw_validation_text_every_epoch():
    backbone = kzoo.BertBackbone.from_preset(
        "bert_tiny_en_uncased", load_weights=False, num_layers=1,
        hidden_dim=16, num_heads=2, intermediate_dim=32)
    preprocessor = kzoo.BertPreprocessor.from_preset(
        "bert_tiny_en_uncased", sequence_length=12)
    classifier = kzoo.BertTextClassifier(backbone, num_classes=2,
                                         preprocessor=preprocessor)
    classifier.compile(optimizer="adam")
    history = classifier.fit(TEXTS, LABELS, batch_size=4, epochs=2,
                             validation_data=(TEXTS[:4], LABELS[:4]),
                             verbose=0).history
    assert len(history["val_loss"]) == 2
    # The last epoch's validation is the trained model on those texts.
    loss, accuracy = classifier.evaluate(TEXTS[:4], LABELS[:4], verbose=0)
    np.testing.assert_allclose(history["val_loss"][-1], loss, rtol=1e-5)
    assert history["val_accuracy"][-1] == accuracy
