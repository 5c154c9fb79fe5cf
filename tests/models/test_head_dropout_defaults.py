"""The dropout before each classifier, when none is given, is the one
`transformers` puts there for the family (issue 31, item 7a): read off
`transformers`' own task models built from a tiny config whose hidden
dropout (0.17) differs from every head default, so a head that falls
back to the backbone's dropout where the original does not (ALBERT's
token classifier took ALBERT v2's 0.0 instead of
`classifier_dropout_prob` = 0.1) cannot pass.

The kzoo backbone is made from the same config by the family's
converter, so its `dropout` is what kzoo makes of that checkpoint."""

import pytest

import kzoo
from family_references import converter, families_converting, reference
from kzoo.convert import converter_for_model_type

# The reference is transformers' code; the check is of constructor
# defaults (no numbers computed), so one backend's pass runs it.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

HIDDEN_DROPOUT = 0.17
# Every family whose converter reads the task, by its HF architecture
# name; each family's tiny config is its REFERENCE
# (tests/family_references.py).
TOKEN_CLASSIFIERS = families_converting("ForTokenClassification")
SEQUENCE_CLASSIFIERS = families_converting("ForSequenceClassification")


def test_the_families_come_from_the_converters():
    """BERT's kin have both heads; BART and GPT-2 a sequence classifier
    only; T5 neither."""
    assert {"bert", "albert", "electra", "roberta", "xlm_roberta",
            "deberta_v3", "distil_bert"} <= set(TOKEN_CLASSIFIERS)
    assert set(TOKEN_CLASSIFIERS) | {"bart", "gpt2"} <= \
        set(SEQUENCE_CLASSIFIERS)
    assert not {"bart", "gpt2", "t5"} & set(TOKEN_CLASSIFIERS)
    assert "t5" not in SEQUENCE_CLASSIFIERS


def hf_model(family, architecture, dropout=HIDDEN_DROPOUT):
    """transformers' `architecture` of the family's tiny config."""
    model_type = converter(family).model_types[0]
    config = transformers.AutoConfig.for_model(
        model_type, **reference(family).tiny_config(dropout), num_labels=3)
    return getattr(transformers, architecture)(config).eval(), config


def head_dropout(model):
    """The rate of the dropout right before the HF model's classifier
    (0.0 when it has none: GPT-2's `score` reads the last state as it
    is)."""
    head = next(getattr(model, name) for name in
                ("classification_head", "classifier", "score")
                if hasattr(model, name))
    dropout = getattr(head, "dropout", None) or getattr(model, "dropout",
                                                        None)
    return 0.0 if dropout is None else float(dropout.p)


def kzoo_backbone(config):
    converter = converter_for_model_type(config.model_type)
    backbone_cls = getattr(kzoo, converter.backbone_class)
    return backbone_cls(**converter.backbone_kwargs(config.to_dict()))


def original_and_backbone(family, architecture):
    """`(the dropout rate before transformers' classifier in
    `architecture`, a kzoo backbone from the same config)`."""
    model, config = hf_model(family, architecture)
    backbone = kzoo_backbone(config)
    assert backbone.dropout == pytest.approx(HIDDEN_DROPOUT)
    return head_dropout(model), backbone


@pytest.mark.parametrize("family", sorted(TOKEN_CLASSIFIERS))
def test_token_classifier_dropout_is_the_originals(family):
    expected, backbone = original_and_backbone(family,
                                               TOKEN_CLASSIFIERS[family])
    tagger = kzoo.TokenClassifier(backbone, num_classes=3)
    assert tagger.dropout == pytest.approx(expected), family
    assert tagger.get_layer("classifier_dropout").rate == \
        pytest.approx(expected)
    # Explicitly None is the same default; a number is taken as given.
    assert kzoo.TokenClassifier(backbone, num_classes=3,
                                dropout=None).dropout == \
        pytest.approx(expected)
    assert kzoo.TokenClassifier(backbone, num_classes=3,
                                dropout=0.3).dropout == 0.3


def test_albert_token_classifier_takes_classifier_dropout_prob():
    """The case the review found: ALBERT v2's hidden dropout is 0, its
    classifier's 0.1 (AlbertConfig's defaults, the released configs')."""
    model, config = hf_model("albert", "AlbertForTokenClassification",
                             dropout=0.0)
    assert head_dropout(model) == pytest.approx(0.1)
    backbone = kzoo_backbone(config)
    assert backbone.dropout == 0.0
    assert kzoo.TokenClassifier(backbone, num_classes=3).dropout == \
        pytest.approx(0.1)


@pytest.mark.parametrize("family", sorted(SEQUENCE_CLASSIFIERS))
def test_sequence_classifier_dropout_is_the_originals(family):
    architecture = SEQUENCE_CLASSIFIERS[family]
    expected, backbone = original_and_backbone(family, architecture)
    classifier_cls = getattr(kzoo, converter(family).architectures[
        architecture])
    for kwargs in ({}, {"dropout": None}):
        classifier = classifier_cls(backbone, num_classes=3, **kwargs)
        assert classifier.dropout == pytest.approx(expected), (family, kwargs)


def test_gpt2_classifier_has_no_dropout_as_the_original():
    """`GPT2ForSequenceClassification` scores the last token's state with
    no dropout before its `score` layer."""
    model, config = hf_model("gpt2", "GPT2ForSequenceClassification")
    assert not any(isinstance(m, torch.nn.Dropout)
                   for name, m in model.named_modules()
                   if not name.startswith("transformer."))
    backbone = kzoo_backbone(config)
    assert backbone.dropout == pytest.approx(HIDDEN_DROPOUT)
    assert kzoo.GPT2Classifier(backbone, num_classes=3).dropout == 0.0
