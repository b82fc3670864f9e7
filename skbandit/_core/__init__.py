"""Shared compiled core: the undo journal and base kernels (``_kernel``), the
input scans and checks (``_scans``), row access and the pass drivers
(``_drivers``), the round bodies (``_rounds.pxd``) and small helpers."""
