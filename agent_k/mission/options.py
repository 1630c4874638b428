"""A mission's options, declared once (docs/architecture.md, "Launch").

`MissionOptions` holds what a mission runs with besides its competition and budget; the mission's state holds
one (`MissionState.options`). `LaunchOptions` adds where its endings are sent, which only the runner needs. The
launch request (`launch.MissionRequest`, which the CLI's options fill), the API's body (`api.schemas.MissionCreate`),
the stored spec (`launch.MissionSpec`) and a fork's changes (`fork.ForkChanges`) derive from it, as the FastAPI
template derives its Create/Update/Public models from one base; the fields' descriptions are the CLI's help texts
(`option_help`, which the CLI reads without loading pydantic).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, Field, ValidationError

from agent_k.mission.option_help import OPTION_HELP
from agent_k.mission.phases import Mode


class MissionOptions(BaseModel):
    mode: Mode = Field(default=Mode.auto, description=OPTION_HELP["mode"])
    model: str | None = Field(default=None, max_length=200, description=OPTION_HELP["model"])
    keep_columns: tuple[Annotated[str, Field(max_length=256)], ...] = Field(
        default=(), max_length=1000, description=OPTION_HELP["keep_columns"]
    )
    require_approval: bool = Field(default=False, description=OPTION_HELP["require_approval"])
    max_cost_usd: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        validation_alias=AliasChoices("max_cost_usd", "max_cost"),
        description=OPTION_HELP["max_cost_usd"],
    )
    allow_unsandboxed_code: bool = Field(default=False, description=OPTION_HELP["allow_unsandboxed_code"])
    stop_early: bool = Field(default=False, description=OPTION_HELP["stop_early"])


class LaunchOptions(MissionOptions):
    # Checked with the secret it needs by `launch.check_webhook`, the one check of every way in.
    webhook_url: str | None = Field(default=None, max_length=2000, description=OPTION_HELP["webhook_url"])

    def option_values(self) -> dict[str, Any]:
        """Just the options' values, whatever else this model holds."""
        return self.model_dump(include=set(LaunchOptions.model_fields))

    def mission_options(self) -> MissionOptions:
        """The options the mission's state holds (not where its endings are sent: a URL may carry a token)."""
        return MissionOptions.model_validate(self.model_dump(include=set(MissionOptions.model_fields)))


def first_error(exc: ValidationError) -> str:
    """A validation error as one line: the field and what is wrong with it (never the value given)."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "options"
    return f"invalid {where}: {error['msg']}"
