"""Hugging Face checkpoints <-> kzoo, one module per family.

```python
import kzoo

# A Hugging Face folder (config.json + model.safetensors) loads directly:
backbone = kzoo.BertBackbone.from_preset("path/to/bert-base-uncased")
mlm = kzoo.BertMaskedLM.from_preset("hf://google-bert/bert-base-uncased")

# Or convert once into a kzoo preset folder, and back:
kzoo.convert.hf_to_preset("path/to/hf-folder", "my_preset")
kzoo.convert.export_hf(mlm, "path/to/hf-out")   # transformers loads it
```

Modules:
    safetensors  safetensors through the `safetensors` package's NumPy API
    checkpoint   a Hugging Face folder (config, lazy tensors, tokenizer files)
    base         the converter registry, `WeightSpec`, the shared load/export
    api          folder <-> preset (`hf_to_preset`, `export_hf`)
    download     hub files through `huggingface_hub`: pinned, verified
    hub          named-preset sources, `hf://` references and the cache;
                 registers itself with kzoo.presets on import

Each family's converter lives in its folder (`kzoo/models/<family>/
convert.py`), found through `kzoo.core.families`' static list.
"""

from kzoo.convert.api import export_hf, hf_to_preset, load_hf_weights
from kzoo.convert.base import (
    ConversionReport, Converter, WeightSpec, converter_for_model,
    converter_for_model_type, known_model_types, register_converter)
from kzoo.convert.checkpoint import HFCheckpoint, is_hf_folder
from kzoo.convert.errors import ConversionError, DownloadError
# Registers the hf:// / Hugging Face folder resolver and the named-preset
# weight source with kzoo.presets (which never imports kzoo.convert).
from kzoo.convert import hub  # noqa: E402,F401

__all__ = [
    "ConversionError", "ConversionReport", "Converter", "DownloadError",
    "HFCheckpoint", "WeightSpec", "converter_for_model",
    "converter_for_model_type", "export_hf", "hf_to_preset",
    "is_hf_folder", "known_model_types", "load_hf_weights",
    "register_converter",
]
