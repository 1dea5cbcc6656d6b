// The talk page: a WebRTC call from this browser to an agent. The offer is
// complete (made after ICE gathering, no trickle) and carries a data
// channel, over which hang-ups travel both ways; the dashboard answers it
// at POST /agents/{id}/talk and the page polls the call's transcript.
(function () {
  "use strict";
  var root = document.getElementById("talk");
  if (!root) return;
  var agent = root.dataset.agent, csrf = root.dataset.csrf;
  var startButton = document.getElementById("talk-start");
  var hangupButton = document.getElementById("talk-hangup");
  var statusText = document.getElementById("talk-status");
  var errorBox = document.getElementById("talk-error");
  var callLine = document.getElementById("talk-call");
  var callLink = document.getElementById("talk-call-link");
  var audio = document.getElementById("talk-audio");
  var transcript = document.getElementById("talk-transcript");
  var empty = document.getElementById("talk-empty");
  var pc = null, mic = null, callId = "", poller = 0, shown = 0, ended = false;

  var statusWords = {
    INITIATED: "Calling…", QUEUED: "Calling…", RINGING: "Connecting…",
    IN_PROGRESS: "Connected: talk to the agent.", COMPLETED: "The call has ended.",
    FAILED: "The call failed.", NO_ANSWER: "The call was not answered.", BUSY: "The line was busy.",
    CANCELED: "The call was canceled."
  };

  function setStatus(text) { statusText.textContent = text; }

  function showError(message) {
    errorBox.textContent = message;
    errorBox.hidden = false;
  }

  // finish releases the microphone and the connection; the call's record
  // keeps being polled until the server has ended it too.
  function finish(text) {
    setStatus(text);
    if (ended) return;
    ended = true;
    if (pc) pc.close();
    if (mic) mic.getTracks().forEach(function (t) { t.stop(); });
    hangupButton.disabled = true;
    startButton.disabled = false;
  }

  function render(lines) {
    for (; shown < lines.length; shown++) {
      var li = document.createElement("li");
      li.className = lines[shown].role;
      var who = document.createElement("span");
      who.className = "speaker hint";
      who.textContent = lines[shown].role === "user" ? "You" : "Agent";
      li.appendChild(who);
      li.appendChild(document.createTextNode(lines[shown].text));
      transcript.appendChild(li);
    }
    empty.hidden = shown > 0;
  }

  function poll() {
    fetch("/agents/" + agent + "/talk/" + callId, {headers: {Accept: "application/json"}, credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (state) {
        if (!state) return;
        render(state.lines);
        var final = ["COMPLETED", "FAILED", "NO_ANSWER", "BUSY", "CANCELED"].indexOf(state.status) >= 0;
        if (final) {
          clearInterval(poller);
          poller = 0;
          finish(statusWords[state.status] + (state.hangupCause ? " (" + state.hangupCause + ")" : ""));
        } else if (!ended) {
          setStatus(statusWords[state.status] || state.status);
        }
      })
      .catch(function () {});
  }

  function waitForGathering() {
    if (pc.iceGatheringState === "complete") return Promise.resolve();
    return new Promise(function (done) {
      pc.addEventListener("icegatheringstatechange", function () {
        if (pc.iceGatheringState === "complete") done();
      });
    });
  }

  // offer posts the complete offer; a failure rejects with a message for people.
  function offer() {
    return fetch("/agents/" + agent + "/talk", {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": csrf},
      body: JSON.stringify({sdp: pc.localDescription.sdp})
    }).then(function (r) {
      var json = (r.headers.get("Content-Type") || "").indexOf("application/json") === 0;
      if (!json) throw new Error(r.status === 403
        ? "Your session ended or this page is out of date. Reload the page (sign in again if asked) and try again."
        : "The server refused the call (" + r.status + ").");
      return r.json().then(function (body) {
        if (!r.ok) throw new Error(body.error);
        return body;
      });
    });
  }

  function start() {
    if (poller) clearInterval(poller);
    poller = 0;
    startButton.disabled = true;
    errorBox.hidden = true;
    callLine.hidden = true;
    transcript.textContent = "";
    shown = 0;
    empty.hidden = false;
    ended = false;
    setStatus("Asking for your microphone…");
    if (!navigator.mediaDevices || !window.RTCPeerConnection) {
      showError("This browser cannot make calls from a web page (it needs WebRTC and a secure page: https or localhost).");
      finish("Not connected.");
      return;
    }
    navigator.mediaDevices.getUserMedia({audio: true}).then(function (stream) {
      mic = stream;
      pc = new RTCPeerConnection();
      var hangups = pc.createDataChannel("parley");
      hangups.onclose = function () { finish("The call has ended."); };
      stream.getTracks().forEach(function (t) { pc.addTrack(t, stream); });
      pc.ontrack = function (e) { audio.srcObject = e.streams[0] || new MediaStream([e.track]); };
      pc.onconnectionstatechange = function () {
        if (pc.connectionState === "failed") {
          showError("The audio connection failed: this browser could not reach the server's media ports (see docs/operations.md, \"Browser calls\").");
          finish("The call failed.");
        }
      };
      setStatus("Preparing the call…");
      return pc.createOffer().then(function (o) { return pc.setLocalDescription(o); })
        .then(waitForGathering).then(offer).then(function (answer) {
          callId = answer.callId;
          callLink.href = "/calls/" + callId;
          callLine.hidden = false;
          hangupButton.disabled = false;
          setStatus("Connecting…");
          poller = setInterval(poll, 1000);
          return pc.setRemoteDescription({type: "answer", sdp: answer.sdp});
        });
    }, function (err) {
      throw new Error(err && (err.name === "NotAllowedError" || err.name === "SecurityError")
        ? "The microphone is blocked: allow this page to use it (the icon in the address bar) and try again."
        : "No microphone could be opened" + (err && err.message ? ": " + err.message : "."));
    }).catch(function (err) {
      showError(err.message);
      finish("Not connected.");
      if (poller) {
        clearInterval(poller);
        poller = 0;
      }
    });
  }

  startButton.addEventListener("click", start);
  // Hanging up closes the connection and its data channel: the server ends
  // the call (USER_ENDED) and the poll shows it.
  hangupButton.addEventListener("click", function () { finish("Hanging up…"); });
  window.addEventListener("pagehide", function () { if (pc) pc.close(); });
})();
