"""`kzoo train-tokenizer FAMILY INPUTS... --output OUTPUT --vocab-size N`:
train the family's kind of vocabulary (WordPiece, byte-level BPE or
SentencePiece) on your text and write it as a preset folder, with the
base preset's architecture, that `kzoo prepare-corpus`, `kzoo pretrain
--from-scratch`, fine-tuning and export take as they take a named preset.
A thin wrapper of `kzoo.tokenizer_training.train_tokenizer`.

    kzoo train-tokenizer bert books/ --output my_bert --vocab-size 8000
    kzoo train-tokenizer t5 'web/*.jsonl.gz' -o my_t5 --vocab-size 16000 \\
        --kind sentencepiece-bpe --from-preset t5_base_multi
    kzoo train-tokenizer roberta corpus/ -o my_roberta --vocab-size 8000
                                       # a prepared corpus: its text files
"""

from kzoo.cli.inputs import CommandError

KINDS = ("wordpiece", "byte-level-bpe", "sentencepiece-unigram",
         "sentencepiece-bpe")


def add_arguments(parser):
    parser.add_argument("family", help="the model family (bert, roberta, "
                        "gpt2, albert, t5, ...) whose vocabulary to train")
    parser.add_argument("inputs", nargs="+",
                        help=".txt/.jsonl(.gz) files, folders (searched "
                        "recursively), glob patterns, or one prepared corpus "
                        "folder")
    parser.add_argument("--output", "-o", required=True,
                        help="the preset folder to write")
    parser.add_argument("--vocab-size", type=int, required=True,
                        help="tokens in the vocabulary, special tokens "
                        "included (the model's embedding rows)")
    parser.add_argument("--kind", choices=KINDS,
                        help="the kind of vocabulary (default: the "
                        "family's own; SentencePiece families take unigram "
                        "or BPE)")
    parser.add_argument("--from-preset", metavar="PRESET",
                        help="the preset whose architecture and tokenizer "
                        "options to take (default: the family's smallest)")
    parser.add_argument("--max-sentences", type=int, default=1_000_000,
                        help="SentencePiece: sentences sampled from the text "
                        "for training, which bounds its memory (default: "
                        "1,000,000)")
    parser.add_argument(
        "--documents", choices=("blank-lines", "files"),
        default="blank-lines",
        help="what a .txt document is: text between blank lines (default) "
        "or a whole file")
    parser.add_argument("--text-field", default="text",
                        help="the field of a .jsonl line holding its text "
                        "(default: text)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing preset folder at OUTPUT")


def run(args):
    from kzoo.corpus import CorpusError
    from kzoo.tokenizer_training import (TokenizerTrainingError,
                                         train_tokenizer)
    try:
        tokenizer = train_tokenizer(
            args.family, args.inputs, args.output, args.vocab_size,
            kind=args.kind, from_preset=args.from_preset,
            max_sentences=args.max_sentences, documents=args.documents,
            text_field=args.text_field, overwrite=args.overwrite)
    except (TokenizerTrainingError, CorpusError) as error:
        raise CommandError(str(error)) from None
    from kzoo import presets
    training = presets.resolve(args.output).metadata["tokenizer_training"]
    print(f"{args.output}: a {tokenizer.vocabulary_size:,}-token "
          f"{training['kind']} vocabulary ({type(tokenizer).__name__}) from "
          f"{training['documents']:,} documents, {training['characters']:,} "
          f"characters, in {training['seconds']:.1f} s. Use it as a preset: "
          f"`kzoo prepare-corpus {args.output} INPUTS --output CORPUS`, "
          f"then `kzoo pretrain {args.output} CORPUS RUN --from-scratch`.",
          file=args.stdout)
    return 0
