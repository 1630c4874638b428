"""The Kaggle platform: `KaggleAdapter` over Kaggle's public API, with credentials from the usual places."""

from agent_k.platforms.kaggle.adapter import KaggleAdapter
from agent_k.platforms.kaggle.client import KaggleAuthError, KaggleClient, RetryPolicy, RulesNotAccepted
from agent_k.platforms.kaggle.credentials import CredentialsMissing, KaggleCredentials, load_credentials

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
