"""A channel's own council configuration and the admin operations on it."""
