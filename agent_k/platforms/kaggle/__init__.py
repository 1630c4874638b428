"""The Kaggle platform: `KaggleAdapter` over Kaggle's public API, with credentials from the usual places.

Light at import (its declaration is read whenever a platform is named): the adapter and client load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_k.platforms.base import CredentialsMissing
    from agent_k.platforms.kaggle.adapter import KaggleAdapter
    from agent_k.platforms.kaggle.client import KaggleAuthError, KaggleClient, RetryPolicy, RulesNotAccepted
    from agent_k.platforms.kaggle.credentials import KaggleCredentials, load_credentials

_LAZY = {
    "CredentialsMissing": "agent_k.platforms.base",
    "KaggleAdapter": "agent_k.platforms.kaggle.adapter",
    "KaggleAuthError": "agent_k.platforms.kaggle.client",
    "KaggleClient": "agent_k.platforms.kaggle.client",
    "RetryPolicy": "agent_k.platforms.kaggle.client",
    "RulesNotAccepted": "agent_k.platforms.kaggle.client",
    "KaggleCredentials": "agent_k.platforms.kaggle.credentials",
    "load_credentials": "agent_k.platforms.kaggle.credentials",
}

__all__ = [
    "CredentialsMissing",
    "KaggleAdapter",
    "KaggleAuthError",
    "KaggleClient",
    "KaggleCredentials",
    "RetryPolicy",
    "RulesNotAccepted",
    "load_credentials",
]


def __getattr__(name: str) -> object:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
