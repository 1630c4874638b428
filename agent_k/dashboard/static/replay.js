/* The mission page's Steps panel (live pages only): the mission's steps from /missions/{id}/steps, and the
   whole state a step began from (/missions/{id}/steps/{seq}) when one is clicked. Refreshed when the mission
   ends, so a finished mission can be stepped through from its first snapshot to its last. */
(function () {
  "use strict";
  const meta = JSON.parse(document.getElementById("meta").textContent);
  const base = `/missions/${encodeURIComponent(meta.id)}/steps`;
  const table = document.getElementById("steps"), shown = document.getElementById("step-state");
  if (!table) return;

  function cell(text) { const td = document.createElement("td"); td.textContent = text; return td; }

  async function showState(seq, row) {
    const response = await fetch(`${base}/${seq}`, { credentials: "same-origin" });
    if (!response.ok) return;
    const body = await response.json();
    shown.textContent = JSON.stringify(body.state, null, 2);
    shown.hidden = false;
    shown.dataset.seq = String(seq);
    for (const other of table.querySelectorAll("tr.selected")) other.classList.remove("selected");
    row.classList.add("selected");
  }

  async function load() {
    const response = await fetch(base, { credentials: "same-origin" });
    if (!response.ok) return;
    const steps = await response.json();
    const head = document.createElement("tr");
    for (const name of ["step", "node", "status", "phase", "spent", "best CV", "candidates", "events"]) {
      const th = document.createElement("th"); th.textContent = name; head.append(th);
    }
    const rows = steps.map((step) => {
      const row = document.createElement("tr");
      row.dataset.seq = String(step.seq);
      const events = Object.entries(step.event_types).map(([type, n]) => (n > 1 ? `${type} ×${n}` : type)).join(", ");
      row.append(cell(String(step.seq)), cell(step.node), cell(step.status), cell(step.phase || "–"),
        cell(`${step.elapsed_s.toFixed(1)} s`), cell(step.best_score === null ? "–" : step.best_score.toPrecision(6)),
        cell(String(step.candidates)), cell(events || "–"));
      row.addEventListener("click", () => showState(step.seq, row));
      return row;
    });
    table.replaceChildren(head, ...rows);
    window.AgentK.steps = steps.length;
  }

  load();
  const watch = setInterval(() => {
    if (window.AgentK.state && window.AgentK.state.ended) { clearInterval(watch); load(); }
  }, 1000);
})();
