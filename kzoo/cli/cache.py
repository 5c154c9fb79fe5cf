"""`kzoo cache ls|rm`: the presets kzoo has downloaded and converted
(`$KZOO_CACHE`, default ~/.cache/kzoo), their sizes, and the raw Hugging
Face files behind them (in huggingface_hub's own cache, shared with
`transformers`).

    kzoo cache ls                  # every converted preset, with sizes
    kzoo cache rm bert_base --yes  # remove one (asks first on a terminal)
    kzoo cache rm bert_base --yes --hf-files   # and its Hugging Face files
"""

import sys

from kzoo.cli.inputs import CommandError, add_json_argument, emit_json

INTERMIXED = False  # it has actions (ls, rm): see kzoo.cli.parse_args

# Folders of the cache that hold no preset of a name.
_SPECIAL = {"hf", "converted", "assets"}


def add_arguments(parser):
    actions = parser.add_subparsers(dest="action", required=True)
    ls = actions.add_parser("ls", help="list the cached presets",
                            description="List the cached presets, their "
                            "sizes and the Hugging Face files behind them.")
    add_json_argument(ls)
    rm = actions.add_parser("rm", help="remove cached presets",
                            description="Remove cached presets (they are "
                            "downloaded and converted again on next use).")
    rm.add_argument("names", nargs="+", metavar="PRESET",
                    help="a preset name or alias, hf://org/name@revision, "
                    "or a name `kzoo cache ls` prints")
    rm.add_argument("-y", "--yes", action="store_true",
                    help="do not ask (needed when stdin is not a terminal)")
    rm.add_argument("--hf-files", action="store_true",
                    help="also remove the Hugging Face files it was "
                    "converted from (from huggingface_hub's cache)")
    add_json_argument(rm)


def folder_size(folder):
    from pathlib import Path
    return sum(p.stat().st_size for p in Path(folder).rglob("*")
               if p.is_file() and not p.is_symlink())


def human_size(count):
    for unit in ("B", "KB", "MB", "GB"):
        if count < 1024 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else \
                f"{count:.1f} {unit}"
        count /= 1024


def entries():
    """Every cached preset: `{"name", "kind", "path", "bytes", "source",
    "hf_files"}`, named presets first."""
    from kzoo import presets
    root = presets.cache_dir()
    if not root.is_dir():
        return []
    hub = _hub_cache()
    found = []
    for path in sorted(root.iterdir()):
        if path.name.startswith(".") or not path.is_dir():
            continue
        if path.name == "hf":
            for repo in sorted(p for p in path.iterdir() if p.is_dir()):
                for revision in sorted(p for p in repo.iterdir()
                                       if p.is_dir()):
                    name = (f"hf://{repo.name.replace('--', '/', 1)}"
                            f"@{revision.name.replace('--', '/')}")
                    found.append(_entry(name, "hf", revision, hub))
        elif path.name == "converted":
            found += [_entry(f"converted/{p.name}", "converted folder", p,
                             hub) for p in sorted(path.iterdir())
                      if p.is_dir()]
        elif path.name == "assets":
            found.append({"name": "assets", "kind": "tokenizer assets",
                          "path": str(path), "bytes": folder_size(path),
                          "source": None, "hf_files": None})
        elif path.name not in _SPECIAL and (path / "metadata.json").is_file():
            found.append(_entry(path.name, "preset", path, hub))
    order = {"preset": 0, "hf": 1, "converted folder": 2,
             "tokenizer assets": 3}
    return sorted(found, key=lambda e: order[e["kind"]])


def _entry(name, kind, path, hub):
    import json
    try:
        meta = json.loads((path / "metadata.json").read_text("utf-8"))
        source = meta.get("source") if isinstance(meta, dict) else None
    except (OSError, ValueError):
        source = None
    return {"name": name, "kind": kind, "path": str(path),
            "bytes": folder_size(path),
            "source": source if isinstance(source, dict) else None,
            "hf_files": _hf_files(source, hub)}


def _hub_cache():
    """huggingface_hub's scan of its cache; None where there is none."""
    from huggingface_hub import scan_cache_dir

    from kzoo.convert.download import hub_cache_dir
    folder = hub_cache_dir()
    if not folder.is_dir():
        return None
    try:
        return scan_cache_dir(folder)
    except Exception:  # noqa: BLE001 - CacheNotFound, a damaged cache
        return None


def _hf_files(source, hub):
    """The Hugging Face files a preset was converted from, as they sit in
    huggingface_hub's cache: `{"repo", "commit", "path", "bytes"}`, or
    None (not from the hub, or no longer cached)."""
    if not isinstance(source, dict) or hub is None:
        return None
    repo_id, commit = source.get("huggingface"), source.get("commit")
    for repo in hub.repos:
        if repo.repo_type != "model" or repo.repo_id != repo_id:
            continue
        for revision in repo.revisions:
            if commit in (None, revision.commit_hash):
                return {"repo": repo_id, "commit": revision.commit_hash,
                        "path": str(revision.snapshot_path),
                        "bytes": revision.size_on_disk}
    return None


def run(args):
    if args.action == "ls":
        return _ls(args)
    return _rm(args)


def _ls(args):
    from kzoo import presets
    found = entries()
    if args.json:
        emit_json(args, {"cache": str(presets.cache_dir()),
                         "entries": found})
        return 0
    if not found:
        print(f"kzoo's cache ({presets.cache_dir()}) is empty.")
        return 0
    width = max(len(e["name"]) for e in found)
    total = sum(e["bytes"] for e in found)
    print(f"{presets.cache_dir()}: {human_size(total)}")
    for e in found:
        print(f"  {e['name']:<{width}} {human_size(e['bytes']):>9}  "
              f"{e['kind']}")
        hf = e["hf_files"]
        if hf:
            print(f"  {'':<{width}} {human_size(hf['bytes']):>9}  Hugging "
                  f"Face files: {hf['repo']}@{hf['commit'][:12]} "
                  f"({hf['path']})")
    return 0


def _find(name, found):
    by_name = {e["name"]: e for e in found}
    if name in by_name:
        return by_name[name]
    from kzoo import presets
    try:
        resolved = presets.resolve(name).name  # an alias, hf://org/name
    except presets.PresetError:
        resolved = None
    if resolved in by_name:
        return by_name[resolved]
    for e in found:  # hf://org/name without @revision: main
        if name.startswith("hf://") and "@" not in name and \
                e["name"] == f"{name}@main":
            return e
    raise CommandError(f"{name} is not in kzoo's cache (`kzoo cache ls` "
                       "lists what is).")


def _rm(args):
    import shutil
    found = entries()
    chosen = []
    for name in args.names:
        e = _find(name, found)
        if e not in chosen:
            chosen.append(e)
    total = sum(e["bytes"] + ((e["hf_files"] or {}).get("bytes", 0)
                              if args.hf_files else 0) for e in chosen)
    if not args.yes:
        if sys.stdin is None or not sys.stdin.isatty():
            raise CommandError("stdin is not a terminal, so kzoo cannot ask: "
                               "pass --yes to remove without asking.")
        what = ", ".join(e["name"] for e in chosen)
        answer = input(f"Remove {what} ({human_size(total)})? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing removed.", file=sys.stderr)
            return 1
    removed = []
    for e in chosen:
        shutil.rmtree(e["path"])
        removed.append(e["path"])
        if args.hf_files and e["hf_files"]:
            _remove_hf_revision(e["hf_files"])
            removed.append(e["hf_files"]["path"])
    if args.json:
        emit_json(args, {"removed": removed, "bytes": total})
        return 0
    for path in removed:
        print(f"removed {path}")
    print(f"freed {human_size(total)}")
    return 0


def _remove_hf_revision(hf):
    """The revision, through huggingface_hub's own cache deletion (it
    keeps blobs another revision still links to)."""
    hub = _hub_cache()
    if hub is not None:
        hub.delete_revisions(hf["commit"]).execute()
