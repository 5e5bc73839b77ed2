// The playground page: files in tabs, each in a CodeMirror editor; every change runs the
// engine over the whole project and updates the diagnostics, the report and the charts.
// Nothing leaves the browser: the page fetches only its own files (its content security
// policy allows nothing else), and the project lives in the URL fragment, which browsers
// never send.

import { EditorView, basicSetup } from "codemirror";
import { EditorState } from "@codemirror/state";
import { keymap, hoverTooltip } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { setDiagnostics, lintGutter } from "@codemirror/lint";
import { StreamLanguage } from "@codemirror/language";
import { yaml } from "@codemirror/lang-yaml";
import { json } from "@codemirror/lang-json";
import { python } from "@codemirror/lang-python";
import { shell } from "@codemirror/legacy-modes/mode/shell";
import { toml } from "@codemirror/legacy-modes/mode/toml";
import { Engine } from "./engine.js";
import { parseFragment, toFragment } from "./state.js";
import { renderReport, renderProblems } from "./report.js";
import { markdownToHtml } from "./markdown.js";

const $ = (selector) => document.querySelector(selector);

/** The editor's language for a file name. */
function language(name) {
  const ext = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  if (ext === "yaml" || ext === "yml") return yaml();
  if (ext === "json" || ext === "conf" || ext === "ipynb") return json();
  if (ext === "py") return python();
  if (ext === "toml") return StreamLanguage.define(toml);
  if (["sh", "bash", "slurm", "sbatch", "env"].includes(ext)) return StreamLanguage.define(shell);
  return [];
}

class Playground {
  /** The editor comes up first; the engine joins when its WebAssembly has compiled (`attach`). */
  constructor(examples) {
    this.engine = null;
    this.info = null;
    this.examples = examples;
    /** @type {Map<string, EditorState>} one state per file: its own undo history */
    this.states = new Map();
    this.order = [];
    this.active = "";
    this.gpu = "";
    this.answer = null;
    this.scheduled = false;
    this.view = new EditorView({ parent: $("#editor"), state: EditorState.create({ doc: "" }) });
    this.bind();
  }

  /** Takes the engine: the GPU picker, the charts' style, and the first analysis. */
  attach(engine) {
    this.engine = engine;
    this.info = engine.call("info", {});
    performance.mark("oomlint-info");
    const style = document.createElement("style");
    style.textContent = this.info.chart_style;
    document.head.append(style);
    this.fillPickers();
    this.analyze();
  }

  extensions(name) {
    return [
      basicSetup,
      lintGutter(),
      keymap.of([indentWithTab]),
      language(name),
      hoverTooltip((view, pos) => this.hover(pos)),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) {
          this.states.set(this.active, update.state);
          this.schedule();
        }
      }),
    ];
  }

  fillPickers() {
    const gpu = $("#gpu");
    gpu.replaceChildren();
    gpu.append(new Option("no GPU (no verdict)", ""));
    for (const g of this.info.gpus) {
      const option = new Option(`${g.name} — ${(g.memory_bytes / 2 ** 30).toFixed(1)} GiB`, g.name);
      option.title = [g.bf16 ? "bf16" : "no bf16", g.fp8 ? "fp8" : "no fp8", g.note].filter(Boolean).join("; ");
      gpu.append(option);
    }
    const examples = $("#examples");
    examples.replaceChildren();
    examples.append(new Option("Examples…", ""));
    this.examples.forEach((example, i) => examples.append(new Option(example.title, String(i))));
  }

  bind() {
    $("#gpu").addEventListener("change", (e) => {
      this.gpu = e.target.value;
      this.analyze();
    });
    $("#examples").addEventListener("change", (e) => {
      const example = this.examples[Number(e.target.value)];
      if (example) this.load({ files: example.files, active: example.files[0].name, gpu: example.gpu ?? this.gpu });
      e.target.value = "";
    });
    $("#share").addEventListener("click", () => this.share());
    $("#new-file").addEventListener("click", () => {
      const name = prompt("File name (its extension picks the format: .yaml, .json, .sh, .py, .ipynb, .toml)");
      if (name && !this.states.has(name.trim())) this.addFile(name.trim(), "");
    });
    window.addEventListener("hashchange", () => {
      const project = parseFragment(location.hash);
      if (project) this.load(project);
    });
    $("#side").addEventListener("click", (e) => this.onReportClick(e));
  }

  /** Replaces the project. */
  load(project) {
    this.states.clear();
    this.order = [];
    for (const file of project.files) {
      this.order.push(file.name);
      this.states.set(file.name, EditorState.create({ doc: file.text, extensions: this.extensions(file.name) }));
    }
    this.gpu = project.gpu ?? "";
    this.switchTo(project.active || this.order[0]);
  }

  addFile(name, text) {
    this.order.push(name);
    this.states.set(name, EditorState.create({ doc: text, extensions: this.extensions(name) }));
    this.switchTo(name);
  }

  removeFile(name) {
    if (this.order.length <= 1) return;
    this.order = this.order.filter((n) => n !== name);
    this.states.delete(name);
    if (this.active === name) this.switchTo(this.order[0]);
    else this.analyze();
  }

  switchTo(name) {
    if (this.active && this.states.has(this.active) && this.active !== name) {
      this.states.set(this.active, this.view.state);
    }
    this.active = name;
    this.view.setState(this.states.get(name));
    this.analyze();
  }

  project() {
    return {
      files: this.order.map((name) => ({ name, text: this.textOf(name) })),
      active: this.active,
      gpu: this.gpu,
    };
  }

  textOf(name) {
    return name === this.active ? this.view.state.doc.toString() : this.states.get(name).doc.toString();
  }

  share() {
    const fragment = toFragment(this.project());
    history.replaceState(null, "", fragment);
    navigator.clipboard?.writeText(location.href).catch(() => {});
    $("#share").textContent = "Link copied";
    setTimeout(() => ($("#share").textContent = "Share"), 1500);
  }

  /** Coalesces the changes of one task into one analysis. */
  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.analyze();
    });
  }

  analyze() {
    if (!this.engine) return;
    const project = this.project();
    const answer = this.engine.call("analyze", project);
    this.answer = answer;
    // The picker shows the catalog's name for what the project names (`h100`, `NVIDIA A10G`).
    $("#gpu").value = answer.gpu ?? "";
    this.renderTabs(answer);
    if (answer.error) {
      $("#report").innerHTML = "";
      const p = document.createElement("p");
      p.className = "error";
      p.textContent = answer.error;
      $("#report").append(p);
      this.view.dispatch(setDiagnostics(this.view.state, []));
    } else {
      const file = answer.files.find((f) => f.name === this.active);
      this.view.dispatch(setDiagnostics(this.view.state, this.editorDiagnostics(file)));
      renderReport($("#report"), answer, this.active, this.info);
      renderProblems($("#problems"), answer, this.active);
    }
    performance.mark("oomlint-rendered");
    document.body.dataset.analyses = String(Number(document.body.dataset.analyses ?? 0) + 1);
  }

  editorDiagnostics(file) {
    if (!file) return [];
    const length = this.view.state.doc.length;
    const clamp = (n) => Math.max(0, Math.min(n, length));
    return file.diagnostics.map((d) => ({
      from: clamp(d.range.from),
      to: clamp(Math.max(d.range.to, d.range.from)),
      severity: d.severity === "error" ? "error" : d.severity === "warning" ? "warning" : "info",
      source: `${d.code} ${d.rule}`,
      message: [d.message, ...(d.notes ?? [])].join("\n\n"),
      actions: d.fixes
        .filter((fix) => fix.edits.length > 0)
        .map((fix) => ({ name: fix.title, apply: (view) => this.applyEdits(this.active, fix.edits) })),
    }));
  }

  /**
   * Applies one fix's edits (UTF-16 offsets of the analysed text) to `name`; an edit with a
   * `file` goes to that tab (the config a launch names, or the launch that names the config).
   * A fix whose tab is not open is not applied at all.
   */
  applyEdits(name, edits) {
    const byFile = new Map();
    for (const e of edits) {
      const target = e.file ?? name;
      if (!byFile.has(target)) byFile.set(target, []);
      byFile.get(target).push({ from: e.from, to: e.to, insert: e.insert });
    }
    if ([...byFile.keys()].some((target) => target !== this.active && !this.states.has(target))) return;
    let others = false;
    for (const [target, changes] of byFile) {
      if (target === this.active) {
        this.view.dispatch({ changes, userEvent: "input.fix" });
      } else {
        this.states.set(target, this.states.get(target).update({ changes }).state);
        others = true;
      }
    }
    if (others) this.analyze();
  }

  onReportClick(event) {
    const button = event.target.closest("button[data-action]");
    if (!button || !this.answer || this.answer.error) return;
    const { action, file, index, fix } = button.dataset;
    if (action === "lever") {
      const lever = this.answer.estimate?.levers?.[Number(index)];
      const edits = lever?.fixes?.[Number(fix ?? 0)]?.edits;
      if (edits?.length) this.applyEdits(this.active, edits);
    } else if (action === "fix") {
      const target = this.answer.files.find((f) => f.name === file);
      const edits = target?.diagnostics?.[Number(index)]?.fixes?.[Number(fix ?? 0)]?.edits;
      if (edits?.length) this.applyEdits(file, edits);
    } else if (action === "open") {
      this.switchTo(file);
    }
  }

  renderTabs(answer) {
    const tabs = $("#tabs");
    tabs.replaceChildren();
    for (const name of this.order) {
      const file = answer.files?.find((f) => f.name === name);
      const count = file?.diagnostics?.length ?? 0;
      const tab = document.createElement("div");
      tab.className = name === this.active ? "tab active" : "tab";
      tab.setAttribute("role", "tab");
      tab.dataset.file = name;
      const open = document.createElement("button");
      open.className = "tab-name";
      open.textContent = name;
      open.addEventListener("click", () => this.switchTo(name));
      tab.append(open);
      if (count > 0) {
        const badge = document.createElement("span");
        const errors = file.diagnostics.some((d) => d.severity === "error");
        badge.className = errors ? "badge error" : "badge";
        badge.textContent = String(count);
        tab.append(badge);
      }
      if (this.order.length > 1) {
        const close = document.createElement("button");
        close.className = "tab-close";
        close.title = `Remove ${name}`;
        close.textContent = "×";
        close.addEventListener("click", () => this.removeFile(name));
        tab.append(close);
      }
      tabs.append(tab);
    }
  }

  hover(pos) {
    if (!this.engine) return null;
    const answer = this.engine.call("hover", { ...this.project(), offset: pos });
    if (!answer || answer.error || !answer.markdown) return null;
    return {
      pos: answer.from,
      end: answer.to,
      above: true,
      create: () => {
        const dom = document.createElement("div");
        dom.className = "oomlint-hover";
        dom.innerHTML = markdownToHtml(answer.markdown);
        return { dom };
      },
    };
  }
}

async function main() {
  // The engine downloads and compiles (off the main thread, as it streams) while the editor
  // comes up with the project.
  const engine = fetch("oomlint_web.wasm").then((response) => Engine.load(response));
  const examples = await fetch("examples.json").then((response) => response.json());
  const playground = new Playground(examples);
  window.oomlint = playground;
  const shared = parseFragment(location.hash);
  const first = examples[0];
  playground.load(shared ?? { files: first.files, active: first.files[0].name, gpu: first.gpu ?? "" });
  playground.attach(await engine);
  document.body.dataset.ready = "true";
}

main().catch((error) => {
  const p = document.createElement("p");
  p.className = "error";
  p.textContent = `The playground could not start: ${error}`;
  document.body.prepend(p);
});
