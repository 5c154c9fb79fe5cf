"""`kzoo pretrain PRESET CORPUS OUTPUT --max-steps N`: step-based
pretraining on a prepared corpus (`kzoo prepare-corpus`), or on several
mixed with weights (`kzoo pretrain PRESET OUTPUT --corpus books:0.3
--corpus web:0.7`), checkpointed every N steps; the same command after
a crash (`kill -9` included) resumes from the last checkpoint and trains
what the uninterrupted run trains. A thin wrapper of
`kzoo.pretraining.run.pretrain`."""

from kzoo.cli.inputs import CommandError


def _tflops(text):
    """--peak-tflops: a number, or auto."""
    return text if text == "auto" else float(text)


_tflops.__name__ = "number or auto"  # argparse's error names it

# Flags whose value is not the option's type's constructor.
_FLAGS = {
    "objective": str, "max_steps": int, "batch_size": int,
    "sequence_length": int, "learning_rate": float, "warmup_steps": int,
    "weight_decay": float, "gradient_accumulation_steps": int,
    "dtype": str, "eval_every": int, "eval_batches": int,
    "checkpoint_every": int, "keep_checkpoints": int, "seed": int,
    "draw_groups": int, "model_parallel": int,
    "optimizer": str, "schedule": str, "beta_1": float, "beta_2": float,
    "epsilon": float, "clip_norm": float, "pretraining_dropout": float,
    "mask_rate": float, "batch_ramp": str,
    "peak_tflops": _tflops,
}


def recipes_epilog():
    """Each family's default recipe, for `kzoo pretrain --help`."""
    from kzoo.pretraining.recipes import RECIPES, describe
    return ("Each family's own pretraining recipe is the default (flags and "
            "the config file override any part; --print-recipe shows the "
            "resolved one):\n" + "\n".join(
                "  " + describe(family) for family in RECIPES))


def add_arguments(parser):
    parser.add_argument("preset", help="the model to pretrain (a name or "
                        "folder)")
    # Optional: a mixture names its corpora with --corpus instead (the
    # command's parser reads positionals intermixed with options).
    parser.add_argument("corpus", nargs="?", help="a corpus folder prepared "
                        "with the preset's tokenizer (`kzoo prepare-corpus`);"
                        " leave it out to give --corpus instead")
    parser.add_argument("output", help="the run's folder: checkpoints, "
                        "metrics.jsonl, tensorboard/, and at the end "
                        "preset/; run the same command again to resume")
    parser.add_argument("--config", help="a JSON, TOML or YAML file of "
                        "options (its keys are the flags' names); flags "
                        "given here win")
    from kzoo.pretraining.config import OPTIONS
    parser.add_argument("--corpus", dest="corpora", action="append",
                        metavar="PATH[:WEIGHT][:epochs=N]", default=None,
                        help=OPTIONS["corpus"][2])
    for name, kind in _FLAGS.items():
        default, _, help_text = OPTIONS[name]
        shown = "" if default is None else f" (default {default})"
        # argparse formats help with %: a literal percent sign is doubled.
        parser.add_argument(f"--{name.replace('_', '-')}", type=kind,
                            default=None,
                            help=(help_text + shown).replace("%", "%%"))
    parser.add_argument("--from-scratch", action="store_true", default=None,
                        help=OPTIONS["from_scratch"][2])
    parser.add_argument("--overwrite", action="store_true", default=None,
                        help=OPTIONS["overwrite"][2])
    parser.add_argument("--extend-schedule", action="store_true",
                        default=None, help=OPTIONS["extend_schedule"][2])
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar")
    parser.add_argument("--print-recipe", action="store_true",
                        help="print the options the run would train with "
                        "(the family's recipe filled in) as JSON, and exit")
    import argparse
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = recipes_epilog()


def _corpus(args):
    """CORPUS, or the --corpus list (a mixture), or None (the config
    file's `corpus`)."""
    if args.corpus is not None and args.corpora:
        raise CommandError(
            f"Two corpora given: CORPUS {args.corpus} and --corpus. Give one "
            "corpus as CORPUS, or every corpus of a mixture with --corpus "
            "PATH:WEIGHT.")
    return args.corpus if args.corpus is not None else args.corpora


def run(args):
    from kzoo.corpus import CorpusError
    from kzoo.pretraining.config import PretrainingError
    from kzoo.pretraining.run import pretrain, resolved_run_options
    from kzoo.utils.storage import StorageError
    options = {name: getattr(args, name) for name in _FLAGS}
    options["from_scratch"] = args.from_scratch
    options["overwrite"] = args.overwrite
    options["extend_schedule"] = args.extend_schedule
    if args.quiet:
        options["verbose"] = 0
    if args.print_recipe:
        import json
        try:
            resolved = resolved_run_options(args.preset, config=args.config,
                                            **options)
        except PretrainingError as error:
            raise CommandError(str(error)) from None
        print(json.dumps(resolved, indent=2, sort_keys=True))
        return 0
    try:
        summary = pretrain(args.preset, _corpus(args), args.output,
                           config=args.config, **options)
    except (PretrainingError, CorpusError, StorageError) as error:
        raise CommandError(str(error)) from None
    resumed = (f", resumed from step {summary['resumed_from']}"
               if summary["resumed_from"] is not None else "")
    loss = summary["loss"]
    speed = summary["tokens_per_second"]
    print(f"pretrained {summary['steps']} steps{resumed}"
          + (f"; loss {loss:.4f}" if loss is not None else "")
          + (f"; {speed:,.0f} tokens/s" if speed else "")
          + f"; saved to {summary['preset']}")
    for part in summary.get("corpora") or []:
        cap = part.get("epoch_cap")
        print(f"  {part['corpus']} (weight {part['weight']:.3g}"
              + (f", at most {cap} epoch{'s' * (cap > 1)}" if cap else "")
              + "): "
              f"{part['examples']:,} examples, epoch {part['epoch'] + 1}")
    cut = summary.get("ids_cut") or {}
    print(f"ids of the corpus not trained on: {sum(cut.values()):,}"
          + "".join(f"\n  {count:,}: {reason}"
                    for reason, count in sorted(cut.items())))
    return 0
