"""The mission service: a FastAPI app over the store, with phase events streamed as SSE."""

from agent_k.api.app import create_app

__all__ = ["create_app"]
