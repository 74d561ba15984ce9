"""Export an executed chapter notebook to one standalone HTML page that renders offline.

A reader's rerun (``python -m analyses run`` / ``plan``) gets a page of its own, without Sphinx:

- markdown cells are parsed by myst-parser's markdown-it (the book's MyST syntax, with the book's
  ``colon_fence`` and ``deflist`` extensions) and rendered to HTML here, so raw chart HTML never
  passes through a markdown parser (a blank line inside a chart script would end the HTML block);
- ``{glue:}`` / ``{glue:text}`` roles and ``{glue:figure}`` directives are resolved from the
  notebook's own glued outputs (myst-nb's scrapbook records), figures numbered and captioned;
  ``{doc}`` names the book page (linked when the built book is there), ``{ref}``/``{numref}`` link
  to figures on the page;
- code cells follow the book's tags: ``remove-cell``/``remove-input``/``remove-output`` drop, and
  ``hide-input``/``hide-output``/``hide-cell`` fold (``<details>``); a reader's injected parameters
  (``run-parameters``) are shown open;
- the vega bundle (:func:`analyses.site.vega_offline.bundle_js`) and the ``VEGA_DEBUG`` preset are
  inlined once, so the page is one file that loads nothing: no CDN, no require.js, no MathJax.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
from pathlib import Path
from typing import Any

import nbformat
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from analyses.data import REPO_ROOT
from analyses.site import vega_offline
from analyses.site.execute import write_atomic

PREFIX = "application/papermill.record/"
MIME_ORDER = ("text/html", "image/svg+xml", "image/png", "image/jpeg", "text/markdown", "text/latex", "text/plain")
ADMONITIONS = frozenset(
    {"note", "warning", "tip", "important", "hint", "caution", "attention", "danger", "error", "seealso", "admonition"}
)
GLUE_ROLES = frozenset({"glue", "glue:", "glue:any", "glue:text", "glue:md"})
GLUE_BLOCKS = frozenset({"glue", "glue:", "glue:any", "glue:md"})
_FIGURE_RE = re.compile(r"^[`:]{3,}\{glue:figure\}[ \t]+(\S+)[ \t]*\n((?:[ \t]*:[\w-]+:.*\n)*)", re.M)
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_REF_RE = re.compile(r"^(.*?)\s*<([^>]+)>$", re.S)


def glued_values(nb: nbformat.NotebookNode) -> dict[str, dict[str, Any]]:
    """name -> {mime: data} for every glued output of the notebook (myst-nb's scrapbook records)."""
    out: dict[str, dict[str, Any]] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                prefix = output["metadata"]["scrapbook"].get("mime_prefix", PREFIX)
                out[name] = {k[len(prefix) :]: v for k, v in output.get("data", {}).items() if k.startswith(prefix)}
    return out


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.strip().lower()).strip("-") or "section"


# --------------------------------------------------------------------------------------------
# Markdown (MyST) with the book's roles and directives
# --------------------------------------------------------------------------------------------


def _parser() -> Any:
    """A MyST markdown-it parser with the book's extensions (``_config.yml``: colon_fence, deflist)."""
    return create_md_parser(MdParserConfig(enable_extensions={"colon_fence", "deflist"}), RendererHTML)


def _directive(token: Any) -> tuple[str, str, dict[str, str], str] | None:
    """(name, argument, options, body) of a ```` ```{name} argument ```` fence; None for code."""
    match = re.match(r"^\{([\w:.-]+)\}\s*(.*)$", token.info.strip())
    if not match:
        return None
    lines = token.content.splitlines()
    options: dict[str, str] = {}
    if lines and lines[0].strip() == "---":  # YAML options block
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), len(lines))
        for line in lines[1:end]:
            key, _, value = line.partition(":")
            options[key.strip()] = value.strip()
        lines = lines[end + 1 :]
    while lines and re.match(r"^:[\w-]+:", lines[0]):
        key, _, value = lines.pop(0)[1:].partition(":")
        options[key.strip()] = value.strip()
    return match.group(1), match.group(2).strip(), options, "\n".join(lines).strip("\n")


class Page:
    """One notebook rendered as HTML: glue values, figure numbers, the markdown parser, problems.

    ``problems`` lists what the page could not render (an unknown role, directive or glue key);
    the tests require it to be empty for every chapter.
    """

    def __init__(self, nb: nbformat.NotebookNode, target: Path | None = None):
        self.nb, self.target = nb, target
        self.values = glued_values(nb)
        self.problems: list[str] = []
        self.charts = 0
        markdown = "\n".join(_text(c.source) for c in nb.cells if c.cell_type == "markdown")
        # figures are numbered in page order; references name them by their :name: (else the glue key)
        self.figures: dict[str, int] = {}
        self.labels: dict[str, int] = {}
        for key, options in _FIGURE_RE.findall(markdown + "\n"):
            number = self.figures.setdefault(key, len(self.figures) + 1)
            label = re.search(r":name:[ \t]*(\S+)", options)
            self.labels[label.group(1) if label else key] = number
        self.md = _parser()
        self.md.renderer.rules.update(  # each rule is called as rule(tokens, idx, options, env)
            {
                "myst_role": self._role,
                "fence": self._fence,
                "colon_fence": self._fence,
                "heading_open": self._heading,
                "myst_target": lambda tokens, idx, options, env: (
                    f'<span id="{html.escape(tokens[idx].content)}"></span>'
                ),
                "myst_line_comment": lambda tokens, idx, options, env: "",
                "myst_block_break": lambda tokens, idx, options, env: "<hr>\n",
            }
        )

    # ---- output bundles ---------------------------------------------------------------------

    def bundle(self, data: dict[str, Any], inline: bool = False) -> str:
        """HTML for a mime bundle: the first of :data:`MIME_ORDER` it has (glue records skipped)."""
        for mime in MIME_ORDER:
            if mime not in data:
                continue
            value = _text(data[mime])
            if mime == "text/html":
                if "altair-viz-" in value:
                    self.charts += 1
                return value
            if mime == "image/svg+xml":
                return value
            if mime in ("image/png", "image/jpeg"):
                return f'<img src="data:{mime};base64,{value.strip()}" alt="">'
            if mime == "text/markdown":
                return self.md.renderInline(value) if inline else self.md.render(value)
            if inline:
                return f'<span class="pasted-text">{html.escape(value)}</span>'
            return f'<pre class="output text_plain">{html.escape(value)}</pre>'
        return ""

    def glue(self, key: str) -> dict[str, Any] | None:
        value = self.values.get(key)
        if value is None:
            self.problems.append(f"glue key {key!r} not found")
        return value

    # ---- roles ------------------------------------------------------------------------------

    def _role(self, tokens: list, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        name, content = token.meta.get("name", ""), token.content
        if name in GLUE_ROLES:
            key, spec = content, ""
            if name == "glue:text" and key not in self.values and ":" in key:
                key, spec = key.rsplit(":", 1)
            value = self.glue(key)
            if value is None:
                return f'<code class="missing">{html.escape(content)}</code>'
            if name == "glue:text" or (name == "glue:md" and "text/markdown" not in value):
                text = _text(value.get("text/plain", ""))
                if spec:
                    try:
                        text = format(float(text), spec)
                    except ValueError:  # myst-nb warns and keeps the text, too
                        self.problems.append(f"glue value {key!r} ({text!r}) is not a number for format {spec!r}")
                return f'<span class="pasted-text">{html.escape(text)}</span>'
            if name == "glue:md":
                return self.md.renderInline(_text(value["text/markdown"]))
            return self.bundle(value, inline=True)
        if name == "doc":
            return self._doc(content)
        if name in ("ref", "numref"):
            match = _REF_RE.match(content)
            text, label = (match.group(1), match.group(2)) if match else ("", content)
            number = self.labels.get(label)
            if number is None:
                self.problems.append(f"{{{name}}} target {label!r} not on this page")
                return html.escape(text or label)
            shown = (text or "Fig. %s").replace("%s", str(number)).replace("{number}", str(number))
            if name == "ref" and not text:
                shown = f"Fig. {number}"
            return f'<a class="reference" href="#{html.escape(label)}">{html.escape(shown)}</a>'
        if name in ("sub", "sup"):
            return f"<{name}>{html.escape(content)}</{name}>"
        if name == "math":
            return f'<span class="math">{html.escape(content)}</span>'
        if name == "abbr":
            match = re.match(r"^(.*?)\s*\((.*)\)$", content)
            text, title = (match.group(1), match.group(2)) if match else (content, "")
            return f'<abbr title="{html.escape(title)}">{html.escape(text)}</abbr>'
        self.problems.append(f"unknown role {{{name}}}")
        return f"<code>{html.escape(content)}</code>"

    def _doc(self, content: str) -> str:
        match = _REF_RE.match(content)
        text, doc = (match.group(1), match.group(2)) if match else ("", content)
        title = text or book_title(doc)
        built = _book_page(doc)
        if built is not None and self.target is not None:
            href = os.path.relpath(built, self.target.parent)
            return f'<a class="reference external" href="{html.escape(href)}">{html.escape(title)}</a>'
        return f'<span class="doc-ref" title="the book\'s page {html.escape(doc)}">{html.escape(title)}</span>'

    # ---- directives -------------------------------------------------------------------------

    def _fence(self, tokens: list, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        parsed = _directive(token)
        if parsed is None:
            return _highlight(token.content, token.info.strip() or "text")
        name, argument, opts, body = parsed
        if name == "glue:figure":
            return self._figure(argument, opts, body)
        if name in GLUE_BLOCKS:
            value = self.glue(argument)
            if value is None:
                return ""
            if name == "glue:md" and "text/markdown" in value:
                return self.md.render(_text(value["text/markdown"]))
            return f'<div class="cell_output">{self.bundle(value)}</div>\n'
        if name in ADMONITIONS:
            title = argument if name == "admonition" else (argument or name.capitalize())
            return (
                f'<div class="admonition {name}"><p class="admonition-title">{html.escape(title or "Note")}</p>\n'
                f"{self.md.render(body)}</div>\n"
            )
        if name == "dropdown":
            return f"<details><summary>{html.escape(argument)}</summary>\n{self.md.render(body)}</details>\n"
        if name in ("code", "code-block", "code-cell"):
            return _highlight(body + "\n", argument or "python")
        self.problems.append(f"unknown directive {{{name}}}")
        return f'<pre class="unknown-directive">{html.escape(token.content)}</pre>\n'

    def _figure(self, key: str, opts: dict[str, str], caption: str) -> str:
        value = self.glue(key)
        body = self.bundle(value) if value is not None else ""
        label = opts.get("name", key)
        number = self.figures.get(key)
        parts = caption.split("\n\n", 1)
        head = f'<span class="caption-number">Fig. {number} </span>' if number else ""
        cap = f"<figcaption><p>{head}{self.md.renderInline(parts[0].strip())}</p>"
        if len(parts) > 1:
            cap += f'<div class="legend">{self.md.render(parts[1])}</div>'
        return f'<figure id="{html.escape(label)}">\n<div class="figure-body">{body}</div>\n{cap}</figcaption>\n</figure>\n'

    def _heading(self, tokens: list, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        inline = tokens[idx + 1]
        text = "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))
        ids = env.setdefault("ids", set())
        base = _slug(text)
        slug, n = base, 1
        while slug in ids:
            n += 1
            slug = f"{base}-{n}"
        ids.add(slug)
        return f'<{token.tag} id="{slug}">'

    # ---- cells ------------------------------------------------------------------------------

    def markdown(self, source: str, env: dict) -> str:
        return self.md.render(source, env)

    def code(self, cell: nbformat.NotebookNode) -> str:
        tags = set(cell.metadata.get("tags", []))
        if "remove-cell" in tags:
            return ""
        parts = []
        if "remove-input" not in tags:
            code = _highlight(_text(cell.source), "python")
            if "run-parameters" in tags:
                parts.append(
                    f'<div class="cell_input run-parameters"><p class="label">This run\'s parameters</p>{code}</div>'
                )
            elif "hide-input" in tags or "hide-cell" in tags:
                parts.append(f'<details class="cell_input"><summary>Show code cell source</summary>{code}</details>')
            else:
                parts.append(f'<div class="cell_input">{code}</div>')
        if "remove-output" not in tags:
            outs = "".join(self.output(o) for o in cell.get("outputs", []))
            if outs:
                if "hide-output" in tags:
                    outs = f"<details><summary>Show code cell output</summary>{outs}</details>"
                parts.append(f'<div class="cell_output">{outs}</div>')
        if not parts:
            return ""
        classes = " ".join(["cell", *sorted(f"tag_{t}" for t in tags)])
        return f'<div class="{html.escape(classes)}">{"".join(parts)}</div>\n'

    def output(self, out: nbformat.NotebookNode) -> str:
        kind = out.get("output_type")
        if kind == "stream":
            return f'<pre class="output stream {out.get("name", "stdout")}">{html.escape(_text(out.get("text", "")))}</pre>'
        if kind == "error":
            tb = _ANSI_RE.sub("", "\n".join(out.get("traceback", [])))
            return f'<pre class="output error">{html.escape(tb)}</pre>'
        return self.bundle({k: v for k, v in out.get("data", {}).items() if not k.startswith(PREFIX)})

    def body(self) -> str:
        env: dict[str, Any] = {}
        chunks = []
        for cell in self.nb.cells:
            if cell.cell_type == "markdown":
                chunks.append(f'<section class="text">{self.markdown(_text(cell.source), env)}</section>\n')
            elif cell.cell_type == "code":
                chunks.append(self.code(cell))
        return "".join(chunks)

    def title(self) -> str:
        for cell in self.nb.cells:
            if cell.cell_type == "markdown":
                match = re.search(r"^#\s+(.+)$", _text(cell.source), re.M)
                if match:
                    return match.group(1).strip()
        return "Notebook"

    def banner(self) -> str:
        cell = next((c for c in self.nb.cells if "run-parameters" in c.metadata.get("tags", [])), None)
        if cell is None:
            return ""
        lines = [ln for ln in _text(cell.source).splitlines() if ln.strip() and not ln.startswith("#")]
        shown = "; ".join(html.escape(ln) for ln in lines)
        return (
            '<p class="run-banner">A reader\'s rerun of this chapter with <code>'
            + shown
            + "</code>; every other parameter keeps the book's value.</p>\n"
        )


# --------------------------------------------------------------------------------------------
# Helpers: code highlighting, the book's page titles
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _formatter() -> Any:
    return HtmlFormatter(cssclass="highlight")


@functools.lru_cache(maxsize=16)
def _lexer(language: str) -> Any:
    try:
        return get_lexer_by_name(language or "text")
    except ClassNotFound:  # an unknown language name: plain text
        return get_lexer_by_name("text")


def _highlight(code: str, language: str) -> str:
    return highlight(code, _lexer(language), _formatter())


@functools.lru_cache(maxsize=1)
def _pygments_css() -> str:
    return _formatter().get_style_defs(".highlight")


@functools.lru_cache(maxsize=1)
def _book_css() -> str:
    """The book's own stylesheet (``_static/audit.css``: the verdict box, ledger tables as cards on a
    phone, findings), so that a rerun page lays its boxes out as the book does."""
    path = _book_dir() / "_static" / "audit.css"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _book_dir() -> Path:
    return REPO_ROOT


@functools.lru_cache(maxsize=64)
def book_title(doc: str) -> str:
    """The first heading of the book's page ``doc`` (``claims`` -> its title), else the name."""
    root = _book_dir() / "book"
    for path in (root / f"{doc}.ipynb", root / f"{doc}.md"):
        if not path.exists():
            continue
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
            text = "\n".join(_text(c.get("source", "")) for c in cells if c.get("cell_type") == "markdown")
        else:
            text = path.read_text(encoding="utf-8")
        match = re.search(r"^#\s+(.+)$", text, re.M)
        if match:
            return match.group(1).strip()
    return doc


def _book_page(doc: str) -> Path | None:
    page = _book_dir() / "_build" / "html" / "book" / f"{doc}.html"
    return page if page.exists() else None


# --------------------------------------------------------------------------------------------
# The page
# --------------------------------------------------------------------------------------------

CSS = """
:root { color-scheme: light; --fg: #222; --muted: #666; --rule: #ddd; --accent: #0a5a8a; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); }
main { max-width: 58rem; margin: 0 auto; padding: 1.5rem 1.25rem 4rem; }
h1 { font-size: 2rem; margin: 0.5rem 0 1rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid var(--rule); }
a { color: var(--accent); }
code { font-size: 0.9em; background: #f4f4f4; padding: 0 0.2em; border-radius: 3px; }
.run-banner { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.6rem 0.9rem; font-size: 0.9rem; }
.cell { margin: 0.8rem 0; }
.cell_input .highlight, details.cell_input .highlight { background: #f7f7f7; border-left: 3px solid #8ab; }
.highlight pre { margin: 0; padding: 0.6rem 0.8rem; overflow-x: auto; font-size: 0.85rem; line-height: 1.4; }
.run-parameters .label { margin: 0; font-size: 0.85rem; color: var(--muted); }
details > summary { cursor: pointer; color: var(--muted); font-size: 0.85rem; }
.cell_output { overflow-x: auto; margin-top: 0.4rem; }
.cell_output table, .text table { border-collapse: collapse; font-size: 0.8rem; }
.cell_output table td, .cell_output table th { padding: 0.2rem 0.45rem; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
.cell_output table thead th { border-bottom: 1px solid #999; }
pre.output { background: #fafafa; padding: 0.5rem 0.8rem; overflow-x: auto; font-size: 0.85rem; }
pre.stderr { background: #fff3f3; } pre.error { background: #fdecec; }
figure { margin: 1.5rem 0; } .figure-body { overflow-x: auto; }
figcaption { font-size: 0.9rem; color: #333; } .caption-number { font-weight: 600; }
.admonition { border-left: 4px solid var(--accent); background: #f3f8fb; padding: 0.2rem 0.9rem; margin: 1rem 0; }
.admonition-title { font-weight: 600; margin: 0.4rem 0; }
.doc-ref { font-style: italic; }
footer { margin-top: 3rem; font-size: 0.8rem; color: var(--muted); border-top: 1px solid var(--rule); padding-top: 0.5rem; }
"""


def _after_title(body: str, banner: str) -> str:
    """``body`` with ``banner`` right after the page's first heading (or first, without one)."""
    end = body.find("</h1>")
    if end < 0:
        return banner + body
    end += len("</h1>")
    return body[:end] + "\n" + banner + body[end:]


def render(nb: nbformat.NotebookNode, target: Path | None = None) -> tuple[str, Page]:
    """The standalone HTML of ``nb`` (``target``: where it will be written, for relative links)."""
    page = Page(nb, target)
    body = page.body()
    head = [
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(page.title())}</title>",
        f"<style>{CSS}{_pygments_css()}{_book_css()}</style>",
    ]
    preset = vega_offline.debug_preset(body)
    if preset is not None:  # the chart scripts find vega, vega-lite and vega-embed already loaded
        head.append(f"<script>{preset}</script>")
        head.append(f"<script>{vega_offline.bundle_js()}</script>")
    footer = (
        "<footer>Exported by <code>python -m analyses</code> from the executed notebook; "
        "every figure renders from this file alone.</footer>"
    )
    text = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n'
        + "\n".join(head)
        + "\n</head>\n<body>\n<main>\n"
        + _after_title(body, page.banner())
        + footer
        + "\n</main>\n</body>\n</html>\n"
    )
    return text, page


def to_html(notebook: Path | nbformat.NotebookNode, target: Path) -> Path:
    """Write ``notebook`` (a path or an executed notebook) as one standalone offline page at ``target``."""
    nb = nbformat.read(notebook, as_version=4) if isinstance(notebook, Path) else notebook
    text, _ = render(nb, target)
    return write_atomic(target, text)
