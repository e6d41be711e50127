"""The document model every report is built from, and its two renderings.

A report is a list of blocks (:class:`Heading`, :class:`Table`, ...). :func:`render_markdown`
writes them as Markdown once; :func:`render_html` converts that Markdown with markdown-it-py
into one self-contained page (inline CSS, charts as data URIs, no script, no external URL), so
the two documents cannot disagree. Everything copied from results is escaped on the way into
Markdown, and raw HTML in the Markdown is not passed through.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

__all__ = [
    "Block",
    "BulletList",
    "Callout",
    "CodeBlock",
    "Heading",
    "Image",
    "Inline",
    "Paragraph",
    "Span",
    "Table",
    "anchor",
    "render_html",
    "render_markdown",
]


@dataclass(frozen=True)
class Span:
    """A run of inline text: ``bold``, ``code``, or a ``link`` to a heading of the same report
    (``#how-to-read-this``, the heading's text as :func:`anchor` writes it)."""

    text: str
    bold: bool = False
    code: bool = False
    link: str | None = None

    def __post_init__(self) -> None:
        if self.link is not None and not _ANCHOR.fullmatch(self.link):
            raise ValueError(f"a link goes to a heading of the report (#name), not {self.link!r}")


Inline = str | Span | Sequence[str | Span]


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    content: Inline


@dataclass(frozen=True)
class Callout:
    """A highlighted warning (incomplete run), so it cannot be missed in either format."""

    content: Inline


@dataclass(frozen=True)
class BulletList:
    items: Sequence[Inline]


@dataclass(frozen=True)
class CodeBlock:
    text: str


@dataclass(frozen=True)
class Table:
    headers: Sequence[str]
    rows: Sequence[Sequence[Inline]]


@dataclass(frozen=True)
class Image:
    file_name: str
    alt: str


Block = Heading | Paragraph | Callout | BulletList | CodeBlock | Table | Image


def _spans(content: Inline) -> list[Span]:
    """Normalise inline content to a list of spans; newlines collapse so tables stay one line."""
    items = [content] if isinstance(content, str | Span) else list(content)
    spans = []
    for item in items:
        span = Span(item) if isinstance(item, str) else item
        spans.append(Span(" ".join(span.text.split("\n")), span.bold, span.code, span.link))
    return spans


# A heading's anchor, the way GitHub names it: lower case, spaces to hyphens, and nothing but
# letters, digits, hyphens and underscores kept; a repeated one gets -1, -2, ...
_ANCHOR = re.compile(r"#[a-z0-9_-]+")


def anchor(text: str) -> str:
    """``How to read this`` -> ``how-to-read-this``."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


# ---- Markdown ------------------------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|!#&])")
_MD_LONE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def md_escape(text: str) -> str:
    """Escape what Markdown would interpret; intraword underscores (flask_app) stay readable."""
    return _MD_LONE_UNDERSCORE.sub(r"\\_", _MD_SPECIAL.sub(r"\\\1", text))


def _md_code(text: str) -> str:
    """A code span whose fence is longer than any backtick run inside it."""
    fence = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    # A pipe would still split a table cell even inside a code span (GFM), so escape it there too.
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def md_inline(content: Inline) -> str:
    out = []
    for span in _spans(content):
        if not span.text:
            continue
        text = _md_code(span.text) if span.code else md_escape(span.text)
        text = f"**{text}**" if span.bold else text
        out.append(f"[{text}]({span.link})" if span.link else text)
    return "".join(out)


def _md_block(block: Block) -> str:
    match block:
        case Heading(level=level, text=text):
            return f"{'#' * level} {md_escape(text)}"
        case Paragraph(content=content):
            return md_inline(content)
        case Callout(content=content):
            return f"> {md_inline(content)}"
        case BulletList(items=items):
            return "\n".join(f"- {md_inline(item)}" for item in items)
        case CodeBlock(text=text):
            fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
            return f"{fence}\n{text}\n{fence}"
        case Table(headers=headers, rows=rows):
            lines = ["| " + " | ".join(md_escape(h) for h in headers) + " |"]
            lines.append("|" + "|".join("---" for _ in headers) + "|")
            lines += ["| " + " | ".join(md_inline(c) or " " for c in row) + " |" for row in rows]
            return "\n".join(lines)
        case Image(file_name=file_name, alt=alt):
            return f"![{md_escape(alt)}]({file_name})"
    raise TypeError(f"unknown block {block!r}")


def render_markdown(blocks: Iterable[Block]) -> str:
    """Blocks separated by blank lines, ending with a newline."""
    return "\n\n".join(_md_block(b) for b in blocks) + "\n"


# ---- HTML ----------------------------------------------------------------------------------------
#: Fits a 1366-px laptop screen: tables wrap their cells rather than scroll sideways, long
#: words (image digests, URLs) break, code wraps, images shrink to the column.
CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 1.5rem auto;
       max-width: 1200px; padding: 0 1rem; color: #1f2328; line-height: 1.45; }
h1, h2, h3 { line-height: 1.2; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; margin-top: 2rem; }
table { border-collapse: collapse; font-size: .8rem; margin: .5rem 0; max-width: 100%; }
th, td { border: 1px solid #d0d7de; padding: .2rem .4rem; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
th { background: #f6f8fa; overflow-wrap: normal; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .8rem; }
code { overflow-wrap: anywhere; }
pre { background: #f6f8fa; padding: .75rem; white-space: pre-wrap; overflow-wrap: anywhere; }
blockquote { border-left: 4px solid #d4a72c; background: #fff8c5; padding: .5rem 1rem; margin: 1rem 0; }
img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
""".strip()


def _markdown_it(images: dict[str, bytes]) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")

    def image(
        renderer: RendererHTML,  # markdown-it passes the renderer first
        parsed: Sequence[Token],  # markdown-it's parse of the page
        idx: int,
        options: OptionsDict,
        env: EnvType,
    ) -> str:
        img = parsed[idx]
        name = img.attrGet("src") or ""
        if name in images:
            img.attrSet(
                "src", "data:image/png;base64," + base64.b64encode(images[name]).decode("ascii")
            )
        return renderer.image(parsed, idx, options, env)  # markdown-it's own, on the new src

    def heading_open(
        renderer: RendererHTML,
        parsed: Sequence[Token],
        idx: int,
        options: OptionsDict,
        env: EnvType,
    ) -> str:
        """Every heading gets the id a link to it names (:func:`anchor`), as on GitHub."""
        name = anchor(parsed[idx + 1].content)
        seen = env.setdefault("anchors", {})
        seen[name] = seen.get(name, -1) + 1
        parsed[idx].attrSet("id", f"{name}-{seen[name]}" if seen[name] else name)
        return renderer.renderToken(parsed, idx, options, env)

    md.add_render_rule("image", image)
    md.add_render_rule("heading_open", heading_open)
    return md


def render_html(blocks: Sequence[Block], *, title: str, images: dict[str, bytes]) -> str:
    """A complete, self-contained HTML page from the Markdown of ``blocks``."""
    body = _markdown_it(images).render(render_markdown(blocks), {})
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>\n{CSS}\n</style>\n</head>\n<body>\n"
        f"{body}</body>\n</html>\n"
    )
