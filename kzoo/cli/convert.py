"""`kzoo convert SRC DEST`: Hugging Face checkpoints <-> kzoo presets.

    kzoo convert path/to/hf-folder my_preset          # HF folder -> kzoo
    kzoo convert hf://google-bert/bert-base-uncased ~/.cache/kzoo/bert_base_en_uncased
    kzoo convert my_preset path/to/hf-out --to hf     # kzoo -> HF
    kzoo convert bert_tiny path/to/hf-out --to hf     # a named preset
"""


def add_arguments(parser):
    parser.add_argument(
        "src", help="--to kzoo: a Hugging Face folder (config.json + "
        "model.safetensors) or hf://org/name[@revision]; --to hf: a kzoo "
        "preset name or folder")
    parser.add_argument("dest", help="the folder to write")
    parser.add_argument("--to", choices=("kzoo", "hf"), default="kzoo",
                        help="the format to write (default: kzoo)")
    parser.add_argument(
        "--task", default="auto",
        help="--to kzoo: 'auto' (from the checkpoint's architecture), "
        "'backbone', 'pretraining' (keep every pretraining head the "
        "checkpoint has: what a named preset's cache holds), or a kzoo task "
        "class (e.g. BertMaskedLM)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace DEST if it exists")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress lines")


def run(args):
    import sys
    from kzoo import presets
    from kzoo.convert import ConversionError, DownloadError
    verbose = not args.quiet
    try:
        if args.to == "hf":
            from kzoo.convert import export_hf
            dest = export_hf(args.src, args.dest, verbose=verbose,
                             overwrite=args.overwrite)
            print(f"Wrote a Hugging Face checkpoint to {dest}")
            return 0
        report = _to_kzoo(args, verbose)
        if report is None:
            # A folder in an original, pre-Hugging Face layout (ELMo's
            # bilm-tf, fastai's AWD-LSTM): its converter keeps no report.
            print(f"Wrote a kzoo preset to {args.dest} (from an original "
                  "checkpoint folder)")
            return 0
        print(f"Wrote a kzoo preset to {args.dest}: {report.summary()}")
        for name, reason in report.unused.items():
            print(f"  unused: {name}: {reason}")
        for path, reason in report.not_in_checkpoint.items():
            print(f"  not in checkpoint: {path}: {reason}")
        return 0
    except (ConversionError, DownloadError, presets.PresetError,
            presets.MissingWeightsError) as e:
        print(f"kzoo convert: error: {e}", file=sys.stderr)
        return 1


def _to_kzoo(args, verbose):
    from kzoo.convert import hf_to_preset
    if not args.src.startswith("hf://"):
        return hf_to_preset(args.src, args.dest, task=args.task,
                            overwrite=args.overwrite, verbose=verbose)
    from kzoo.convert import hub
    with hub.staging_folder() as staging:
        source = hub.fetch_hf_repo(args.src, staging, verbose)
        return hf_to_preset(staging, args.dest, task=args.task,
                            overwrite=args.overwrite, verbose=verbose,
                            source=source)
