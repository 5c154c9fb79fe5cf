"""
# Adding a model family

For contributors. A kzoo family is a backbone, its tokenizer and
preprocessors, its tasks, a Hugging Face converter and presets, held to
the contracts every family keeps: config is the model, the same numbers
on every backend, exact to `transformers`, lossless round trips, clear
errors on bad input (`docs/design.md`'s "Adding a family" section, the
[design page](../design.md#adding-a-family)). Nearly all of it is
shared: a family configures `kzoo.layers`, `kzoo.tasks.task_wiring` and
`kzoo.convert.base` rather than copying them.

This guide builds a small family, *ToyBERT*, in this file: BERT with a
single token type and no segment input (exactly what `transformers`'
`BertModel` computes with `type_vocab_size=1`, which gives us a reference
to check against). It:

1. maps the files a family touches, on an existing family (RoBERTa);
2. writes the backbone from shared pieces, and its argument checks;
3. writes the preprocessor and two tasks, and registers them;
4. checks the contracts that kzoo's shared tests check (config round
   trip, padding, bad input, presets, Keras saving, fit on raw text);
5. writes the converter and checks it against `transformers` (max abs
   difference) and for bit-exact round trips;
6. lists what the repository's tests add, and the commands to run them.

    KERAS_BACKEND=jax python guides/adding_a_family.py   # about a minute
    KZOO_GUIDE_SMOKE=1 python guides/adding_a_family.py  # the test's

Registering classes here changes kzoo's registries in this process only;
nothing is written into your installation. `transformers` and `torch`
(test dependencies, not runtime ones) are needed for step 5's
comparison; without them the guide says so and checks the rest.
"""

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KZOO_QUIET", "1")
SMOKE = os.environ.get("KZOO_GUIDE_SMOKE") == "1" or "--smoke" in sys.argv
WORK = Path(tempfile.mkdtemp(prefix="kzoo_family_guide_"))

import keras  # noqa: E402
import numpy as np  # noqa: E402
from keras import ops  # noqa: E402

import kzoo  # noqa: E402
from kzoo import datasets, presets  # noqa: E402

keras.utils.set_random_seed(0)

"""
## 1. The files of a family

| what | where | RoBERTa's |
|---|---|---|
| backbone, tokenizer, preprocessors, tasks | `kzoo/models/<family>/` | `backbone.py`, `tokenizer.py`, `preprocessor.py`, `masked_lm.py`, `text_classifier.py` |
| new building blocks, if any (for the next family too) | `kzoo/layers/` | none: BERT's encoder stack |
| registration (presets and Keras name classes) | `@register` on each public class | |
| public names | `kzoo/__init__.py` | `kzoo.RobertaBackbone`, ... |
| Hugging Face converter | `kzoo/models/<family>/convert.py`; the `model_type`s it reads in the family's declaration | subclasses BERT's layout |
| declaration (model types, pretraining objectives) | `FAMILY = Family(...)` in `kzoo/models/<family>/__init__.py`, the family's name in `FAMILIES` (`kzoo/core/families.py`) | `model_types=("roberta",)`, `objectives=("mlm",)` |
| model parallelism | the backbone's `layout_rules()` | `transformer_rules()` |
| presets | `presets/<name>/`, written by `scripts/make_presets.py` from the family's rows in `scripts/preset_table.py` (the real released configs, tokenizer files with provenance) | `roberta_base_en`, ... |
| tests | `tests/models/<family>/`: its tests, its parity test `test_<family>_parity.py`, its helpers `<family>_testing.py` (tiny configs, its `REFERENCE` for the tests over every family) | |
| documentation | a row of the README's families table, `docs/api/models/<family>.md` (one `:::` line per public name), a line in `mkdocs.yml` | |

What an installed kzoo says about RoBERTa:
"""

from kzoo.core import families, registry  # noqa: E402
from kzoo.core.task import Task  # noqa: E402

folder = Path(kzoo.models.roberta.__file__).parent
print("kzoo/models/roberta/:", sorted(p.name for p in folder.glob("*.py")))
print("declaration:", families.declared("roberta"),
      "| converter:", families.converter_module("roberta"))
print("presets:", [row["name"] for row in presets.list(family="roberta")])
print("exports:", [n for n in dir(kzoo) if n.startswith("Roberta")])
print("registered tasks:",
      [c.__name__ for c in registry.registered_subclasses(Task)
       if getattr(c.backbone_cls, "family", None) == "roberta"])

"""
## 2. The backbone

A backbone is a functional Keras model built from `kzoo.layers`. Its
constructor arguments *are* its config: the base class checks them (its
`argument_spec`, here the shared transformer one) before `__init__` runs,
stores them as attributes and returns them from `get_config()`. So a
family writes no config block. It declares `input_names`, `family`, how
its new kernels start (`kernel_initializer`, which every task head
uses) and `layout_rules` for model parallelism.
"""

from kzoo.distribution.layouts import transformer_rules  # noqa: E402
from kzoo.layers import token_and_position_embeddings  # noqa: E402
from kzoo.layers.encoder_stack import post_ln_encoder  # noqa: E402
from kzoo.core.backbone import Backbone  # noqa: E402
from kzoo.layers.initializers import truncated_normal  # noqa: E402
from kzoo.core.registry import register  # noqa: E402


@register
class ToyBertBackbone(Backbone):
    """BERT with one token type: no segment input; the one token-type
    vector is added to every token (`transformers.BertModel` with
    `type_vocab_size=1`)."""

    input_names = ("token_ids", "padding_mask")
    family = "toy_bert"

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, dropout=0.1, attention_dropout=0.1,
                 max_sequence_length=512, activation="gelu",
                 layer_norm_epsilon=1e-12, initializer_range=0.02,
                 dtype=None, **kwargs):
        init = truncated_normal(initializer_range)

        # === Layers ===
        token_embedding, position_embedding = token_and_position_embeddings(
            vocabulary_size, max_sequence_length, hidden_dim, init, dtype)
        # Named as BERT's, so that BERT's converter specs find it.
        segment_embedding = keras.layers.Embedding(
            1, hidden_dim, embeddings_initializer=init, dtype=dtype,
            name="segment_embedding")

        # === Functional model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        padding_mask = keras.Input((None,), dtype="int32",
                                   name="padding_mask")
        tokens = token_embedding(token_ids)  # (batch, seq, hidden)
        x = (tokens + position_embedding(tokens)
             + segment_embedding(ops.zeros_like(token_ids)))
        x, pooled = post_ln_encoder(
            x, padding_mask, num_layers=num_layers, num_heads=num_heads,
            hidden_dim=hidden_dim, intermediate_dim=intermediate_dim,
            dropout=dropout, attention_dropout=attention_dropout,
            activation=activation, layer_norm_epsilon=layer_norm_epsilon,
            kernel_initializer=init, dtype=dtype)
        super().__init__(
            inputs={"token_ids": token_ids, "padding_mask": padding_mask},
            outputs={"sequence_output": x, "pooled_output": pooled},
            dtype=dtype, **kwargs)

    def kernel_initializer(self):
        return truncated_normal(self.initializer_range)

    @classmethod
    def layout_rules(cls):
        # Every weight to shard is a kzoo.layers one.
        return transformer_rules()


TINY = dict(vocabulary_size=30522, num_layers=2, num_heads=2, hidden_dim=64,
            intermediate_dim=128, max_sequence_length=128)
backbone = ToyBertBackbone(**TINY)
print(f"{backbone.count_params():,} parameters; config:",
      {k: backbone.get_config()[k] for k in ("num_layers", "hidden_dim")})

"""
The arguments are checked before a layer exists, with errors that name
the argument, the value and the fix; a typo in a config is caught too:
"""

from kzoo.core.arguments import ArgumentError  # noqa: E402

for bad in ({"num_heads": 3}, {"dropout": 1.5}, {"hiden_dim": 64}):
    try:
        ToyBertBackbone(**{**TINY, **bad})
    except (ArgumentError, TypeError) as error:
        print(f"{bad}: {type(error).__name__}: {error}")

"""
## 3. Preprocessor and tasks

ToyBERT reads BERT's WordPiece vocabulary, so it reuses `BertTokenizer`
(a family with a new tokenizer subclasses `kzoo.core.tokenizer.Tokenizer`,
or `SentencePieceTokenizer` with its own id numbering). Its preprocessor is
BERT's packing without the segment input. Tasks are thin: a classifier
says how to pool; the masked LM takes the shared head and its
preprocessor masks with BERT's rules (and so gets whole-word and span
masking too). `@register` makes each class loadable by name from preset
files and from `.keras` archives.
"""

from kzoo.models.bert.masked_lm_preprocessor import (  # noqa: E402
    BertMaskedLMPreprocessor)
from kzoo.tasks.task_wiring import MaskedLM, SequenceClassifier  # noqa: E402


@register
class ToyBertPreprocessor(kzoo.BertPreprocessor):
    """`[CLS] a [SEP] (b [SEP])`, padded; no segment ids."""
    tokenizer_cls = kzoo.BertTokenizer
    segment_input = False


@register
class ToyBertMaskedLMPreprocessor(ToyBertPreprocessor,
                                  BertMaskedLMPreprocessor):
    """ToyBERT's packing, then BERT's 15% / 80-10-10 masking."""


@register
class ToyBertTextClassifier(SequenceClassifier):
    """`[CLS]`'s pooled vector -> dropout -> dense(num_classes)."""
    backbone_cls = ToyBertBackbone
    preprocessor_cls = ToyBertPreprocessor

    def pool(self, inputs, backbone_outputs):
        return backbone_outputs["pooled_output"]


@register
class ToyBertMaskedLM(MaskedLM):
    """Masked-LM pretraining, and `fill_mask`."""
    backbone_cls = ToyBertBackbone
    preprocessor_cls = ToyBertMaskedLMPreprocessor


print("registered:", [registry.get_class(name).__name__ for name in (
    "ToyBertBackbone", "ToyBertPreprocessor", "ToyBertTextClassifier",
    "ToyBertMaskedLM")])
print("the registry-wide contract tests would now include:",
      [c.__name__ for c in registry.registered_subclasses(SequenceClassifier)
       if c.__name__.startswith("ToyBert")])

"""
## 4. The contracts

kzoo's repository checks every family with shared helpers
(`tests/helpers.py`: `check_backbone`, `check_task`, `check_task_preset`,
`check_preset`) and with tests that run over every registered class. A
user's installation has no `tests/` folder, so here are the same checks
written out with the public API.

**Config is the model**: `from_config(get_config())` rebuilds it; with
the same weights, the same outputs.
"""

tokenizer = kzoo.BertTokenizer.from_preset("all_minilm_l6_v2")
preprocessor = ToyBertPreprocessor(tokenizer, sequence_length=16)
batch = {k: ops.convert_to_numpy(v) for k, v in preprocessor(
    ["It is a truth universally acknowledged.", "Emma Woodhouse."]).items()}
outputs = ops.convert_to_numpy(backbone(batch)["sequence_output"])

rebuilt = ToyBertBackbone.from_config(backbone.get_config())
rebuilt.set_weights(backbone.get_weights())
same = np.array_equal(ops.convert_to_numpy(rebuilt(batch)["sequence_output"]),
                      outputs)
print("config round trip, same outputs:", same)

"""
**Padding changes nothing**: the real tokens' vectors do not depend on
how much padding follows them.
"""

longer = ToyBertPreprocessor(tokenizer, sequence_length=40)
batch40 = {k: ops.convert_to_numpy(v) for k, v in longer(
    ["It is a truth universally acknowledged.", "Emma Woodhouse."]).items()}
outputs40 = ops.convert_to_numpy(backbone(batch40)["sequence_output"])
real = batch["padding_mask"].astype(bool)
print("16 vs 40 places, max abs difference on real tokens: "
      f"{np.max(np.abs(outputs40[:, :16][real] - outputs[real])):.1e}")

"""
**Bad input gets a clear error**, before any work (the base class checks
names, shapes, dtypes, the sequence length and the ids' range):
"""

bad_inputs = {
    "an id outside the vocabulary": {**batch, "token_ids": np.full(
        (1, 4), TINY["vocabulary_size"], "int32"),
        "padding_mask": np.ones((1, 4), "int32")},
    "a segment input it does not take": {**batch, "segment_ids": batch[
        "padding_mask"]},
    "too long": {k: np.zeros((1, 200), "int32") for k in batch},
}
for what, inputs in bad_inputs.items():
    try:
        backbone(inputs)
    except ValueError as error:
        print(f"{what}: {error}")

"""
**Presets and Keras saving lose nothing**: `save_to_preset` writes the
config, the weights and (for a task) the tokenizer and preprocessor;
`from_preset` gives the same weights bit for bit. A registered class also
saves in Keras' own `.keras` format.
"""


def weights_identical(a, b):
    return len(a.weights) == len(b.weights) and all(
        np.array_equal(ops.convert_to_numpy(x), ops.convert_to_numpy(y))
        for x, y in zip(a.weights, b.weights))


backbone.save_to_preset(WORK / "toy_backbone")
print("preset files:", sorted(p.name for p in (WORK / "toy_backbone")
                              .iterdir()))
print("preset round trip, bit-exact:", weights_identical(
    backbone, kzoo.Backbone.from_preset(WORK / "toy_backbone")))
backbone.save(WORK / "toy.keras")
print(".keras round trip, bit-exact:", weights_identical(
    backbone, keras.models.load_model(WORK / "toy.keras")))

"""
**Tasks fit and predict on raw text**, and a saved task comes back with
its tokenizer. (A random-weight 2-layer model on a few Austen passages:
the accuracy shows that training runs, and means little.)
"""

(train_x, train_y), (test_x, test_y), names = datasets.austen_authorship(
    ("pride_and_prejudice", "emma", "persuasion"), words=40,
    per_novel=16 if SMOKE else 120)
classifier = ToyBertTextClassifier(
    ToyBertBackbone(**TINY), num_classes=len(names),
    preprocessor=ToyBertPreprocessor(tokenizer, sequence_length=64))
classifier.compile(optimizer=keras.optimizers.Adam(1e-3))
history = classifier.fit(train_x, train_y, batch_size=16,
                         epochs=1 if SMOKE else 8, verbose=0)
predicted = classifier.predict(test_x, verbose=0)
accuracy = float(np.mean(np.argmax(predicted, -1) == test_y))
print(f"trained on {len(train_x)} passages: loss "
      f"{history.history['loss'][0]:.3f} -> {history.history['loss'][-1]:.3f}"
      f", held-out accuracy {accuracy:.1%} (majority "
      f"{np.max(np.bincount(test_y)) / len(test_y):.1%})")
classifier.save_to_preset(WORK / "toy_classifier")
restored = ToyBertTextClassifier.from_preset(WORK / "toy_classifier")
print("task preset round trip, same predictions:", np.array_equal(
    restored.predict(test_x, verbose=0), predicted))

mlm = ToyBertMaskedLM(ToyBertBackbone(**TINY),
                      preprocessor=ToyBertMaskedLMPreprocessor(
                          tokenizer, sequence_length=32))
mlm.compile()
if not SMOKE:  # (the smoke run only shows that fill_mask runs)
    mlm.fit(train_x, batch_size=16, epochs=1, verbose=0)
guesses = mlm.fill_mask(["Mr. Darcy was a [MASK] man."], top_k=3)[0][0]
print("fill-mask runs:", ", ".join(f"{token} {p:.4f}" for token, p in guesses),
      "(an all but untrained head: noise)")

"""
**Model parallelism**: `layout_rules` name the weights that are split
over a device mesh; every rule must match a weight (the repository's
distribution tests check the layouts on every backend).
"""

import re  # noqa: E402

paths = [v.path for v in backbone.weights]
for pattern, role in ToyBertBackbone.layout_rules().items():
    matched = [p for p in paths if re.search(pattern, p)]
    print(f"  {role:<12} {len(matched):>2} weights  ({pattern})")

"""
## 5. The converter, checked against `transformers`

A converter maps each Hugging Face tensor to its kzoo variable
(`WeightSpec`s built with the `embedding`, `linear` and `layer_norm`
helpers); import and export run the same specs, so they cannot drift
apart. ToyBERT's tensors are BERT's, so its converter subclasses
`BertLayout` (BERT's tensor names and heads) and says what differs: its
classes, one token type, and its task names for BERT's heads.

`register_converter` makes it the exporter of family `toy_bert`. In the
repository, a family's converter is `kzoo/models/<family>/convert.py`
and its package declares the `model_type`s (a checkpoint's
`config.json` names one) it reads (`FAMILY = Family(model_types=...)`);
`kzoo.core.families` lists the family, so a checkpoint imports only
kzoo's own modules. ToyBERT's checkpoints are `transformers`' own
`bert` ones, which `kzoo.convert.hf_to_preset` gives to BERT's converter;
so here we call ToyBERT's converter directly.
"""

from kzoo.convert import ConversionError, HFCheckpoint  # noqa: E402
from kzoo.convert import export_hf, register_converter  # noqa: E402
from kzoo.models.bert.convert import BertLayout  # noqa: E402

TOY_TO_BERT = {"ToyBertMaskedLM": "BertMaskedLM",
               "ToyBertTextClassifier": "BertTextClassifier"}


@register_converter
class ToyBertConverter(BertLayout):
    model_types = ()  # checkpoints say "bert"; see above
    family = "toy_bert"
    backbone_class = "ToyBertBackbone"
    preprocessor_class = "ToyBertPreprocessor"
    generic_heads = False
    architectures = {"BertModel": None,
                     "BertForMaskedLM": "ToyBertMaskedLM",
                     "BertForSequenceClassification": "ToyBertTextClassifier"}
    pretraining_tasks = (("ToyBertMaskedLM",
                          ("cls.predictions.transform.dense.weight",)),)
    # Backbone argument -> config.json field: BERT's, less num_segments.
    config_fields = {k: v for k, v in BertLayout.config_fields.items()
                     if k != "num_segments"}

    def backbone_kwargs(self, config):
        types = self.hf_value(config, "type_vocab_size")
        if types != 1:
            raise ConversionError(
                f"type_vocab_size={types!r}: ToyBERT has one token type; "
                "convert this checkpoint to kzoo.BertBackbone instead.")
        return super().backbone_kwargs(config)

    def task_kwargs(self, task_name, config, checkpoint=None):
        return super().task_kwargs(TOY_TO_BERT.get(task_name, task_name),
                                   config, checkpoint)

    def head_specs(self, task, task_name, config):
        return super().head_specs(task, TOY_TO_BERT.get(task_name, task_name),
                                  config)

    def tied_tensors(self, task_name):
        return super().tied_tensors(TOY_TO_BERT.get(task_name, task_name))


converter = ToyBertConverter()

"""
The parity check: a random `transformers` `BertModel` with an odd
configuration (hidden size 36, 3 heads, intermediate 37, LayerNorm eps
1e-7: sizes that are no power of two catch transposed or mis-split
tensors), every parameter randomised (LayerNorm scales too, so a swapped
gamma and beta cannot pass), saved with `save_pretrained`; ToyBERT loads
it and must match to 1e-5. The repository's parity tests do this for
every family and head on every backend (`tests/convert/`).
"""

HAVE_TRANSFORMERS = all(importlib.util.find_spec(m)
                        for m in ("transformers", "torch"))
if HAVE_TRANSFORMERS:
    import torch
    import transformers
    transformers.utils.logging.disable_progress_bar()
    config = transformers.BertConfig(
        vocab_size=101, hidden_size=36, num_hidden_layers=2,
        num_attention_heads=3, intermediate_size=37,
        max_position_embeddings=40, type_vocab_size=1, layer_norm_eps=1e-7)
    torch.manual_seed(0)
    reference = transformers.BertModel(config).eval()
    with torch.no_grad():
        for name, parameter in reference.named_parameters():
            noise = 0.2 * torch.randn(parameter.shape)
            parameter.copy_(noise + 1.0 if name.endswith("LayerNorm.weight")
                            else noise)
    reference.save_pretrained(WORK / "hf_reference")

    with HFCheckpoint(WORK / "hf_reference") as checkpoint:
        toy = converter.build(None, checkpoint.config)
        report = converter.load_weights(toy, checkpoint, verbose=False)
    print(report.summary())

    rng = np.random.default_rng(0)
    ids = rng.integers(0, 101, (2, 12)).astype("int32")
    mask = np.ones((2, 12), "int32")
    mask[1, 7:] = 0  # a padded tail
    with torch.no_grad():
        expected = reference(input_ids=torch.tensor(ids),
                             attention_mask=torch.tensor(mask))
    got = toy({"token_ids": ids, "padding_mask": mask})
    real = mask.astype(bool)
    hidden = np.max(np.abs(ops.convert_to_numpy(got["sequence_output"])[real]
                           - expected.last_hidden_state.numpy()[real]))
    pooled = np.max(np.abs(ops.convert_to_numpy(got["pooled_output"])
                           - expected.pooler_output.numpy()))
    print(f"against transformers.BertModel: sequence_output max abs "
          f"{hidden:.1e}, pooled_output {pooled:.1e}")
    assert hidden <= 1e-5 and pooled <= 1e-5
else:
    print("transformers (and torch) are not installed: they are test "
          "dependencies, not runtime ones. `pip install transformers torch` "
          "for the parity check; the rest of the guide runs without them.")
    toy = ToyBertBackbone(vocabulary_size=101, num_layers=2, num_heads=3,
                          hidden_dim=36, intermediate_dim=37,
                          max_sequence_length=40, layer_norm_epsilon=1e-7)

"""
Export is `kzoo.convert.export_hf`, found through the family. The
exported tensors are the ones `transformers` wrote, bit for bit, and
loading them back into a fresh ToyBERT gives the same weights:
"""

export_hf(toy, WORK / "hf_export", verbose=False)
from kzoo.convert.safetensors import load_file  # noqa: E402

exported = load_file(WORK / "hf_export" / "model.safetensors")
if HAVE_TRANSFORMERS:
    original = load_file(WORK / "hf_reference" / "model.safetensors")
    compared = [n for n in original if n in exported]
    print(f"HF -> ToyBERT -> HF: {len(compared)} tensors, bit-exact:",
          all(np.array_equal(original[n], exported[n]) for n in compared),
          "| left out:", sorted(set(original) - set(exported)))
    again = transformers.AutoModel.from_pretrained(WORK / "hf_export").eval()
    with torch.no_grad():
        reloaded = again(input_ids=torch.tensor(ids),
                         attention_mask=torch.tensor(mask))
    print("transformers loads the export as", type(again).__name__,
          "| same outputs:", torch.equal(reloaded.last_hidden_state,
                                         expected.last_hidden_state))
fresh = ToyBertBackbone.from_config(toy.get_config())
with HFCheckpoint(WORK / "hf_export") as checkpoint:
    converter.load_weights(fresh, checkpoint, verbose=False)
print(f"ToyBERT -> HF -> ToyBERT: {len(toy.weights)} weights, bit-exact:",
      weights_identical(toy, fresh))

"""
A checkpoint the family cannot reproduce is refused before any weight is
read, and says why:
"""

try:  # BERT's usual two token types, e.g. bert-base-uncased's config
    converter.build(None, {"model_type": "bert", "type_vocab_size": 2})
except ConversionError as error:
    print(f"ConversionError: {error}")

"""
## 6. What the repository's tests add

The checks above, in the repository, are one call each on tiny configs
(`tests/models/<family>/`), plus tests that need no new code at all
because they run over every registered class:

| test | checks |
|---|---|
| `tests/helpers.py` `check_backbone` | config round trip, variable lengths, `predict` on arrays and `tf.data`, preset round trip |
| `check_task`, `check_task_preset`, `check_preset` | fit/predict on raw strings, task presets with their heads, named presets |
| `tests/models/<family>/test_<family>_parity.py` | every head against `transformers` on random odd configs, <= 1e-5 on every backend; HF -> kzoo -> HF bit-exact |
| `tests/bad_input/` | every argument's bad values (from its `argument_spec`), bad inputs, damaged preset files |
| `tests/models/test_keras_saving.py`, `test_preprocessor_contract.py`, `test_tokenizer_contract.py` | `.keras` saving, the preprocessor and tokenizer contracts, for every registered class |
| `tests/convert/test_converter_table.py`, `test_import_graph.py` | the `model_type` table, and that `kzoo.models` never imports `kzoo.convert` |
| `tests/distribution/` | `layout_rules` on a device mesh |
| the cross-backend tests | the same weights give the same numbers on TensorFlow, JAX and PyTorch (<= 1e-5) |

Run them one backend at a time, for example:

```bash
for backend in tensorflow jax torch; do
  KERAS_BACKEND=$backend python -m pytest -q tests/models/<family> \\
      tests/bad_input \\
      tests/models/test_keras_saving.py tests/convert/test_converter_table.py
done
```

A family's default tests should take about a minute per backend on two
CPU cores; real-sized runs are marked `large`, backend-independent ones
`once`. Then the README's families-table row, `docs/api/models/<family>.md`,
its `mkdocs.yml` line, and `mkdocs build --strict`.
"""

import shutil  # noqa: E402

shutil.rmtree(WORK)
print(f"{keras.backend.backend()} done")
