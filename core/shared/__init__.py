"""The ground floor of core: small utilities every floor above may use (redaction, the fences
prompts put around model-written text, the internal markers kept out of what users see). Nothing
here imports from another part of core but the shared types (core.models, core.settings, core.errors)."""
