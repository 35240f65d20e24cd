// aeon ui: live updates (server-sent events) and the argument editor's check. The page's policy runs no inline
// script, only this file, and everything it puts into the page is HTML the server rendered and escaped.
"use strict";

(function () {
  const live = document.getElementById("live");
  const editor = document.querySelector("form[data-check]");
  let edited = false;

  if (live && live.dataset.feed) {
    const feed = new EventSource(live.dataset.feed);
    feed.addEventListener("update", (event) => {
      const open = new Set([...live.querySelectorAll("details[open]")].map((d) => d.id).filter(Boolean));
      live.innerHTML = event.data;
      open.forEach((id) => document.getElementById(id)?.setAttribute("open", ""));
    });
    feed.addEventListener("status", (event) => {
      // waiting for a decision, or no longer: the approval form comes or goes with a reload (not while editing)
      const waits = (status) => status === "awaiting_approval";
      if (waits(event.data) !== waits(live.dataset.status) && !edited) {
        window.location.reload();
      }
      live.dataset.status = event.data;
    });
    feed.addEventListener("end", () => feed.close());
  }

  if (editor) {
    const args = editor.querySelector("textarea[name=args]");
    const problems = editor.querySelector(".problems");
    const show = (items) => {
      problems.replaceChildren(...items.map((text) => {
        const li = document.createElement("li");
        li.textContent = text;
        return li;
      }));
    };
    args.addEventListener("input", () => {
      edited = true;
      try {
        JSON.parse(args.value);
        show([]);
      } catch (error) {
        show([`not JSON yet: ${error.message}`]);
      }
    });
    editor.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        JSON.parse(args.value);
      } catch (error) {
        show([`the edited arguments are not JSON: ${error.message}`]);
        return;
      }
      const body = new FormData(editor);
      const answer = await fetch(editor.dataset.check, { method: "POST", body, credentials: "same-origin" });
      const found = answer.ok ? (await answer.json()).problems : [`the check failed (${answer.status})`];
      if (found.length) {
        show(found);
        return;
      }
      show([]);
      editor.submit();
    });
  }
})();
