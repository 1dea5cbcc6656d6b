// Campaign forms: a preview of a chosen CSV file's first rows (read in the
// browser, nothing is sent), and calling-window rows added on demand.
(function () {
  "use strict";
  var previewRows = 5;

  // rows parses CSV text (RFC 4180 quotes, CRLF or LF) into at most max
  // rows, skipping empty lines; a row cut off by the end of the text is
  // dropped unless it is the only one.
  function rows(text, max) {
    var out = [], row = [], field = "", quoted = false, i = 0, c;
    if (text.charCodeAt(0) === 0xfeff) {
      i = 1;
    }
    function endRow() {
      row.push(field);
      field = "";
      if (row.length > 1 || row[0] !== "") {
        out.push(row);
      }
      row = [];
    }
    for (; i < text.length && out.length < max; i++) {
      c = text[i];
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') {
          field += '"';
          i++;
        } else if (c === '"') {
          quoted = false;
        } else {
          field += c;
        }
      } else if (c === '"') {
        quoted = true;
      } else if (c === ",") {
        row.push(field);
        field = "";
      } else if (c === "\n") {
        endRow();
      } else if (c !== "\r") {
        field += c;
      }
    }
    if (out.length < max && (field !== "" || row.length > 0) && out.length === 0) {
      endRow();
    }
    return out;
  }

  function cell(tag, text) {
    var el = document.createElement(tag);
    el.textContent = text;
    if (tag === "th") {
      el.scope = "col";
    }
    return el;
  }

  function showPreview(input) {
    var box = document.getElementById(input.dataset.preview);
    if (!box) {
      return;
    }
    box.textContent = "";
    box.hidden = true;
    var file = input.files && input.files[0];
    if (!file) {
      return;
    }
    file.slice(0, 65536).text().then(function (text) {
      var all = rows(text, previewRows + 1);
      var p = document.createElement("p");
      p.className = "help";
      if (all.length === 0) {
        p.textContent = file.name + " is empty.";
        box.appendChild(p);
        box.hidden = false;
        return;
      }
      p.textContent = "Preview of " + file.name + ": the header and the first " + (all.length - 1) +
        " row" + (all.length === 2 ? "" : "s") + ". The server checks every row when the form is sent.";
      var table = document.createElement("table"), thead = document.createElement("thead"), tbody = document.createElement("tbody");
      var head = document.createElement("tr");
      head.appendChild(cell("th", "Line"));
      all[0].forEach(function (h) { head.appendChild(cell("th", h)); });
      thead.appendChild(head);
      all.slice(1).forEach(function (r, n) {
        var tr = document.createElement("tr");
        tr.appendChild(cell("td", String(n + 2)));
        r.forEach(function (v) { tr.appendChild(cell("td", v)); });
        tbody.appendChild(tr);
      });
      table.appendChild(thead);
      table.appendChild(tbody);
      var wrap = document.createElement("div");
      wrap.className = "table-wrap";
      wrap.appendChild(table);
      box.appendChild(p);
      box.appendChild(wrap);
      box.hidden = false;
    });
  }

  document.querySelectorAll("input[type=file][data-preview]").forEach(function (input) {
    input.addEventListener("change", function () { showPreview(input); });
    if (input.files && input.files.length) {
      showPreview(input);
    }
  });

  // Calling windows: each added row copies the blank template under the
  // next free index.
  var add = document.getElementById("add-window"), list = document.getElementById("window-rows"),
    tpl = document.getElementById("window-row-template");
  if (add && list && tpl) {
    add.hidden = false;
    add.addEventListener("click", function () {
      var n = list.children.length;
      var row = tpl.content.firstElementChild.cloneNode(true);
      row.querySelectorAll("input").forEach(function (el) {
        el.name = el.name.replace("__N__", String(n));
      });
      row.querySelector(".window-number").textContent = String(n + 1);
      row.id = "window-" + (n + 1);
      list.appendChild(row);
      var first = row.querySelector("input");
      if (first) {
        first.focus();
      }
    });
  }
}());
