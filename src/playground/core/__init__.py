"""The core every kind of run uses (docs/architecture.md lists its members)."""
