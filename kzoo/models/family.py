"""A backbone's family, found through the registry: what generic heads
(one class per task, taking any encoder `Backbone`) need to know about the
family they sit on, without code per family.

A family is the set of registered classes built for one backbone class
(BertBackbone: BertMaskedLM, BertPreprocessor, BertTokenizer, ...). The
closest family wins: a subclass of BertBackbone registered with tasks of
its own is its own family, not BERT's.
"""

from kzoo.models.backbone import Backbone
from kzoo.models.registry import get_class, registered_subclasses


def _closest(candidates, cls, key):
    """The candidate whose `key(candidate)` is the nearest base class of
    `cls` (in its MRO); None when none is a base of `cls`."""
    matches = [c for c in candidates
               if isinstance(key(c), type) and issubclass(cls, key(c))]
    matches.sort(key=lambda c: cls.__mro__.index(key(c)))
    return matches[0] if matches else None


def family_task(backbone_cls, kind):
    """The registered subclass of `kind` (a task base class such as
    `MaskedLM` or `SequenceClassifier`) made for `backbone_cls`'s family;
    None when the family has none."""
    tasks = [task for task in registered_subclasses(kind)
             if task.backbone_cls is not Backbone]
    return _closest(tasks, backbone_cls, lambda task: task.backbone_cls)


def family_preprocessor(backbone_cls):
    """The family's plain text preprocessor (the one its sequence
    classifier packs with: `BertPreprocessor`, `RobertaPreprocessor`, ...);
    None when the family has no classifier."""
    from kzoo.models.task_wiring import SequenceClassifier
    classifier = family_task(backbone_cls, SequenceClassifier)
    return None if classifier is None else classifier.preprocessor_cls


def tokenizer_preprocessor(tokenizer_cls):
    """The family's plain text preprocessor, found from its tokenizer
    class (a tokenizer alone, as a saved preprocessor holds, says which
    family packs it)."""
    from kzoo.models.task_wiring import SequenceClassifier
    preprocessors = [task.preprocessor_cls for task in
                     registered_subclasses(SequenceClassifier)
                     if task.preprocessor_cls is not None]
    return _closest(preprocessors, tokenizer_cls,
                    lambda preprocessor: preprocessor.tokenizer_cls)


def preset_backbone_class(preset):
    """The backbone class a preset's config.json holds."""
    return get_class(preset.json("config.json")["class_name"], Backbone)
