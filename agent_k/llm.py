"""Model selection: any pydantic-ai model string (`openai:…`, `anthropic:…`, `google-gla:…`, `ollama:…`, `test`).

Providers read their usual environment variables (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, …); nothing here reads
or stores a key. Provider SDKs are optional extras, so a missing one is reported with the extra to install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic_ai.models import Model

EXTRA_OF_PROVIDER = {
    "openai": "openai",
    "openai-chat": "openai",
    "openai-responses": "openai",
    "ollama": "openai",
    "deepseek": "openai",
    "openrouter": "openai",
    "together": "openai",
    "fireworks": "openai",
    "azure": "openai",
    "anthropic": "anthropic",
    "google-gla": "google",
    "google-vertex": "google",
    "google": "google",
    "groq": "groq",
    "mistral": "mistral",
    "cohere": "cohere",
    "bedrock": "bedrock",
}


class ModelUnavailable(Exception):
    """The configured model cannot be built here; the message says what to install or set."""


def build_model(name: str) -> Model:
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models import infer_model

    provider = name.partition(":")[0]
    try:
        return infer_model(name)
    except ImportError as exc:
        extra = EXTRA_OF_PROVIDER.get(provider, provider)
        raise ModelUnavailable(f"model '{name}' needs its provider SDK: pip install 'agent-k[{extra}]'") from exc
    except (UserError, ValueError) as exc:
        raise ModelUnavailable(f"model '{name}': {str(exc).splitlines()[0]}") from exc
