"""Aligned CSV reports."""
