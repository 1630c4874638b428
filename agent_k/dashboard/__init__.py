"""The dashboard: server-rendered pages whose views are built in the browser from a mission's event stream,
and the same mission page as one self-contained HTML file (`agent-k report`)."""

from agent_k.dashboard.render import page
from agent_k.dashboard.report import render_report, write_report

__all__ = ["page", "render_report", "write_report"]
