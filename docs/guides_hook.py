"""MkDocs hook: each guides/*.py becomes a page, read, never run.

A guide is a Python script whose prose is Markdown in bare top-level
triple-quoted strings; everything between two such strings is code. The
page is the prose as Markdown and the code as ```python blocks, in file
order, so the script stays the one source (its test runs it).

Each page ends with what the guide printed in a recorded run,
docs/runs/<name>.txt (written by scripts/record_guide.py, whose
`read_record` reads it), labelled a full run or a smoke run on random
weights. tests/test_guide_records.py checks that every guide has one.
"""

import ast
import importlib.util
import inspect
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
GUIDES = ROOT / "guides"
RUNS = ROOT / "docs" / "runs"


def _record_guide():
    """scripts/record_guide.py, the one reader of the record format."""
    spec = importlib.util.spec_from_file_location(
        "record_guide", ROOT / "scripts" / "record_guide.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def guide_markdown(source):
    """The Markdown page of one guide's source text."""
    lines = source.splitlines()
    # code_start: the first line (0-based) not emitted yet.
    parts, code_start = [], 0
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            continue
        _code(parts, lines[code_start:node.lineno - 1])
        parts.append(inspect.cleandoc(node.value.value))
        code_start = node.end_lineno
    _code(parts, lines[code_start:])
    return "\n\n".join(parts) + "\n"


def _code(parts, lines):
    text = "\n".join(lines).strip("\n")
    if text.strip():
        parts.append(f"```python\n{text}\n```")


def recorded_run_markdown(record):
    """The page's closing section for one record (`read_record`'s)."""
    if record["kind"] == "smoke":
        label = (f"**{record['label']}**, not the full run: {record['why']}. "
                 "Its numbers show that every step runs, not what the "
                 "guide measures.")
    else:
        label = f"**{record['label']}**."
    # A fence longer than any run of backticks in the output.
    fence = "`" * max([3] + [len(run) + 1 for run in
                             re.findall("`+", record["output"])])
    return (
        f"## Output of a recorded run\n\n{label}\n\n"
        f"`{record['command']}` on {record['backend']}, {record['machine']}; "
        f"ended {record['date']} after {record['wall']}:\n\n"
        f"{fence}text\n{record['output']}\n{fence}")


def on_files(files, config):
    read_record = _record_guide().read_record
    for path in sorted(GUIDES.glob("*.py")):
        page = guide_markdown(path.read_text(encoding="utf-8"))
        record = RUNS / f"{path.stem}.txt"
        if record.is_file():
            page += "\n" + recorded_run_markdown(read_record(record)) + "\n"
        files.append(File.generated(
            config, f"guides/{path.stem}.md", content=page))
    return files
