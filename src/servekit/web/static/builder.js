// servekit command builder: update the page in place when a choice changes, copy buttons.
// The page works without this file: the form is a plain GET form rendered on the server.
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var sequence = 0;

  function status(text) {
    var box = document.getElementById("status");
    if (!box) return;
    box.textContent = text;
    window.setTimeout(function () { if (box.textContent === text) box.textContent = ""; }, 2000);
  }

  function formQuery(form) {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, key) {
      if (value !== "") params.append(key, value);
    });
    return params.toString();
  }

  function swapMain(html, url, push) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var fresh = doc.querySelector("main");
    var current = document.querySelector("main");
    if (!fresh || !current) return;
    var focused = document.activeElement && document.activeElement.id;
    var tabs = Array.prototype.map.call(current.querySelectorAll(".tab-radio:checked"), function (r) { return r.id; });
    current.replaceWith(fresh);
    tabs.forEach(function (id) {  // the tab that was open stays open
      var again = document.getElementById(id);
      if (again) again.checked = true;
    });
    document.title = doc.title;
    var canonical = fresh.getAttribute("data-canonical") || url;
    if (push) window.history.pushState(null, "", canonical);
    else window.history.replaceState(null, "", canonical);
    if (focused) {
      var again = document.getElementById(focused);
      if (again) again.focus();
    }
    document.body.setAttribute("data-updated", String(sequence));
  }

  function load(url, push) {
    var mine = ++sequence;
    document.body.setAttribute("aria-busy", "true");
    return fetch(url, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
      .then(function (response) { return response.text(); })
      .then(function (html) { if (mine === sequence) swapMain(html, url, push); })
      .catch(function () { window.location.assign(url); })
      .finally(function () { if (mine === sequence) document.body.removeAttribute("aria-busy"); });
  }

  function copyText(text) {
    if (navigator.clipboard && navigator.clipboard.writeText) {
      return navigator.clipboard.writeText(text);
    }
    var area = document.createElement("textarea");
    area.value = text;
    document.body.appendChild(area);
    area.select();
    document.execCommand("copy");
    area.remove();
    return Promise.resolve();
  }

  document.addEventListener("change", function (event) {
    var form = event.target.form;
    if (!form || form.id !== "builder") return;
    load("/?" + formQuery(form), true);
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.id !== "builder") return;
    event.preventDefault();
    load("/?" + formQuery(form), true);
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button.copy") : null;
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var text = source.textContent;
    copyText(text).then(function () {
      button.setAttribute("data-copied", text);
      status("Copied");
    }, function () { status("Copy failed: select the text and copy it"); });
  });

  window.addEventListener("popstate", function () {
    if (window.location.pathname === "/") load(window.location.href, false);
  });
})();
