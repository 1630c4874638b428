"""The embedded, offline competition platform (docs/architecture.md, "Local platform")."""

from agent_k.platforms.local.platform import LocalPlatform

__all__ = ["LocalPlatform"]
