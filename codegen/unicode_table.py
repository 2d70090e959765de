"""Write ``src/acp_runtime/_unicode_15_1.py``: the Unicode 15.1 character properties the
URL check (``acp_runtime._whatwg_idna``) needs, for the code points whose properties the
oldest supported Python (3.10, Unicode 13.0) does not know or knows differently.

The URL check derives each code point's IDNA status from ``unicodedata``, whose version
is the interpreter's (13.0 on 3.10, 14.0 on 3.11, 15.0 on 3.12, 15.1 on 3.13), so
``http://\\U0001FAE8.com`` parsed on 3.10 and 3.11 but not on 3.12 and 3.13 as in Node.
With this table consulted first, every interpreter answers as Unicode 15.1 does.

Run with a Python whose ``unicodedata`` is 15.1 (3.13), naming a Python whose data is
13.0 (3.10) as the baseline, found on ``PATH`` or under pyenv when not given::

    python3.13 codegen/unicode_table.py [--baseline PYTHON] [--check]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "src" / "acp_runtime" / "_unicode_15_1.py"
VERSION = "15.1.0"
BASELINE = "13.0.0"

Properties = tuple[str, str, int, str]
"""General category, bidi class, canonical combining class, NFKC case folding (as
``whatwg_idna`` maps: NFKC, case fold, NFKC)."""


def properties(char: str) -> Properties:
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", char).casefold())
    return (
        unicodedata.category(char),
        unicodedata.bidirectional(char),
        unicodedata.combining(char),
        folded,
    )


def _code_points() -> range:
    return range(0x110000)


def _dump() -> None:
    """In the baseline interpreter: its version, then each assigned code point and its
    properties, one JSON array a line (an unassigned one is ``Cn`` and maps to itself)."""
    sys.stdout.write(json.dumps(unicodedata.unidata_version) + "\n")
    for cp in _code_points():
        char = chr(cp)
        if unicodedata.category(char) != "Cn":
            sys.stdout.write(json.dumps([cp, *properties(char)]) + "\n")


def find_baseline() -> str | None:
    """A Python whose ``unicodedata`` is Unicode 13.0 (3.10): ``UNICODE_13_PYTHON``, else
    ``python3.10`` on ``PATH``, else one under pyenv."""
    named = os.environ.get("UNICODE_13_PYTHON")
    candidates = [named] if named else []
    on_path = shutil.which("python3.10")
    if on_path:
        candidates.append(on_path)
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates += sorted(glob.glob(os.path.join(pyenv, "versions", "3.10*", "bin", "python")))
    for candidate in candidates:
        try:
            done = subprocess.run(
                [candidate, "-c", "import unicodedata; print(unicodedata.unidata_version)"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except OSError:
            continue
        if done.returncode == 0 and done.stdout.strip() == BASELINE:
            return candidate
    return None


def _baseline_properties(python: str) -> dict[int, Properties]:
    """The assigned code points of the baseline interpreter, with their properties."""
    done = subprocess.run(
        [python, str(Path(__file__).resolve()), "--dump"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    lines = done.stdout.splitlines()
    version = json.loads(lines[0])
    if version != BASELINE:
        raise SystemExit(f"{python} has Unicode {version}, not {BASELINE}")
    baseline: dict[int, Properties] = {}
    for line in lines[1:]:
        cp, category, bidi, ccc, mapping = json.loads(line)
        baseline[cp] = (category, bidi, ccc, mapping)
    return baseline


def _ranges(baseline: dict[int, Properties]) -> list[tuple[int, int, Properties]]:
    """Runs of consecutive changed code points with equal properties that map to
    themselves; a code point that maps elsewhere is a run of its own."""
    runs: list[tuple[int, int, Properties]] = []
    for cp in _code_points():
        char = chr(cp)
        if cp not in baseline and unicodedata.category(char) == "Cn":
            continue  # unassigned in both
        old = baseline.get(cp, ("Cn", "", 0, char))
        new = properties(char)
        if new == old:
            continue
        if new[3] == chr(cp):
            new = (*new[:3], "")  # maps to itself
            if runs and runs[-1][1] == cp - 1 and runs[-1][2] == new:
                runs[-1] = (runs[-1][0], cp, new)
                continue
        runs.append((cp, cp, new))
    return runs


def _unassigned() -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for cp in _code_points():
        if unicodedata.category(chr(cp)) == "Cn":
            if runs and runs[-1][1] == cp - 1:
                runs[-1] = (runs[-1][0], cp)
            else:
                runs.append((cp, cp))
    return runs


def _literal(value: str | int) -> str:
    """A Python literal in ASCII, double-quoted as the formatter writes it."""
    text = ascii(value)
    if text.startswith("'") and '"' not in text:
        text = f'"{text[1:-1]}"'
    return text


def render(baseline: dict[int, Properties]) -> str:
    lines = [
        f'"""Unicode {VERSION} properties of the code points whose properties differ in '
        f"Unicode {BASELINE}.",
        "",
        "GENERATED by codegen/unicode_table.py from Python's unicodedata; do not edit.",
        '"""',
        "",
        f'VERSION = "{VERSION}"',
        "",
        "CHANGED: tuple[tuple[int, int, str, str, int, str], ...] = (",
        "    # first, last, category, bidi class, combining class, mapping ('' = itself)",
    ]
    for first, last, (category, bidi, ccc, mapping) in _ranges(baseline):
        text = ", ".join(_literal(value) for value in (category, bidi, ccc, mapping))
        lines.append(f"    (0x{first:04X}, 0x{last:04X}, {text}),")
    lines += [
        ")",
        "",
        f"UNASSIGNED: tuple[tuple[int, int], ...] = (  # in Unicode {VERSION}",
    ]
    lines += [f"    (0x{first:04X}, 0x{last:04X})," for first, last in _unassigned()]
    lines += [")", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--baseline", help=f"a Python whose unicodedata is {BASELINE}")
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--dump", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dump:
        _dump()
        return 0
    if unicodedata.unidata_version != VERSION:
        print(f"run on a Python with Unicode {VERSION} (3.13)", file=sys.stderr)
        return 2
    baseline = args.baseline or find_baseline()
    if baseline is None:
        print(f"no Python with Unicode {BASELINE} (3.10) found: pass --baseline", file=sys.stderr)
        return 2
    text = render(_baseline_properties(baseline))
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.name} is out of date; run codegen/unicode_table.py", file=sys.stderr)
            return 1
        print(f"{TARGET.name} is up to date")
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
