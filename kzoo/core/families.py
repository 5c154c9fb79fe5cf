"""The families kzoo ships, and what each declares about itself.

`FAMILIES` is the one static list: a family is its folder
`kzoo/models/<family>/`, and its package's `__init__.py` declares, once,
what the rest of kzoo needs to know about it (`FAMILY = Family(...)`):

- `model_types`: the Hugging Face `model_type`s (config.json's) its
  converter reads; a family with any has its converter in
  `kzoo/models/<family>/convert.py` (a `Converter` subclass registered
  with `kzoo.convert.register_converter`);
- `original_format`: the name of a checkpoint layout from before Hugging
  Face that its converter module recognises by its files
  (`is_original_folder(path)`) and converts (`to_preset(src, dest, ...)`):
  ELMo's bilm-tf folders, AWD-LSTM's fastai ones;
- `objectives`: the pretraining objectives (`kzoo.pretraining`'s names)
  that train it, its default first.

Only the families listed here are ever imported on a checkpoint's or a
command's say-so (a `model_type` or a family name is data from a file: it
picks a listed module, never names one). (`kzoo.models.<family>.FAMILY` is
read by importing the family's package, which the `kzoo` facade does
anyway.) Which paths a family touches outside its folder is
docs/design.md's checklist, held by tests/models/test_family_checklist.py.
"""

import dataclasses
import importlib

# Every family, by its package under kzoo/models/.
FAMILIES = ("albert", "awd_lstm", "bart", "bert", "deberta_v3",
            "distil_bert", "electra", "elmo", "gpt2", "mobilebert",
            "rembert", "roberta", "t5", "xlm_roberta")


@dataclasses.dataclass(frozen=True)
class Family:
    """What a family declares about itself (see the module doc)."""
    model_types: tuple = ()
    original_format: str = None
    objectives: tuple = ()

    @property
    def has_converter(self):
        return bool(self.model_types or self.original_format)


def declared(family):
    """The `Family` that `kzoo.models.<family>` declares; a `ValueError`
    naming the families for a name that is not one of them."""
    if family not in FAMILIES:
        raise ValueError(f"Unknown family {family!r}; the families are "
                         f"{', '.join(FAMILIES)}.")
    declaration = importlib.import_module(f"kzoo.models.{family}").FAMILY
    if not isinstance(declaration, Family):
        raise TypeError(f"kzoo.models.{family}.FAMILY is not a Family.")
    return declaration


def converter_module(family):
    """The module name of a listed family's converter."""
    return f"kzoo.models.{family}.convert"


def family_of_model_type(model_type):
    """The family whose converter reads Hugging Face `model_type`, or
    None."""
    return next((family for family in FAMILIES
                 if model_type in declared(family).model_types), None)


def model_types():
    """Every Hugging Face `model_type` a family's converter reads."""
    return sorted(model_type for family in FAMILIES
                  for model_type in declared(family).model_types)


def original_format_families():
    """The families whose converter reads a layout from before Hugging
    Face, in `FAMILIES` order."""
    return [family for family in FAMILIES
            if declared(family).original_format]


def objectives_of(family):
    """The pretraining objectives `family` declares, its default first."""
    return declared(family).objectives


def families_with_objective(objective):
    """The families that declare pretraining `objective`, in `FAMILIES`
    order."""
    return tuple(family for family in FAMILIES
                 if objective in declared(family).objectives)
