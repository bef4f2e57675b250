"""Admission of a council: the question cleaned, limits, budgets, rates and capacity."""
