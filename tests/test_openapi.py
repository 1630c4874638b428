"""Schemathesis over the served OpenAPI schema: no generated request makes the API answer 5xx."""

from __future__ import annotations

from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from tests.support.api_client import running_api

pytestmark = pytest.mark.slow

EXAMPLES_PER_OPERATION = 40


def test_no_generated_request_gets_a_5xx(home: Path) -> None:
    env = {"AGENT_K_HOME": str(home)}
    with running_api(env, "--no-worker") as api:  # no worker: posted missions stay queued, nothing runs
        schema = schemathesis.openapi.from_url(f"{api.base}/openapi.json")
        checked = []
        for result in schema.get_all_operations():
            operation = result.ok()  # the event stream too: generated ids name no mission, so it answers at once

            @given(case=operation.as_strategy())
            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def no_server_error(case: schemathesis.Case) -> None:
                response = case.call(base_url=api.base, timeout=30)
                assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.text[:300]}"

            no_server_error()
            checked.append(f"{operation.method.upper()} {operation.path}")
        assert len(checked) >= 13, checked
        assert api.process.poll() is None, "the server survived"
