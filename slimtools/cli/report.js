// The timeline of tool calls: one bar per result, its height sized by its tokens, drawn from
// the JSON in #timeline-data. Cleared results are drawn faint with an orange outline; a click
// (or hover) shows the result's first lines and the placeholder the policy put in its place.
(function () {
  "use strict";
  var source = document.getElementById("timeline-data");
  if (!source) { return; }
  var data = JSON.parse(source.textContent);
  var strip = document.getElementById("strip");
  var detail = document.getElementById("detail");
  var picker = document.getElementById("run");
  var NS = "http://www.w3.org/2000/svg";
  var palette = ["#3b6fd8", "#2a9d8f", "#8e5bd6", "#c28a00", "#d15a9a", "#4d8a2f", "#6b7785"];

  function colour(tool) { return palette[tool % palette.length]; }
  function fmt(n) { return n.toLocaleString("en-US"); }
  function text(tag, value) {
    var el = document.createElement(tag);
    el.textContent = value;
    return el;
  }

  function show(run, event, rect) {
    var sel = strip.querySelector(".sel");
    if (sel) { sel.classList.remove("sel"); }
    rect.classList.add("sel");
    var tool = data.tools[event[0]];
    detail.textContent = "";
    var title = tool + ": " + fmt(event[2]) + " tokens, read at model call " + event[1];
    title += event[3] ? ", cleared at model call " + event[3] : ", never cleared";
    if (event[4]) { title += " (an error)"; }
    detail.appendChild(text("h3", title));
    var two = document.createElement("div");
    two.className = "two";
    var head = document.createElement("div");
    head.appendChild(text("strong", "First lines"));
    head.appendChild(text("pre", event[5] || "(left out to keep the report small)"));
    var place = document.createElement("div");
    place.appendChild(text("strong", "Placeholder"));
    var shown = event[3] ? (event[6] || "(left out to keep the report small)") : "(not cleared)";
    place.appendChild(text("pre", shown));
    two.appendChild(head);
    two.appendChild(place);
    detail.appendChild(two);
  }

  // One string of markup set at once and one listener for the strip: a 10,000-result
  // session draws in a fraction of the time a node and a listener per bar take.
  function draw(index) {
    var run = data.runs[index];
    var events = run.events;
    var height = 120, bar = events.length > 600 ? 3 : 6, gap = 1;
    var width = Math.max(events.length * (bar + gap), 200);
    var max = 1;
    events.forEach(function (e) { if (e[2] > max) { max = e[2]; } });
    var parts = ["<svg xmlns='" + NS + "' width='" + width + "' height='" + (height + 4) +
      "' role='img'>"];
    events.forEach(function (e, i) {
      var h = Math.max(2, Math.round(height * Math.sqrt(e[2] / max)));
      parts.push("<rect data-i='" + i + "' x='" + i * (bar + gap) + "' y='" + (height - h + 2) +
        "' width='" + bar + "' height='" + h + "' fill='" + colour(e[0]) + "'" +
        (e[3] ? " class='cleared'" : "") + "></rect>");
    });
    parts.push("</svg>");
    strip.innerHTML = parts.join("");
    strip.onclick = function (ev) {
      var i = ev.target.getAttribute && ev.target.getAttribute("data-i");
      if (i !== null && i !== undefined) { show(run, events[Number(i)], ev.target); }
    };
    strip.onmousemove = function (ev) {
      var i = ev.target.getAttribute && ev.target.getAttribute("data-i");
      if (i === null || i === undefined) { strip.title = ""; return; }
      var e = events[Number(i)];
      strip.title = data.tools[e[0]] + ": " + fmt(e[2]) + " tokens" +
        (e[3] ? " (cleared at model call " + e[3] + ")" : "");
    };
    detail.textContent = events.length ? "Click a bar to see the result and its placeholder." :
      "This run has no tool results.";
  }

  if (picker) {
    picker.addEventListener("change", function () { draw(Number(picker.value)); });
  }
  // Open on the run with the most results: the one a reader came to see.
  var first = 0;
  data.runs.forEach(function (r, i) {
    if (r.events.length > data.runs[first].events.length) { first = i; }
  });
  if (picker) { picker.value = String(first); }
  if (data.runs.length) { draw(first); }
  // How long the page took to be usable, from navigation on (read by bench_analyze).
  document.documentElement.setAttribute("data-drawn-ms", String(Math.round(performance.now())));
})();
