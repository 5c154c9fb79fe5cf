"""Probing every layer: each layer's hidden states read off any encoder's
graph (the last one is the backbone's sequence output, bit for bit; the
rest match `transformers`' `output_hidden_states`), and linear probes on a
frozen backbone that find what is planted in the input."""

import keras
import numpy as np
import pytest

import kzoo
from helpers import random_bert_inputs, to_numpy
from kzoo.tasks.probing import LayerProbe, hidden_states_model, probe_layers

from convert_helpers import (
    make_hf_bert, random_inputs, save_hf, write_vocab)

VOCAB = 50
SHAPE = dict(num_layers=3, num_heads=2, hidden_dim=16, intermediate_dim=24,
             max_sequence_length=16)
BACKBONES = {
    "bert": lambda: kzoo.BertBackbone(vocabulary_size=VOCAB, **SHAPE),
    "roberta": lambda: kzoo.RobertaBackbone(vocabulary_size=VOCAB, **SHAPE),
    "distil_bert": lambda: kzoo.DistilBertBackbone(vocabulary_size=VOCAB,
                                                   **SHAPE),
    # One shared block called num_layers times.
    "albert": lambda: kzoo.AlbertBackbone(vocabulary_size=VOCAB,
                                          embedding_dim=8, **SHAPE),
    # Two groups of two blocks: each layer runs two calls.
    "albert_inner": lambda: kzoo.AlbertBackbone(
        vocabulary_size=VOCAB, embedding_dim=8, num_groups=2,
        num_inner_repetitions=2, **{**SHAPE, "num_layers": 4}),
    # Factorised embeddings (a projection before the blocks).
    "electra": lambda: kzoo.ElectraBackbone(vocabulary_size=VOCAB,
                                            embedding_size=8, **SHAPE),
    "deberta_v3": lambda: kzoo.DebertaV3Backbone(vocabulary_size=VOCAB,
                                                 **SHAPE),
    # A final LayerNorm after the blocks: the top state is after it.
    "gpt2": lambda: kzoo.GPT2Backbone(vocabulary_size=VOCAB, **SHAPE),
}


def _inputs(backbone, batch=3, seq=7):
    inputs = random_bert_inputs(batch, seq, vocabulary_size=VOCAB)
    return {name: inputs[name] for name in backbone.input_names}


# BERT's case on every backend, the other families' in one backend's pass
# (docs/design.md, "Time budget": the hidden-states model is Keras'
# functional graph, which has no backend branch).
@pytest.mark.parametrize("family", [
    pytest.param(family, marks=() if family == "bert" else pytest.mark.once)
    for family in sorted(BACKBONES)])
def test_last_hidden_state_is_the_sequence_output(family):
    backbone = BACKBONES[family]()
    inputs = _inputs(backbone)
    states = to_numpy(hidden_states_model(backbone)(inputs))
    outputs = backbone(inputs)
    sequence_output = to_numpy(outputs["sequence_output"]
                               if isinstance(outputs, dict) else outputs)
    assert len(states) == backbone.num_layers + 1
    np.testing.assert_array_equal(states[-1], sequence_output)
    for state in states:
        assert state.shape == sequence_output.shape
    # Every layer changes the state: no state is read twice (a shared
    # ALBERT block gives one state per call).
    for below, above in zip(states, states[1:]):
        assert np.max(np.abs(below - above)) > 1e-3


def test_shared_albert_block_states_follow_each_call():
    backbone = BACKBONES["albert"]()
    inputs = _inputs(backbone)
    states = hidden_states_model(backbone)(inputs)
    block = backbone.get_layer("transformer_layer_0")
    mask = keras.ops.expand_dims(
        keras.ops.cast(inputs["padding_mask"], "bool"), 1)
    for below, above in zip(states, states[1:]):
        np.testing.assert_allclose(
            to_numpy(block(below, attention_mask=mask)), to_numpy(above),
            atol=1e-6)


# Parity with `transformers`: one backend's pass (docs/design.md, "Time
# budget").
@pytest.mark.once
def test_hidden_states_match_transformers(tmp_path):
    import torch
    hf_model = make_hf_bert("BertModel", "odd20")  # 3 layers, padding row
    backbone = kzoo.BertBackbone.from_preset(str(save_hf(hf_model, tmp_path)))
    inputs = random_inputs(hf_model.config)
    with torch.no_grad():
        expected = hf_model(
            input_ids=torch.tensor(inputs["token_ids"]).long(),
            token_type_ids=torch.tensor(inputs["segment_ids"]).long(),
            attention_mask=torch.tensor(inputs["padding_mask"]).long(),
            output_hidden_states=True).hidden_states
    states = to_numpy(hidden_states_model(backbone)(inputs))
    assert len(states) == len(expected) == 4
    differences = [float(np.max(np.abs(s - e.numpy())))
                   for s, e in zip(states, expected)]
    print(f"hidden states max abs vs transformers: {differences}")
    assert max(differences) <= 1e-5, differences


# ----------------------------------------------------------------------
# Probes
# ----------------------------------------------------------------------
WORDS = [f"w{i}" for i in range(VOCAB - 5)]
PLANTED = "w7"


@pytest.fixture(scope="module")
def preprocessor(tmp_path_factory):
    """BERT's special tokens and the words w0 ... w44."""
    folder = tmp_path_factory.mktemp("vocab")
    assert write_vocab(folder, VOCAB)[5:] == WORDS
    tokenizer = kzoo.BertTokenizer(vocabulary=str(folder / "vocab.txt"))
    return kzoo.BertPreprocessor(tokenizer, sequence_length=10)


def _planted_texts(count, seed):
    """Eight random words; label 1 where the planted word is among them."""
    rng = np.random.default_rng(seed)
    others = [w for w in WORDS if w != PLANTED]
    texts, labels = [], []
    for i in range(count):
        words = list(rng.choice(others, 8))
        if i % 2:
            words[rng.integers(8)] = PLANTED
        texts.append(" ".join(words))
        labels.append(i % 2)
    return texts, np.array(labels)


def test_probe_finds_the_planted_word_and_leaves_the_backbone_frozen(
        preprocessor, capsys):
    keras.utils.set_random_seed(0)
    # 64 wide: the planted word's vector stands out of the other 44's.
    backbone = kzoo.BertBackbone(vocabulary_size=VOCAB,
                                 **{**SHAPE, "hidden_dim": 64})
    before = [w.copy() for w in backbone.get_weights()]
    x, y = _planted_texts(256, seed=1)
    validation = _planted_texts(120, seed=2)

    mean = probe_layers(backbone, preprocessor, x, y, validation,
                        pooling="mean", epochs=10, batch_size=128,
                        learning_rate=3e-2)
    assert [r.layer for r in mean] == [0, 1, 2, 3]
    assert all(isinstance(r, LayerProbe) for r in mean)
    # The mean of the embeddings holds the planted word's vector.
    assert mean[0].validation_accuracy >= 0.9, mean
    printed = capsys.readouterr().out
    assert "probe 1/4: embeddings: train" in printed
    assert "probe 4/4: layer 3: train" in printed

    # The [CLS] embedding is the same vector in every row (no attention
    # yet): a probe that learns anything there reads the wrong tokens.
    # (Labels alternate, so these slices are balanced: chance is 0.5.)
    cls = probe_layers(backbone, preprocessor, x[:64], y[:64],
                       (x[64:128], y[64:128]), pooling="cls", epochs=1,
                       verbose=0)
    assert cls[0].validation_accuracy == 0.5
    assert cls[0].train_accuracy == 0.5
    assert capsys.readouterr().out == ""

    for after, expected in zip(backbone.get_weights(), before):
        np.testing.assert_array_equal(after, expected)


def test_probe_takes_input_dicts(preprocessor):
    keras.utils.set_random_seed(0)
    backbone = kzoo.DistilBertBackbone(vocabulary_size=VOCAB, **SHAPE)
    x, y = _planted_texts(64, seed=3)
    inputs = preprocessor(x)
    inputs = {name: np.asarray(inputs[name]) for name in backbone.input_names}
    results = probe_layers(backbone, None, inputs, y, (inputs, y),
                           pooling="mean", epochs=2, verbose=0)
    assert len(results) == 4
    # Validation on the training set itself: the same accuracy.
    for result in results:
        assert result.validation_accuracy == result.train_accuracy


def test_bad_input_is_explained(preprocessor):
    backbone = kzoo.BertBackbone(vocabulary_size=VOCAB, **SHAPE)
    x, y = _planted_texts(8, seed=0)
    with pytest.raises(ValueError, match=r"one class id per example \(8\)"):
        probe_layers(backbone, preprocessor, x, y[:5])
    with pytest.raises(ValueError, match="integer class ids"):
        probe_layers(backbone, preprocessor, x, y + 0.5)
    with pytest.raises(ValueError, match="must occur in training"):
        probe_layers(backbone, preprocessor, x, y, (x, y + 1))
    with pytest.raises(ValueError, match="pooling must be one of"):
        probe_layers(backbone, preprocessor, x, y, pooling="max")
    with pytest.raises(ValueError, match="preprocessor is None"):
        probe_layers(backbone, None, x, y)
    with pytest.raises(ValueError, match="single class"):
        probe_layers(backbone, preprocessor, x, np.zeros(8, "int32"))
    classifier = kzoo.BertTextClassifier(backbone, num_classes=2,
                                         preprocessor=None)
    with pytest.raises(TypeError, match=r"Pass its `\.backbone`"):
        probe_layers(classifier, preprocessor, x, y)
    awd_lstm = kzoo.AwdLstmBackbone(vocabulary_size=VOCAB, embedding_dim=6,
                                    lstm_dim=8, num_layers=2)
    with pytest.raises(ValueError, match="do not form one stack"):
        hidden_states_model(awd_lstm)
    t5 = kzoo.T5Backbone(vocabulary_size=VOCAB, num_layers=1, num_heads=2,
                         hidden_dim=8, intermediate_dim=8)
    with pytest.raises(ValueError, match="no `sequence_output`"):
        hidden_states_model(t5)


def test_token_probe_reads_token_identity_off_the_embeddings(preprocessor):
    keras.utils.set_random_seed(0)
    backbone = kzoo.BertBackbone(vocabulary_size=VOCAB,
                                 **{**SHAPE, "hidden_dim": 64})
    x, _ = _planted_texts(128, seed=4)
    inputs = {name: np.asarray(value)
              for name, value in preprocessor(x).items()}
    ids = inputs["token_ids"]
    # The word's id parity (balanced over w0..w44); no label on [CLS],
    # [SEP] and padding (ids < 5).
    y = np.where(ids >= 5, ids % 2, -1)
    train = {name: value[:96] for name, value in inputs.items()}
    val = {name: value[96:] for name, value in inputs.items()}
    results = probe_layers(backbone, None, train, y[:96], (val, y[96:]),
                           pooling="token", epochs=10, batch_size=256,
                           learning_rate=5e-2, verbose=0)
    assert len(results) == 4
    print([str(r) for r in results])
    assert results[0].validation_accuracy >= 0.9, results
    with pytest.raises(ValueError, match="shape of the preprocessed inputs"):
        probe_layers(backbone, None, train, y[:96, :5], pooling="token")
    with pytest.raises(ValueError, match=r"\(96, sequence\)"):
        probe_layers(backbone, None, train, y[:96, 0], pooling="token")
