"""`kzoo similarity PRESET QUERY TEXT...`: rank texts by cosine similarity
to a query (semantic search), with a sentence-embedding preset."""

from kzoo.cli.inputs import (add_json_argument, add_text_arguments,
                             emit_json, read_texts)


def add_arguments(parser):
    parser.add_argument("preset", help="a BERT-family preset, e.g. "
                        "all_minilm_l6_v2")
    parser.add_argument("query", help="the text to compare with")
    add_text_arguments(parser, "texts to rank")
    parser.add_argument("--top", type=int, default=None,
                        help="print only the best N (default: all)")
    add_json_argument(parser)


def run(args):
    import numpy as np

    from kzoo.cli.embed import load_embedder
    from kzoo.cli.inputs import CommandError
    if args.top is not None and args.top < 1:
        raise CommandError(f"--top must be at least 1; got {args.top}.")
    texts = read_texts(args)
    scores = load_embedder(args.preset).similarity([args.query], texts)[0]
    order = np.argsort(-scores, kind="stable")[:args.top]
    if args.json:
        emit_json(args, {"query": args.query, "results": [
            {"text": texts[i], "score": float(scores[i]), "index": int(i)}
            for i in order]})
        return 0
    for index in order:
        print(f"{scores[index]:7.4f}  {texts[index]}")
    return 0
