/* The mission page: every view is built from the mission's events alone, the same way for a live page (an
   EventSource on /missions/{id}/events) and for a report (the events inlined in the page). */
"use strict";

window.AgentK = window.AgentK || {};

(function (AgentK) {
  const TERMINAL = new Set(["mission.completed", "mission.failed", "mission.cancelled"]);
  /* Moments marked on a phase's lane in the timeline. */
  const TICKS = new Set([
    "budget.warning", "phase.fallback", "step.failed", "phase.repair.started", "phase.repair.succeeded",
    "phase.repair.failed", "agent.nudged", "transition.blocked", "phase.transition",
  ]);

  function node(tag, attributes, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") element.textContent = value;
      else element.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children) if (child !== null && child !== undefined) element.append(child);
    return element;
  }

  const number = (value, digits = 5) =>
    value === null || value === undefined ? "–" : Number(value).toPrecision(digits).replace(/\.?0+$/, "");
  const seconds = (value) => (value === null || value === undefined ? "–" : `${Number(value).toFixed(1)} s`);

  /* The mission as its events describe it. Each event is taken once, by seq. */
  class Mission {
    constructor(meta) {
      this.meta = meta;
      this.status = meta.status;
      this.maximize = meta.maximize;
      this.metric = meta.metric;
      this.lastSeq = 0;
      this.events = [];
      this.segments = [];
      this.ticks = [];
      this.candidates = [];
      this.generations = [];
      this.findings = [];
      this.galleries = {};
      this.ledger = {};
      this.ensembles = [];
      this.pick = null;
      this.result = meta.result || null;
      this.start = null;
      this.lastTs = null;
      this.receivedAt = Date.now();
      this.ended = false;
    }

    add(event) {
      if (event.seq <= this.lastSeq) return false;
      this.lastSeq = event.seq;
      this.events.push(event);
      const ts = Date.parse(event.ts), before = this.lastTs;
      this.lastTs = ts;
      this.receivedAt = Date.now();
      if (this.start === null) this.start = ts;
      const d = event.data, phase = event.phase;
      switch (event.type) {
        case "mission.started":
          this.status = "running";
          this.ended = false;
          if (d.resumed_from_seq !== null && d.resumed_from_seq !== undefined) this.takeOver(ts, before);
          break;
        case "approval.requested": this.status = "awaiting_approval"; break;
        case "approval.granted": this.status = "running"; break;
        case "mission.completed": this.status = "succeeded"; this.result = { ...(this.result || {}), ...d }; break;
        case "mission.failed": this.status = "failed"; this.failure = `${d.reason}${d.error ? `: ${d.error}` : ""}`; break;
        case "mission.cancelled": this.status = "cancelled"; break;
        case "competition.selected": this.maximize = d.maximize; this.metric = d.metric; break;
        case "phase.started":
          this.segments.push({ phase, start: ts, end: null, budget: d.budget_s, outcome: "running" });
          this.row(phase).allowance = d.budget_s;
          break;
        case "phase.completed":
        case "phase.failed": {
          const open = this.openSegment(phase);
          if (open) { open.end = ts; open.outcome = event.type === "phase.completed" ? "completed" : "failed"; }
          if (event.type === "phase.completed") {
            Object.assign(this.row(phase), { used: d.elapsed_s, requests: d.llm_requests, tokens: d.llm_tokens });
            this.cost = d.mission_cost_usd;
          }
          break;
        }
        case "research.finding": this.findings.push(d); break;
        case "media.gallery": this.galleries[d.kind] = d.items; break;
        case "candidate.evaluated":
          this.candidates.push({ ...d, index: this.candidates.length + 1 });
          break;
        case "evolution.generation": this.generations.push({ generation: d.generation, after: this.candidates.length }); break;
        case "evolution.ensemble": this.ensembles.push(d); break;
        case "evolution.pick": this.pick = d; break;
        case "submission.scored": this.result = { ...(this.result || {}), ...d }; break;
      }
      if (TICKS.has(event.type)) this.ticks.push({ phase, at: ts, kind: event.type });
      if (TERMINAL.has(event.type)) {
        this.ended = true;
        for (const segment of this.segments) if (segment.end === null) { segment.end = ts; segment.outcome = "stopped"; }
      }
      return true;
    }

    /* A resumed run (a takeover after a worker died, or a resume after a cancel) continues the step it was in:
       the old segment ends at the last event before the gap, and the phase goes on in a new segment, so the
       time no process ran it is not drawn as phase time. */
    takeOver(ts, before) {
      const last = this.segments[this.segments.length - 1];
      if (!last || last.outcome === "completed") return;
      if (last.end === null) { last.end = before === null ? ts : before; last.outcome = "interrupted"; }
      this.segments.push({ phase: last.phase, start: ts, end: null, budget: last.budget, outcome: "running" });
    }

    row(phase) { return (this.ledger[phase] = this.ledger[phase] || { allowance: null, used: null, requests: 0, tokens: 0 }); }

    openSegment(phase) {
      for (let i = this.segments.length - 1; i >= 0; i--) {
        if (this.segments[i].phase === phase && this.segments[i].end === null) return this.segments[i];
      }
      return null;
    }

    /* The server's clock now: the last event's time plus what has passed here since it arrived. */
    now() { return this.ended || this.lastTs === null ? this.lastTs : this.lastTs + (Date.now() - this.receivedAt); }

    better(a, b) { return this.maximize === false ? a < b : a > b; }

    best() {
      let best = null;
      for (const c of this.candidates) {
        if (c.status === "succeeded" && c.cv_score !== null && !/^(blend|stack) of/.test(c.recipe) && (best === null || this.better(c.cv_score, best.cv_score))) best = c;
      }
      return best;
    }
  }

  /* The score plot (uPlot): each candidate a point, the best-so-far a step line, generation boundaries, failed
     and screened-out candidates marked at the worst score, the kept blend's CV as a line. */
  class ScorePlot {
    constructor(container, mission) {
      this.container = container;
      this.mission = mission;
      this.plot = null;
    }

    data() {
      const m = this.mission;
      const scored = m.candidates.filter((c) => c.cv_score !== null).map((c) => c.cv_score);
      const worst = scored.length ? (m.maximize === false ? Math.max(...scored) : Math.min(...scored)) : 0;
      const x = [], ok = [], missed = [], best = [], blend = [];
      let running = null;
      for (const c of m.candidates) {
        x.push(c.index);
        const good = c.status === "succeeded" && c.cv_score !== null;
        ok.push(good ? c.cv_score : null);
        missed.push(good ? null : worst);
        if (good && !/^(blend|stack) of/.test(c.recipe) && (running === null || m.better(c.cv_score, running))) running = c.cv_score;
        best.push(running);
        const kept = m.ensembles.find((e) => e.kept);
        blend.push(kept ? kept.cv_score : null);
      }
      return [x, ok, missed, best, blend];
    }

    render() {
      const data = this.data();
      AgentK.plotData = { x: data[0], cv: data[1], missed: data[2], best: data[3], blend: data[4] };
      if (typeof uPlot === "undefined") return;
      if (this.plot === null) {
        const generations = () => this.mission.generations;
        const options = {
          width: Math.max(320, this.container.clientWidth || 800),
          height: 280,
          scales: { x: { time: false } },
          axes: [{ label: "candidate" }, { label: this.mission.metric || "CV" }],
          series: [
            {},
            { label: "CV", stroke: "#2563eb", paths: () => null, points: { show: true, size: 7, fill: "#2563eb" } },
            { label: "failed or screened out", stroke: "#dc2626", paths: () => null, points: { show: true, size: 7, fill: "#fff" } },
            { label: "best so far", stroke: "#16a34a", width: 2, paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } },
            { label: "blend", stroke: "#9333ea", dash: [6, 4], points: { show: false } },
          ],
          hooks: {
            draw: [(u) => {
              const ctx = u.ctx;
              ctx.save();
              ctx.strokeStyle = "#9ca3af";
              ctx.setLineDash([2, 4]);
              for (const g of generations()) {
                const at = u.valToPos(g.after + 0.5, "x", true);
                ctx.beginPath(); ctx.moveTo(at, u.bbox.top); ctx.lineTo(at, u.bbox.top + u.bbox.height); ctx.stroke();
              }
              ctx.restore();
            }],
          },
        };
        this.plot = new uPlot(options, data, this.container);
      } else {
        this.plot.setData(data);
      }
    }
  }

  class Page {
    constructor(mission, live) {
      this.mission = mission;
      this.live = live;
      this.plot = new ScorePlot(document.getElementById("plot"), mission);
      this.filter = document.getElementById("event-filter");
      this.log = document.getElementById("log");
      this.logged = 0;
      this.types = new Set();
      this.pending = false;
      this.filter.addEventListener("change", () => this.applyFilter());
    }

    schedule() {
      if (this.pending) return;
      this.pending = true;
      requestAnimationFrame(() => { this.pending = false; this.render(); });
    }

    render() {
      this.header();
      this.timeline();
      this.plot.render();
      this.candidates();
      this.findings();
      this.galleries();
      this.ledger();
      this.result();
      this.events();
      AgentK.rendered = this.mission.events.length;
    }

    header() {
      const m = this.mission;
      const status = document.getElementById("status");
      status.textContent = m.status;
      status.className = `status ${m.status}`;
      document.getElementById("direction").textContent =
        m.maximize === null || m.maximize === undefined ? "" : `${m.metric}: ${m.maximize ? "higher" : "lower"} is better`;
      const banner = document.getElementById("banner");
      banner.hidden = m.status !== "awaiting_approval";
      banner.textContent = "Waiting for approval before Submission.";
      if (m.failure) { banner.hidden = false; banner.textContent = `Failed: ${m.failure}`; }
      for (const button of document.querySelectorAll("#actions button")) {
        button.disabled = !m.meta.controls[button.dataset.action].includes(m.status);
      }
    }

    timeline() {
      const m = this.mission, container = document.getElementById("timeline");
      const now = m.now();
      if (m.start === null) { container.replaceChildren(node("p", { class: "muted", text: "no phase has started yet" })); return; }
      const span = Math.max((now - m.start) / 1000, m.meta.budget_s || 0, 1);
      const pct = (s) => `${Math.max(0, Math.min(100, (100 * s) / span)).toFixed(3)}%`;
      const rows = m.meta.phases.map((phase) => {
        const lane = node("div", { class: "lane" });
        for (const segment of m.segments.filter((s) => s.phase === phase)) {
          const from = (segment.start - m.start) / 1000;
          const to = ((segment.end === null ? now : segment.end) - m.start) / 1000;
          if (segment.budget) {
            lane.append(node("div", { class: "ghost", style: `left:${pct(from)};width:${pct(segment.budget)}`, title: `allowance ${seconds(segment.budget)}` }));
          }
          lane.append(node("div", {
            class: `bar ${segment.outcome}`, "data-phase": phase,
            style: `left:${pct(from)};width:${pct(Math.max(to - from, span / 500))}`, title: `${phase}: ${seconds(to - from)}`,
          }));
        }
        for (const tick of m.ticks.filter((t) => t.phase === phase)) {
          lane.append(node("div", { class: `tick ${tick.kind.replaceAll(".", "-")}`, style: `left:${pct((tick.at - m.start) / 1000)}`, title: tick.kind }));
        }
        return node("div", { class: "row" }, node("span", { class: "label", text: phase }), lane);
      });
      container.replaceChildren(...rows);
    }

    candidates() {
      const m = this.mission, chosen = m.pick && m.pick.chosen, best = chosen ? { candidate_key: chosen } : m.best();
      const head = node("tr", {}, ...["#", "recipe", "gen", "fidelity", "CV", "runtime", "status", "error"].map((h) => node("th", { text: h })));
      const rows = m.candidates.map((c) => node("tr", { class: `${c.status}${best && c.candidate_key === best.candidate_key ? " best" : ""}`, "data-key": c.candidate_key },
        node("td", { text: String(c.index) }), node("td", { class: "recipe", text: c.recipe }), node("td", { text: String(c.generation) }),
        node("td", { text: `${Math.round((c.fidelity ?? 1) * 100)}%` }), node("td", { text: number(c.cv_score) }),
        node("td", { text: seconds(c.runtime_s) }), node("td", { text: c.status }), node("td", { class: "err", text: c.error || "" })));
      document.getElementById("candidates").replaceChildren(node("thead", {}, head), node("tbody", {}, ...rows));
      const blends = m.ensembles.map((e) => {
        const kind = e.method === "stacked" ? "Stack" : "Blend";
        if (!e.members.length) return node("p", { text: `${kind}: none (${e.reason})` });
        return node("p", { text: `${kind} of ${e.members.length}: CV ${number(e.cv_score)} against the best single ${number(e.best_single)}: ${e.kept ? "kept" : "not kept"} (${e.reason})` });
      });
      const pick = m.pick ? [node("p", { text: `Final pick: ${m.pick.chosen} (${m.pick.reason})` }), node("ul", {}, ...m.pick.candidates.map((c) => node("li", { text: `${c.candidate_key}: CV ${number(c.cv_score)}, second split ${number(c.resplit_score)}` })))] : [];
      document.getElementById("ensemble").replaceChildren(...blends, ...pick);
    }

    findings() {
      const list = this.mission.findings.slice().sort((a, b) => (b.kind === "leakage") - (a.kind === "leakage"));
      document.getElementById("findings").replaceChildren(...list.map((f) => node("li", { class: f.kind, text: `${f.kind}: ${f.message}` })));
    }

    galleries() {
      const shown = this.mission.galleries, titles = { examples: "Training files", mistakes: "Most confident out-of-fold mistakes" };
      const parts = Object.keys(titles).filter((kind) => shown[kind] && shown[kind].length).map((kind) =>
        node("div", { class: "gallery", "data-kind": kind }, node("h3", { text: titles[kind] }),
          ...shown[kind].filter((item) => String(item.image).startsWith("data:image/jpeg;base64,")).map((item) =>
            node("figure", {}, node("img", { src: item.image, alt: item.label }), node("figcaption", { text: item.label })))));
      const section = document.getElementById("media");
      section.hidden = parts.length === 0;
      document.getElementById("galleries").replaceChildren(...parts);
    }

    ledger() {
      const m = this.mission;
      const head = node("tr", {}, ...["phase", "used", "allowance", "LLM requests", "tokens"].map((h) => node("th", { text: h })));
      const rows = m.meta.phases.filter((p) => m.ledger[p]).map((p) => {
        const r = m.ledger[p];
        return node("tr", {}, node("td", { text: p }), node("td", { text: seconds(r.used) }), node("td", { text: seconds(r.allowance) }),
          node("td", { text: String(r.requests || 0) }), node("td", { text: String(r.tokens || 0) }));
      });
      const cost = node("tr", {}, node("td", { text: "cost" }), node("td", { colspan: "4", text: `$${Number(m.cost || 0).toFixed(4)}` }));
      document.getElementById("ledger").replaceChildren(node("thead", {}, head), node("tbody", {}, ...rows, cost));
    }

    result() {
      const r = this.mission.result || {}, id = this.mission.meta.id;
      const items = [
        ["CV", number(r.cv_score)], ["public", number(r.public_score)], ["private", number(r.private_score)],
        ["rank", r.rank ? `${r.rank} of ${r.teams}` : "–"], ["percentile", r.percentile === null || r.percentile === undefined ? "–" : `${r.percentile}`],
        ["medal", r.medal || "none"],
      ];
      const list = [];
      for (const [name, value] of items) list.push(node("dt", { text: name }), node("dd", { "data-field": name, text: value }));
      if (this.live && (r.submission_path || this.mission.status === "succeeded")) {
        list.push(node("dt", { text: "files" }), node("dd", {},
          node("a", { href: `/missions/${encodeURIComponent(id)}/artifacts/solution.py`, text: "solution.py" }), " ",
          node("a", { href: `/missions/${encodeURIComponent(id)}/artifacts/submission.csv`, text: "submission.csv" })));
      } else if (r.solution_path) {
        list.push(node("dt", { text: "files" }), node("dd", { text: `${r.solution_path}, ${r.submission_path}` }));
      }
      document.getElementById("result").replaceChildren(...list);
    }

    events() {
      const atBottom = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 8;
      const fresh = this.mission.events.slice(this.logged);
      this.logged = this.mission.events.length;
      for (const e of fresh) {
        if (!this.types.has(e.type)) { this.types.add(e.type); this.filter.append(node("option", { value: e.type, text: e.type })); }
        const text = e.data.message || e.data.recipe || e.data.reason || e.data.error || "";
        const item = node("li", { "data-type": e.type, "data-seq": String(e.seq) },
          node("span", { class: "seq", text: String(e.seq) }), node("span", { class: "type", text: e.type }),
          node("span", { class: "phase", text: e.phase || "" }), node("span", { class: "text", text }));
        item.hidden = this.filter.value !== "" && this.filter.value !== e.type;
        this.log.append(item);
      }
      if (atBottom) this.log.scrollTop = this.log.scrollHeight;
    }

    applyFilter() {
      for (const item of this.log.children) item.hidden = this.filter.value !== "" && this.filter.value !== item.dataset.type;
    }
  }

  function csrf() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  function wireActions(mission, page) {
    const error = document.getElementById("action-error");
    for (const button of document.querySelectorAll("#actions button")) {
      button.addEventListener("click", async () => {
        error.hidden = true;
        const response = await fetch(`/missions/${encodeURIComponent(mission.meta.id)}/${button.dataset.action}`, {
          method: "POST", credentials: "same-origin",
          headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() }, body: "{}",
        });
        if (!response.ok) {
          let detail = `HTTP ${response.status}`;
          try { detail = (await response.json()).detail || detail; } catch (ignored) { /* not JSON */ }
          error.textContent = detail;
          error.hidden = false;
          return;
        }
        const body = await response.json();
        if (body.status) { mission.status = body.status; page.schedule(); }
        if (button.dataset.action === "resume" && mission.ended) connect(mission, page, true);
      });
    }
  }

  /* The live stream: EventSource resumes from the last id by itself; we close it on the terminal event, and the
     server answers 204 to a stream asked after the end, which also stops a reconnect. */
  function connect(mission, page, restart) {
    if (restart) { mission.ended = false; }
    AgentK.streams = (AgentK.streams || 0) + 1;
    const source = new EventSource(`/missions/${encodeURIComponent(mission.meta.id)}/events?after=${mission.lastSeq}`, { withCredentials: true });
    const take = (message) => {
      const event = JSON.parse(message.data);
      if (mission.add(event)) page.schedule();
    };
    for (const type of mission.meta.event_types) source.addEventListener(type, take);
    // The server ends the stream after the mission's last terminal event (an earlier one, before a resume, does
    // not end it); a stream that closes there is not reopened.
    source.addEventListener("error", () => { if (mission.ended) source.close(); });
    AgentK.source = source;
  }

  AgentK.mission = function ({ live }) {
    const mission = new Mission(JSON.parse(document.getElementById("meta").textContent));
    const started = performance.now();
    for (const event of JSON.parse(document.getElementById("events").textContent)) mission.add(event);
    const page = new Page(mission, live);
    page.render();
    AgentK.renderMs = performance.now() - started;
    AgentK.state = mission;
    if (!live) return;
    wireActions(mission, page);
    if (!mission.ended) connect(mission, page, false);
    setInterval(() => { if (!mission.ended && mission.segments.some((s) => s.end === null)) page.timeline(); }, 500);
  };
})(window.AgentK);
