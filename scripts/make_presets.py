"""Write the named preset folders under presets/ from their rows in
scripts/preset_table.py.

Run when a preset is added or changed (add or edit its row, then):

    python scripts/make_presets.py                      # every named preset
    python scripts/make_presets.py gpt2_base_en t5_small_multi
    python scripts/make_presets.py --family electra
    python scripts/make_presets.py --out /tmp/presets   # e.g. to diff -r
    python scripts/make_presets.py --stand-ins          # tests/data/presets
    python scripts/make_presets.py --list

Each folder holds config.json (the backbone's class and config),
tokenizer.json (the tokenizer's class and config), metadata.json, the
tokenizer files that ship and, for the generating presets,
generation.json (the checkpoint's generation settings, from
scripts/preset_generation.py); it is written whole (in a staging folder beside
it, then swapped in), so a file the table no longer names goes. Weights
are not shipped: metadata.json says where `from_preset` gets them (a Hugging
Face repository it downloads and converts, or, for checkpoints kzoo cannot
fetch, how to convert them by hand), and `load_weights=False` builds the
model without them. Tokenizer files that cannot be had offline are
declared remote (they come with the weights); the ones that ship are made
from the table's INPUTS (files in this checkout, checked by sha256), so
the script needs no network. Parameter counts are computed by building
each backbone from its config (the larger GPT-2 sizes: from a formula).

presets/all_minilm_l6_v2 is converted from an installed package's
checkpoint by scripts/make_minilm_preset.py.
"""

import argparse
import gc
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
SCRIPTS = Path(__file__).resolve().parent
ROOT = SCRIPTS.parent
sys.path.insert(0, str(SCRIPTS))

import kzoo  # noqa: E402
from kzoo.core.registry import class_entry  # noqa: E402
from kzoo.utils.files import (sha256_of, swap_into_place,  # noqa: E402
                              write_json)
from preset_generation import GENERATION  # noqa: E402
from preset_table import (FAMILIES, HF, INPUTS, PRESETS,  # noqa: E402
                          STAND_INS)

MERGED = ("config", "tokenizer_config")


def rows(stand_ins=False):
    """name -> the preset's full row: its family's, overlaid by its own
    (config and tokenizer_config merged key by key); a stand-in's, over
    the named preset it is `like`."""
    def merge(base, row):
        merged = {**base, **row}
        for key in MERGED:
            merged[key] = {**base.get(key, {}), **row.get(key, {})}
        return merged

    named = {name: merge(FAMILIES[row["family"]], row)
             for name, row in PRESETS.items()}
    if not stand_ins:
        return named
    return {name: merge(named[row["like"]],
                        {k: v for k, v in row.items() if k != "like"})
            for name, row in STAND_INS.items()}


def input_paths(overrides=()):
    """INPUTS' paths, `NAME=PATH` overrides applied."""
    paths = {name: ROOT / spec["path"] for name, spec in INPUTS.items()}
    for item in overrides:
        name, _, path = item.partition("=")
        if name not in INPUTS or not path:
            raise SystemExit(f"--input {item!r}: expected NAME=PATH with "
                             f"NAME one of {', '.join(INPUTS)}.")
        paths[name] = Path(path)
    return paths


def check_input(name, path):
    if sha256_of(path) != INPUTS[name]["sha256"]:
        raise SystemExit(f"{path} is not the file {name!r} names (sha256 "
                         f"{INPUTS[name]['sha256']}).")


def backbone_entry(name, row, build_up_to):
    """config.json's entry and the parameter count."""
    cls = getattr(kzoo, row["backbone"])
    config = row["config"]
    formula = row.get("param_formula")
    if row.get("tiny_config") and config["num_layers"] > build_up_to:
        # Not built (gigabytes): a tiny one's entry, the sizes put back.
        entry = cls(**{**config, **row["tiny_config"]}).config_entry()
        entry["config"].update(config)
        return entry, formula(config)
    backbone = cls(**config)
    entry, params = backbone.config_entry(), int(backbone.count_params())
    del backbone
    gc.collect()  # its weights go now, not with the next presets'
    if formula is not None and formula(config) != params:
        raise SystemExit(f"{name}: parameter formula {formula(config)} != "
                         f"built model {params}")
    return entry, params


def source_record(name, row):
    """metadata.json's `source`, and the URL remote tokenizer files come
    from."""
    source = row.get("source")
    if source != "hub":
        return source, source.get("url")
    url = f"{HF}/{row['repo']}"
    files = ["config.json", row["weights_file"]] + [
        filename for filename, asset in row.get("tokenizer_assets", {}).items()
        if asset.get("remote")] + row.get("extra_files", [])
    record = {
        "huggingface": row["repo"],
        "revision": "main",
        "url": url,
        "how_to_get": row["how_to_get"].format(
            files=", ".join(files), url=url, name=name),
        "note": row["note"],
    }
    if row.get("file_list", True):
        record["files"] = [{"name": f} for f in files]
    return record, url


def write_tokenizer(folder, row, inputs, url):
    """tokenizer.json and the files that ship; metadata.json's `tokenizer`
    record."""
    cls = getattr(kzoo, row["tokenizer"])
    assets = row.get("tokenizer_assets") or {}
    argument = {filename: arg for arg, filename in cls.asset_files.items()}
    shipped = {argument[filename]: inputs[asset["input"]]
               for filename, asset in assets.items() if "input" in asset}
    tokenizer = cls(**shipped, **row["tokenizer_config"])
    if shipped:
        tokenizer.save_to_preset(folder)  # tokenizer.json and the files
    else:
        entry = class_entry(tokenizer, tokenizer.get_config())
        if row.get("tokenizer_assets_from"):
            entry["assets_from"] = row["tokenizer_assets_from"]
        write_json(folder / "tokenizer.json", entry)
    record = {}
    for filename, asset in assets.items():
        if "input" in asset:
            record[filename] = {"sha256": sha256_of(folder / filename),
                                "provenance": asset["provenance"]}
        else:
            record[filename] = {
                key: value.replace("{url}", url) if isinstance(value, str)
                else value for key, value in asset.items()}
    return record


def write_preset(root, name, row, inputs, build_up_to=24, generation=True):
    """presets/<name>/ from its row, written whole (with the checkpoint's
    generation settings unless `generation` is False: the test stand-ins
    keep only what their tests read)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=f".{name}.staging-"))
    try:
        entry, params = backbone_entry(name, row, build_up_to)
        write_json(staging / "config.json", entry)
        source, url = source_record(name, row)
        tokenizer = write_tokenizer(staging, row, inputs, url)
        metadata = {
            "name": name,
            "aliases": row["aliases"],
            "family": row["family"],
            "class_name": row["backbone"],
            "description": row["description"],
            "params": params,
            "license": row["license"],
            "source": source,
        }
        if row.get("heads") is not None:
            metadata["heads"] = row["heads"]
        if row.get("heads_note"):
            metadata["heads_note"] = row["heads_note"]
        if row.get("task"):
            # A task's preset (LaBSE's embedder, FinBERT's classifier):
            # task.json names the task and its arguments; from_preset
            # builds it, and the download converts the checkpoint to it.
            write_json(staging / "task.json", row["task"])
            metadata["task_class_name"] = row["task"]["class_name"]
        if row.get("labels"):
            metadata["labels"] = row["labels"]
        if row.get("tokenizer_assets_from"):
            metadata["tokenizer_assets_from"] = row["tokenizer_assets_from"]
        elif tokenizer:
            metadata["tokenizer"] = tokenizer
        if generation and name in GENERATION:
            write_json(staging / "generation.json",
                       GENERATION[name]["settings"])
            metadata["generation_settings"] = GENERATION[name]["provenance"]
        write_json(staging / "metadata.json", metadata)
        swap_into_place(staging, root / name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    print(f"wrote {root / name} ({params:,} parameters)")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help="presets to write (default: all of them)")
    parser.add_argument("--family", action="append", default=[],
                        help="write this family's presets (repeatable)")
    parser.add_argument("--out", type=Path,
                        help="the folder to write them into (default: "
                             "presets/, with --stand-ins tests/data/presets/)")
    parser.add_argument("--stand-ins", action="store_true",
                        help="write the tests' stand-in presets instead")
    parser.add_argument("--input", action="append", default=[],
                        metavar="NAME=PATH",
                        help="read the input file NAME (one of "
                             f"{', '.join(INPUTS)}) from PATH; it must have "
                             "the table's sha256")
    parser.add_argument("--build-up-to", type=int, default=24,
                        help="build (to count the parameters) the backbones "
                             "that have a parameter formula only up to this "
                             "many layers (default 24)")
    parser.add_argument("--list", action="store_true",
                        help="print the presets' names and families, write "
                             "nothing")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    table = rows(args.stand_ins)
    unknown = sorted(set(args.names) - set(table))
    unknown += sorted(set(args.family) - {r["family"] for r in table.values()})
    if unknown:
        raise SystemExit(f"not in the table: {', '.join(unknown)} "
                         "(see --list)")
    chosen = [name for name, row in table.items()
              if (not args.names and not args.family) or name in args.names
              or row["family"] in args.family]
    if args.list:
        for name in chosen:
            print(f"{name}  ({table[name]['family']})")
        return
    out = args.out or ROOT / ("tests/data/presets" if args.stand_ins
                              else "presets")
    inputs = input_paths(args.input)
    for name in {asset["input"] for n in chosen
                 for asset in (table[n].get("tokenizer_assets") or {}).values()
                 if "input" in asset}:
        check_input(name, inputs[name])
    for name in chosen:
        write_preset(out, name, table[name], inputs, args.build_up_to,
                     generation=not args.stand_ins)


if __name__ == "__main__":
    main()
