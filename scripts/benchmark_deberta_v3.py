"""Forward speed of kzoo's DebertaV3Backbone against its BertBackbone of
the same size (BERT-base shape by default: 12 layers, 768 hidden, 12
heads, 3072 intermediate; DeBERTa-v3's 256 buckets reaching 512), random
weights, one random batch (8 x 128 tokens by default), on the backend
KERAS_BACKEND names. `predict_on_batch` (jitted on jax, a tf.function on
tensorflow, eager on torch); warm-up calls are not timed. Prints tokens/s
for both and their ratio.

    KERAS_BACKEND=jax python scripts/benchmark_deberta_v3.py
    KERAS_BACKEND=jax python scripts/benchmark_deberta_v3.py --layers 2

Speed is measured here, never asserted in a test.
"""

import argparse
import time

import numpy as np


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--intermediate", type=int, default=3072)
    parser.add_argument("--vocabulary", type=int, default=30522)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    return parser.parse_args(argv)


def tokens_per_second(model, inputs, steps, warmup):
    for _ in range(warmup):
        np.asarray(model.predict_on_batch(inputs)["sequence_output"])
    start = time.perf_counter()
    for _ in range(steps):
        np.asarray(model.predict_on_batch(inputs)["sequence_output"])
    seconds = time.perf_counter() - start
    batch, length = inputs["token_ids"].shape
    return steps * batch * length / seconds


def main(argv=None):
    import keras

    import kzoo
    args = parse_args(argv)
    shape = dict(vocabulary_size=args.vocabulary, num_layers=args.layers,
                 num_heads=args.heads, hidden_dim=args.hidden,
                 intermediate_dim=args.intermediate)
    rng = np.random.default_rng(0)
    ids = rng.integers(4, args.vocabulary, (args.batch, args.length))
    inputs = {"token_ids": ids.astype("int32"),
              "padding_mask": np.ones((args.batch, args.length), "int32")}
    results = {}
    for name, model in (
            ("bert", kzoo.BertBackbone(**shape)),
            ("deberta_v3", kzoo.DebertaV3Backbone(**shape))):
        x = dict(inputs)
        if name == "bert":
            x["segment_ids"] = np.zeros_like(inputs["token_ids"])
        results[name] = tokens_per_second(model, x, args.steps, args.warmup)
        print(f"{keras.backend.backend()} {name:>10}: "
              f"{results[name]:,.0f} tokens/s "
              f"({model.count_params() / 1e6:.1f}M parameters)", flush=True)
    print(f"DeBERTa-v3 / BERT: {results['deberta_v3'] / results['bert']:.2f}")


if __name__ == "__main__":
    main()
