"""Copy weights from `transformers` modules into kzoo layers, for the
layer-by-layer reference tests (torch `Linear` weights are `(out, in)`,
Keras kernels `(in, out)`)."""

import numpy as np


def quiet_transformers():
    import transformers
    transformers.logging.set_verbosity_error()
    return transformers


def numpy(tensor):
    return tensor.detach().cpu().numpy()


def copy_linear(dense, linear):
    """A Keras `Dense` from a torch `nn.Linear` (bias if both have one)."""
    dense.kernel.assign(numpy(linear.weight).T)
    if linear.bias is not None:
        dense.bias.assign(numpy(linear.bias))


def copy_attention(attention, q, k, v, o):
    """kzoo `MultiHeadAttention` from four torch projections."""
    for dense, linear in ((attention.query_dense, q), (attention.key_dense, k),
                          (attention.value_dense, v),
                          (attention.output_dense, o)):
        copy_linear(dense, linear)


def copy_t5_attention(attention, t5_attention):
    copy_attention(attention, t5_attention.q, t5_attention.k, t5_attention.v,
                   t5_attention.o)


def copy_bart_attention(attention, bart_attention):
    copy_attention(attention, bart_attention.q_proj, bart_attention.k_proj,
                   bart_attention.v_proj, bart_attention.out_proj)


def copy_norm(norm, torch_norm):
    """`RMSNorm` from `T5LayerNorm`, `LayerNormalization` from
    `nn.LayerNorm`."""
    from kzoo.layers import RMSNorm
    if isinstance(norm, RMSNorm):
        norm.scale.assign(numpy(torch_norm.weight))
    else:
        norm.gamma.assign(numpy(torch_norm.weight))
        norm.beta.assign(numpy(torch_norm.bias))


def copy_t5_feed_forward(block, t5_ff):
    dense = t5_ff.DenseReluDense
    if block.gated_feed_forward:
        copy_linear(block.intermediate_dense, dense.wi_0)
        copy_linear(block.intermediate_linear_dense, dense.wi_1)
    else:
        copy_linear(block.intermediate_dense, dense.wi)
    copy_linear(block.output_dense, dense.wo)
    copy_norm(block.output_layer_norm, t5_ff.layer_norm)


def randomize(module, seed=0, scale=0.3):
    """Random values in every parameter, norm scales near 1 and norm biases
    near 0 included (so a copy that misses one is caught)."""
    import torch
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in module.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator) * scale
            is_norm_scale = ("norm" in name.lower() and name.endswith("weight"))
            parameter.copy_(noise + (1.0 if is_norm_scale else 0.0))
    return module.eval()


def additive_mask(mask):
    """Boolean `(batch, q, k)` -> transformers' additive `(batch, 1, q, k)`
    float mask."""
    import torch
    mask = np.asarray(mask, bool)[:, None]
    return torch.tensor(np.where(mask, 0.0, np.finfo("float32").min),
                        dtype=torch.float32)


def to_torch(x):
    import torch
    return torch.tensor(np.asarray(x))


def assert_close(kzoo_output, reference, atol=1e-5):
    import keras
    np.testing.assert_allclose(
        np.asarray(keras.ops.convert_to_numpy(kzoo_output)),
        np.asarray(reference.detach().numpy() if hasattr(reference, "detach")
                   else reference),
        atol=atol, rtol=0)
