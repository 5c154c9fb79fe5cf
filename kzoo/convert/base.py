"""The converter registry and the family-independent half of conversion.

A family converter (one module per family, in its folder:
`kzoo/models/bert/convert.py`, `kzoo/models/gpt2/convert.py`, ...)
subclasses `Converter` (the Hugging Face `model_type`s it reads are the
family's declaration's) and lists its weights as `WeightSpec`s: one
Hugging Face tensor name and the kzoo variable(s) it fills. Everything
else is shared and lives here:

- import: match every spec against the checkpoint *before* reading any
  tensor data (missing tensors, wrong shapes, unexpected backbone tensors
  and untied copies are all reported together, naming each tensor), then
  read, transform and assign one tensor at a time with a progress line;
- export: the same specs run backwards to produce the Hugging Face
  `state_dict`, so import and export cannot drift apart.

Registering a family:

```python
from kzoo.convert.base import Converter, WeightSpec, register_converter

@register_converter
class GPT2Converter(Converter):
    family = "gpt2"   # reads the model_types kzoo.models.gpt2 declares
    backbone_class = "GPT2Backbone"
    base_model_prefix = "transformer"
    architectures = {"GPT2Model": None, "GPT2LMHeadModel": "GPT2CausalLM"}
    backbone_tensor_prefixes = ("wte.", "wpe.", "h.", "ln_f.")
    ...
```

`converter_for_model_type("gpt2")` imports `kzoo.models.gpt2.convert`
on first use: the family whose declaration (`FAMILY` in its package,
read through `kzoo.core.families`' static list) names the `model_type`.
A family's converter lives in its folder and subclasses these pieces;
this module imports one only through that list.
"""

import importlib
import re
import shutil
import time
from pathlib import Path

import keras
import numpy as np

from kzoo.convert.errors import ConversionError
from kzoo.convert.progress import Progress
from kzoo.core import families
from kzoo.core.classification import from_hf_config
from kzoo.core.registry import get_class
from kzoo.utils.skip_init import initial_values_skipped

_CONVERTERS = {}  # model_type -> Converter instance
_BY_FAMILY = {}   # kzoo family -> Converter instance


# The generic heads (kzoo.TokenClassifier, kzoo.MultipleChoice) every
# encoder family with `generic_heads` converts: HF architecture suffix ->
# kzoo task class.
GENERIC_HEADS = {"ForTokenClassification": "TokenClassifier",
                 "ForMultipleChoice": "MultipleChoice"}


def register_converter(cls):
    """Class decorator: make `cls` the converter for its `model_types`.

    Example:
    ```python
    from kzoo import convert
    from kzoo.models.bert.convert import BertConverter

    @convert.register_converter
    class MyBertConverter(BertConverter):
        # Checkpoints of a BERT saved under a model_type of its own.
        model_types = ("my-bert",)
        family = None   # kzoo's BERT exports stay BertConverter's

    converter = convert.converter_for_model_type("my-bert")
    assert isinstance(converter, MyBertConverter)
    ```
    """
    if cls.generic_heads:
        # "BertForSequenceClassification" -> "BertForTokenClassification",
        # "BertForMultipleChoice": the family's own architecture names.
        prefix = next(name[:-len("ForSequenceClassification")]
                      for name in cls.architectures
                      if name.endswith("ForSequenceClassification"))
        cls.architectures = {**cls.architectures, **{
            prefix + suffix: task for suffix, task in GENERIC_HEADS.items()}}
    if "model_types" not in vars(cls) and cls.family in families.FAMILIES:
        # A family's own converter reads what the family declares (not
        # the model_types of the converter it subclasses).
        cls.model_types = families.declared(cls.family).model_types
    instance = cls()
    for model_type in cls.model_types:
        _CONVERTERS[model_type] = instance
    if cls.family:
        _BY_FAMILY[cls.family] = instance
    return cls


def known_model_types():
    """The `model_type`s kzoo converts.

    Example:
    ```python
    from kzoo import convert
    assert "bert" in convert.known_model_types()
    ```
    """
    return families.model_types()


def converter_for_model_type(model_type):
    """The converter of a Hugging Face `model_type` (config.json's), its
    module imported on first use; a `ConversionError` listing the known
    types for any other.

    Example:
    ```python
    from kzoo import convert
    converter = convert.converter_for_model_type("bert")
    assert converter.backbone_class == "BertBackbone"
    ```
    """
    family = families.family_of_model_type(model_type) \
        if isinstance(model_type, str) else None
    if family is None and isinstance(model_type, str) and \
            model_type in _CONVERTERS:
        # Registered by code already run (`register_converter`): nothing
        # is imported on the checkpoint's say-so.
        return _CONVERTERS[model_type]
    if family is None:
        raise ConversionError(
            f"Unknown model_type {model_type!r} in config.json: kzoo "
            f"converts {', '.join(known_model_types())}.")
    importlib.import_module(families.converter_module(family))
    return _CONVERTERS[model_type]


def original_format_module(path):
    """The converter module of a folder in one of the layouts from before
    Hugging Face that a family declares (`original_format`: ELMo's
    bilm-tf, AWD-LSTM's fastai), or None (e.g. a Hugging Face folder).
    Such a checkpoint has no model_type to dispatch on: each of those
    converters recognises its folders by their files
    (`is_original_folder(path)`) and converts them (`to_preset(src, dest,
    ...)`); `hf_to_preset` (and so `kzoo convert`) asks them first."""
    from pathlib import Path
    if not isinstance(path, (str, Path)) or not Path(path).is_dir():
        return None
    for family in families.original_format_families():
        converter = importlib.import_module(families.converter_module(family))
        if converter.is_original_folder(path):
            return converter
    return None


def converter_for_model(model):
    """The converter of a kzoo backbone or task (by the backbone's family).

    Example:
    ```python
    from kzoo import convert
    backbone = kzoo.BertBackbone.from_preset("bert_tiny_en_uncased",
                                             load_weights=False)
    assert convert.converter_for_model(backbone).backbone_class == \
        "BertBackbone"
    ```
    """
    backbone = getattr(model, "backbone", model)
    family = getattr(backbone, "family", None)
    if isinstance(family, str) and family in _BY_FAMILY:
        # Imported already, or registered (`register_converter`) by code
        # outside kzoo, such as a family under development: exportable
        # without being one of kzoo.core.families' list.
        return _BY_FAMILY[family]
    if family not in families.FAMILIES or \
            not families.declared(family).model_types:
        raise ConversionError(
            f"No Hugging Face exporter for {type(model).__name__} (family "
            f"{family!r}).")
    importlib.import_module(families.converter_module(family))
    return _BY_FAMILY[family]


class WeightSpec:
    """One Hugging Face tensor <-> one or more kzoo variables.

    Args:
        hf_name: the tensor's name without the base-model prefix
            (`"encoder.layer.0.attention.self.query.weight"`).
        variables: the kzoo variable, or a list of them when one Hugging
            Face tensor holds several (GPT-2's fused `c_attn`).
        transpose: Hugging Face stores the transpose (torch `Linear`
            weights are `(out, in)`, Keras `Dense` kernels `(in, out)`).
        split_axis: with several variables, the axis (in kzoo's layout)
            along which the Hugging Face tensor is their concatenation.
        optional: None, or the reason why a checkpoint may lack this tensor
            (the variable then keeps its initial value, and the report
            says so).
        alternatives: other names the same tensor goes by in older
            checkpoints.
        part: "backbone" (prefixed with the base-model prefix inside task
            checkpoints) or "head".
        export: False to leave it out of exported checkpoints (a tensor the
            Hugging Face architecture does not have).
        group: a label for the progress line (`"layer 3"`).

    Example:
    ```python
    from kzoo import convert
    dense = keras.layers.Dense(3)
    dense.build((None, 2))
    spec = convert.WeightSpec("classifier.weight", dense.kernel,
                              transpose=True)
    assert spec.hf_shape == (3, 2)   # torch's Linear: (out, in)
    hf_weight = np.arange(6.0).reshape(3, 2)
    [kernel] = spec.to_kzoo(hf_weight)
    assert kernel.shape == (2, 3)    # Keras' Dense: (in, out)
    np.testing.assert_array_equal(spec.to_hf([kernel]), hf_weight)
    ```
    """

    def __init__(self, hf_name, variables, transpose=False, split_axis=None,
                 optional=None, alternatives=(), part="backbone", export=True,
                 group=None):
        self.hf_name = hf_name
        self.variables = (list(variables) if isinstance(variables, (list, tuple))
                          else [variables])
        self.transpose = transpose
        self.split_axis = split_axis
        if len(self.variables) > 1 and split_axis is None:
            raise ValueError(f"{hf_name}: several variables need split_axis.")
        self.optional = optional
        self.alternatives = tuple(alternatives)
        self.part = part
        self.export = export
        self.group = group or part

    def __repr__(self):
        return f"WeightSpec({self.hf_name!r} -> {self.kzoo_names()})"

    def kzoo_names(self):
        return ", ".join(v.path for v in self.variables)

    @property
    def hf_shape(self):
        shapes = [tuple(v.shape) for v in self.variables]
        shape = list(shapes[0])
        if len(shapes) > 1:
            shape[self.split_axis] = sum(s[self.split_axis] for s in shapes)
        return tuple(reversed(shape)) if self.transpose else tuple(shape)

    def to_kzoo(self, array):
        """The Hugging Face tensor -> one array per kzoo variable."""
        if self.transpose:
            array = array.T
        if len(self.variables) == 1:
            return [array]
        sizes = [v.shape[self.split_axis] for v in self.variables]
        return np.split(array, np.cumsum(sizes)[:-1], axis=self.split_axis)

    def to_hf(self, arrays):
        """kzoo variable values -> the Hugging Face tensor."""
        array = (arrays[0] if len(arrays) == 1
                 else np.concatenate(arrays, axis=self.split_axis))
        return np.ascontiguousarray(array.T if self.transpose else array)


def linear(prefix, dense, group, part="backbone", **kwargs):
    """The two specs of a torch `Linear` <-> a Keras `Dense`."""
    return [
        WeightSpec(f"{prefix}.weight", dense.kernel, transpose=True,
                   group=group, part=part, **kwargs),
        WeightSpec(f"{prefix}.bias", dense.bias, group=group, part=part,
                   **kwargs),
    ]


def embedding(name, layer, group="embeddings", part="backbone", **kwargs):
    """The spec of a torch `Embedding` <-> a Keras embedding layer (the
    same `(rows, dim)` table on both sides)."""
    return WeightSpec(name, layer.embeddings, group=group, part=part,
                      **kwargs)


def layer_norm(prefix, norm, group, part="backbone", **kwargs):
    """The two specs of a torch `LayerNorm` <-> a Keras `LayerNormalization`."""
    return [
        WeightSpec(f"{prefix}.weight", norm.gamma, group=group, part=part,
                   alternatives=(f"{prefix}.gamma",), **kwargs),
        WeightSpec(f"{prefix}.bias", norm.beta, group=group, part=part,
                   alternatives=(f"{prefix}.beta",), **kwargs),
    ]


# transformers' names for the modules of a BERT-style encoder block
# (BERT, RoBERTa, XLM-R, ELECTRA, DeBERTa-v2/v3, under
# `encoder.layer.<i>`): each part of a kzoo.layers block
# (`transformer_block_specs`) -> its module.
BERT_BLOCK_NAMES = {
    "query": "attention.self.query", "key": "attention.self.key",
    "value": "attention.self.value",
    "attention_output": "attention.output.dense",
    "attention_norm": "attention.output.LayerNorm",
    "intermediate": "intermediate.dense", "output": "output.dense",
    "output_norm": "output.LayerNorm",
}


def transformer_block_specs(prefix, block, group, names=BERT_BLOCK_NAMES):
    """The specs of a kzoo.layers transformer block's attention
    projections, feed-forward layers and norms, in `names`' order, each
    under the module name `names` gives its part (`BERT_BLOCK_NAMES`'
    keys) below `prefix`. A part `names` leaves out is the caller's to
    map (DeBERTa's projections)."""
    attention = block.attention
    layers = {"query": attention.query_dense, "key": attention.key_dense,
              "value": attention.value_dense,
              "attention_output": attention.output_dense,
              "attention_norm": block.attention_layer_norm,
              "intermediate": block.intermediate_dense,
              "output": block.output_dense,
              "output_norm": block.output_layer_norm}
    specs = []
    for part, name in names.items():
        spec = layer_norm if part.endswith("_norm") else linear
        specs += spec(f"{prefix}.{name}", layers[part], group)
    return specs


def masked_lm_head(head, dense, norm, bias, decoder_bias=None,
                   group="mlm head"):
    """The specs of a `kzoo.layers.MaskedLMHead`: its transform (`dense`),
    layer norm (`norm`) and output `bias` (stored again as
    `decoder_bias` by checkpoints that tie it to the decoder). The
    decoder's weight is the token embedding: a converter's
    `tied_tensors` names it."""
    alternatives = (decoder_bias,) if decoder_bias else ()
    return [
        *linear(dense, head.transform, group, part="head"),
        *layer_norm(norm, head.layer_norm, group, part="head"),
        WeightSpec(bias, head.bias, part="head", alternatives=alternatives,
                   group=group),
    ]


class ConversionReport:
    """What a conversion did with every source tensor.

    Example:
    ```python
    from kzoo import convert
    backbone = kzoo.BertBackbone.from_preset("bert_tiny_en_uncased",
                                             load_weights=False)
    convert.export_hf(backbone, "hf_out", verbose=False)
    report = convert.load_hf_weights(backbone, "hf_out", verbose=False)
    assert isinstance(report, convert.ConversionReport)
    print(report.summary())   # "BertBackbone from hf_out: 39 tensors loaded"
    ```
    """

    def __init__(self, source, model_type, model_class):
        self.source = str(source)
        self.model_type = model_type
        self.model_class = model_class
        self.used = []               # source tensor names, in load order
        self.skipped = {}            # source name -> why it needs no weight
        self.unused = {}             # source name -> why this model ignores it
        self.not_in_checkpoint = {}  # kzoo variable path -> why that is fine
        self.notes = []
        self.seconds = None       # the whole conversion
        self.load_seconds = None  # matching, reading and assigning tensors

    def summary(self):
        parts = [f"{len(self.used)} tensors loaded"]
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped")
        if self.unused:
            parts.append(f"{len(self.unused)} unused")
        if self.not_in_checkpoint:
            parts.append(f"{len(self.not_in_checkpoint)} kzoo weights kept "
                         "at their initial values")
        line = f"{self.model_class} from {self.source}: " + ", ".join(parts)
        if self.seconds is not None:
            line += f" ({self.seconds:.1f}s)"
        return line

    def details(self):
        lines = [self.summary()]
        for title, items in (("skipped", self.skipped),
                             ("unused", self.unused),
                             ("not in checkpoint", self.not_in_checkpoint)):
            for name, reason in items.items():
                lines.append(f"  {title}: {name}: {reason}")
        lines.extend(f"  note: {note}" for note in self.notes)
        return "\n".join(lines)

    def to_json(self):
        return {"source": self.source, "model_type": self.model_type,
                "model_class": self.model_class, "used": len(self.used),
                "skipped": self.skipped, "unused": self.unused,
                "not_in_checkpoint": self.not_in_checkpoint,
                "notes": self.notes}

    def __repr__(self):
        return self.details()


class Converter:
    """Base class of a family's Hugging Face converter. See module doc.

    Class attributes:
        model_types: Hugging Face `model_type` values this converter reads.
        family: the kzoo family (`Backbone.family`), for export.
        backbone_class: kzoo backbone class name.
        base_model_prefix: Hugging Face's `base_model_prefix` (task
            checkpoints store backbone tensors under `"<prefix>."`).
        architectures: Hugging Face architecture -> kzoo task class name
            (None: the backbone alone).
        backbone_tensor_prefixes: canonical names starting with these
            belong to the backbone; one left over means the config does not
            describe the weights (an error, not a silent skip).
        skipped_tensors: regex -> reason, for tensors that are not weights
            (buffers such as `position_ids`).

    Example:
    ```python
    from kzoo import convert
    converter = convert.converter_for_model_type("bert")
    assert isinstance(converter, convert.Converter)
    backbone = kzoo.BertBackbone.from_preset("bert_tiny_en_uncased",
                                             load_weights=False)
    specs = converter.weight_specs(backbone, {"architectures": ["BertModel"]})
    print(specs[0])   # WeightSpec('embeddings.word_embeddings.weight' -> ...)
    # Every variable has its Hugging Face tensor (import and export).
    assert {v.path for spec in specs for v in spec.variables} == \
        {v.path for v in backbone.weights}
    ```
    """

    model_types = ()
    family = None
    backbone_class = None
    base_model_prefix = ""
    architectures = {}
    backbone_tensor_prefixes = ()
    skipped_tensors = {}
    # Whether the family converts kzoo's generic heads (`GENERIC_HEADS`):
    # its `*ForTokenClassification` and `*ForMultipleChoice`.
    generic_heads = False
    # Whether the family generates text: its presets then keep the
    # checkpoint's generation settings (`generation.json`).
    generates = False

    # ------------------------------------------------------------------
    # Family hooks (import)
    # ------------------------------------------------------------------
    # transformers' config defaults, for checkpoints that leave a field out.
    hf_defaults = {}
    # Backbone argument -> the config.json field that holds it, for the
    # arguments that are a field as it is (the backbone's argument spec
    # checks the values; a bad one is an error naming config.json).
    config_fields = {}

    def hf_value(self, hf_config, key):
        """`hf_config[key]`, or transformers' default where the file leaves
        it out (or writes null)."""
        value = hf_config.get(key)
        return self.hf_defaults.get(key) if value is None else value

    def checked_tokenizer(self, checkpoint, make_tokenizer):
        """`make_tokenizer()`, with its errors named after the checkpoint,
        and checked to fit the embedding table `vocab_size` gives."""
        try:
            tokenizer = make_tokenizer()
        except ValueError as e:
            raise ConversionError(f"{checkpoint.path}: {e}") from None
        size = self.hf_value(checkpoint.config, "vocab_size")
        if isinstance(size, int) and tokenizer.vocabulary_size > size:
            raise ConversionError(
                f"{checkpoint.path}: the tokenizer has "
                f"{tokenizer.vocabulary_size} tokens but vocab_size is "
                f"{size}: the config disagrees with the tokenizer.")
        return tokenizer

    def copied_tokenizer_file(self, checkpoint, preset_dir, report, name):
        """The checkpoint's tokenizer file `name` (a SentencePiece model)
        copied into the preset folder: its path there; None, noted in the
        report, where the checkpoint has none (a tokenizer.json alone
        lacks the model's normalization rules)."""
        if not checkpoint.has(name):
            report.notes.append(f"no {name}: the preset has no tokenizer")
            return None
        path = Path(preset_dir) / name
        shutil.copyfile(checkpoint.file(name), path)
        return path

    def mapped_kwargs(self, hf_config):
        """The backbone arguments `config_fields` names, read from
        `hf_config`."""
        return {argument: self.hf_value(hf_config, field)
                for argument, field in self.config_fields.items()}

    def backbone_kwargs(self, hf_config):
        """Hugging Face config -> kzoo backbone constructor arguments.
        Raise `ConversionError` for any option kzoo cannot reproduce."""
        raise NotImplementedError

    def task_kwargs(self, task_name, hf_config, checkpoint=None):
        """Constructor arguments of task `task_name` beyond the backbone."""
        return {}

    def backbone_specs(self, backbone, hf_config):
        """`WeightSpec`s of the backbone's weights."""
        raise NotImplementedError

    def head_specs(self, task, task_name, hf_config):
        """`WeightSpec`s of the task head's weights (part="head")."""
        return []

    def tied_tensors(self, task_name):
        """Canonical tensor -> the canonical tensor it must equal, for the
        tied copies a checkpoint may carry (verified, then skipped)."""
        return {}

    def detect_task(self, checkpoint):
        """The kzoo task class name for a checkpoint (None: backbone): its
        architecture's task, else `headless_task`'s."""
        task = next((self.architectures[architecture]
                     for architecture in checkpoint.architectures
                     if architecture in self.architectures), None)
        return task or self.headless_task(checkpoint)

    def headless_task(self, checkpoint):
        """The task of a checkpoint whose architecture names no task model
        (a base model, or none at all): for one that names no architecture,
        the task that keeps the pretraining heads its tensors show
        (`pretraining_task`); else None, the backbone. A family whose
        checkpoints say more (BERT's sentence-transformers folders) adds
        to it."""
        if checkpoint.architectures:
            return None
        return self.pretraining_task(checkpoint)

    def task_names(self):
        return sorted({t for t in self.architectures.values() if t})

    # (task class name, canonical tensors that show its heads), richest
    # first: the task that keeps every pretraining head a checkpoint has.
    pretraining_tasks = ()

    def pretraining_task(self, checkpoint):
        """The task that keeps the most of the checkpoint's pretraining
        heads (named presets convert to it, so `BertMaskedLM.from_preset`
        gets the MLM head and `BertPretrainer` the NSP head too); None when
        the checkpoint has none."""
        names = {self.canonical_name(n) for n in checkpoint.tensors.names()}
        for task_name, tensors in self.pretraining_tasks:
            if all(t in names for t in tensors):
                return task_name
        return None

    def write_tokenizer(self, checkpoint, preset_dir, report):
        """Write tokenizer assets into `preset_dir` and return the kzoo
        tokenizer (None when the checkpoint has no tokenizer files)."""
        return None

    def preprocessor(self, task_name, tokenizer, hf_config, checkpoint=None):
        """The preprocessor to save with a converted preset (or None)."""
        return None

    # ------------------------------------------------------------------
    # Family hooks (export)
    # ------------------------------------------------------------------
    def hf_architecture(self, model):
        """Hugging Face architecture name for a kzoo model."""
        task_name = None if _is_backbone(model) else type(model).__name__
        for architecture, name in self.architectures.items():
            if name == task_name:
                return architecture
        raise ConversionError(
            f"{type(model).__name__} has no Hugging Face counterpart; export "
            "its backbone instead.")

    def hf_config(self, model, architecture, tokenizer=None):
        """The Hugging Face `config.json` for a kzoo model."""
        raise NotImplementedError

    def export_tokenizer(self, tokenizer, dest, hf_config):
        """Write Hugging Face tokenizer files for `tokenizer` into dest."""

    def export_extras(self, model, dest, hf_config):
        """Any further files the Hugging Face layout needs."""

    # ------------------------------------------------------------------
    # Shared machinery
    # ------------------------------------------------------------------
    def canonical_name(self, name):
        """Strip the base-model prefix: `bert.embeddings...` and
        `embeddings...` are the same tensor."""
        prefix = self.base_model_prefix + "." if self.base_model_prefix else ""
        if prefix and name.startswith(prefix):
            return name[len(prefix):]
        return name

    def skip_reason(self, canonical):
        for pattern, reason in self.skipped_tensors.items():
            if re.fullmatch(pattern, canonical):
                return reason
        return None

    def is_backbone_tensor(self, canonical):
        return canonical.startswith(tuple(self.backbone_tensor_prefixes))

    def build(self, task_name, hf_config, checkpoint=None):
        """An untrained kzoo model with the checkpoint's architecture."""
        backbone_cls = get_class(self.backbone_class)
        backbone = backbone_cls(**self.backbone_kwargs(hf_config))
        if task_name is None:
            return backbone
        task_cls = get_class(task_name)
        if task_name in GENERIC_HEADS.values():
            kwargs = generic_task_kwargs(task_name, hf_config)
        else:
            kwargs = self.task_kwargs(task_name, hf_config, checkpoint)
        return task_cls(backbone=backbone, preprocessor=None, **kwargs)

    def build_for_loading(self, task_name, hf_config, checkpoint):
        """`build`, for a model that `checkpoint` is loaded into next.

        Built first without drawing random initial values
        (`kzoo.utils.skip_init`: on torch those draws were ~30% of a tiny
        BERT's conversion, and most of a large one's); kept when the
        checkpoint holds a tensor for every weight. Otherwise (a new task
        head, an optional tensor the checkpoint lacks) built again as
        `build` builds it, so the weights it lacks start random. The
        check reads the tensor headers (and the tied pairs it compares)."""
        with initial_values_skipped():
            model = self.build(task_name, hf_config, checkpoint)
        scratch = ConversionReport(checkpoint.tensors.description,
                                   checkpoint.model_type, type(model).__name__)
        try:
            plan = self._plan(model, task_name, checkpoint, scratch)
        except ConversionError:
            # `load_weights` reports it, after the tokenizer, as before.
            return self.build(task_name, hf_config, checkpoint)
        filled = {id(variable) for spec, _ in plan
                  for variable in spec.variables}
        if all(id(variable) in filled for variable in model.weights
               if "float" in str(variable.dtype)):
            return model
        return self.build(task_name, hf_config, checkpoint)

    def weight_specs(self, model, hf_config):
        backbone = getattr(model, "backbone", model)
        specs = list(self.backbone_specs(backbone, hf_config))
        name = type(model).__name__
        if name == "MultipleChoice":
            specs += self.multiple_choice_specs(model.scorer, hf_config)
        elif name in NAMED_ALIKE_HEADS:
            specs += generic_head_specs(model)
        elif not _is_backbone(model):
            specs += self.head_specs(model, name, hf_config)
        return specs

    def multiple_choice_specs(self, scorer, hf_config):
        """Specs of a `MultipleChoice`'s per-choice head (`scorer`, the
        family's classifier with one output); by default named as the
        family's `*ForSequenceClassification` names its head, which is
        what `*ForMultipleChoice` has for BERT, ALBERT, DistilBERT and
        DeBERTa-v2."""
        return self.head_specs(scorer, type(scorer).__name__, hf_config)

    def export_config(self, model, architecture, tokenizer=None):
        """`hf_config`, with the label fields of the generic heads."""
        config = self.hf_config(model, architecture, tokenizer)
        if type(model).__name__ == "TokenClassifier":
            names = model.label_names or [
                f"LABEL_{i}" for i in range(model.num_classes)]
            config["id2label"] = {str(i): n for i, n in enumerate(names)}
            config["label2id"] = {n: i for i, n in enumerate(names)}
        return config

    def load_weights(self, model, checkpoint, verbose=True, report=None):
        """Fill `model`'s variables from `checkpoint` (an `HFCheckpoint`).

        Every spec is matched and shape-checked first; any problem raises
        one `ConversionError` listing them all, before a value is assigned.
        Returns a `ConversionReport`.
        """
        start = time.perf_counter()
        task_name = None if _is_backbone(model) else type(model).__name__
        report = report or ConversionReport(
            checkpoint.tensors.description, checkpoint.model_type,
            type(model).__name__)
        plan = self._plan(model, task_name, checkpoint, report)
        progress = Progress(len(plan), label="Converting",
                            unit="tensors", verbose=verbose)
        store = checkpoint.tensors
        for spec, source_name in plan:
            array = store.get(source_name)
            for variable, value in zip(spec.variables, spec.to_kzoo(array)):
                variable.assign(np.asarray(value, dtype=variable.dtype))
            report.used.append(source_name)
            progress.advance(1, note=spec.group)
        progress.done()
        report.load_seconds = time.perf_counter() - start
        report.seconds = report.seconds or report.load_seconds
        return report

    def _plan(self, model, task_name, checkpoint, report):
        store = checkpoint.tensors
        canonical = {}
        for name in store.names():
            key = self.canonical_name(name)
            if key in canonical:
                raise ConversionError(
                    f"{store.description}: {canonical[key]!r} and {name!r} "
                    "are the same tensor (with and without the "
                    f"{self.base_model_prefix!r} prefix).")
            canonical[key] = name

        problems, plan, taken = [], [], set()
        for spec in self.weight_specs(model, checkpoint.config):
            found = next((n for n in (spec.hf_name,) + spec.alternatives
                          if n in canonical), None)
            if found is None:
                if spec.optional:
                    for variable in spec.variables:
                        report.not_in_checkpoint[variable.path] = spec.optional
                    continue
                problems.append(
                    f"missing tensor {spec.hf_name!r} (kzoo weight "
                    f"{spec.kzoo_names()})")
                continue
            source_name = canonical[found]
            shape = tuple(store.shape(source_name))
            if shape != spec.hf_shape:
                problems.append(
                    f"tensor {source_name!r} has shape {shape}, but "
                    f"config.json implies {spec.hf_shape} (kzoo weight "
                    f"{spec.kzoo_names()})")
            dtype = store.dtype(source_name)
            if not _is_float_dtype(dtype):
                problems.append(
                    f"tensor {source_name!r} has dtype {dtype}; a weight "
                    "must be floating point")
            taken.add(found)
            plan.append((spec, source_name))

        tied = self.tied_tensors(task_name)
        for key in canonical:
            if key in taken:
                continue
            name = canonical[key]
            reason = self.skip_reason(key)
            if reason:
                report.skipped[name] = reason
            elif key in tied and tied[key] in taken:
                problem = self._check_tied(store, name, canonical[tied[key]])
                if problem:
                    problems.append(problem)
                else:
                    report.skipped[name] = (
                        f"tied: a copy of {canonical[tied[key]]!r}")
            elif self.is_backbone_tensor(key):
                problems.append(
                    f"unexpected tensor {name!r}: config.json does not "
                    "account for it (does the config disagree with the "
                    "weights?)")
            else:
                report.unused[name] = (
                    f"not part of {type(model).__name__}")
        if problems:
            shown = problems[:25]
            more = (f"\n  ... and {len(problems) - 25} more"
                    if len(problems) > 25 else "")
            raise ConversionError(
                f"Cannot load {store.description} into "
                f"{type(model).__name__}: {len(problems)} problem(s):\n  - "
                + "\n  - ".join(shown) + more)
        return plan

    @staticmethod
    def _check_tied(store, name, target):
        if tuple(store.shape(name)) != tuple(store.shape(target)):
            return (f"tensor {name!r} has shape {store.shape(name)} but is "
                    f"tied to {target!r} of shape {store.shape(target)}")
        if not np.array_equal(store.get(name), store.get(target)):
            return (f"tensor {name!r} differs from {target!r}; kzoo ties "
                    "them (one shared weight), so an untied checkpoint "
                    "cannot be represented")
        return None

    def export_tensors(self, model, hf_config):
        """kzoo model -> `{hugging face name: numpy array}`."""
        # Hugging Face task models keep the backbone under
        # `base_model_prefix`; a bare base model has no prefix.
        architecture = hf_config["architectures"][0]
        base = self.architectures.get(architecture) is None
        prefix = ("" if base or not self.base_model_prefix
                  else self.base_model_prefix + ".")
        tensors = {}
        for spec in self.weight_specs(model, hf_config):
            if not spec.export:
                continue
            values = [keras.ops.convert_to_numpy(v.value)
                      for v in spec.variables]
            name = (prefix + spec.hf_name if spec.part == "backbone"
                    else spec.hf_name)
            tensors[name] = spec.to_hf(values)
        return tensors


# kzoo's generic tasks whose head every family's Hugging Face task model
# names alike (MultipleChoice's is family-specific: multiple_choice_specs).
# Not `GENERIC_HEADS` (the architecture-suffix map above, which `build`
# reads): one name for both broke every task conversion.
NAMED_ALIKE_HEADS = ("QuestionAnswerer", "TokenClassifier")


def generic_head_specs(model):
    """The heads of kzoo's generic tasks (one class for every encoder
    family), named alike in every family's Hugging Face task model:
    `*ForQuestionAnswering`'s `qa_outputs` (start and end logits) and
    `*ForTokenClassification`'s `classifier` (dropout + one dense layer on
    the sequence output)."""
    name = type(model).__name__
    if name == "QuestionAnswerer":
        return linear("qa_outputs", model.qa_outputs, "qa head",
                      part="head")
    if name == "TokenClassifier":
        return linear("classifier", model.get_layer("classifier"),
                      "classifier", part="head")
    return []


def classifier_kwargs(hf_config):
    """`num_classes` and `problem_type` of a `*ForSequenceClassification`
    checkpoint (regression when `num_labels == 1`, as `transformers`)."""
    try:
        num_classes, problem_type = from_hf_config(hf_config)
    except ValueError as e:
        raise ConversionError(str(e)) from None
    return {"num_classes": num_classes, "problem_type": problem_type}


def generic_task_kwargs(task_name, hf_config):
    """Constructor arguments of a generic head from a Hugging Face
    config: a token classifier's classes (named after `id2label` unless
    they are transformers' placeholder "LABEL_i" names); both heads'
    `classifier_dropout` where the config sets one (else the backbone's,
    or the family classifier's, default)."""
    dropout = hf_config.get("classifier_dropout")
    kwargs = {"dropout": None if dropout is None else float(dropout)}
    if task_name == "TokenClassifier":
        labels = hf_config.get("id2label") or {}
        names = [labels.get(str(i), labels.get(i)) for i in range(len(labels))]
        kwargs["num_classes"] = len(names) if names else int(
            hf_config.get("num_labels", 2))
        if names and not all(n == f"LABEL_{i}" for i, n in enumerate(names)):
            kwargs["label_names"] = names
    return kwargs


def _is_backbone(model):
    from kzoo.core.backbone import Backbone
    return isinstance(model, Backbone)


def _is_float_dtype(dtype):
    return str(dtype).upper() in ("F16", "BF16", "F32", "F64", "FLOAT16",
                                  "BFLOAT16", "FLOAT32", "FLOAT64", "HALF",
                                  "FLOAT", "DOUBLE")
