"""What the fake Kaggle API (`tests.support.fake_kaggle`) says on the wire beside its endpoints: Kaggle's metric names,
the faults and uploads it tracks, error bodies, signed-storage refusals and timestamps."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse

KAGGLE_METRIC_NAMES = {
    "auc": "Area Under Receiver Operating Characteristic Curve",
    "accuracy": "Categorization Accuracy",
    "rmse": "Root Mean Squared Error",
    "mae": "Mean Absolute Error",
    "logloss": "Log Loss",
    "r2": "R2 Score",
}


PAGE_LIMIT = 200


@dataclass
class Fault:
    method: str
    status: int
    times: int
    retry_after: str | None = None
    in_body: bool = False
    """Answer 200 with the error in the body."""


@dataclass
class Upload:
    competition: str
    size: int
    received: bytearray = field(default_factory=bytearray)


def shown(record: dict[str, Any]) -> dict[str, Any]:
    """A submission as the API shows it: without the fake's own bookkeeping."""
    return {k: v for k, v in record.items() if k not in ("competition", "hiddenPrivateScore")}


def unsigned_headers(request: Request, *, allow_content_type: bool = False) -> bool:
    """A signed storage URL covers its headers: credentials, or a content type it was not signed for, break it."""
    content_type = request.headers.get("content-type")
    return "authorization" in request.headers or (content_type is not None and not allow_content_type)


def storage_denied() -> Response:
    body = "<Error><Code>SignatureDoesNotMatch</Code></Error>"
    return Response(body, status_code=403, media_type="application/xml")


def error(code: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=code, headers=headers)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
