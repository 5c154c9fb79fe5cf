"""Part manifests checked before they are merged: prepared from one list
of input files, and together covering every byte of it exactly once.

Each `--part i/n` lists and splits the inputs on its own
(`partition.py`). Run part 0/2 over b1-b4, add a0.txt, run part 1/2: the
two parts split different lists, and merged they would hold some
documents twice and others never. Each part manifest records the list it
split (`sources`: path, size, mtime of every input) and the byte ranges
it took (`pieces`: `[file index, start, end]`); the merge refuses parts
whose lists differ, and ranges that overlap or leave a gap.
"""

from pathlib import Path

from kzoo.corpus.shards import CorpusError


def check_parts(output, parts, reference=0):
    """Raise `CorpusError` (one line) unless `parts` (part manifests, in
    order) split one file list into disjoint, complete byte ranges.
    `reference`: the part whose list is the current one (the part that
    just ran; its list was read from the inputs now)."""
    count = len(parts)
    for index, manifest in enumerate(parts):
        if "pieces" not in manifest:
            raise CorpusError(
                f"Part {index}/{count} of {output} was prepared by an older "
                "kzoo (it records no byte ranges): prepare it again "
                f"(`kzoo prepare-corpus ... --part {index}/{count}`).")
    expected = parts[reference]["sources"]
    stale = [index for index, manifest in enumerate(parts)
             if manifest["sources"] != expected]
    if stale:
        detail = _difference(expected, parts[stale[0]]["sources"],
                             reference, stale[0])
        names = ", ".join(f"{index}/{count}" for index in stale)
        raise CorpusError(
            f"Part(s) {names} of {output} split another list of input files "
            f"than part {reference}/{count} ({detail}): every part must "
            f"split the same inputs. Run part(s) {names} again over the "
            "inputs you mean (`kzoo prepare-corpus ... --part I/N`).")
    _check_tiling(output, expected, parts)


def _difference(expected, other, reference, index):
    """What differs between two parts' file lists, said briefly."""
    mine = {record["path"]: record for record in expected}
    theirs = {record["path"]: record for record in other}
    only_mine = sorted(set(mine) - set(theirs))
    only_theirs = sorted(set(theirs) - set(mine))
    if only_mine:
        return (f"{Path(only_mine[0]).name} is in part {reference}'s list "
                f"only{_more(only_mine)}")
    if only_theirs:
        return (f"{Path(only_theirs[0]).name} is in part {index}'s list "
                f"only{_more(only_theirs)}")
    changed = sorted(path for path in mine if mine[path] != theirs[path])
    if changed:
        return (f"{Path(changed[0]).name} changed between them"
                f"{_more(changed)}")
    return "the files are listed in another order"


def _more(names):
    return f" (and {len(names) - 1} more)" if len(names) > 1 else ""


def _check_tiling(output, sources, parts):
    """Every input file covered by the parts' byte ranges exactly once."""
    taken = [[] for _ in sources]
    for index, manifest in enumerate(parts):
        for file, start, end in manifest["pieces"]:
            if not 0 <= file < len(sources):
                raise CorpusError(
                    f"Part {index}/{len(parts)} of {output} names input "
                    f"file {file} of {len(sources)}: its manifest is "
                    "damaged. Prepare that part again.")
            taken[file].append((start, end, index))
    for file, ranges in enumerate(taken):
        name = Path(sources[file]["path"]).name
        size = sources[file]["bytes"]
        position, owner, gap_end = 0, None, size
        for start, end, index in sorted(ranges):
            if start > position:
                gap_end = start
                break
            if start < position:
                raise CorpusError(
                    f"Parts {owner} and {index} of {output} both hold bytes "
                    f"{start:,}-{min(end, position):,} of {name}: merged, "
                    "those documents would be there twice. Prepare the "
                    "parts again with one kzoo over the same inputs.")
            position, owner = end, index
        if position != size:
            raise CorpusError(
                f"No part of {output} holds bytes {position:,}-{gap_end:,} of "
                f"{name}: merged, those documents would be lost. Prepare "
                "the parts again with one kzoo over the same inputs.")
