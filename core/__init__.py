"""Platform-agnostic async engine of the LLM council."""
