"""MkDocs hook: each guides/*.py becomes a page, read, never run.

A guide is a Python script whose prose is Markdown in bare top-level
triple-quoted strings; everything between two such strings is code. The
page is the prose as Markdown and the code as ```python blocks, in file
order, so the script stays the one source (its test runs it).
"""

import ast
import inspect
from pathlib import Path

from mkdocs.structure.files import File

GUIDES = Path(__file__).resolve().parent.parent / "guides"


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


def on_files(files, config):
    for path in sorted(GUIDES.glob("*.py")):
        files.append(File.generated(
            config, f"guides/{path.stem}.md",
            content=guide_markdown(path.read_text(encoding="utf-8"))))
    return files
