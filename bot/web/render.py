"""Model text as safe HTML: Markdown rendered by markdown-it-py with raw HTML off, then cleaned by
nh3 (Rust's ammonia) to an allow-list of tags and attributes.

A model can be made to write anything, so its text is treated as hostile: raw HTML is escaped as
text, links keep only http(s) and mailto targets (markdown-it drops `javascript:` and friends, nh3
checks again), and images become links: a remote image would tell a third party that the page was
read and could carry what the page shows in its URL. The page's Content-Security-Policy
(bot/web/security.py) is the second wall: no inline script, images only from the app and data:.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape

ALLOWED_TAGS = {
    "a", "p", "br", "hr", "em", "strong", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "span",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title", "class"},
    "ol": {"start"},
    "th": {"align"},
    "td": {"align"},
    "code": {"class"},
    "span": {"class"},
}
URL_SCHEMES = {"http", "https", "mailto"}
LINK_REL = "nofollow noopener noreferrer"


def _image_as_link(renderer: Any, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """An image named by a model is shown as a link to it, never loaded."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = renderer.renderInlineAsText(token.children or [], options, env) or "image"
    return f'<a class="image-link" href="{escape(src)}">{escape(alt)} (image)</a>'


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    assert isinstance(md.renderer, RendererHTML)
    md.add_render_rule("image", _image_as_link)
    return md


def markdown(text: str | None) -> Markup:
    """`text` (Markdown a model wrote) as HTML safe to put in a page."""
    if not text:
        return Markup("")
    html = _markdown().render(text)
    cleaned = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel=LINK_REL,
        strip_comments=True,
    )
    return Markup(cleaned)
