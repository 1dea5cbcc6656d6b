// The call page: the transcript line playing is highlighted as the
// recording passes it, and choosing a line's time plays from there. A
// line runs from data-at (when it began) to data-end-at (when it ended);
// lines are in the order they were written, which is not always the order
// they began (a caller heard while the agent could not be interrupted).
(function () {
  "use strict";
  var audio = document.getElementById("recording");
  if (!audio) {
    return;
  }
  var current = null;

  function lines() {
    return document.querySelectorAll("#transcript li[data-at]");
  }

  // The line playing: of those begun by t, the one that ends last, as
  // far as t (a line still going counts as ending at t); of two going,
  // the one begun later. Between lines, the one that ended last stays lit.
  function highlight() {
    var t = audio.currentTime, found = null, bestEnd = -1, bestAt = -1;
    lines().forEach(function (li) {
      var at = parseFloat(li.dataset.at);
      var end = parseFloat(li.dataset.endAt);
      if (isNaN(end) || end < at) {
        end = at;
      }
      if (at > t) {
        return;
      }
      end = Math.min(end, t);
      if (end > bestEnd || (end === bestEnd && at >= bestAt)) {
        found = li;
        bestEnd = end;
        bestAt = at;
      }
    });
    if (found === current) {
      return;
    }
    if (current) {
      current.classList.remove("playing");
      current.removeAttribute("aria-current");
    }
    current = found;
    if (current) {
      current.classList.add("playing");
      current.setAttribute("aria-current", "true");
    }
  }

  document.addEventListener("click", function (e) {
    var li = e.target.closest && e.target.closest("#transcript li[data-at]");
    if (!li || (e.target.closest("code") && !e.target.closest("button"))) {
      return;
    }
    audio.currentTime = parseFloat(li.dataset.at);
    audio.play().catch(function () {});
    highlight();
  });
  audio.addEventListener("timeupdate", highlight);
  audio.addEventListener("seeked", highlight);
})();
