"""`kzoo embed PRESET TEXT... -o OUT`: sentence embeddings (mean pooling,
L2-normalised, as sentence-transformers does) to a .npy array or JSON
lines (one `{"text": ..., "embedding": [...]}` per text); with `--json`
and no `-o`, the same records as one JSON list on stdout."""

from kzoo.cli.inputs import (add_json_argument, add_text_arguments,
                             emit_json, read_texts)

FORMATS = (".npy", ".jsonl")


def add_arguments(parser):
    parser.add_argument("preset", help="a BERT-family preset, e.g. "
                        "all_minilm_l6_v2")
    add_text_arguments(parser)
    parser.add_argument("-o", "--output",
                        help="where to write: a .npy or .jsonl file "
                        "(needed unless --json)")
    parser.add_argument("--pooling", choices=("mean", "cls", "max"),
                        default="mean")
    parser.add_argument("--batch-size", type=int, default=32)
    add_json_argument(parser)


def load_embedder(preset, pooling="mean"):
    from kzoo.cli.inputs import preset_task
    from kzoo.models.bert.text_embedder import BertTextEmbedder
    return preset_task(preset, BertTextEmbedder, "Embedding",
                       pooling=pooling)


def run(args):
    import json
    from pathlib import Path

    import numpy as np

    from kzoo.cli.inputs import CommandError
    from kzoo.utils.files import atomic_write
    if args.output is None and not args.json:
        raise CommandError("give -o/--output (a .npy or .jsonl file), or "
                           "--json to print the embeddings.")
    output = Path(args.output) if args.output is not None else None
    if output is not None and output.suffix not in FORMATS:
        raise CommandError(f"--output must end in {' or '.join(FORMATS)}; "
                           f"got {output.name!r}.")
    texts = read_texts(args)
    vectors = load_embedder(args.preset, args.pooling).embed(
        texts, batch_size=args.batch_size)
    if output is None:
        emit_json(args, [{"text": text, "embedding": vector.tolist()}
                         for text, vector in zip(texts, vectors)])
        return 0

    def write(path):
        if output.suffix == ".npy":
            with open(path, "wb") as f:
                np.save(f, vectors)
            return
        with open(path, "w", encoding="utf-8") as f:
            for text, vector in zip(texts, vectors):
                f.write(json.dumps({"text": text,
                                    "embedding": vector.tolist()}) + "\n")
    atomic_write(output, write, suffix=output.suffix)
    if args.json:
        emit_json(args, {"output": str(output), "count": len(texts),
                         "dimension": int(vectors.shape[1])})
        return 0
    print(f"wrote {len(texts)} embeddings of size {vectors.shape[1]} to "
          f"{output}")
    return 0
