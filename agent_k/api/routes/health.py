"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, status
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from agent_k.api.deps import StoreDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process answers."""
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(store: StoreDep) -> dict[str, str]:
    """The database answers."""

    def ping() -> None:
        with store.engine.connect() as connection:
            connection.execute(text("SELECT 1"))

    try:
        await run_in_threadpool(ping)
    except SQLAlchemyError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, f"database unreachable: {type(exc).__name__}") from exc
    return {"status": "ready"}
