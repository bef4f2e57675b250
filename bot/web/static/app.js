// LLM Council: tabs and the live view. Our only script (no inline script: the page's CSP forbids it).
// Without it every panel is a section with its own heading and a running council's page reloads.
"use strict";

function makeTabs(container) {
  const panels = Array.from(container.querySelectorAll(":scope > .panel"));
  if (panels.length < 2 || container.querySelector(":scope > .tablist")) return;
  const list = document.createElement("div");
  list.className = "tablist";
  list.setAttribute("role", "tablist");
  const heading = container.querySelector(":scope > h2");
  if (heading && heading.id) list.setAttribute("aria-labelledby", heading.id);
  const tabs = panels.map((panel, i) => {
    const tab = document.createElement("button");
    tab.type = "button";
    tab.setAttribute("role", "tab");
    tab.id = panel.id + "-tab";
    tab.textContent = panel.dataset.tabLabel || "Tab " + (i + 1);
    tab.setAttribute("aria-controls", panel.id);
    panel.setAttribute("role", "tabpanel");
    panel.setAttribute("aria-labelledby", tab.id);
    panel.tabIndex = 0;
    tab.addEventListener("click", () => select(i, false));
    tab.addEventListener("keydown", (event) => {
      const moves = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: panels.length - 1 };
      if (event.key in moves) {
        event.preventDefault();
        select((moves[event.key] + panels.length) % panels.length, true);
      }
    });
    list.appendChild(tab);
    return tab;
  });
  function select(index, focus) {
    tabs.forEach((tab, i) => {
      const on = i === index;
      tab.setAttribute("aria-selected", on ? "true" : "false");
      tab.tabIndex = on ? 0 : -1;
      panels[i].hidden = !on;
    });
    if (focus) tabs[index].focus();
  }
  panels[0].before(list);
  container.classList.add("js");
  select(0, false);
}

function follow(article) {
  const status = document.getElementById("live-status");
  const stage1 = article.querySelector("#live-stage1 .live-items");
  const stage2 = article.querySelector("#live-stage2 .live-items");
  const synthesis = article.querySelector("#live-stage3 .live-synthesis");
  const live = article.querySelector("section.live");
  let streaming = null;
  const source = new EventSource(article.dataset.live);
  const fragment = (html) => {  // sanitized on the server; a template's content never runs anything
    const template = document.createElement("template");
    template.innerHTML = html;
    return template.content;
  };
  source.onmessage = (message) => {
    const event = JSON.parse(message.data);
    switch (event.kind) {
      case "queued": status.textContent = "Queued (position " + event.position + ")…"; break;
      case "started": status.textContent = "Stage 1: " + event.members.length + " members are answering…"; break;
      case "stage_started": if (event.stage === 3) live.classList.add("synthesizing"); status.textContent = ["", "Stage 1: answering…", "Stage 2: reviewing…", "Stage 3: the chairman is writing…"][event.stage]; break;
      case "member_waiting": case "member_started": {
        const waiting = event.kind === "member_waiting";
        let pending = Array.from(stage1.querySelectorAll(".pending")).find((p) => p.dataset.model === event.model);
        if (!pending) {
          pending = document.createElement("section");
          pending.className = "panel pending";
          pending.dataset.model = event.model;
          const name = document.createElement("h3");
          name.textContent = event.model;
          const note = document.createElement("p");
          note.className = "meta";
          pending.append(name, note);
          stage1.appendChild(pending);
        }
        pending.classList.toggle("waiting", waiting);
        pending.querySelector(".meta").textContent = waiting ? event.note + "…" : "answering…";
        break;
      }
      case "member_finished": case "member_failed": {
        const answer = event.answer;
        const pending = Array.from(stage1.querySelectorAll(".pending")).find(
          (p) => p.dataset.model === answer.model || p.dataset.model === answer.seat);
        if (pending) pending.replaceWith(fragment(event.html)); else stage1.appendChild(fragment(event.html));
        break;
      }
      case "round_started": status.textContent = "Round " + event.number + ": the members revise their answers…"; break;
      case "round_finished": stage1.appendChild(fragment(event.html)); break;
      case "review_finished": stage2.appendChild(fragment(event.html)); break;
      case "chairman_token":
        live.classList.add("synthesizing");
        if (!streaming) { streaming = document.createElement("div"); streaming.className = "streaming"; synthesis.appendChild(streaming); }
        streaming.textContent += event.delta;  // text, never HTML
        break;
      case "chairman_finished": synthesis.replaceChildren(fragment(event.html)); streaming = null; break;
      case "finished": source.close(); status.textContent = "Finished."; window.location.reload(); break;
    }
  };
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) window.setTimeout(() => window.location.reload(), 3000);
  };
}

function elapsed(span) {  // the live view's clock: time since the council was asked
  const since = Date.parse(span.dataset.since);
  if (Number.isNaN(since)) return;
  const tick = () => {
    const s = Math.max(0, Math.round((Date.now() - since) / 1000));
    span.textContent = "· " + (s >= 60 ? Math.floor(s / 60) + " min " + (s % 60) + " s" : s + " s") + " elapsed";
  };
  tick();
  window.setInterval(tick, 1000);
}

function copyButton(button) {  // the answer as written (its Markdown), to the clipboard
  const source = document.getElementById(button.dataset.copy);
  const said = button.parentElement.querySelector(".copied");
  if (!source) return;
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(source.value);
    } catch (_) {
      source.classList.remove("visually-hidden"); source.select(); document.execCommand("copy"); source.classList.add("visually-hidden");
    }
    if (said) said.textContent = "Copied.";
  });
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("button[data-copy]").forEach(copyButton);
  document.querySelectorAll(".elapsed[data-since]").forEach(elapsed);
  document.querySelectorAll("[data-tabs]").forEach(makeTabs);
  const live = document.querySelector("article[data-live]");
  if (live) follow(live);
});
