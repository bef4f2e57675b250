"""MkDocs hook (mkdocs.yml `hooks:`): the documentation site loads nothing from another host.

Material for MkDocs fetches Mermaid from a CDN when a page has a diagram, unless a `mermaid`
global already exists; this hook ships Mermaid with the site instead: the official Mermaid
build (an IIFE that sets `globalThis.mermaid`) that the `mermaidx` package (PyPI, the docs
extra) carries as a package file, copied at build time, never downloaded. The package is only
located, never imported: its renderer and that renderer's dependencies are not used. The fonts are the system's
(`theme.font: false`), so no font is fetched either. tests/test_docs_offline.py builds the site
and opens it in Chromium with every other host unreachable.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

MERMAID_JS = "assets/javascripts/mermaid.min.js"


def _mermaid_source() -> str:
    spec = find_spec("mermaidx")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the docs need the mermaidx package: pip install -e '.[docs]'")
    return str(Path(next(iter(spec.submodule_search_locations))) / "assets" / "mermaid.js")


def on_config(config: Any) -> Any:
    if MERMAID_JS not in [str(script) for script in config.extra_javascript]:
        config.extra_javascript.append(MERMAID_JS)
    return config


def on_files(files_: Files, config: Any) -> Files:
    files_.append(File.generated(config, MERMAID_JS, abs_src_path=_mermaid_source()))
    return files_
