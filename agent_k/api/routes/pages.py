"""The dashboard's pages: the missions list, a mission, a competition, and signing in with the API token.

The pages are rendered here; their views are built in the browser from the API (the mission page from the event
stream alone). With a token set, a page without the session cookie redirects to the sign-in page."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, HTTPException, Request, Response, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from agent_k.api.deps import CompetitionId, MissionId, PlatformDep, SettingsDep, StoreDep, require_token
from agent_k.api.security import require_intent
from agent_k.api.session import SESSION_COOKIE, csrf_value, matches, same_origin_path, session_value
from agent_k.config import MAX_TIME_BUDGET_S, MIN_TIME_BUDGET_S
from agent_k.dashboard import page
from agent_k.dashboard.render import mission_meta
from agent_k.mission.document import mission_document
from agent_k.platforms.base import CompetitionNotFound, CompetitionUnsupported
from agent_k.platforms.ranking import medal_thresholds
from agent_k.store.overview import mission_overviews

router = APIRouter(tags=["dashboard"], include_in_schema=False)


async def _signed_in(request: Request, settings: SettingsDep) -> str:
    """The page's CSRF value ("" without a token); a browser without the session is sent to sign in."""
    token = settings.api_token
    if token is None:
        return ""
    if not matches(request.cookies.get(SESSION_COOKIE), session_value(token)):
        target = quote(request.url.path, safe="/")
        raise HTTPException(status.HTTP_303_SEE_OTHER, headers={"Location": f"/ui/login?next={target}"})
    return csrf_value(token)


Csrf = Annotated[str, Depends(_signed_in)]


@router.get("/", response_class=HTMLResponse)
async def missions_page(csrf: Csrf, platform: PlatformDep) -> str:
    competitions = await platform.list_competitions()
    bounds = (f"{MIN_TIME_BUDGET_S:g}", f"{MAX_TIME_BUDGET_S:.0f}")
    return page("missions.html", csrf=csrf, competitions=competitions, budget_bounds=bounds)


@router.get("/ui/missions/{mission_id}", response_class=HTMLResponse)
async def mission_page(mission_id: MissionId, csrf: Csrf, store: StoreDep) -> str:
    document = await run_in_threadpool(mission_document, store, mission_id)
    if document is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no mission '{mission_id}'")
    return page("mission.html", csrf=csrf, meta=mission_meta(document), events=[], live=True)


@router.get("/ui/competitions/{competition_id}", response_class=HTMLResponse)
async def competition_page(competition_id: CompetitionId, csrf: Csrf, platform: PlatformDep) -> str:
    try:
        competition = await platform.get_competition(competition_id)
        board = await platform.leaderboard(competition_id)
    except CompetitionNotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    except CompetitionUnsupported as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
    final = any(e.private_score is not None for e in board)
    scored = [e for e in board if (e.private_score if final else e.public_score) is not None]
    ranked = competition.scored_by.ranked(scored, lambda e: e.private_score if final else e.public_score)
    medals = medal_thresholds([e for e in board if e.reference], competition.scored_by)
    return page("competition.html", csrf=csrf, competition=competition, leaderboard=ranked, medals=medals)


@router.get("/ui/api/missions", dependencies=[Depends(require_token)])
async def mission_rows(store: StoreDep) -> list[dict[str, Any]]:
    return await run_in_threadpool(mission_overviews, store)


@router.get("/ui/login", response_class=HTMLResponse)
async def login_page(next: str = "/") -> str:
    return page("login.html", csrf="", next=next if same_origin_path(next) else "/")


class SignIn(BaseModel):
    token: str = Field(max_length=4096)


@router.post("/ui/session", status_code=status.HTTP_204_NO_CONTENT, dependencies=[Depends(require_intent)])
async def sign_in(body: SignIn, settings: SettingsDep, response: Response) -> None:
    """Trade the API token for the session cookie (HttpOnly: no script reads it; SameSite=Strict: no other site
    sends it)."""
    token = settings.api_token
    if token is None:
        return
    if not matches(body.token, token.get_secret_value()):
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "that is not the API token")
    response.set_cookie(SESSION_COOKIE, session_value(token), httponly=True, samesite="strict", path="/")


@router.post("/ui/session/end", status_code=status.HTTP_204_NO_CONTENT, dependencies=[Depends(require_intent)])
async def sign_out(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/")
