"""`Task.fit` on in-memory text: every epoch is one pass over the
examples, each seen once (the short last batch included), in a new order
per epoch; on TensorFlow the passes come from one repeated pipeline, on
JAX and torch from NumPy arrays (see
`kzoo.core.input_pipeline.batches_from_arrays`)."""

import keras
import numpy as np

import kzoo

TEXTS = [f"passage number {i} of the set" for i in range(10)]


def test_each_epoch_sees_every_example_once_in_a_new_order():
    keras.utils.set_random_seed(0)
    backbone = kzoo.BertBackbone.from_preset(
        "bert_tiny_en_uncased", load_weights=False, num_layers=1,
        hidden_dim=16, num_heads=2, intermediate_dim=32)
    preprocessor = kzoo.BertPreprocessor.from_preset(
        "bert_tiny_en_uncased", sequence_length=12)
    # One class per example: the labels a step receives name its examples.
    classifier = kzoo.BertTextClassifier(
        backbone, num_classes=len(TEXTS), preprocessor=preprocessor)
    classifier.compile(optimizer="adam", run_eagerly=True)
    seen, epochs = [], []
    train_step = classifier.train_step

    def recording_step(*args):
        seen[-1].extend(keras.ops.convert_to_numpy(args[-1][1]).tolist())
        return train_step(*args)

    class Epochs(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            seen.append([])

        def on_epoch_end(self, epoch, logs=None):
            epochs.append(epoch)

    classifier.train_step = recording_step
    history = classifier.fit(TEXTS, np.arange(len(TEXTS)), batch_size=4,
                             epochs=3, callbacks=[Epochs()], verbose=0)
    assert epochs == [0, 1, 2] and len(history.history["loss"]) == 3
    for order in seen:
        assert sorted(order) == list(range(len(TEXTS))), seen
    assert len({tuple(order) for order in seen}) == 3, seen
