// The call page: the transcript line playing is highlighted as the
// recording passes it, and choosing a line's time plays from there.
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

  function highlight() {
    var t = audio.currentTime, found = null;
    lines().forEach(function (li) {
      if (parseFloat(li.dataset.at) <= t) {
        found = li;
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
