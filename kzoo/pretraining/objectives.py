"""The table of pretraining objectives: how each one builds its task from a
preset and its batch stream from a prepared corpus.

An objective module registers itself with `register_objective`; `kzoo
pretrain` and `kzoo.pretraining` look objectives up here by name, or take a
family's default (the objective its original was pretrained with).
"""

import dataclasses
from typing import Callable

from kzoo.core import families

OBJECTIVES = {}


@dataclasses.dataclass(frozen=True)
class Objective:
    """One pretraining objective.

    Attributes:
        name: its CLI name (`"mlm"`, `"mlm_nsp"`, `"rtd"`, ...).
        description: one line for `kzoo pretrain --help`.
        families: the families (`kzoo.models.<family>` names) it applies
            to: for kzoo's own objectives, the families that declare it
            (`kzoo.core.families.families_with_objective`). A family's
            default is the first objective its declaration names (the
            first registered, for one it does not name).
        make_task: `(preset, load_weights, sequence_length, **options) ->
            task`: the task to train, built without a preprocessor (the
            stream hands it finished batches), not compiled.
        make_stream: `(task, corpus, batch_size, seed, process_index,
            process_count, draw_groups, sequence_length, **options) ->
            BatchStream`.
        options: the objective's own options and their defaults (e.g.
            `{"masking": None}`), passed to both makers.
        mask_rate_option: the option among `options` that holds the
            share it masks (`"mask_selection_rate"`, T5's and BART's
            `"noise_density"`), which `mask_rate` sets; None for an
            objective that masks nothing (a language model's).
    """

    name: str
    description: str
    families: tuple
    make_task: Callable
    make_stream: Callable
    options: dict = dataclasses.field(default_factory=dict)
    mask_rate_option: str = None


def register_objective(objective):
    if objective.name in OBJECTIVES:
        raise ValueError(f"Objective {objective.name!r} is registered twice.")
    OBJECTIVES[objective.name] = objective
    return objective


def family_objectives(family):
    """The objectives that apply to `family`, its default first: in the
    order the family declares them (`kzoo.models.<family>.FAMILY`), then
    any other registered for it (a test's, a user's)."""
    declared = (families.objectives_of(family)
                if family in families.FAMILIES else ())
    applying = [o for o in OBJECTIVES.values() if family in o.families]
    return sorted(applying, key=lambda o: (
        declared.index(o.name) if o.name in declared else len(declared)))


def find_objective(family, name=None):
    """Objective `name` (checked to apply to `family`), or `family`'s
    default; a clear error otherwise."""
    choices = family_objectives(family)
    if not choices:
        raise ValueError(
            f"No pretraining objective is registered for the {family} "
            f"family. Objectives: {', '.join(sorted(OBJECTIVES))}.")
    if name is None:
        return choices[0]
    for objective in choices:
        if objective.name == name:
            return objective
    raise ValueError(
        f"Objective {name!r} does not apply to the {family} family; it "
        f"takes {', '.join(o.name for o in choices)}.")
