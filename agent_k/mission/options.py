"""A mission's options, declared once (docs/architecture.md, "Launch").

`MissionOptions` holds what a mission runs with besides its competition and budget; the mission's state holds
one (`MissionState.options`). `LaunchOptions` adds where its endings are sent, which only the runner needs. The
launch request (`launch.MissionRequest`, which the CLI's options fill), the API's body (`api.schemas.MissionCreate`),
the stored spec (`launch.MissionSpec`) and a fork's changes (`fork.ForkChanges`) derive from it, as the FastAPI
template derives its Create/Update/Public models from one base; the CLI's help texts are the fields' descriptions.
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
    require_approval: bool = Field(
        default=False, description="stop before Submission until approved (`agent-k approve ID`, or reject)"
    )
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


class LaunchOptions(MissionOptions):
    # Checked with the secret it needs by `launch.check_webhook`, the one check of every way in.
    webhook_url: str | None = Field(
        default=None,
        max_length=2000,
        description="where its endings and approval requests are POSTed, signed [default: AGENT_K_WEBHOOK_URL]",
    )

    def option_values(self) -> dict[str, Any]:
        """Just the options' values, whatever else this model holds."""
        return self.model_dump(include=set(LaunchOptions.model_fields))

    def mission_options(self) -> MissionOptions:
        """The options the mission's state holds (not where its endings are sent: a URL may carry a token)."""
        return MissionOptions.model_validate(self.model_dump(include=set(MissionOptions.model_fields)))


def help_text(name: str) -> str:
    """An option's description, for the CLI's help."""
    description = LaunchOptions.model_fields[name].description
    assert description is not None, f"option {name} has no description"
    return description


def first_error(exc: ValidationError) -> str:
    """A validation error as one line: the field and what is wrong with it (never the value given)."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "options"
    return f"invalid {where}: {error['msg']}"
