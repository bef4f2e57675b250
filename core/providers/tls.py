"""The trust store of our HTTPS calls, built as httpx builds it: SSL_CERT_FILE, else SSL_CERT_DIR,
else certifi's bundle (slim images may lack the system's). One rule for both transports.

Loading a bundle takes ~20 ms inside OpenSSL, which releases the GIL: `TrustLoader` starts it on a
thread so that it overlaps the start-up work that follows (the terminal's `council ask`, whose
first model call would otherwise wait for it)."""

from __future__ import annotations

import os
import ssl
import threading
from concurrent.futures import Future


def trust_context() -> ssl.SSLContext:
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class TrustLoader:
    """`trust_context()`, loading on a thread from the moment this is made."""

    def __init__(self) -> None:
        self._context: Future[ssl.SSLContext] = Future()
        threading.Thread(target=self._load, name="tls-trust", daemon=True).start()

    def _load(self) -> None:
        try:
            self._context.set_result(trust_context())
        except BaseException as exc:  # an unreadable SSL_CERT_FILE: raised to the first call
            self._context.set_exception(exc)

    def context(self) -> ssl.SSLContext:
        return self._context.result()
