// The plan view: the physical plan as a tree of steps, each with its
// mode, estimated and (EXPLAIN ANALYZE) actual rows, time and fabric
// traffic, drawn as bars against the largest step; per-shard bars when
// the plan carries per-shard figures.
import { $, el, bar, fmtInt, fmtBytes, fmtMs } from "./util.js";

// showPlan renders plan (web.Plan JSON) into the plan pane.
export function showPlan(plan) {
  const sum = [];
  sum.push(plan.form ? plan.form.toUpperCase() : "query");
  if (plan.shards) sum.push(plan.shards + " shard" + (plan.shards === 1 ? "" : "s"));
  if (plan.analyzed) {
    sum.push(fmtInt(plan.rows || 0) + " row" + (plan.rows === 1 ? "" : "s"));
    sum.push(fmtMs(plan.elapsedMs || 0));
    const f = plan.fabric || {};
    sum.push(fmtInt(f.reads || 0) + " fabric reads, " + fmtInt(f.messages || 0) + " messages, " + fmtBytes((f.readBytes || 0) + (f.messageBytes || 0)));
  } else {
    sum.push("estimated " + fmtInt(Math.round(lastEst(plan.steps || []))) + " rows (not run: use Explain analyze for actual figures)");
  }
  $("plan-summary").textContent = sum.join(" · ");

  // Scales: the largest figure of any step.
  const all = [];
  const walk = (steps) => steps.forEach((s) => { all.push(s); walk(s.children || []); });
  walk(plan.steps || []);
  const max = {
    rows: Math.max(1, ...all.map((s) => Math.max(s.estRows || 0, s.actualRows || 0))),
    ms: Math.max(1e-9, ...all.map((s) => s.elapsedMs || 0)),
    bytes: Math.max(1, ...all.map((s) => s.fabric ? (s.fabric.readBytes || 0) + (s.fabric.messageBytes || 0) : 0)),
  };
  const tree = $("plan");
  tree.replaceChildren();
  const head = el("div", { className: "plan-row plan-head", "aria-hidden": "true" },
    el("span", { className: "c-step" }, "step"), el("span", { className: "c-mode" }, "mode"),
    el("span", { className: "c-rows" }, "rows (est. / actual)"), el("span", { className: "c-time" }, "time"),
    el("span", { className: "c-fabric" }, "fabric (reads · messages · bytes)"));
  tree.appendChild(head);
  const add = (parent, step, label, depth) => {
    const item = el("div", { role: "treeitem", className: "plan-item", "aria-level": String(depth + 1), tabindex: "-1" });
    const row = el("div", { className: "plan-row" });
    const stepCell = el("span", { className: "c-step" });
    stepCell.style.paddingLeft = depth * 1.2 + "em";
    stepCell.appendChild(el("span", { className: "step-n" }, label + " "));
    stepCell.appendChild(el("span", { className: "step-op" }, step.op || ""));
    if (step.pattern) stepCell.appendChild(el("code", { className: "step-pattern" }, " " + step.pattern));
    if (step.start && !String(step.pattern || "").startsWith(step.start)) stepCell.appendChild(el("span", { className: "step-start" }, " from " + step.start));
    if (step.direction) stepCell.appendChild(el("span", { className: "step-dir" }, " (" + step.direction + ")"));
    row.appendChild(stepCell);
    row.appendChild(el("span", { className: "c-mode" }, step.mode ? el("span", { className: "mode mode-" + step.mode }, step.mode) : ""));
    const rows = el("span", { className: "c-rows" });
    const est = Math.round(step.estRows || 0);
    rows.appendChild(el("span", { className: "fig" }, fmtInt(est) + (step.actualRows != null ? " / " + fmtInt(step.actualRows) : "")));
    rows.appendChild(bar(step.estRows || 0, max.rows, "est", "estimated " + est + " rows"));
    if (step.actualRows != null) {
      rows.appendChild(bar(step.actualRows, max.rows, "act", "actual " + step.actualRows + " rows"));
      const off = misestimate(step.estRows || 0, step.actualRows);
      if (off) rows.appendChild(el("span", { className: "misest", title: "estimate off by " + off }, " ×" + off));
    }
    row.appendChild(rows);
    const time = el("span", { className: "c-time" });
    if (step.elapsedMs != null && plan.analyzed) {
      time.appendChild(el("span", { className: "fig" }, fmtMs(step.elapsedMs)));
      time.appendChild(bar(step.elapsedMs, max.ms, "time", fmtMs(step.elapsedMs)));
    }
    row.appendChild(time);
    const fab = el("span", { className: "c-fabric" });
    if (step.fabric) {
      const f = step.fabric, b = (f.readBytes || 0) + (f.messageBytes || 0);
      fab.appendChild(el("span", { className: "fig" }, fmtInt(f.reads) + " · " + fmtInt(f.messages) + " · " + fmtBytes(b)));
      fab.appendChild(bar(b, max.bytes, "bytes", fmtBytes(b) + " over the fabric"));
    }
    row.appendChild(fab);
    item.appendChild(row);
    if (step.shards && step.shards.length > 1) item.appendChild(shardBars(step.shards));
    parent.appendChild(item);
    const kids = step.children || [];
    if (kids.length) {
      const group = el("div", { role: "group" });
      kids.forEach((ch, i) => add(group, ch, label + "." + (i + 1), depth + 1));
      item.appendChild(group);
      item.setAttribute("aria-expanded", "true");
      row.addEventListener("click", () => {
        const open = item.getAttribute("aria-expanded") === "true";
        item.setAttribute("aria-expanded", open ? "false" : "true");
        group.hidden = open;
      });
    }
  };
  (plan.steps || []).forEach((s, i) => add(tree, s, String(i + 1), 0));
  const first = tree.querySelector("[role=treeitem]");
  if (first) first.tabIndex = 0;
  const notes = $("plan-notes");
  notes.replaceChildren();
  (plan.notes || []).forEach((n) => notes.appendChild(el("li", null, n)));
}

// shardBars draws a step's per-shard rows and fabric bytes.
function shardBars(shards) {
  const maxRows = Math.max(1, ...shards.map((s) => s.rows || 0));
  const maxBytes = Math.max(1, ...shards.map((s) => (s.readBytes || 0) + (s.messageBytes || 0)));
  const box = el("div", { className: "shard-bars", role: "group", "aria-label": "per shard" });
  shards.forEach((s, i) => {
    const b = (s.readBytes || 0) + (s.messageBytes || 0);
    box.appendChild(el("div", { className: "shard-row" },
      el("span", { className: "shard-n" }, "shard " + (s.shard ?? i)),
      el("span", { className: "fig" }, fmtInt(s.rows || 0) + " rows"), bar(s.rows || 0, maxRows, "act", (s.rows || 0) + " rows on shard " + i),
      el("span", { className: "fig" }, fmtInt(s.reads || 0) + " reads · " + fmtInt(s.messages || 0) + " msgs · " + fmtBytes(b)), bar(b, maxBytes, "bytes", fmtBytes(b) + " on shard " + i)));
  });
  return box;
}

function lastEst(steps) { return steps.length ? steps[steps.length - 1].estRows || 0 : 0; }

// misestimate is "10" when est and actual differ by 10× or more.
function misestimate(est, act) {
  const a = Math.max(act, 1), e = Math.max(est, 1);
  const r = a > e ? a / e : e / a;
  return r >= 10 ? String(Math.round(r)) : "";
}

// Keyboard navigation of the tree: up/down move, left/right fold.
export function initPlanKeys() {
  const tree = $("plan");
  tree.addEventListener("keydown", (e) => {
    const items = [...tree.querySelectorAll("[role=treeitem]")].filter((x) => x.offsetParent !== null);
    const cur = document.activeElement.closest("[role=treeitem]");
    const i = items.indexOf(cur);
    if (i < 0) return;
    let next = null;
    if (e.key === "ArrowDown") next = items[i + 1];
    else if (e.key === "ArrowUp") next = items[i - 1];
    else if ((e.key === "ArrowLeft" || e.key === "ArrowRight" || e.key === "Enter") && cur.hasAttribute("aria-expanded")) {
      const open = cur.getAttribute("aria-expanded") === "true";
      if ((e.key === "ArrowLeft") === open || e.key === "Enter") cur.querySelector(".plan-row").click();
    }
    if (next) {
      e.preventDefault();
      items.forEach((x) => (x.tabIndex = -1));
      next.tabIndex = 0;
      next.focus();
    }
  });
}
