"""Recorded interface of verifiers 0.4.0 (recorded/README.md): its package root exposes nothing but
its version; the stack is `verifiers.v1` (recorded in v1/__init__.py)."""

RECORDED = True
__version__ = "0.4.0"
