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
from kzoo.convert import converter_for_model_type

# The reference is transformers' code; the check is of constructor
# defaults (no numbers computed), so one backend's pass runs it.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

HIDDEN_DROPOUT = 0.17
BERT_LIKE = dict(vocab_size=64, hidden_size=8, num_hidden_layers=1,
                 num_attention_heads=2, intermediate_size=16,
                 max_position_embeddings=32,
                 hidden_dropout_prob=HIDDEN_DROPOUT)
# family: (HF config class, its fields, HF architecture prefix, kzoo
# sequence classifier).
FAMILIES = {
    "bert": (transformers.BertConfig, BERT_LIKE, "Bert",
             kzoo.BertTextClassifier),
    "albert": (transformers.AlbertConfig, {**BERT_LIKE, "embedding_size": 4},
               "Albert", kzoo.AlbertTextClassifier),
    "electra": (transformers.ElectraConfig,
                {**BERT_LIKE, "embedding_size": 8}, "Electra",
                kzoo.ElectraTextClassifier),
    "roberta": (transformers.RobertaConfig,
                {**BERT_LIKE, "max_position_embeddings": 34,
                 "type_vocab_size": 1}, "Roberta",
                kzoo.RobertaTextClassifier),
    "xlm_roberta": (transformers.XLMRobertaConfig,
                    {**BERT_LIKE, "max_position_embeddings": 34,
                     "type_vocab_size": 1},
                    "XLMRoberta", kzoo.XLMRobertaTextClassifier),
    "deberta_v3": (transformers.DebertaV2Config,
                   {**BERT_LIKE, "relative_attention": True,
                    "position_biased_input": False,
                    "pos_att_type": ["p2c", "c2p"], "max_relative_positions":
                    -1, "position_buckets": 8, "norm_rel_ebd": "layer_norm",
                    "share_att_key": True, "type_vocab_size": 0},
                   "DebertaV2", kzoo.DebertaV3TextClassifier),
    "distil_bert": (transformers.DistilBertConfig,
                    dict(vocab_size=64, dim=8, n_layers=1, n_heads=2,
                         hidden_dim=16, max_position_embeddings=32,
                         dropout=HIDDEN_DROPOUT), "DistilBert",
                    kzoo.DistilBertTextClassifier),
}
# BART has no token classifier; its sequence classifier's head dropout is
# `classifier_dropout` (0.0), not the model's `dropout`.
SEQUENCE_FAMILIES = {
    **FAMILIES,
    "bart": (transformers.BartConfig,
             dict(vocab_size=64, d_model=8, encoder_layers=1,
                  decoder_layers=1, encoder_attention_heads=2,
                  decoder_attention_heads=2, encoder_ffn_dim=16,
                  decoder_ffn_dim=16, max_position_embeddings=32,
                  dropout=HIDDEN_DROPOUT), "Bart", kzoo.BartTextClassifier),
}


def hf_model(config_cls, fields, architecture):
    config = config_cls(**fields, num_labels=3)
    return getattr(transformers, architecture)(config).eval(), config


def head_dropout(model):
    """The rate of the dropout right before the HF model's classifier
    (0.0 when it has none)."""
    head = getattr(model, "classification_head", None) or model.classifier
    dropout = getattr(head, "dropout", None) or getattr(model, "dropout",
                                                        None)
    return 0.0 if dropout is None else float(dropout.p)


def kzoo_backbone(config):
    converter = converter_for_model_type(config.model_type)
    backbone_cls = getattr(kzoo, converter.backbone_class)
    return backbone_cls(**converter.backbone_kwargs(config.to_dict()))


def original_and_backbone(family, head, families=FAMILIES):
    """`(the dropout rate before transformers' classifier in
    `<family>For<head>`, a kzoo backbone from the same config)`."""
    config_cls, fields, prefix, _ = families[family]
    model, config = hf_model(config_cls, fields, f"{prefix}For{head}")
    backbone = kzoo_backbone(config)
    assert backbone.dropout == pytest.approx(HIDDEN_DROPOUT)
    return head_dropout(model), backbone


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_token_classifier_dropout_is_the_originals(family):
    expected, backbone = original_and_backbone(family,
                                               "TokenClassification")
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
    model, config = hf_model(transformers.AlbertConfig,
                             {**FAMILIES["albert"][1],
                              "hidden_dropout_prob": 0.0},
                             "AlbertForTokenClassification")
    assert head_dropout(model) == pytest.approx(0.1)
    backbone = kzoo_backbone(config)
    assert backbone.dropout == 0.0
    assert kzoo.TokenClassifier(backbone, num_classes=3).dropout == \
        pytest.approx(0.1)


@pytest.mark.parametrize("family", sorted(SEQUENCE_FAMILIES))
def test_sequence_classifier_dropout_is_the_originals(family):
    expected, backbone = original_and_backbone(
        family, "SequenceClassification", SEQUENCE_FAMILIES)
    classifier_cls = SEQUENCE_FAMILIES[family][3]
    for kwargs in ({}, {"dropout": None}):
        classifier = classifier_cls(backbone, num_classes=3, **kwargs)
        assert classifier.dropout == pytest.approx(expected), (family, kwargs)


def test_gpt2_classifier_has_no_dropout_as_the_original():
    """`GPT2ForSequenceClassification` scores the last token's state with
    no dropout before its `score` layer."""
    config = transformers.GPT2Config(vocab_size=64, n_positions=32,
                                     n_embd=8, n_layer=1, n_head=2,
                                     resid_pdrop=HIDDEN_DROPOUT,
                                     embd_pdrop=HIDDEN_DROPOUT, num_labels=3,
                                     bos_token_id=1, eos_token_id=1)
    model = transformers.GPT2ForSequenceClassification(config)
    assert not any(isinstance(m, torch.nn.Dropout)
                   for name, m in model.named_modules()
                   if not name.startswith("transformer."))
    backbone = kzoo_backbone(config)
    assert backbone.dropout == pytest.approx(HIDDEN_DROPOUT)
    assert kzoo.GPT2Classifier(backbone, num_classes=3).dropout == 0.0
