"""A bot's start-up: the tokens it needs, checked before anything starts, and a refused token, a busy
port or an unreachable platform reported as one line naming the setting to fix."""

from __future__ import annotations

import argparse
import errno
from collections.abc import Awaitable
from typing import TypeVar

from core.errors import ConfigurationError, Unreachable
from core.settings import Settings

T = TypeVar("T")


def check_bot_settings(settings: Settings, args: argparse.Namespace) -> None:
    """The tokens a bot needs, checked before anything starts (ConfigurationError naming the setting)."""
    if args.command == "slack":
        if settings.slack.bot_token is None and not settings.slack.oauth:
            raise ConfigurationError(
                "SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-...) from your "
                "Slack app's OAuth & Permissions page (see README, Slack)."
            )
        http = args.http or settings.slack.app_token is None or settings.slack.oauth  # OAuth: HTTP only
        if http and settings.slack.signing_secret is None:
            raise ConfigurationError(
                "SLACK_SIGNING_SECRET is not set: the HTTP Events API needs it to verify requests "
                "(Basic Information page of your Slack app), or set SLACK_APP_TOKEN for Socket Mode."
            )
    if args.command == "discord" and settings.discord.token is None:
        raise ConfigurationError(
            "DISCORD_TOKEN is not set: copy the bot token from the Discord Developer Portal (Bot page; see README)."
        )


async def reporting(platform: str, api_url: str | None, bot: Awaitable[T]) -> T:
    """Runs a bot (or logs in to a platform); a refused token, a busy port or an unreachable
    platform becomes one line naming it."""
    import aiohttp

    host = api_url or {"Slack": "https://slack.com/api/", "Discord": "https://discord.com/api"}[platform]
    try:
        return await bot
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EACCES) and not isinstance(exc, aiohttp.ClientError):
            raise ConfigurationError(
                f"{platform}: cannot listen for events ({_reason(exc)}). Choose another port with --port."
            ) from exc
        raise _unreachable(platform, host, api_url, exc) from exc
    except (aiohttp.ClientConnectionError, TimeoutError) as exc:
        raise _unreachable(platform, host, api_url, exc) from exc
    except Exception as exc:
        refusal = _platform_refusal(platform, exc)
        if refusal is None:
            raise
        raise refusal from exc


def _unreachable(platform: str, host: str, api_url: str | None, exc: BaseException) -> Unreachable:
    setting = f" and {platform.upper()}_API_URL" if api_url else ""
    return Unreachable(
        f"Cannot reach {platform} at {host} ({_reason(exc)}). Check the network{setting}, then start the bot again."
    )


def _platform_refusal(platform: str, exc: Exception) -> ConfigurationError | None:
    """The platform's own 'no' to our credentials or intents, as a ConfigurationError naming the setting."""
    if platform == "Discord":
        import discord

        if isinstance(exc, discord.LoginFailure):
            return ConfigurationError(f"Discord refused the token ({_reason(exc)}): check DISCORD_TOKEN.")
        if isinstance(exc, discord.PrivilegedIntentsRequired):
            return ConfigurationError(
                "Discord refused the Message Content intent: enable it on the Bot page of the Developer Portal."
            )
        return None
    from slack_bolt.error import BoltError
    from slack_sdk.errors import SlackApiError

    if isinstance(exc, SlackApiError | BoltError):
        return ConfigurationError(
            f"Slack refused the token ({_reason(exc)}): check SLACK_BOT_TOKEN (and SLACK_APP_TOKEN for Socket Mode)."
        )
    return None


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text or type(exc).__name__
