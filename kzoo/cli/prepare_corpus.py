"""`kzoo prepare-corpus PRESET INPUTS... --output OUTPUT`: tokenize a
folder (or files, or glob patterns) of .txt / .jsonl text, .gz or not,
once, into shards on disk for pretraining (`kzoo.corpus.prepare_corpus`
says what is written, and how parts fan out over machines).

    kzoo prepare-corpus bert_base_en_uncased books/ --output corpus
    kzoo prepare-corpus roberta_base_en 'crawl/*.jsonl.gz' --output c \\
        --part 3/16                      # part 3 of 16 (from 0)
    kzoo prepare-corpus --merge c        # the parts into one manifest
"""

from kzoo.cli.inputs import CommandError


def add_arguments(parser):
    parser.add_argument("preset", nargs="?",
                        help="the preset (name or folder) whose tokenizer "
                        "to use")
    parser.add_argument("inputs", nargs="*",
                        help=".txt/.jsonl(.gz) files, folders (searched "
                        "recursively) or glob patterns")
    parser.add_argument("--output", "-o", help="the corpus folder to write")
    parser.add_argument(
        "--documents", choices=("blank-lines", "files"),
        default="blank-lines",
        help="what a .txt document is: text between blank lines (default, "
        "as BERT's create_pretraining_data) or a whole file (books)")
    parser.add_argument(
        "--text", choices=("auto", "lines", "paragraphs", "raw"),
        default="auto",
        help="how a document is cut into sentences: lines (one sentence a "
        "line, BERT's input), paragraphs (running text split at sentence "
        "ends), raw (whole, newlines and indentation kept: code or poetry "
        "for a causal LM); auto (default): lines for blank-line documents, "
        "paragraphs for --documents files and .jsonl")
    parser.add_argument("--text-field", default="text",
                        help="the field of a .jsonl line holding its text "
                        "(default: text)")
    parser.add_argument("--shard-tokens", type=int, default=1 << 24,
                        help="tokens per shard (default: 2**24)")
    parser.add_argument(
        "--validation-documents", type=int, default=None,
        help="hold out N documents for validation, drawn by a hash of "
        "their text (default: 1%%, at most 1,000)")
    parser.add_argument(
        "--deduplicate", action="store_true",
        help="remove exact duplicate documents (the first copy is kept; "
        "the count is printed and in the manifest)")
    parser.add_argument("--processes", type=int, default=None,
                        help="tokenizing processes (default: min(4, CPUs))")
    parser.add_argument("--part", metavar="I/N",
                        help="prepare only part I (counting from 0) of N of "
                        "the sorted input files")
    parser.add_argument("--merge", metavar="OUTPUT",
                        help="merge OUTPUT's part manifests into its "
                        "manifest.json (no PRESET or INPUTS)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a corpus prepared with another "
                        "tokenizer or other options")
    parser.add_argument("--quiet", "-q", action="store_true",
                        help="no progress bar")


def run(args):
    from kzoo.corpus import CorpusError
    from kzoo.corpus.prepare import describe, merge_parts, prepare_corpus
    from kzoo.utils.storage import StorageError
    try:
        if args.merge:
            if args.preset or args.inputs or args.output:
                raise CommandError(
                    "--merge OUTPUT takes no PRESET, INPUTS or --output: it "
                    "merges the parts already in OUTPUT.")
            manifest = merge_parts(args.merge, progress=not args.quiet)
            print(f"{args.merge}: {manifest['documents']:,} documents, "
                  f"{manifest['tokens']:,} tokens in "
                  f"{len(manifest['shards'])} shards from "
                  f"{len(manifest['parts'])} parts.", file=args.stdout)
            return 0
        if not args.preset or not args.inputs or not args.output:
            raise CommandError(
                "give a PRESET, the INPUTS and --output OUTPUT, e.g. `kzoo "
                "prepare-corpus bert_base_en_uncased books/ --output "
                "corpus`.")
        summary = prepare_corpus(
            args.inputs, args.output, args.preset, documents=args.documents,
            text=args.text, text_field=args.text_field,
            shard_tokens=args.shard_tokens,
            validation_documents=args.validation_documents,
            deduplicate=args.deduplicate,
            processes=args.processes, part=args.part,
            overwrite=args.overwrite, progress=False if args.quiet else "bar")
    except (CorpusError, StorageError) as error:
        raise CommandError(str(error)) from None
    if summary["up_to_date"]:
        print(f"{args.output} is up to date.", file=args.stdout)
    else:
        print(f"{args.output}: {describe(summary)}", file=args.stdout)
        if args.part and not summary["merged"]:
            print(f"Part {args.part} done; the corpus is merged when every "
                  "part is (or run `kzoo prepare-corpus --merge "
                  f"{args.output}`).", file=args.stdout)
    return 0
