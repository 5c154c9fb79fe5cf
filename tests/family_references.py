"""What the tests that check every encoder family at once read about each
one (tests/convert/test_generic_heads_parity.py,
tests/models/test_head_dropout_defaults.py). A family declares it once,
as `REFERENCE = Reference(...)` in its own helper module
(tests/models/<family>/<family>_testing.py), so adding a family adds it to
those tests without an edit there. Which families a test covers comes
from kzoo itself: every family in `kzoo.core.families.FAMILIES` whose
converter reads the architecture the test is about."""

import dataclasses
import importlib
from typing import Callable, Optional

from kzoo.convert import converter_for_model_type
from kzoo.core import families


@dataclasses.dataclass(frozen=True)
class Reference:
    """What a family's `transformers` reference is made of.

    tiny_config(dropout): the fields of a tiny `transformers` config of
        the family whose hidden dropout is `dropout`, for checks of what
        kzoo makes of a config.
    odd_model(architecture): a randomised `transformers` model of the odd
        config the family's parity test uses (families with the generic
        heads: `*ForTokenClassification`, `*ForMultipleChoice`).
    odd_inputs(config, batch, seq): random inputs for it, in kzoo's names
        (`token_ids`, `padding_mask`, maybe `segment_ids`).
    """
    tiny_config: Callable
    odd_model: Optional[Callable] = None
    odd_inputs: Optional[Callable] = None


def converter(family):
    """The converter of a listed family with Hugging Face checkpoints."""
    return converter_for_model_type(families.declared(family).model_types[0])


def families_converting(suffix):
    """`{family: its architecture name}` for each listed family whose
    converter reads a `<prefix><suffix>` architecture (e.g.
    "ForTokenClassification")."""
    found = {}
    for family in families.FAMILIES:
        if not families.declared(family).model_types:
            continue  # converted from an original layout only
        names = [name for name in converter(family).architectures
                 if name.endswith(suffix)]
        if names:
            found[family] = names[0]
    return found


def reference(family):
    """The `REFERENCE` that tests/models/<family>/<family>_testing.py
    declares; an error saying where to declare it for a family that has
    none yet."""
    where = f"tests/models/{family}/{family}_testing.py"
    try:
        module = importlib.import_module(f"{family}_testing")
    except ModuleNotFoundError as error:
        if error.name != f"{family}_testing":
            raise
        module = None
    declared = getattr(module, "REFERENCE", None)
    if not isinstance(declared, Reference):
        raise AssertionError(
            f"{family}: declare `REFERENCE = Reference(...)` "
            f"(tests/family_references.py) in {where}: the tests over "
            "every encoder family read its transformers reference there.")
    return declared
