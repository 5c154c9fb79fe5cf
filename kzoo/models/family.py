"""A backbone's family: the family's own task of a kind, and its
preprocessor.

Generic tasks (`SpanBoundaryPretrainer`, `TokenClassifier`,
`MultipleChoice`) take any encoder `Backbone` and ask its family for the
parts that differ between families: the masked-LM head and preprocessor,
the sequence classifier's pooling, the preprocessor that packs its text.
A family is found through the registry: the registered tasks of a kind
whose `backbone_cls` the backbone is an instance of, the closest first (an
`XLMRobertaBackbone` is RoBERTa's subclass, and its own family).
"""

from kzoo import presets
from kzoo.models.arguments import ArgumentError
from kzoo.models.backbone import Backbone
from kzoo.models.registry import get_class, registered_subclasses


def family_task(backbone_cls, kind):
    """The registered subclass of `kind` (a task base class such as
    `MaskedLM` or `SequenceClassifier`) made for `backbone_cls`'s family;
    None when the family has none."""
    tasks = [task for task in registered_subclasses(kind)
             if issubclass(backbone_cls, task.backbone_cls)
             and task.backbone_cls is not Backbone]
    # The closest family first (a subclass of BertBackbone is its own).
    tasks.sort(key=lambda task: backbone_cls.__mro__.index(task.backbone_cls))
    return tasks[0] if tasks else None


def masked_lm_family(backbone_cls):
    """The registered masked-LM task of `backbone_cls`'s family (its head
    and preprocessor are the family's); None when it has none."""
    from kzoo.models.task_wiring import MaskedLM
    return family_task(backbone_cls, MaskedLM)


def checked_family_task(owner, backbone, kind, needs):
    """`family_task(type(backbone), kind)`, or an `ArgumentError` naming
    the families that have one. `needs`: what the owner needs, in words
    ("a masked LM")."""
    task = family_task(type(backbone), kind)
    if task is None:
        families = sorted({t.backbone_cls.__name__
                           for t in registered_subclasses(kind)
                           if t.backbone_cls is not Backbone})
        from kzoo.models.arguments import describe
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
