"""Small utilities with no model knowledge."""
