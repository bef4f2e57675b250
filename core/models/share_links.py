"""Share links: a council's page opened, read-only, by whoever holds its link (COUNCIL_SHARE_LINKS).

The token is an HMAC of the council's id (itsdangerous' Signer, salted for this one use) keyed
with COUNCIL_WEB_SECRET: it opens that council and nothing else, a tampered token and another
council's id fail alike, and rotating the secret revokes every link handed out. It is separate
from sign-in: it is checked on each request and signs nobody in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from itsdangerous import Signer

SHARE_PARAM = "share"  # the query parameter of the council's page that carries the token
_SALT = "council-share-link"


def _signer(secret: str) -> Signer:
    """Imported on first use: the settings import this module, and most commands sign nothing."""
    from itsdangerous import Signer

    return Signer(secret, salt=_SALT)


def share_token(secret: str, council_id: str) -> str:
    return _signer(secret).get_signature(council_id).decode("ascii")


def opens(secret: str, council_id: str, token: str) -> bool:
    """The token was made with `secret` for exactly `council_id`."""
    from itsdangerous import BadSignature

    try:
        return _signer(secret).verify_signature(council_id, token)
    except BadSignature:
        return False
