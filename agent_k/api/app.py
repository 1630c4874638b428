"""Build the FastAPI app (a factory: nothing is created at import time)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources

from fastapi import Depends, FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

from agent_k.api.deps import require_token
from agent_k.api.errors import validation_error
from agent_k.api.feeds import EventFeeds
from agent_k.api.routes import competitions, health, lineage, metrics, missions, pages, tools
from agent_k.api.security import RequestGuard
from agent_k.config import Settings
from agent_k.platforms.local import LocalPlatform
from agent_k.store.repository import Store


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        settings.private_home()
        store = Store.open(settings.resolved_database_url)
        app.state.settings, app.state.store = settings, store
        app.state.platform = LocalPlatform(settings.competitions_dir)
        app.state.feeds = feeds = EventFeeds(store)
        await feeds.start()
        try:
            yield
        finally:
            await feeds.close()
            store.close()

    app = FastAPI(
        title="AGENT-K",
        summary="Missions that enter ML competitions: launch them, follow their phases, read their results.",
        lifespan=lifespan,
    )
    app.add_exception_handler(RequestValidationError, validation_error)
    if settings.cors_origins:  # closed unless origins are configured
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID", "X-Agent-K", "X-CSRF-Token"],
        )
    app.add_middleware(RequestGuard, loopback_only=settings.api_token is None)
    app.include_router(health.router)
    secured = [Depends(require_token)]
    app.include_router(missions.router, dependencies=secured)
    app.include_router(lineage.router, dependencies=secured)
    app.include_router(tools.router, dependencies=secured)
    app.include_router(competitions.router, dependencies=secured)
    app.include_router(metrics.router, dependencies=secured)
    app.include_router(pages.router)
    static = resources.files("agent_k.dashboard").joinpath("static")
    app.mount("/ui/static", StaticFiles(directory=str(static)), name="static")
    return app
