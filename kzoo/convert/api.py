"""Checkpoint-level conversion: Hugging Face folder <-> kzoo preset folder."""

import os
import shutil
import tempfile
import time
from pathlib import Path

from kzoo import presets
from kzoo.convert.base import (
    ConversionReport, converter_for_model, converter_for_model_type,
    original_format_module)
from kzoo.convert.checkpoint import HFCheckpoint
from kzoo.convert.errors import ConversionError
from kzoo.convert.generation_config import write_generation_settings
from kzoo.convert.progress import quiet
from kzoo.convert.safetensors import save_file
from kzoo.core.arguments import ArgumentError, config_source
from kzoo.utils.files import swap_into_place, write_json
from kzoo.version import __version__


def _say(message, verbose):
    if verbose and not quiet():
        import sys
        print(message, file=sys.stderr, flush=True)


def _resolve_task(converter, checkpoint, task):
    if task in (None, "auto"):
        return converter.detect_task(checkpoint)
    if task == "pretraining":
        return converter.pretraining_task(checkpoint)
    if task in ("backbone", "none", converter.backbone_class):
        return None
    if task not in converter.task_names():
        raise ConversionError(
            f"task={task!r}: a {checkpoint.model_type} checkpoint converts "
            f"to 'auto', 'backbone' or one of "
            f"{', '.join(converter.task_names())}.")
    return task


def load_hf_weights(model, src, verbose=True):
    """Load a Hugging Face checkpoint folder's tensors into an existing
    kzoo `model` (a backbone or task of matching shape).

    Returns the `ConversionReport`. Raises `ConversionError` (naming every
    missing, mis-shaped or unexpected tensor) before assigning anything.

    Example:
    ```python
    from kzoo import convert
    backbone = kzoo.BertBackbone.from_preset("bert_tiny_en_uncased",
                                             load_weights=False)
    convert.export_hf(backbone, "hf_out", verbose=False)   # a BertModel
    fresh = kzoo.BertBackbone.from_preset("bert_tiny_en_uncased",
                                          load_weights=False)
    convert.load_hf_weights(fresh, "hf_out", verbose=False)
    for a, b in zip(backbone.weights, fresh.weights):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a),
                                      keras.ops.convert_to_numpy(b))
    ```
    """
    with HFCheckpoint(src) as checkpoint:
        converter = converter_for_model_type(checkpoint.model_type)
        return converter.load_weights(model, checkpoint, verbose=verbose)


def hf_to_preset(src, dest, task="auto", overwrite=False, verbose=True,
                 source=None, metadata=None, expected_config=None):
    """Convert a Hugging Face checkpoint folder into a kzoo preset folder.

    Args:
        src: a folder with `config.json` and `model.safetensors` (or
            sharded safetensors, or `pytorch_model.bin`).
        dest: the preset folder to write. It appears whole or not at all:
            everything is written into a staging folder beside it, which is
            renamed into place only when the conversion succeeded.
        task: "auto" (from the checkpoint's `architectures`), "backbone",
            "pretraining" (the task that keeps every pretraining head the
            checkpoint has, e.g. MLM + NSP), or a kzoo task class name
            (e.g. "BertMaskedLM").
        overwrite: replace an existing preset at `dest`.
        source: provenance to record in metadata.json (defaults to src).
        metadata: further metadata.json fields.
        expected_config: backbone config fields the checkpoint must match
            (a named preset's architecture); checked before any weight is
            read.

    Returns:
        The `ConversionReport` (None for a folder in an original,
        pre-Hugging Face layout, such as ELMo's: see
        `kzoo.convert.base.original_format_module`).

    Example:
    ```python
    from kzoo import convert
    mlm = kzoo.BertMaskedLM.from_preset("bert_tiny_en_uncased",
                                        load_weights=False)
    convert.export_hf(mlm, "hf_out", verbose=False)
    convert.hf_to_preset("hf_out", "my_preset", verbose=False)
    again = kzoo.BertMaskedLM.from_preset("my_preset")
    assert again.count_params() == mlm.count_params()
    ```
    """
    original = original_format_module(src)
    if original is not None:  # e.g. ELMo's bilm-tf folder: no model_type
        original.to_preset(src, dest, overwrite=overwrite, verbose=verbose,
                           source=source, metadata=metadata)
        return None
    start = time.perf_counter()
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()) and not overwrite:
        raise ConversionError(
            f"{dest} exists and is not empty; pass overwrite=True "
            "(`--overwrite`) to replace it.")
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=dest.parent,
                                    prefix=f".{dest.name}.staging-"))
    try:
        with HFCheckpoint(src, source=source) as checkpoint, \
                presets.own_staging(staging):
            report = _convert_into(checkpoint, staging, task, verbose,
                                   metadata, dest.name, expected_config)
        swap_into_place(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    report.seconds = time.perf_counter() - start
    _say(f"Wrote kzoo preset {dest}: {report.summary()}", verbose)
    for title, items in (("unused", report.unused),
                         ("not in checkpoint", report.not_in_checkpoint)):
        for name, reason in items.items():
            _say(f"  {title}: {name}: {reason}", verbose)
    return report


def _convert_into(checkpoint, staging, task, verbose, metadata, final_name,
                  expected_config=None):
    converter = converter_for_model_type(checkpoint.model_type)
    task_name = _resolve_task(converter, checkpoint, task)
    if expected_config is not None:
        _check_expected(converter.backbone_kwargs(checkpoint.config),
                        expected_config, checkpoint)
    # The config is checked as the model is built, and every tensor's name
    # and shape (headers only) before any tensor data is read.
    def fix(argument):
        field = converter.config_fields.get(argument)
        where = f"its field {field!r}" if field else "one of its fields"
        return (f"That config.json is damaged or not a "
                f"{checkpoint.model_type} config: kzoo's {argument} is read "
                f"from {where}.")

    source = config_source(
        f"the checkpoint's config.json, {checkpoint.path / 'config.json'}",
        fix=fix)
    try:
        with source:
            model = converter.build_for_loading(task_name, checkpoint.config,
                                                checkpoint)
    except ArgumentError as e:
        raise ConversionError(str(e)) from None
    report = ConversionReport(checkpoint.tensors.description,
                              checkpoint.model_type, type(model).__name__)
    tokenizer = converter.write_tokenizer(checkpoint, staging, report)
    converter.load_weights(model, checkpoint, verbose=verbose, report=report)
    model.save_to_preset(staging)
    preprocessor = converter.preprocessor(task_name, tokenizer,
                                          checkpoint.config, checkpoint)
    if preprocessor is not None:
        preprocessor.save_to_preset(staging)
    if converter.generates:
        write_generation_settings(checkpoint, staging)
    from kzoo.core.preset_writer import update_metadata
    fields = {
        "name": final_name,
        "source": checkpoint.source,
        "converted_from": {
            "format": "huggingface",
            "model_type": checkpoint.model_type,
            "architectures": checkpoint.architectures,
            "report": report.to_json(),
        },
    }
    if task_name is not None:
        from kzoo.core.head_weights import head_variables
        fields["heads"] = sorted({key.split("/", 1)[0]
                                  for key in head_variables(model)})
    labels = checkpoint.config.get("id2label")
    if task_name == "BertTextClassifier" and labels:
        fields["labels"] = {str(k): v for k, v in labels.items()}
    fields.update(metadata or {})
    update_metadata(staging, **fields)
    return report


def _check_expected(kwargs, expected, checkpoint):
    differences = [
        f"{key}: {kwargs.get(key)!r} in the checkpoint, {value!r} in the "
        "preset" for key, value in sorted(expected.items())
        if kwargs.get(key) != value]
    if differences:
        raise ConversionError(
            f"The checkpoint at {checkpoint.source} does not match the "
            "preset it was fetched for:\n  - " + "\n  - ".join(differences))


def export_hf(model, dest, tokenizer=None, verbose=True, overwrite=False):
    """Write a kzoo model as a Hugging Face checkpoint folder
    (`config.json`, `model.safetensors`, tokenizer files) that
    `transformers.AutoModel*.from_pretrained(dest)` loads.

    Args:
        model: a kzoo backbone or task, or a preset name / folder (loaded
            as its saved task if it has one, else as its backbone).
        dest: the folder to write (written whole or not at all).
        tokenizer: the tokenizer to export; by default the task's
            preprocessor's, or the preset's.

    Example:
    ```python
    from kzoo import convert
    mlm = kzoo.BertMaskedLM.from_preset("bert_tiny_en_uncased",
                                        load_weights=False)
    convert.export_hf(mlm, "hf_out", verbose=False)  # transformers loads it
    assert convert.is_hf_folder("hf_out")
    ```
    """
    start = time.perf_counter()
    if isinstance(model, (str, os.PathLike)):
        model, tokenizer = _load_preset_model(model, tokenizer)
    if tokenizer is None and getattr(model, "preprocessor", None) is not None:
        tokenizer = model.preprocessor.tokenizer
    converter = converter_for_model(model)
    architecture = converter.hf_architecture(model)
    config = converter.export_config(model, architecture, tokenizer)
    tensors = converter.export_tensors(model, config)
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()) and not overwrite:
        raise ConversionError(f"{dest} exists and is not empty; pass "
                              "overwrite=True to replace it.")
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=dest.parent,
                                    prefix=f".{dest.name}.staging-"))
    try:
        config["kzoo_version"] = __version__
        write_json(staging / "config.json", config)
        save_file(tensors, staging / "model.safetensors")
        if tokenizer is not None:
            converter.export_tokenizer(tokenizer, staging, config)
        converter.export_extras(model, staging, config)
        swap_into_place(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _say(f"Wrote Hugging Face {architecture} checkpoint {dest}: "
         f"{len(tensors)} tensors ({time.perf_counter() - start:.1f}s)",
         verbose)
    return dest


def _load_preset_model(preset, tokenizer):
    from kzoo import presets
    from kzoo.core.backbone import Backbone
    from kzoo.core.registry import get_class
    from kzoo.core.task import Task
    from kzoo.core.tokenizer import Tokenizer
    preset = presets.resolve(preset)
    if preset.has("task.json"):
        task_cls = get_class(preset.json("task.json")["class_name"], Task)
        model = task_cls.from_preset(preset, preprocessor=None)
    else:
        backbone_cls = get_class(preset.json("config.json")["class_name"],
                                 Backbone)
        model = backbone_cls.from_preset(preset)
    if tokenizer is None and preset.has("tokenizer.json"):
        tokenizer = Tokenizer.from_preset(preset)
    return model, tokenizer
