"""Write the book's CJK web font: Noto Sans SC cut down to the characters the book uses.

Usage: ``.venv/bin/python tools/subset_font.py [--package DIR] [--extra FILE]``

The source is the npm package ``@fontsource-variable/noto-sans-sc`` (SIL Open Font License 1.1):
Google Fonts' variable Noto Sans SC, sliced into about a hundred files by Unicode range. Without
``--package`` the script fetches the pinned version with ``npm pack`` (the npm registry is the only
thing it reaches) into a temporary folder. For the characters wanted it takes each slice that holds
some of them, keeps only those glyphs (fontTools' subsetter), fixes the weight axis at 400 and at
700 (regular and bold: headings and verdicts are bold), merges the slices of each weight into one
font and writes it as WOFF2, with the ``@font-face`` rules and the licence, into
``_static/fonts/``:

- ``noto-sans-sc-400.woff2``, ``noto-sans-sc-700.woff2``
- ``noto-sans-sc.css``: two ``@font-face`` rules for the family :data:`FAMILY`, each limited to the
  font's characters (``unicode-range``), so a page without Chinese downloads nothing
- ``OFL.txt``: the font's licence, which must travel with it

The characters wanted are every CJK character in the book's sources (:data:`SOURCES`: pages,
notebooks, data, the package, the static files, and a ``zh/`` edition when there is one), the CJK
punctuation block and the full-width forms of ASCII (so a full-width query typed into the search
box renders too), plus any characters in ``--extra FILE``. Rerun the script after adding Chinese
text: tests/site/test_screens.py fails while a built page holds a CJK character the font lacks.
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "_static" / "fonts"
PACKAGE = "@fontsource-variable/noto-sans-sc@5.3.1"
FAMILY = "Noto Sans SC Subset"
WEIGHTS = (400, 700)
# Where the book's text lives (globs relative to the repository root).
SOURCES = (
    "book/**/*",
    "zh/**/*",
    "data/**/*",
    "analyses/**/*.py",
    "_static/*.css",
    "_static/*.js",
    "_config.yml",
    "_toc.yml",
)
# Always in the font: CJK symbols and punctuation, and the full-width forms of ASCII (！ to ～).
ALWAYS = frozenset(range(0x3000, 0x3040)) | frozenset(range(0xFF01, 0xFF5F))
# The blocks a Chinese page draws from (ideographs, extension A, compatibility ideographs,
# punctuation, full- and half-width forms).
CJK_BLOCKS = ((0x3000, 0x303F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xFF00, 0xFFEF))


def is_cjk(codepoint: int) -> bool:
    """True for a character of :data:`CJK_BLOCKS`."""
    return any(lo <= codepoint <= hi for lo, hi in CJK_BLOCKS)


def cjk_in(text: str) -> set[int]:
    """The CJK code points of ``text``."""
    return {ord(c) for c in text if is_cjk(ord(c))}


def wanted_characters(root: Path = REPO, extra: Path | None = None) -> set[int]:
    """Every CJK code point in the book's :data:`SOURCES`, :data:`ALWAYS`, and ``extra``'s."""
    found: set[int] = set(ALWAYS)
    for pattern in SOURCES:
        for path in root.glob(pattern):
            if path.is_file() and "_build" not in path.parts:
                found |= cjk_in(path.read_text(errors="ignore"))
    if extra is not None:
        found |= cjk_in(extra.read_text())
    return found


def unicode_ranges(text: str) -> set[int]:
    """The code points of a CSS ``unicode-range`` value (``U+4e00-4e09,U+ff01``)."""
    out: set[int] = set()
    for part in text.replace(" ", "").split(","):
        lo, _, hi = part.removeprefix("U+").removeprefix("u+").partition("-")
        out.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return out


def css_ranges(codepoints: set[int]) -> str:
    """``codepoints`` as a compact CSS ``unicode-range`` value."""
    spans: list[list[int]] = []
    for cp in sorted(codepoints):
        if spans and cp == spans[-1][1] + 1:
            spans[-1][1] = cp
        else:
            spans.append([cp, cp])
    return ",".join(f"U+{lo:x}" if lo == hi else f"U+{lo:x}-{hi:x}" for lo, hi in spans)


def slices(package: Path) -> list[tuple[Path, set[int]]]:
    """The package's font files with the code points each covers (from its ``index.css``)."""
    css = (package / "index.css").read_text()
    faces = re.findall(r"src: url\(\./(files/[^)]+)\)[^}]*?unicode-range: ([^;]+);", css)
    if not faces:
        sys.exit(f"no @font-face with a unicode-range in {package / 'index.css'}: not a fontsource package?")
    return [(package / path, unicode_ranges(ranges)) for path, ranges in faces]


def build_weight(parts: list[tuple[Path, set[int]]], weight: int):
    """One static font of ``weight`` holding the glyphs of ``parts`` (file, code points to keep)."""
    from fontTools import subset
    from fontTools.merge import Merger
    from fontTools.ttLib import TTFont
    from fontTools.varLib import instancer

    buffers = []
    for path, keep in parts:
        font = TTFont(path)
        options = subset.Options()
        options.layout_features = ["*"]
        options.name_IDs = ["*"]
        options.notdef_outline = True
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=sorted(keep))
        subsetter.subset(font)
        font = instancer.instantiateVariableFont(font, {"wght": weight}, updateFontNames=True)
        buf = io.BytesIO()
        font.save(buf)
        buf.seek(0)
        buffers.append(buf)
    merged = Merger().merge(buffers)
    merged.flavor = "woff2"
    for record in merged["name"].names:  # the slices are named for the axis default (Thin)
        text = record.toUnicode().replace("Noto Sans SC Thin", "Noto Sans SC").replace("NotoSansSCThin", "NotoSansSC")
        record.string = text
    merged.recalcTimestamp = False  # the same characters give the same bytes on every run
    merged["head"].created = merged["head"].modified = TTFont(parts[0][0])["head"].modified
    return merged


def font_face(weight: int, codepoints: set[int]) -> str:
    return (
        "@font-face {\n"
        f'  font-family: "{FAMILY}";\n'
        "  font-style: normal;\n"
        f"  font-weight: {weight};\n"
        "  font-display: swap;\n"
        f'  src: url("noto-sans-sc-{weight}.woff2") format("woff2");\n'
        f"  unicode-range: {css_ranges(codepoints)};\n"
        "}\n"
    )


def fetch(into: Path) -> Path:
    """``npm pack`` the pinned :data:`PACKAGE` into ``into`` and unpack it; the package folder."""
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is needed to fetch the font (or pass --package DIR with the unpacked package)")
    proc = subprocess.run([npm, "pack", PACKAGE, "--silent"], cwd=into, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"npm pack {PACKAGE} failed:\n{proc.stderr.strip()}")
    tgz = into / proc.stdout.strip().splitlines()[-1]
    with tarfile.open(tgz) as tar:
        tar.extractall(into, filter="data")
    return into / "package"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", type=Path, help="an unpacked @fontsource-variable/noto-sans-sc")
    parser.add_argument("--extra", type=Path, help="a text file whose CJK characters the font must also hold")
    parser.add_argument("--out", type=Path, default=OUT, help=f"output folder (default {OUT.relative_to(REPO)})")
    args = parser.parse_args(argv)

    wanted = wanted_characters(extra=args.extra)
    with tempfile.TemporaryDirectory() as tmp:
        package = args.package or fetch(Path(tmp))
        parts = [(path, wanted & covers) for path, covers in slices(package)]
        parts = [(path, keep) for path, keep in parts if keep]
        held = set().union(*(keep for _, keep in parts))
        args.out.mkdir(parents=True, exist_ok=True)
        css = [
            f"/* {FAMILY}: Noto Sans SC ({PACKAGE}, SIL OFL 1.1, see OFL.txt) cut to the book's\n"
            f"   {len(held)} CJK characters by tools/subset_font.py; rerun it after adding Chinese text. */\n"
        ]
        for weight in WEIGHTS:
            font = build_weight(parts, weight)
            cmap = set(font.getBestCmap())
            font.save(args.out / f"noto-sans-sc-{weight}.woff2")
            css.append(font_face(weight, cmap))
            size = (args.out / f"noto-sans-sc-{weight}.woff2").stat().st_size
            print(f"noto-sans-sc-{weight}.woff2: {len(cmap)} characters, {size / 1000:.1f} KB")
        (args.out / "noto-sans-sc.css").write_text("\n".join(css))
        shutil.copyfile(package / "LICENSE", args.out / "OFL.txt")
    missing = sorted(wanted - ALWAYS - held)
    if missing:
        print(f"not in Noto Sans SC: {''.join(map(chr, missing))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
