"""The council as an OpenAI-compatible model (`/v1/chat/completions`) and as an MCP tool.

An adapter like Slack and Discord: it turns a request into one CouncilService call and renders
the council's events back; every rule about councils (limits, budgets, who sees what) stays in
the service.
"""
