"""Request dependencies: the store, the event feeds, the platform, the optional bearer token, and the ids a path
may carry (checked on every route before anything reaches the store: a NUL or a newline is a 422)."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Depends, HTTPException, Path, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from agent_k.api.feeds import EventFeeds
from agent_k.api.session import CSRF_HEADER, SAFE_METHODS, SESSION_COOKIE, csrf_value, matches, session_value
from agent_k.config import Settings
from agent_k.mission.launch import COMPETITION_ID, MISSION_ID
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store

_bearer = HTTPBearer(auto_error=False)


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def get_feeds(request: Request) -> EventFeeds:
    feeds: EventFeeds = request.app.state.feeds
    return feeds


def get_platform(request: Request) -> LocalPlatform:
    platform: LocalPlatform = request.app.state.platform
    return platform


def require_token(
    request: Request,
    settings: Annotated[Settings, Depends(get_settings)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """With `AGENT_K_API_TOKEN` set, every route but the health checks needs `Authorization: Bearer <token>`, or
    the dashboard's session cookie; a state-changing request with the cookie also needs its CSRF header."""
    token = settings.api_token
    if token is None:
        return
    if credentials is not None and secrets.compare_digest(
        credentials.credentials.encode(), token.get_secret_value().encode()
    ):
        return
    if matches(request.cookies.get(SESSION_COOKIE), session_value(token)):
        if request.method not in SAFE_METHODS and not matches(request.headers.get(CSRF_HEADER), csrf_value(token)):
            raise HTTPException(status.HTTP_403_FORBIDDEN, f"missing or wrong {CSRF_HEADER} header")
        return
    raise HTTPException(
        status.HTTP_401_UNAUTHORIZED, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"}
    )


SettingsDep = Annotated[Settings, Depends(get_settings)]
StoreDep = Annotated[Store, Depends(get_store)]
PlatformDep = Annotated[LocalPlatform, Depends(get_platform)]
FeedsDep = Annotated[EventFeeds, Depends(get_feeds)]
MissionId = Annotated[str, Path(pattern=f"^{MISSION_ID}$", description="a mission id")]
CompetitionId = Annotated[str, Path(pattern=f"^{COMPETITION_ID}$", description="a competition id")]
