"""Platform adapters (Slack, Discord, terminal). Thin: they call core.service."""
