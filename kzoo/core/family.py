"""A backbone's family: the family's own task of a kind, and its
preprocessor.

Generic tasks (`SpanBoundaryPretrainer`, `TokenClassifier`,
`MultipleChoice`, `QuestionAnswerer`) take any encoder `Backbone` and ask
its family for the parts that differ between families: the masked-LM head
and preprocessor, the sequence classifier's pooling, the preprocessor that
packs its text, the token classifier's default dropout. A family is found
through the registry: the registered tasks of a kind whose `backbone_cls`
the backbone is an instance of, the closest first (an
`XLMRobertaBackbone` is RoBERTa's subclass, and its own family).
"""

from kzoo import presets
from kzoo.core.arguments import ArgumentError, describe
from kzoo.core.backbone import Backbone
from kzoo.core.registry import (get_class, registered_classes,
                                registered_subclasses)

MASKED_LM = "masked_lm"
SEQUENCE_CLASSIFIER = "sequence_classifier"
TOKEN_CLASSIFIER = "token_classifier"


def _closest(candidates, cls, key):
    """The candidate whose `key(candidate)` is the nearest base class of
    `cls` (in its MRO); None when none is a base of `cls`."""
    matches = [c for c in candidates
               if isinstance(key(c), type) and issubclass(cls, key(c))]
    matches.sort(key=lambda c: cls.__mro__.index(key(c)))
    return matches[0] if matches else None


def tasks_of_kind(kind):
    """The registered tasks of `kind`: a task base class (`MaskedLM`,
    `Seq2SeqLM`: its registered subclasses) or the name of a kind
    (`MASKED_LM`: the registered tasks whose `task_kind` it is)."""
    if isinstance(kind, type):
        return registered_subclasses(kind)
    return [cls for cls in registered_classes()
            if getattr(cls, "task_kind", None) == kind]


def family_task(backbone_cls, kind):
    """The registered task of `kind` (see `tasks_of_kind`) made for
    `backbone_cls`'s family; None when the family has none."""
    tasks = [task for task in tasks_of_kind(kind)
             if task.backbone_cls is not Backbone]
    return _closest(tasks, backbone_cls, lambda task: task.backbone_cls)


def masked_lm_family(backbone_cls):
    """The registered masked-LM task of `backbone_cls`'s family (its head
    and preprocessor are the family's); None when it has none."""
    return family_task(backbone_cls, MASKED_LM)


def checked_family_task(owner, backbone, kind, needs):
    """`family_task(type(backbone), kind)`, or an `ArgumentError` naming
    the families that have one. `needs`: what the owner needs, in words
    ("a masked LM")."""
    task = family_task(type(backbone), kind)
    if task is None:
        families = sorted({t.backbone_cls.__name__
                           for t in tasks_of_kind(kind)
                           if t.backbone_cls is not Backbone})
        raise ArgumentError(
            f"{owner} needs an encoder backbone of a family with {needs} "
            f"({', '.join(families)}); got {describe(backbone)}.")
    return task


def preset_backbone_class(preset):
    """The backbone class a preset (name, folder, or a Hugging Face
    checkpoint folder) holds."""
    preset = presets.resolve(preset)
    return get_class(preset.json("config.json")["class_name"], Backbone)


def family_preprocessor(owner, preset, kind, needs, **kwargs):
    """The preprocessor of the preset's family's `kind` task, from the
    preset (`kwargs` override its config)."""
    preset = presets.resolve(preset)
    backbone_cls = preset_backbone_class(preset)
    task = family_task(backbone_cls, kind)
    if task is None:
        raise ArgumentError(
            f"{owner}: preset {preset.name!r} holds a "
            f"{backbone_cls.__name__}, whose family has no {needs}.")
    return task.preprocessor_cls.from_preset(preset, **kwargs)


def token_classifier_dropout(backbone):
    """The dropout before a token classifier's dense layer on `backbone`
    when none is given: what `transformers`' `*ForTokenClassification`
    uses for the family when the config sets no classifier dropout. That
    is the backbone's hidden dropout (`hidden_dropout_prob`; DistilBERT's
    `dropout`) unless the family's sequence classifier names its own
    `token_head_dropout` (ALBERT: `classifier_dropout_prob`, 0.1, where
    ALBERT v2's hidden dropout is 0)."""
    classifier = family_task(type(backbone), SEQUENCE_CLASSIFIER)
    rate = getattr(classifier, "token_head_dropout", None)
    return float(backbone.dropout if rate is None else rate)


def family_text_preprocessor(backbone_cls):
    """The family's plain text preprocessor class (the one its sequence
    classifier packs with: `BertPreprocessor`, `RobertaPreprocessor`, ...);
    None when the family has no classifier."""
    classifier = family_task(backbone_cls, SEQUENCE_CLASSIFIER)
    return None if classifier is None else classifier.preprocessor_cls


def tokenizer_preprocessor(tokenizer_cls):
    """The family's plain text preprocessor class, found from its
    tokenizer class (a tokenizer alone, as a saved preprocessor holds,
    says which family packs it)."""
    preprocessors = [task.preprocessor_cls for task in
                     tasks_of_kind(SEQUENCE_CLASSIFIER)
                     if task.preprocessor_cls is not None]
    return _closest(preprocessors, tokenizer_cls,
                    lambda preprocessor: preprocessor.tokenizer_cls)


def _packs_as_bert(preprocessor_cls):
    # `feeds_encoder_heads = False`: packed as BERT, but for a backbone
    # the generic heads cannot read (BART's encoder-decoder).
    return preprocessor_cls is not None and hasattr(
        preprocessor_cls, "separators_between") and getattr(
        preprocessor_cls, "feeds_encoder_heads", True)


def pair_packing_backbones():
    """The registered backbones whose families pack texts as BERT's
    (`[CLS] a [SEP] b [SEP]`, with RoBERTa's doubled separator), by
    class name: the generic heads (token classification, multiple
    choice, question answering) pack with them. Read off the registry,
    so a new family is named here without an edit."""
    return ", ".join(sorted(
        cls.__name__ for cls in registered_subclasses(Backbone)
        if _packs_as_bert(family_text_preprocessor(cls))))


def backbone_packing(owner, backbone):
    """The text preprocessor class of `backbone`'s family when it packs
    as BERT does; else an `ArgumentError` naming the families that do."""
    found = family_text_preprocessor(type(backbone))
    if not _packs_as_bert(found):
        raise ArgumentError(
            f"{owner} needs an encoder backbone whose family packs text as "
            f"BERT does ({pair_packing_backbones()}); got {describe(backbone)}.")
    return found


def preset_packing(owner, preset):
    """`backbone_packing` for the backbone a preset holds."""
    preset = presets.resolve(preset)
    backbone_cls = preset_backbone_class(preset)
    found = family_text_preprocessor(backbone_cls)
    if not _packs_as_bert(found):
        raise ArgumentError(
            f"{owner}: preset {preset.name!r} holds a "
            f"{backbone_cls.__name__}, not an encoder whose family packs "
            f"text as BERT does ({pair_packing_backbones()}).")
    return found


def tokenizer_packing(owner, tokenizer):
    """The text preprocessor class of `tokenizer`'s family when it packs
    as BERT does (a generic head's preprocessor reads its family off its
    tokenizer); else a ValueError."""
    found = tokenizer_preprocessor(type(tokenizer))
    if not _packs_as_bert(found):
        raise ValueError(
            f"{owner} needs the tokenizer of an encoder family that packs "
            f"text pairs ([CLS] a [SEP] b [SEP]: {pair_packing_backbones()}); "
            f"got a {type(tokenizer).__name__}.")
    return found


def check_same_family(owner, backbone, preprocessor):
    """A generic head's preprocessor must pack with the backbone's family
    (a RoBERTa tokenizer's ids mean nothing to a BERT backbone)."""
    if preprocessor is None:
        return
    expected = family_text_preprocessor(type(backbone))
    found = tokenizer_preprocessor(type(preprocessor.tokenizer))
    if found is not expected:
        raise ArgumentError(
            f"{owner} on a {type(backbone).__name__} needs the "
            f"{expected.tokenizer_cls.__name__} in its preprocessor; got a "
            f"{type(preprocessor.tokenizer).__name__}. Build it from the "
            f"backbone's preset: {type(preprocessor).__name__}"
            f".from_preset(...).")


class EncoderHead:
    """Mixin for the generic heads (`class TokenClassifier(EncoderHead,
    Task)`): any encoder backbone whose family packs text as BERT does,
    with a preprocessor of the same family; `from_preset` checks the
    preset's family before making the preprocessor."""

    backbone_cls = Backbone

    @classmethod
    def check_argument_values(cls, values):
        super().check_argument_values(values)
        backbone = values.get("backbone")
        backbone_packing(cls.__name__, backbone)
        check_same_family(cls.__name__, backbone, values.get("preprocessor"))

    @classmethod
    def preprocessor_for(cls, preset, **kwargs):
        preset_packing(cls.__name__, preset)
        return super().preprocessor_for(preset, **kwargs)
