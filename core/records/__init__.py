"""Stored councils read back: queries, exports, feedback, the bias audit, retention and the message map."""
