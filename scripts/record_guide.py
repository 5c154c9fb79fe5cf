"""Run a guide and record what it printed as docs/runs/<name>.txt, which
docs/guides_hook.py shows at the end of the guide's page ("Output of a
recorded run").

    python scripts/record_guide.py gpt2                  # a full run
    python scripts/record_guide.py multilingual \\
        --smoke "xlm_roberta_base_multi's weights come from the Hugging Face hub, which this machine cannot reach"
    python scripts/record_guide.py pretraining_at_scale --backend torch \\
        -- --work "$PWD/runs/guide"                       # guide arguments
    python scripts/record_guide.py pretraining_at_scale --backend torch \\
        --from-log run.log --wall 14400 \\
        --command "KERAS_BACKEND=torch python guides/pretraining_at_scale.py --work runs/guide"

A full run is the guide as its page describes it. Where that is out of
reach (its weights come from a hub the recording machine cannot reach,
or it takes hours), `--smoke WHY` records the guide's smoke run (tiny
random weights, a few examples) and WHY says what kept the full run out
of reach; the page labels the output as a smoke run.

The guide runs as `KERAS_BACKEND=<backend> python guides/<name>.py
[--smoke] [guide arguments]` in a fresh temporary folder (the plots it
saves go there and are deleted: give paths among the guide arguments
absolute). Its standard output is recorded, less TensorFlow's and absl's
log lines (`NOISE`); its standard error is shown only if it fails, and a
failed run writes nothing. `--from-log LOG` records a run made earlier
(its captured output, filtered the same way; `--wall` and `--command`
say how long it took and how it was started, as a user types it,
`KERAS_BACKEND=...` first; the log's modification time says when it
ended).

The record (written atomically: a reader sees the old one or the new
one) is one header line, then the output:

    # kzoo guide record | date 2026-11-28 21:47 UTC | backend jax | machine AMD EPYC, 2 cores | mode full | wall 312 s | command KERAS_BACKEND=jax python guides/gpt2.py
    <what the guide printed>

The header's fields come in that order, each a name and its value,
separated by " | " (which no value may contain): `date` (when the run
ended, UTC), `backend`, `machine` (`lscpu`'s model name and its CPU
count), `mode` (`full`, or `smoke on random weights: WHY`), `wall` (the
run's wall time in whole seconds) and `command`. `read_record` parses it
(the docs hook and tests/test_guide_records.py use it); a record written
by hand must parse with it.
"""

import argparse
import datetime
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDES = ROOT / "guides"
RUNS = ROOT / "docs" / "runs"

HEADER_START = "# kzoo guide record"
FIELDS = ("date", "backend", "machine", "mode", "wall", "command")
SEPARATOR = " | "
SMOKE_MODE = "smoke on random weights: "
# What a page says of each mode.
LABELS = {"full": "A full run",
          "smoke": "A smoke run on random weights"}

# TensorFlow's and absl's log lines: glog/absl ("E0000 00:00:1732...
# 12345 cuda_dnn.cc:8310] ..."), TensorFlow's Python logging
# ("2026-11-28 20:00:00.123456: I tensorflow/..."), absl's notice before
# it is initialised, TensorFlow's CPU-feature advice, Python logging
# from jax/absl/tensorflow ("WARNING:absl:..."), and Gloo's note as each
# process of a multi-process run connects ("[Gloo] Rank 1 is connected
# to 1 peer ranks. ...", in either order).
NOISE = re.compile(
    r"^(?:[IWEF]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ \S+:\d+\]"
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWEF] "
    r"|WARNING: All log messages before absl::InitializeLog\(\)"
    r"|To enable the following instructions: .* rebuild TensorFlow"
    r"|\[Gloo\] Rank \d+ is connected to \d+ peer ranks\."
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):(?:absl|jax|tensorflow|"
    r"h5py|tf_keras)\b)")


class RecordError(ValueError):
    """A docs/runs/*.txt file that is not a record in the header format."""


def guide_names():
    """The guides, by name (guides/<name>.py)."""
    return sorted(path.stem for path in GUIDES.glob("*.py"))


# A terminal's colour and style codes (Keras' progress bars write them):
# on a web page they show as stray characters.
ANSI_CODE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def clean_output(text):
    """The output as a reader should see it: log noise and terminal colour
    codes dropped, a line rewritten in place with carriage returns (a
    progress bar) kept as it ended, trailing spaces and blank lines at
    either end dropped."""
    lines = []
    # Not splitlines(): it would split at a carriage return too.
    for line in ANSI_CODE.sub("", text).replace("\r\n", "\n").split("\n"):
        line = line.rsplit("\r", 1)[-1].rstrip()
        if not NOISE.match(line):
            lines.append(line)
    return "\n".join(lines).strip("\n")


def machine():
    """`lscpu`'s model name and CPU count ("AMD EPYC, 2 cores")."""
    try:
        listing = subprocess.run(["lscpu"], capture_output=True, text=True,
                                 check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        listing = ""
    fields = dict(line.split(":", 1) for line in listing.splitlines()
                  if ":" in line)
    model = fields.get("Model name", "").strip() or "unknown CPU"
    cores = fields.get("CPU(s)", "").strip() or str(os.cpu_count())
    return f"{model}, {cores} cores"


def header(date, backend, mode, wall, command, machine_name=None):
    """The record's first line (`mode`: "full" or "smoke on random
    weights: WHY"); raises RecordError for a value holding the separator
    or a line break."""
    values = dict(date=date.strftime("%Y-%m-%d %H:%M UTC"), backend=backend,
                  machine=machine_name or machine(), mode=mode,
                  wall=f"{round(wall)} s", command=command)
    for name, value in values.items():
        if SEPARATOR in value or "\n" in value or not value.strip():
            raise RecordError(
                f"the record's {name} {value!r} is empty or holds "
                f"{SEPARATOR!r} or a line break; say it without them.")
    return SEPARATOR.join([HEADER_START] + [
        f"{name} {values[name]}" for name in FIELDS])


def read_record(path):
    """A record's fields (`FIELDS`, plus `kind`: "full" or "smoke", `why`:
    the smoke run's reason, `label`: what the page calls it, `output`: the
    recorded output); RecordError naming the file and what is wrong
    otherwise."""
    path = Path(path)
    first, _, output = path.read_text(encoding="utf-8").partition("\n")
    parts = first.split(SEPARATOR)
    names = tuple(part.split(" ", 1)[0] for part in parts[1:])
    if parts[0] != HEADER_START or names != FIELDS or any(
            " " not in part for part in parts[1:]):
        raise RecordError(
            f"{path}: the first line is not a record header "
            f"({HEADER_START!r}, then {', '.join(FIELDS)}, separated by "
            f"{SEPARATOR!r}); write the record with scripts/record_guide.py "
            "(its docstring has the format).")
    record = {name: part.split(" ", 1)[1] for name, part in
              zip(FIELDS, parts[1:])}
    mode = record["mode"]
    if mode == "full":
        record["kind"], record["why"] = "full", None
    elif mode.startswith(SMOKE_MODE) and mode[len(SMOKE_MODE):].strip():
        record["kind"], record["why"] = "smoke", mode[len(SMOKE_MODE):]
    else:
        raise RecordError(
            f"{path}: mode {mode!r} is neither 'full' nor "
            f"'{SMOKE_MODE}<why the full run is out of reach>'.")
    if not output.strip():
        raise RecordError(f"{path}: the record holds no output; record the "
                          "guide again.")
    record["label"] = LABELS[record["kind"]]
    record["output"] = output.strip("\n")
    return record


def run_guide(name, backend, smoke, guide_arguments, timeout):
    """Run the guide; (its cleaned standard output, wall seconds,
    the command as a user types it)."""
    arguments = (["--smoke"] if smoke else []) + list(guide_arguments)
    command = (f"KERAS_BACKEND={backend} python guides/{name}.py "
               + shlex.join(arguments)).strip()
    environment = {**os.environ, "KERAS_BACKEND": backend,
                   "PYTHONUNBUFFERED": "1"}
    environment.pop("KZOO_GUIDE_SMOKE", None)  # the command says the mode
    with tempfile.TemporaryDirectory(prefix=f"record_{name}_") as folder:
        start = time.monotonic()
        try:
            result = subprocess.run(
                [sys.executable, str(GUIDES / f"{name}.py"), *arguments],
                cwd=folder, env=environment, capture_output=True,
                timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SystemExit(
                f"{command} ran past --timeout {timeout:g} s and was "
                "stopped; nothing recorded. Give it a longer --timeout, or "
                "record the smoke run (--smoke WHY).") from None
        wall = time.monotonic() - start
    # Bytes, decoded here: text mode would turn a carriage return into a
    # line break.
    stdout, stderr = (stream.decode("utf-8", "replace")
                      for stream in (result.stdout, result.stderr))
    if result.returncode != 0:
        raise SystemExit(
            f"{command} exited with {result.returncode}; nothing recorded. "
            f"Its last output:\n{(stdout + stderr)[-3000:]}")
    return clean_output(stdout), wall, command


def write_record(name, head, output):
    """docs/runs/<name>.txt, atomically."""
    RUNS.mkdir(parents=True, exist_ok=True)
    target = RUNS / f"{name}.txt"
    handle, temporary = tempfile.mkstemp(dir=RUNS, prefix=f".{name}.",
                                         suffix=".partial")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(f"{head}\n{output}\n")
        read_record(temporary)  # what the page will read must parse
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Arguments after -- go to the guide.")
    parser.add_argument("name", help="the guide: guides/NAME.py")
    parser.add_argument("--smoke", metavar="WHY",
                        help="record the smoke run; WHY: what keeps the full "
                             "run out of reach (shown on the page)")
    parser.add_argument("--backend", default=os.environ.get(
        "KERAS_BACKEND", "jax"), choices=("jax", "tensorflow", "torch"),
        help="default: $KERAS_BACKEND, else jax")
    parser.add_argument("--timeout", type=float, default=3600,
                        help="seconds before the run is stopped "
                             "(default: 3600)")
    parser.add_argument("--from-log", type=Path, metavar="LOG",
                        help="record this captured output of an earlier run "
                             "instead of running the guide")
    parser.add_argument("--wall", type=float,
                        help="with --from-log: the run's wall time, seconds")
    parser.add_argument("--command",
                        help="with --from-log: the command that ran it")
    arguments, guide_arguments = argv, []
    if arguments is None:
        arguments = sys.argv[1:]
    if "--" in arguments:
        split = arguments.index("--")
        arguments, guide_arguments = arguments[:split], arguments[split + 1:]
    args = parser.parse_args(arguments)
    if args.name not in guide_names():
        parser.error(f"no guide guides/{args.name}.py; the guides: "
                     f"{', '.join(guide_names())}")
    if args.smoke is not None and not args.smoke.strip():
        parser.error("--smoke needs WHY: what keeps the full run out of "
                     "reach, e.g. \"bart_base_en's weights come from the "
                     "Hugging Face hub, which this machine cannot reach\"")
    mode = "full" if args.smoke is None else SMOKE_MODE + args.smoke.strip()
    if args.from_log is not None:
        if args.wall is None or not args.command:
            parser.error("--from-log needs --wall and --command (how long "
                         "the run took and how it was started)")
        if not args.command.startswith(f"KERAS_BACKEND={args.backend} "):
            parser.error(f"--command should start with KERAS_BACKEND="
                         f"{args.backend} (--backend), as a user repeats it")
        if not args.from_log.is_file():
            parser.error(f"--from-log {args.from_log}: no such file")
        output = clean_output(args.from_log.read_bytes().decode(
            "utf-8", "replace"))
        wall, command = args.wall, args.command
        ended = datetime.datetime.fromtimestamp(
            args.from_log.stat().st_mtime, datetime.timezone.utc)
    else:
        output, wall, command = run_guide(
            args.name, args.backend, args.smoke is not None,
            guide_arguments, args.timeout)
        ended = datetime.datetime.now(datetime.timezone.utc)
    try:
        head = header(ended, args.backend, mode, wall, command)
        target = write_record(args.name, head, output)
    except RecordError as error:
        parser.error(str(error))
    print(f"wrote {os.path.relpath(target, ROOT)}: {mode.split(':')[0]}, "
          f"{round(wall)} s, {len(output.splitlines())} lines")


if __name__ == "__main__":
    main()
