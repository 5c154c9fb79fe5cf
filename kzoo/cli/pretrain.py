"""`kzoo pretrain PRESET FOLDER OUT`: masked-LM pretraining on a folder of
.txt files (15% of tokens masked, 80/10/10, fresh masks every epoch), from
the preset's weights or from scratch, saved as a preset."""

from pathlib import Path

from kzoo.cli.inputs import CommandError


def add_arguments(parser):
    parser.add_argument("preset", help="the model to pretrain (a name or "
                        "folder of a masked-LM family: BERT, RoBERTa, ...)")
    parser.add_argument("folder", help="a folder of UTF-8 .txt files")
    parser.add_argument("output", help="the preset folder to write")
    parser.add_argument("--from-scratch", action="store_true",
                        help="start from random weights (the preset's "
                        "architecture and tokenizer only)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--words", type=int, default=None,
                        help="words per training passage (default: about "
                        "what fills the sequence length)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--overwrite", action="store_true",
                        help="replace OUTPUT if it exists")


def passages(folder, words):
    """The folder's .txt files (sorted, recursively) cut into passages of
    `words` words."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CommandError(f"{folder} is not a folder.")
    files = sorted(folder.rglob("*.txt"))
    if not files:
        raise CommandError(f"{folder} holds no .txt files.")
    cut = []
    for path in files:
        try:
            tokens = path.read_text(encoding="utf-8").split()
        except UnicodeDecodeError:
            raise CommandError(f"{path} is not UTF-8 text.") from None
        cut += [" ".join(tokens[i:i + words])
                for i in range(0, len(tokens), words)]
    return [passage for passage in cut if passage]


def run(args):
    import keras

    from kzoo.cli.inputs import preset_task
    from kzoo.tasks.task_wiring import MaskedLM
    from kzoo.training import default_optimizer
    output = Path(args.output)
    if output.exists() and any(output.iterdir()) and not args.overwrite:
        raise CommandError(f"{output} exists; pass --overwrite to replace "
                           "it.")
    # Word pieces run ~1.3 per English word; leave room for the specials.
    words = args.words or max(8, int((args.sequence_length - 3) / 1.3))
    texts = passages(args.folder, words)
    keras.utils.set_random_seed(args.seed)
    mlm = preset_task(args.preset, MaskedLM, "pretrain",
                      load_weights=not args.from_scratch,
                      sequence_length=args.sequence_length)
    mlm.compile(optimizer=default_optimizer(learning_rate=args.learning_rate))
    print(f"{len(texts)} passages of up to {words} words; masked-LM "
          f"training for {args.epochs} epoch(s)")
    losses = mlm.fit(texts, batch_size=args.batch_size,
                     epochs=args.epochs).history["loss"]
    print(f"masked-LM loss: {losses[0]:.3f} (epoch 1) -> {losses[-1]:.3f} "
          f"(epoch {len(losses)})")
    mlm.save_to_preset(output)
    print(f"saved to {output}; try: kzoo fill-mask {output} "
          "\"It was a [MASK] day.\"")
    return 0
