"""Shared compiled core: row access, the pass driver and small helpers."""
