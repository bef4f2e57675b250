"""Secrets at rest: Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`) under COUNCIL_SECRET_KEY.

COUNCIL_SECRET_KEY holds one or more Fernet keys, comma-separated, newest first. Everything is
encrypted with the first and can be read with any (MultiFernet), so a new key is introduced by
putting it in front, running `council rotate-secret` (which re-encrypts every stored secret under
it), then dropping the old one.
"""

from __future__ import annotations

from core.errors import ConfigurationError
from core.settings import Settings

NO_KEY = (
    "COUNCIL_SECRET_KEY is not set: it encrypts the stored tokens and keys. Make one with "
    'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
)


class SecretBox:
    def __init__(self, keys: list[str]):
        if not keys:
            raise ConfigurationError(NO_KEY)
        # Imported with the first key: a process without tenants (the terminal's `council ask`)
        # never loads cryptography's bindings.
        from cryptography.fernet import Fernet, MultiFernet

        try:
            self._fernet = MultiFernet([Fernet(key.encode()) for key in keys])
        except ValueError:
            raise ConfigurationError(
                "COUNCIL_SECRET_KEY: each comma-separated key must be a Fernet key (32 url-safe base64-encoded bytes)"
            ) from None

    @classmethod
    def from_settings(cls, settings: Settings) -> SecretBox:
        """ConfigurationError when COUNCIL_SECRET_KEY is unset or malformed."""
        raw = settings.tenants.secret_key.get_secret_value() if settings.tenants.secret_key else ""
        return cls([part.strip() for part in raw.split(",") if part.strip()])

    def encrypt(self, plain: str) -> str:
        return self._fernet.encrypt(plain.encode()).decode("ascii")

    def decrypt(self, token: str) -> str:
        from cryptography.fernet import InvalidToken

        try:
            return self._fernet.decrypt(token.encode("ascii")).decode()
        except InvalidToken:
            raise ConfigurationError(
                "COUNCIL_SECRET_KEY cannot decrypt a stored secret: a key it was encrypted with is missing "
                "(keep the old key after the new one until `council rotate-secret` has run)"
            ) from None

    def rotate(self, token: str) -> str:
        """The same secret encrypted under the first key."""
        from cryptography.fernet import InvalidToken

        try:
            return self._fernet.rotate(token.encode("ascii")).decode("ascii")
        except InvalidToken:
            return self.decrypt(token)  # raises the explanation
