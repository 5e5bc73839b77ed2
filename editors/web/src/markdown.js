// The engine's hover text (Markdown: paragraphs, **bold**, *italics*, `code`, tables,
// lists, rules) as HTML. Everything is escaped first, so text from the file stays text.

const escape = (text) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

function inline(text) {
  return escape(text)
    .replace(/`([^`]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[\s(])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>");
}

const cells = (row) => row.replace(/^\||\|$/g, "").split("|").map((c) => c.trim());

export function markdownToHtml(markdown) {
  const out = [];
  for (const block of markdown.split(/\n{2,}/)) {
    const lines = block.split("\n");
    if (block.trim() === "---") {
      out.push("<hr>");
    } else if (lines.length >= 2 && lines[0].startsWith("|") && /^\|[-:| ]+\|$/.test(lines[1])) {
      const head = cells(lines[0]).map((c) => `<th>${inline(c)}</th>`).join("");
      const rows = lines
        .slice(2)
        .map((l) => `<tr>${cells(l).map((c) => `<td>${inline(c)}</td>`).join("")}</tr>`)
        .join("");
      out.push(`<table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`);
    } else if (lines.every((l) => l.startsWith("- "))) {
      out.push(`<ul>${lines.map((l) => `<li>${inline(l.slice(2))}</li>`).join("")}</ul>`);
    } else {
      out.push(`<p>${lines.map(inline).join("<br>")}</p>`);
    }
  }
  return out.join("\n");
}
