"""A mission's options, declared once (docs/architecture.md, "Launch").

`MissionOptions` holds what a mission runs with besides its competition and budget. The launch request
(`launch.MissionRequest`, which the CLI's options fill), the API's body (`api.schemas.MissionCreate`), the stored
spec (`launch.MissionSpec`) and a fork's changes (`fork.ForkChanges`) are subclasses, as the FastAPI template
derives its Create/Update/Public models from one base; the mission's state takes the same fields by name.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, Field, ValidationError

from agent_k.mission.phases import Mode


class MissionOptions(BaseModel):
    mode: Mode = Field(
        default=Mode.auto,
        description="auto: agents when a model is set, else workflow; agent: no fallback; workflow: no model; "
        "amphiflow: workflow first, an agent repairs a failed step",
    )
    model: str | None = Field(
        default=None,
        max_length=200,
        description="pydantic-ai model string, e.g. openai:gpt-4o [default: AGENT_K_MODEL]",
    )
    keep_columns: tuple[Annotated[str, Field(max_length=256)], ...] = Field(
        default=(), max_length=1000, description="leakage suspects to keep as features"
    )
    require_approval: bool = Field(default=False, description="stop before Submission until approved")
    max_cost_usd: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        validation_alias=AliasChoices("max_cost_usd", "max_cost"),
        description="USD the agents may spend; then the rest runs as workflow",
    )
    allow_unsandboxed_code: bool = Field(
        default=False, description="where bubblewrap cannot run, model-written code may run in the basic sandbox"
    )
    stop_early: bool = Field(
        default=False, description="end Evolution when the search converges instead of spending the whole budget"
    )
    # Checked with the secret it needs by `launch.check_webhook`, the one check of every way in.
    webhook_url: str | None = Field(
        default=None,
        max_length=2000,
        description="where its endings and approval requests are POSTed, signed [default: AGENT_K_WEBHOOK_URL]",
    )

    def option_values(self) -> dict[str, Any]:
        """Just the options' values, whatever else this model holds."""
        return self.model_dump(include=set(MissionOptions.model_fields))


def state_options(options: MissionOptions) -> dict[str, Any]:
    """The options a `MissionState` records (all but where its endings are sent, which only the runner needs)."""
    return options.model_dump(include=set(MissionOptions.model_fields) - {"webhook_url"})


def first_error(exc: ValidationError) -> str:
    """A validation error as one line: the field and what is wrong with it (never the value given)."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "options"
    return f"invalid {where}: {error['msg']}"
