"""Files shared with a Slack message (`files` on the event), as the council's attachment pipeline takes them.

They are downloaded later by `CouncilService.read_files`, from Slack's file hosts only, with the
bot token (`files:read` scope): `url_private` needs it.
"""

from __future__ import annotations

from typing import Any

from core.models.files import IncomingFile


def incoming_files(event: dict[str, Any]) -> list[IncomingFile]:
    files = []
    for item in event.get("files") or []:
        if not isinstance(item, dict):
            continue
        name = str(item.get("name") or item.get("title") or item.get("id") or "file")
        url = item.get("url_private_download") or item.get("url_private")
        size = item.get("size")
        files.append(
            IncomingFile(
                name=name,
                declared_type=item.get("mimetype") or item.get("filetype"),
                size=size if isinstance(size, int) and size >= 0 else None,
                url=url if isinstance(url, str) else None,
            )
        )
    return files
