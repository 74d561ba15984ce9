"""Chapter prose: no TeX math, because the book loads no MathJax (it would need a CDN).

Inline ``$...$`` and display ``$$...$$`` math would be shown as raw TeX; formulas are written in
plain text with Unicode (*t*·*k*·e_full/e_slice, √, ⌈ ⌉, subscripts) or in a ``text`` code block.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from analyses import build

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
DISPLAY_MATH = re.compile(r"\$\$.+?\$\$", re.S)
# TeX-style inline math: no space after the opening $ or before the closing one, no word
# character right after the closing $ (so "$3 and $4" or "$5-$10" in prices do not match).
INLINE_MATH = re.compile(r"(?<![\\$\w])\$(?=[^\s$])[^$\n]*?(?<=[^\s\\$])\$(?![\w$])")


def math_in(markdown: str) -> list[str]:
    """TeX math spans in ``markdown``, outside fenced code blocks and code spans."""
    text = CODE_SPAN.sub("", FENCE.sub("", markdown))
    return DISPLAY_MATH.findall(text) + INLINE_MATH.findall(DISPLAY_MATH.sub("", text))


def _markdown_sources() -> list[tuple[str, str]]:
    out = []
    for path in sorted(build.BOOK_DIR.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        out += [(f"{path.name} cell {i}", c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]
    out += [(path.name, path.read_text()) for path in sorted(build.BOOK_DIR.glob("*.md"))]
    return out


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("takes $t \\cdot k$ days", ["$t \\cdot k$"]),
        ("a share $c$ of it", ["$c$"]),
        ("$$E = mc^2$$ and more", ["$$E = mc^2$$"]),
        ("prices of $3 and $4 a GPU-hour, or $5-$10", []),
        ("in code `x = $a$` and\n```text\n$t$\n```\n", []),
    ],
)
def test_detector(text, found):
    assert math_in(text) == found


def test_no_tex_math_in_chapter_prose():
    offenders = {where: hits for where, source in _markdown_sources() if (hits := math_in(source))}
    assert offenders == {}, f"write these formulas in plain text or a code block: {offenders}"
