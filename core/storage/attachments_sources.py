"""What a council read besides the question (migration 0006): its files (name, type, size,
content hash, extracted text; never image bytes) and its web sources. Rows go with their council
(ON DELETE CASCADE), so retention removes them."""

from __future__ import annotations

from core.models import CouncilResult, CouncilSummary
from core.storage.database import Database, Transaction


async def write_material(tx: Transaction, result: CouncilResult) -> None:
    cid, request = result.council_id, result.request
    if request.attachments:
        await tx.executemany(
            """INSERT INTO council_attachments (council_id, position, name, kind, media_type, size, sha256,
               page_count, text) VALUES (:council_id, :position, :name, :kind, :media_type, :size, :sha256,
               :page_count, :text)""",
            [
                {
                    "council_id": cid,
                    "position": i,
                    "name": a.name,
                    "kind": a.kind,
                    "media_type": a.media_type,
                    "size": a.size,
                    "sha256": a.sha256,
                    "page_count": a.page_count,
                    "text": a.text if a.sections else None,
                }
                for i, a in enumerate(request.attachments)
            ],
        )
    if request.sources:
        await tx.executemany(
            """INSERT INTO council_sources (council_id, position, title, url, snippet, published)
               VALUES (:council_id, :position, :title, :url, :snippet, :published)""",
            [
                {
                    "council_id": cid,
                    "position": i,
                    "title": r.title,
                    "url": r.url,
                    "snippet": r.snippet,
                    "published": r.published.isoformat() if r.published else None,
                }
                for i, r in enumerate(request.sources, 1)
            ],
        )


async def with_material(db: Database, summaries: list[CouncilSummary]) -> list[CouncilSummary]:
    """Each listed council's file names and number of web sources."""
    if not summaries:
        return summaries
    ids = [s.council_id for s in summaries]
    marks = ", ".join("?" for _ in ids)
    files = await db.fetchall(
        f"SELECT council_id, name FROM council_attachments WHERE council_id IN ({marks}) ORDER BY position", ids
    )
    sources = await db.fetchall(
        f"SELECT council_id, COUNT(*) AS n FROM council_sources WHERE council_id IN ({marks}) GROUP BY council_id", ids
    )
    by_id = {s.council_id: s for s in summaries}
    for row in files:
        by_id[row["council_id"]].files.append(row["name"])
    for row in sources:
        by_id[row["council_id"]].sources = row["n"]
    return summaries
