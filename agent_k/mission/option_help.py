"""What each mission option means, in one line: the descriptions of `options.LaunchOptions`' fields and the CLI's
help texts, in a module that imports nothing (the CLI reads it as it starts, and must stay light)."""

OPTION_HELP = {
    "mode": "auto: agents when a model is set, else workflow; agent: no fallback; workflow: no model; "
    "amphiflow: workflow first, an agent repairs a failed step",
    "model": "pydantic-ai model string, e.g. openai:gpt-4o [default: AGENT_K_MODEL]",
    "keep_columns": "leakage suspects to keep as features",
    "require_approval": "stop before Submission until approved (`agent-k approve ID`, or reject)",
    "max_cost_usd": "USD the agents may spend; then the rest runs as workflow",
    "allow_unsandboxed_code": "where bubblewrap cannot run, model-written code may run in the basic sandbox",
    "stop_early": "end Evolution when the search converges instead of spending the whole budget",
    "webhook_url": "where its endings and approval requests are POSTed, signed [default: AGENT_K_WEBHOOK_URL]",
}
"""Each option's description, in the order the options are declared."""
