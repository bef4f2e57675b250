"""What a council reads besides the question: attached files and web search."""
