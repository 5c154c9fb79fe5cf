"""Write tests/durations.json: each test file's summed time per backend
pass, from the JUnit XML files of a full run. tests/conftest.py orders the
files longest first from it, so pytest-xdist hands out the long files
early and no worker is left alone with one at the end of a pass.

    KZOO_TEST_JUNIT_DIR=/tmp/junit bash scripts/run_tests.sh
    python scripts/record_test_durations.py /tmp/junit

(`run_tests.sh` writes `<backend>.xml` there.) The times are only an
ordering: a stale table makes a pass slower, never wrong.
"""

import argparse
import collections
import json
import os
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "durations.json"


def file_of(testcase):
    """`tests/models/test_x.py` from a JUnit classname such as
    `tests.models.test_x.TestClass` (class names are capitalised)."""
    parts = testcase.get("classname").split(".")
    return "/".join(p for p in parts if not p[:1].isupper()) + ".py"


def durations(junit_file):
    seconds = collections.Counter()
    for testcase in ElementTree.parse(junit_file).getroot().iter("testcase"):
        seconds[file_of(testcase)] += float(testcase.get("time") or 0)
    return {name: round(total, 1) for name, total in
            sorted(seconds.items(), key=lambda item: -item[1])}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("junit_dir", type=Path,
                        help="the folder of <backend>.xml files")
    args = parser.parse_args()
    table = {path.stem: durations(path)
             for path in sorted(args.junit_dir.glob("*.xml"))}
    if not table:
        parser.error(f"no <backend>.xml files in {args.junit_dir}")
    handle, temporary = tempfile.mkstemp(dir=TABLE.parent, suffix=".json")
    with os.fdopen(handle, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    os.replace(temporary, TABLE)
    print(f"wrote {TABLE.relative_to(ROOT)}: "
          + ", ".join(f"{backend} {len(files)} files"
                      for backend, files in table.items()))


if __name__ == "__main__":
    main()
