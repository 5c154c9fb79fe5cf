"""`kzoo embed PRESET TEXT... -o OUT`: sentence embeddings (mean pooling,
L2-normalised, as sentence-transformers does) to a .npy array or JSON
lines (one `{"text": ..., "embedding": [...]}` per text)."""

from kzoo.cli.inputs import add_text_arguments, read_texts

FORMATS = (".npy", ".jsonl")


def add_arguments(parser):
    parser.add_argument("preset", help="a BERT-family preset, e.g. "
                        "all_minilm_l6_v2")
    add_text_arguments(parser)
    parser.add_argument("-o", "--output", required=True,
                        help="where to write: a .npy or .jsonl file")
    parser.add_argument("--pooling", choices=("mean", "cls", "max"),
                        default="mean")
    parser.add_argument("--batch-size", type=int, default=32)


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
    output = Path(args.output)
    if output.suffix not in FORMATS:
        raise CommandError(f"--output must end in {' or '.join(FORMATS)}; "
                           f"got {output.name!r}.")
    texts = read_texts(args)
    vectors = load_embedder(args.preset, args.pooling).embed(
        texts, batch_size=args.batch_size)

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
    print(f"wrote {len(texts)} embeddings of size {vectors.shape[1]} to "
          f"{output}")
    return 0
