"""Honest throughput: tokens/s over the real (non-padding) tokens, and the
model FLOPs utilisation (MFU) from the FLOPs a token costs.

FLOPs per token (nanoGPT's `estimate_mfu`, after the PaLM paper,
appendix B): a training step costs `6 N` per token for the matrix
multiplies of N parameters (2 forward, 4 backward), plus `12 L H Q T` for
attention's two matmuls over a context of T tokens in each of L layers of
H heads of width Q (QK^T and the weighted sum: 2 x 2 L H Q T forward, x 3
with the backward). N counts the non-embedding parameters: an embedding
lookup multiplies nothing. kzoo's MLM heads run on the masked positions
only, so their projection onto the vocabulary (the tied embedding) is not
counted per token either.

The count is for one stack of transformer layers (the encoders and
GPT-2); an encoder-decoder (T5, BART) or an LSTM (ELMo, AWD-LSTM) has no
single such formula here, and its MFU is not reported.

Peak FLOP/s (`--peak-tflops auto`): the dense bfloat16/float16 tensor
peak of the accelerator, from the vendor's data sheet (`PEAK_TFLOPS`).
On a CPU, or an accelerator not in the table, there is no MFU unless
`--peak-tflops` gives the number.
"""

import numpy as np

# Dense (not 2:4 sparse) bfloat16 / float16 tensor-core peaks, TFLOP/s,
# matched against the device's name, most specific first.
PEAK_TFLOPS = (
    ("H100 PCIe", 756.0),   # NVIDIA H100 data sheet (PCIe, bf16 dense)
    ("H100", 989.0),        # NVIDIA H100 data sheet (SXM, bf16 dense)
    ("H200", 989.0),        # NVIDIA H200 data sheet (SXM, bf16 dense)
    ("A100", 312.0),        # NVIDIA A100 data sheet (bf16 dense)
    ("A10G", None),         # AWS' A10G: no NVIDIA data sheet to cite
    ("A10", 125.0),         # NVIDIA A10 data sheet (bf16 dense)
    ("L40S", 362.0),        # NVIDIA L40S data sheet (bf16 dense)
    ("L4", 121.0),          # NVIDIA L4 data sheet (bf16 dense)
    ("V100", 125.0),        # NVIDIA V100 data sheet (SXM2 fp16 tensor)
    ("T4", 65.0),           # NVIDIA T4 data sheet (fp16 tensor)
    ("TPU v6", 918.0),      # Google Cloud TPU v6e docs (bf16 per chip)
    ("TPU v5p", 459.0),     # Google Cloud TPU v5p docs (bf16 per chip)
    ("TPU v5", 197.0),      # Google Cloud TPU v5e docs (bf16 per chip)
    ("TPU v4", 275.0),      # Google Cloud TPU v4 docs (bf16 per chip)
    ("TPU v3", 123.0),      # Google Cloud TPU v3 docs (bf16 per chip)
)


def peak_tflops_of(device_name):
    """The table's peak for a device name (e.g. "NVIDIA A100-SXM4-80GB",
    "TPU v4"), or None."""
    if not device_name:
        return None
    for key, peak in PEAK_TFLOPS:
        if key.lower() in device_name.lower():
            return peak
    return None


def accelerator_name():
    """The first accelerator's name on this backend, or None (CPU)."""
    import keras
    backend = keras.backend.backend()
    try:
        if backend == "jax":
            import jax
            device = jax.devices()[0]
            return None if device.platform == "cpu" else device.device_kind
        if backend == "torch":
            import torch
            return torch.cuda.get_device_name(0) \
                if torch.cuda.is_available() else None
        import tensorflow as tf
        gpus = tf.config.list_physical_devices("GPU")
        if gpus:
            return tf.config.experimental.get_device_details(gpus[0]).get(
                "device_name")
    except Exception:  # noqa: BLE001 - no accelerator to name
        return None
    return None


def non_embedding_parameters(variables):
    """The trainable parameters that are not embedding tables (Keras'
    `Embedding` weight is called `embeddings`)."""
    return sum(int(np.prod(v.shape)) for v in variables
               if not v.path.endswith("embeddings"))


def flops_per_token(non_embedding, num_layers, num_heads, head_dim,
                    context):
    """Training FLOPs per token: `6 N + 12 L H Q T` (module docstring)."""
    return 6 * non_embedding + 12 * num_layers * num_heads * head_dim * \
        context


def transformer_shape(config):
    """`(layers, heads, head width)` of a one-stack transformer's backbone
    config, or None for other models (module docstring)."""
    names = ("num_layers", "num_heads", "hidden_dim")
    if not all(isinstance(config.get(n), int) for n in names) or \
            "num_decoder_layers" in config or "lstm_dim" in config:
        return None
    return (config["num_layers"], config["num_heads"],
            config["hidden_dim"] // config["num_heads"])


def real_tokens(batch):
    """The non-padding tokens of a batch `(x, y, ...)`: the sum of its
    padding masks, or every token id where it has none (BPTT and biLM
    rows are full)."""
    x = batch[0] if isinstance(batch, tuple) else batch
    if not isinstance(x, dict):
        return int(np.size(x))
    masks = [value for key, value in x.items()
             if key.endswith("padding_mask") and value is not None]
    if masks:
        return int(sum(np.sum(np.asarray(m) != 0) for m in masks))
    ids = next((v for k, v in x.items() if k.endswith("token_ids")), None)
    return int(np.size(ids)) if ids is not None else 0
