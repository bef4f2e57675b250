"""Model text as safe HTML: Markdown rendered by markdown-it-py with raw HTML off, code blocks that
name their language highlighted by Pygments (on the server: classes only, coloured by app.css),
then cleaned by nh3 (Rust's ammonia) to an allow-list of tags and attributes.

A model can be made to write anything, so its text is treated as hostile: raw HTML is escaped as
text, links keep only http(s) and mailto targets (markdown-it drops `javascript:` and friends, nh3
checks again), and images become links: a remote image would tell a third party that the page was
read and could carry what the page shows in its URL. The page's Content-Security-Policy
(bot/web/security.py) is the second wall: no inline script, images only from the app and data:.

It can also be made to write text that is slow to render (nested emphasis costs markdown-it time
that grows with the square of its length), so rendering has a budget: short texts render at once,
longer ones in a worker process (pebble's ProcessPool, which kills a worker that overruns) within
RENDER_TIMEOUT_S, and a text over MAX_RENDER_CHARS or over its time is shown as escaped plain text.
Nothing of it runs on the event loop, and each text is rendered once: the results are kept by the
text's hash (a stored council never changes, so its page is rendered once while it is viewed).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import logging
import multiprocessing
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import TimeoutError as FutureTimeout
from functools import lru_cache
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape

log = logging.getLogger(__name__)

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
    "pre": {"class"},
}
URL_SCHEMES = {"http", "https", "mailto"}
LINK_REL = "nofollow noopener noreferrer"

INLINE_CHARS = 4_000  # shorter texts render at once: even the worst of them costs well under a millisecond
MAX_RENDER_CHARS = 400_000  # longer ones are shown as plain text, never rendered
RENDER_TIMEOUT_S = 1.0  # a text's budget in the worker; over it, plain text
MAX_HIGHLIGHT_CHARS = 20_000  # a longer code block is shown without colours
CACHE_CHARS = 20_000_000  # rendered HTML kept, by the length of what is kept


def _image_as_link(renderer: Any, tokens: list[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    """An image named by a model is shown as a link to it, never loaded."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = renderer.renderInlineAsText(token.children or [], options, env) or "image"
    return f'<a class="image-link" href="{escape(src)}">{escape(alt)} (image)</a>'


def _highlight(code: str, language: str, _attrs: str) -> str:
    """A fenced code block that names its language, as Pygments' token spans ('' : left plain)."""
    if not language or len(code) > MAX_HIGHLIGHT_CHARS:
        return ""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language.split()[0][:40])
    except ClassNotFound:
        return ""
    return str(highlight(code, lexer, HtmlFormatter(nowrap=True)))


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"])
    assert isinstance(md.renderer, RendererHTML)
    md.add_render_rule("image", _image_as_link)
    return md


def render_now(text: str) -> str:
    """`text` rendered and cleaned, here and now (the worker's job; short texts' too)."""
    html = _markdown().render(text)
    return str(
        nh3.clean(
            html,
            tags=ALLOWED_TAGS,
            attributes=ALLOWED_ATTRIBUTES,
            url_schemes=URL_SCHEMES,
            link_rel=LINK_REL,
            strip_comments=True,
        )
    )


def plain(text: str) -> Markup:
    """Text shown as it is, escaped: what a text too long or too slow to render becomes."""
    return Markup('<pre class="plain">') + escape(text) + Markup("</pre>")


class _Cache:
    """Rendered HTML by the hash of its text, least recently used dropped first past CACHE_CHARS."""

    def __init__(self, budget: int):
        self.budget, self.size = budget, 0
        self.items: OrderedDict[str, Markup] = OrderedDict()
        self.lock = threading.Lock()  # pages render in the loop, tests may read from another thread

    def get(self, key: str) -> Markup | None:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
            return found

    def put(self, key: str, html: Markup) -> None:
        with self.lock:
            if key in self.items:
                return
            self.items[key] = html
            self.size += len(html)
            while self.size > self.budget and self.items:
                _, dropped = self.items.popitem(last=False)
                self.size -= len(dropped)


class Renderer:
    """Renders model text within its budget, off the event loop, once per text (module docstring)."""

    def __init__(self, timeout_s: float = RENDER_TIMEOUT_S, workers: int = 1):
        self.timeout_s, self.workers = timeout_s, workers
        self.cache = _Cache(CACHE_CHARS)
        self._pool: Any = None
        self._lock = threading.Lock()

    def _workers(self) -> Any:
        with self._lock:
            if self._pool is None:
                from pebble import ProcessPool

                # forkserver: workers are forked from a small server process that has imported this
                # module once (never a fork of the app, with its threads and sockets), so replacing a
                # worker killed over its budget costs a fork, not a fresh interpreter's imports.
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload([__name__])
                self._pool = ProcessPool(max_workers=self.workers, context=context, initializer=_lower_priority)
                atexit.register(self.close)
            return self._pool

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()
            pool.join(timeout=5)

    def cached(self, text: str | None) -> Markup | None:
        """The text's HTML if it is known already (or needs no worker); None: `await render` it."""
        if not text:
            return Markup("")
        found = self.cache.get(_key(text))
        if found is not None:
            return found
        if len(text) > MAX_RENDER_CHARS:
            return plain(text)
        if len(text) <= INLINE_CHARS:
            html = Markup(render_now(text))
            self.cache.put(_key(text), html)
            return html
        return None

    async def render(self, text: str | None) -> Markup:
        """`text` as safe HTML; escaped plain text when it is too long or too slow to render."""
        ready = self.cached(text)
        if ready is not None or not text:
            return ready or Markup("")
        future = self._workers().schedule(render_now, args=(text,), timeout=self.timeout_s)
        try:
            html = Markup(await asyncio.wrap_future(future))
        except (FutureTimeout, TimeoutError):
            log.info(
                "a text of %d characters took over %.1f s to render: shown as plain text", len(text), self.timeout_s
            )
            html = plain(text)
        except Exception as exc:  # a worker that died (out of memory): the text is still shown
            log.warning("a text of %d characters could not be rendered (%s): shown as plain text", len(text), exc)
            html = plain(text)
        self.cache.put(_key(text), html)
        return html

    async def render_all(self, texts: Iterable[str | None]) -> None:
        """Every text rendered into the cache, so that a page's template finds them all (`markdown`)."""
        wanted = list(dict.fromkeys(t for t in texts if t and self.cached(t) is None))
        await asyncio.gather(*(self.render(t) for t in wanted))

    def markdown(self, text: str | None) -> Markup:
        """For templates, once `render_all` ran over the page's texts: a text it did not see is
        shown as plain text rather than rendered on the event loop."""
        found = self.cached(text)
        return found if found is not None else plain(text or "")


def _lower_priority() -> None:
    """A worker yields the CPU to the app's event loop: pages are served first, text rendered after."""
    with contextlib.suppress(OSError):
        os.nice(10)


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


RENDERER = Renderer()


def markdown(text: str | None) -> Markup:
    """`text` (Markdown a model wrote) as HTML safe to put in a page, when already rendered or
    short (see Renderer.markdown)."""
    return RENDERER.markdown(text)
