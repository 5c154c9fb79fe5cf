"""Small models for the bad-input suite, built once per session and shared
(every case is rejected before any work, so sharing is safe)."""

import functools

from text_testing import (make_preprocessor, make_task,
                          make_task_preprocessor, task_backbone_cls,
                          tiny_backbone)


@functools.lru_cache(maxsize=None)
def shared_backbone(backbone_cls):
    return tiny_backbone(backbone_cls)


@functools.lru_cache(maxsize=None)
def shared_preprocessor(preprocessor_cls, sequence_length=12):
    return make_preprocessor(preprocessor_cls,
                             sequence_length=sequence_length)


@functools.lru_cache(maxsize=None)
def shared_task_preprocessor(task_cls):
    """The preprocessor a task's `from_preset` gives it; the family's
    shared one where that is the same class and config."""
    preprocessor = make_task_preprocessor(task_cls)
    shared = shared_preprocessor(type(preprocessor))
    return shared if shared.get_config() == preprocessor.get_config() \
        else preprocessor


@functools.lru_cache(maxsize=None)
def shared_task(task_cls, **kwargs):
    """A registered task, small, with its family's preprocessor."""
    backbone = shared_backbone(task_backbone_cls(task_cls))
    preprocessor = shared_task_preprocessor(task_cls)
    if not kwargs:
        return make_task(task_cls, backbone=backbone,
                         preprocessor=preprocessor)
    return task_cls(backbone=backbone, preprocessor=preprocessor, **kwargs)
