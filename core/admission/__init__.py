"""Admission of a council: the question cleaned, limits, budgets, rates, capacity and permissions."""
