"""`kzoo pretrain PRESET CORPUS OUTPUT --max-steps N`: step-based
pretraining on a prepared corpus (`kzoo prepare-corpus`), checkpointed
every N steps; the same command after a crash (`kill -9` included)
resumes from the last checkpoint and trains what the uninterrupted run
trains. A thin wrapper of `kzoo.pretraining.run.pretrain`."""

from kzoo.cli.inputs import CommandError

# Flags whose value is not the option's type's constructor.
_FLAGS = {
    "objective": str, "max_steps": int, "batch_size": int,
    "sequence_length": int, "learning_rate": float, "warmup_steps": int,
    "weight_decay": float, "gradient_accumulation_steps": int,
    "dtype": str, "eval_every": int, "eval_batches": int,
    "checkpoint_every": int, "keep_checkpoints": int, "seed": int,
    "peak_tflops": float, "draw_groups": int, "model_parallel": int,
}


def add_arguments(parser):
    parser.add_argument("preset", help="the model to pretrain (a name or "
                        "folder)")
    parser.add_argument("corpus", help="a corpus folder prepared with the "
                        "preset's tokenizer (`kzoo prepare-corpus`)")
    parser.add_argument("output", help="the run's folder: checkpoints, "
                        "metrics.jsonl, tensorboard/, and at the end "
                        "preset/; run the same command again to resume")
    parser.add_argument("--config", help="a JSON, TOML or YAML file of "
                        "options (its keys are the flags' names); flags "
                        "given here win")
    from kzoo.pretraining.config import OPTIONS
    for name, kind in _FLAGS.items():
        default, _, help_text = OPTIONS[name]
        shown = "" if default is None else f" (default {default})"
        parser.add_argument(f"--{name.replace('_', '-')}", type=kind,
                            default=None, help=help_text + shown)
    parser.add_argument("--from-scratch", action="store_true", default=None,
                        help=OPTIONS["from_scratch"][2])
    parser.add_argument("--overwrite", action="store_true", default=None,
                        help=OPTIONS["overwrite"][2])
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar")


def run(args):
    from kzoo.corpus import CorpusError
    from kzoo.pretraining.config import PretrainingError
    from kzoo.pretraining.run import pretrain
    options = {name: getattr(args, name) for name in _FLAGS}
    options["from_scratch"] = args.from_scratch
    options["overwrite"] = args.overwrite
    if args.quiet:
        options["verbose"] = 0
    try:
        summary = pretrain(args.preset, args.corpus, args.output,
                           config=args.config, **options)
    except (PretrainingError, CorpusError) as error:
        raise CommandError(str(error)) from None
    resumed = (f", resumed from step {summary['resumed_from']}"
               if summary["resumed_from"] is not None else "")
    loss = summary["loss"]
    speed = summary["tokens_per_second"]
    print(f"pretrained {summary['steps']} steps{resumed}"
          + (f"; loss {loss:.4f}" if loss is not None else "")
          + (f"; {speed:,.0f} tokens/s" if speed else "")
          + f"; saved to {summary['preset']}")
    return 0
