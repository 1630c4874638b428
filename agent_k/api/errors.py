"""Error responses that can always be rendered: a 422 never echoes the input back, because some inputs (NaN,
Infinity, bytes) have no JSON form and would turn the 422 into a 500."""

from __future__ import annotations

from fastapi import Request, status
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

_KEPT = ("type", "loc", "msg")


async def validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [{key: error[key] for key in _KEPT if key in error} for error in exc.errors()]
    return JSONResponse({"detail": jsonable_encoder(errors)}, status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)
