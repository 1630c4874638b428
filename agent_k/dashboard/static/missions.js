/* The missions list: refreshed every 2 s while the page is open; and the launch form. */
"use strict";

(function () {
  const body = document.querySelector("#missions tbody");
  const csrf = () => (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  const number = (v) => (v === null || v === undefined ? "–" : Number(v).toPrecision(5).replace(/\.?0+$/, ""));

  function cell(text, href) {
    const td = document.createElement("td");
    if (href) {
      const a = document.createElement("a");
      a.href = href;
      a.textContent = text;
      td.append(a);
    } else {
      td.textContent = text;
    }
    return td;
  }

  async function refresh() {
    const response = await fetch("/ui/api/missions", { credentials: "same-origin" });
    if (!response.ok) return;
    const rows = (await response.json()).map((m) => {
      const tr = document.createElement("tr");
      tr.dataset.id = m.id;
      tr.dataset.status = m.status;
      tr.append(
        cell(m.id, `/ui/missions/${encodeURIComponent(m.id)}`),
        cell(m.competition || "–", m.competition ? `/ui/competitions/${encodeURIComponent(m.competition)}` : null),
        cell(m.status), cell(m.phase || "–"), cell(number(m.best_cv)), cell(String(m.candidates)),
        cell(m.budget_used === null ? "–" : `${Math.round(m.budget_used * 100)}%`), cell(m.medal || "–"),
      );
      return tr;
    });
    body.replaceChildren(...rows);
    window.AgentKMissions = { refreshed: (window.AgentKMissions || { refreshed: 0 }).refreshed + 1 };
  }

  document.getElementById("launch").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = new FormData(event.target), error = document.getElementById("launch-error");
    const payload = {
      competition: form.get("competition"), time_budget: Number(form.get("time_budget")), mode: form.get("mode"),
      require_approval: form.get("require_approval") === "on", stop_early: form.get("stop_early") === "on",
    };
    const response = await fetch("/missions", {
      method: "POST", credentials: "same-origin", body: JSON.stringify(payload),
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
    });
    if (response.ok) {
      error.hidden = true;
      window.location.href = `/ui/missions/${encodeURIComponent((await response.json()).id)}`;
      return;
    }
    let detail = `HTTP ${response.status}`;
    try { detail = (await response.json()).detail || detail; } catch (ignored) { /* not JSON */ }
    error.textContent = typeof detail === "string" ? detail : JSON.stringify(detail);
    error.hidden = false;
  });

  refresh();
  setInterval(refresh, 2000);
})();
