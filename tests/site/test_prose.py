"""Chapter prose: no TeX math, because the book loads no MathJax (it would need a CDN).

Inline ``$...$`` and display ``$$...$$`` math would be shown as raw TeX; formulas are written in
plain text with Unicode (*t*·*k*·e_full/e_slice, √, ⌈ ⌉, subscripts) or in a ``text`` code block.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from analyses.site import build, deps

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
    for path in sorted(deps.BOOK_DIR.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        out += [(f"{path.name} cell {i}", c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]
    out += [(path.name, path.read_text()) for path in sorted(deps.BOOK_DIR.glob("*.md"))]
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


# ---------------------------------------------------------------------------------------------
# No stale number in prose (principle 2): every number outside the Overview is glued.
#
# A chapter's Overview paraphrases the documents' claims with their stated figures (principle 6),
# so it is exempt. Elsewhere, a number typed with three or more significant digits, or any
# percentage, is almost always a fact from data/ or a computed result that goes stale when data or
# parameters change: it must come through ``glue``. Smaller numbers (a section number, "η = 3",
# "34 + 5as/h" from a paper's formula) are not flagged; they are checked by review.

OVERVIEW = re.compile(r"^## Overview\b.*?(?=^## |\Z)", re.S | re.M)
# Fenced blocks: code and text blocks are dropped; a directive's body (a figure caption) is prose,
# so only its option lines (":name: fig-x") are dropped.
CODE_FENCE = re.compile(r"^(```|~~~)(?!\{).*?^\1[ \t]*$", re.S | re.M)
DIRECTIVE_LINE = re.compile(r"^(```|~~~)\{.*$|^:[\w-]+:.*$|^(```|~~~)[ \t]*$|^\([\w.:-]+\)=[ \t]*$", re.M)
LINK_TARGET = re.compile(r"\]\([^)]*\)")
# Citations and names that carry digits. Author-year citations: "Young 1974", "Kaplan et al.
# 2020", "Korthikanti et al. (2022", "Jamieson & Talwalkar 2016". Model names with a size:
# "Llama 3 405B", "OPT-175B", "BLOOM-176B".
ALLOWED = re.compile(
    r"(?:et al\.|& [A-Z][a-z]+|\b(?:Young|Daly)),? \(?(?:19|20)\d\d\b"
    r"|\bLlama ?3(?:\.1)? 405B\b|\bOPT-175B\b|\bBLOOM-176B\b"
)
NUMBER = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?:\s?%| ?per ?cent\b)?")


def significant_digits(number: str) -> int:
    """Significant digits of a typed number: "1,024" -> 4, "16,000" -> 2, "0.50" -> 2, "30.4" -> 3."""
    digits = number.replace(",", "")
    if "." in digits:
        return len(digits.replace(".", "").lstrip("0"))
    return len(digits.strip("0"))


def typed_numbers(markdown: str) -> list[str]:
    """Numbers in ``markdown`` that should be glued: 3+ significant digits, or a percentage.

    Skips the Overview section, code and text blocks, code spans (glue roles, file names, claim
    ids), MyST labels (``(sec-<claim id>)=``), link targets and the citations and names in ``ALLOWED``.
    """
    text = OVERVIEW.sub("", markdown)
    text = DIRECTIVE_LINE.sub("", CODE_FENCE.sub("", text))
    text = ALLOWED.sub("", LINK_TARGET.sub("]", CODE_SPAN.sub("", text)))
    hits = []
    for match in NUMBER.finditer(text):
        number = match.group()
        numeral = re.match(r"[\d,.]+", number).group().rstrip(",.")
        if number != numeral or significant_digits(numeral) >= 3:
            hits.append(number)
    return hits


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("a job on 1,024 GPUs saves 12.5% of its time", ["1,024", "12.5%"]),
        ("the median error is {glue:}`val_median`, the worst {glue:}`val_max`", []),
        ("Korthikanti et al. (2022, Table 2) and Young 1974; Llama 3 405B on H100s, Sec 3.3.4", []),
        ("## Overview\n\nThe document claims 62% -> 88%.\n\n## Next\n\nIt takes 30.4 days", ["30.4"]),
        ("```text\nc = P / 8760\n```\nsee [the data](data/gpus-2025.csv); η = 3, 16,000 GPUs", []),
        ("```{glue:figure} fig-x\n:name: fig-x\n\nThe dashed rule is 45%.\n```", ["45%"]),
        ("(sec-000-2.3-64-to-256-gpus)=\n## Ordinary Ethernet\n\nIt takes 30.4 days", ["30.4"]),  # a label is an id
    ],
)
def test_typed_number_detector(text, found):
    assert typed_numbers(text) == found


@pytest.mark.parametrize("path", build.notebooks(), ids=lambda p: p.name)
def test_no_typed_numbers_in_chapter_prose(path):
    nb = nbformat.read(path, as_version=4)
    offenders = {
        f"cell {i}": hits
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "markdown" and (hits := typed_numbers(cell.source))
    }
    assert offenders == {}, f"{path.name}: glue these numbers from the package or data module: {offenders}"
