// The report beside the editor: the verdict, the peak in three views with its band, the
// charts the HTML report draws (SVG from the engine, which escapes every string it puts
// in), the levers ranked by GiB saved with their edits, and every file's findings.
// Everything else is built with textContent: file text never becomes markup.

const VERDICT_WORDS = {
  fits: "fits",
  tight: "fits, tightly",
  "may-exceed": "may not fit (at the longest samples)",
  exceeds: "does not fit",
};

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data")) node.setAttribute(key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child != null) node.append(child);
  }
  return node;
}

const gib = (n) => `${n.toFixed(2)} GiB`;

/** Renders the estimate of the active file into `container`. */
export function renderReport(container, answer, active, info) {
  const estimate = answer.estimate;
  const out = [];
  if (!estimate) {
    const file = answer.files.find((f) => f.name === active);
    const why = file?.format === "unknown" || !file ? "oomlint does not recognise this file as a training config" : "no estimate for this file (its findings say why)";
    out.push(el("p", { class: "no-estimate" }, `${active}: ${why}.`));
    container.replaceChildren(...out);
    return;
  }
  const model = estimate.model ? `${estimate.model.name}` : "an unknown model";
  const params = (n) => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} B` : `${(n / 1e6).toFixed(1)} M`);
  out.push(
    el(
      "p",
      { class: "facts" },
      `${model}: ${params(estimate.parameters)} parameters, ${params(estimate.trainable_parameters)} trainable`,
      estimate.model ? el("span", { class: "provenance" }, ` (${estimate.model.provenance})`) : null,
    ),
  );
  if (estimate.verdict && estimate.gpu) {
    const words = VERDICT_WORDS[estimate.verdict] ?? estimate.verdict;
    const headroom = estimate.headroom_gib;
    out.push(
      el(
        "p",
        { class: `verdict ${estimate.verdict}`, "data-verdict": estimate.verdict },
        el("strong", {}, words),
        ` on the ${estimate.gpu.name} (${gib(estimate.gpu.gib)}): `,
        headroom >= 0 ? `${gib(headroom)} free` : `short by ${gib(-headroom)}`,
      ),
    );
    if (estimate.gpu.note) out.push(el("p", { class: "gpu-note" }, estimate.gpu.note));
  } else {
    out.push(el("p", { class: "verdict none" }, "Pick a GPU to judge the fit."));
  }
  const peak = estimate.peak;
  out.push(
    el(
      "dl",
      { class: "views" },
      el("dt", {}, "allocated"),
      el("dd", {}, el("span", { "data-testid": "peak-allocated-gib" }, peak.allocated_gib.toFixed(2)), " GiB"),
      el("dt", {}, "reserved"),
      el("dd", {}, el("span", { "data-testid": "peak-reserved-gib" }, peak.reserved_gib.toFixed(2)), " GiB"),
      el("dt", {}, "device"),
      el(
        "dd",
        {},
        el("span", { "data-testid": "peak-device-gib" }, peak.device_gib.toFixed(2)),
        ` GiB (band ${estimate.band.low_gib.toFixed(2)}–${estimate.band.high_gib.toFixed(2)})`,
      ),
      el("dt", {}, "peak phase"),
      el("dd", {}, peak.phase),
    ),
  );
  const charts = el("div", { class: "charts", "data-testid": "charts" });
  charts.innerHTML = [estimate.charts.views, estimate.charts.world_sizes, ...estimate.charts.phases]
    .filter(Boolean)
    .join("\n");
  out.push(charts);
  if (estimate.levers.length > 0) {
    const list = el("ol", { class: "levers" });
    estimate.levers.forEach((lever, index) => {
      const item = el(
        "li",
        { "data-lever": lever.title },
        el("strong", {}, lever.title),
        ` saves ${gib(lever.saves_gib)} (${lever.phase})`,
        lever.side_effect ? el("div", { class: "side-effect" }, lever.side_effect) : null,
      );
      lever.fixes.forEach((fix, f) => {
        if (fix.edits.length === 0) return;
        item.append(
          el("button", { "data-action": "lever", "data-index": String(index), "data-fix": String(f), title: fix.title }, "Apply"),
        );
      });
      list.append(item);
    });
    out.push(el("h3", {}, "Levers, by GiB saved"), list);
  }
  const notes = [...estimate.missing_inputs, ...estimate.notes];
  if (notes.length > 0) {
    out.push(el("h3", {}, "Assumed"), el("ul", { class: "assumed" }, ...notes.map((n) => el("li", {}, n))));
  }
  container.replaceChildren(...out);
}

/** Every file's findings, the active file's first; each with `data-rule`. */
export function renderProblems(container, answer, active) {
  const files = [...answer.files].sort((a, b) => (b.name === active) - (a.name === active));
  const items = [];
  for (const file of files) {
    if (file.error) items.push(el("li", { class: "error" }, `${file.name}: ${file.error}`));
    (file.diagnostics ?? []).forEach((d, index) => {
      const item = el(
        "li",
        { class: `problem ${d.severity}`, "data-rule": d.rule, "data-code": d.code, "data-file": file.name },
        el("button", { class: "where", "data-action": "open", "data-file": file.name }, `${file.name}:${d.range.line}:${d.range.column}`),
        " ",
        el("span", { class: "code" }, `${d.code} ${d.rule}`),
        " ",
        el("span", { class: "message" }, d.message),
      );
      d.fixes.forEach((fix, f) => {
        if (fix.edits.length === 0) return;
        item.append(
          " ",
          el(
            "button",
            { class: "fix", "data-action": "fix", "data-file": file.name, "data-index": String(index), "data-fix": String(f) },
            fix.title,
          ),
        );
      });
      items.push(item);
    });
  }
  if (items.length === 0) items.push(el("li", { class: "none" }, "No problems found."));
  container.replaceChildren(el("h3", {}, "Problems"), el("ul", {}, ...items));
}
