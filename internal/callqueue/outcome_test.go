package callqueue

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parley-voice/parley/internal/call"
	"github.com/parley-voice/parley/internal/model"
)

// TestEndCarriesTheOutcome: whatever ends an answered call (the far end,
// the agent, the API), the conversation's summary and metrics are written
// with the end, and the post-call webhook is the committed record: equal to
// what GET /calls/{id} answers, on both engines.
func TestEndCarriesTheOutcome(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, open(t), 5)
			summary := "The caller booked a table for two."
			out := call.Outcome{Summary: &summary, Metrics: map[string]any{
				"llm_prompt_tokens": 120, "stt_audio_duration": 4.5, "turn_latency": []map[string]any{{"turnId": "turn-1", "first_audio_ms": 812.5}},
			}}
			for _, tc := range []struct {
				name          string
				end           func(h *harness, id string, line interface{ RemoteHangup() })
				status, cause string
			}{
				{"far end hangs up", func(_ *harness, _ string, l interface{ RemoteHangup() }) { l.RemoteHangup() }, model.CallCompleted, call.CauseUserEnded},
				{"ended through the API", func(h *harness, id string, _ interface{ RemoteHangup() }) {
					if _, err := h.queue.Cancel(t.Context(), h.org.ID, id); err != nil {
						t.Fatal(err)
					}
				}, model.CallCompleted, call.CauseAPIEnded},
			} {
				placed := h.mustPlace("+14155550123")
				line := h.dialed().Answer()
				line.Reports(out)
				h.waitStatus(placed.ID, model.CallInProgress)
				tc.end(h, placed.ID, line)
				got := h.waitPost(placed.ID)
				if got.Status != tc.status || *got.HangupCause != tc.cause {
					t.Fatalf("%s: %s %s", tc.name, got.Status, *got.HangupCause)
				}
				if got.Summary == nil || *got.Summary != summary || got.Metrics["llm_prompt_tokens"] != 120.0 || got.Metrics["turn_latency"] == nil {
					t.Fatalf("%s: the record lacks the outcome: summary %v metrics %v", tc.name, got.Summary, got.Metrics)
				}
				h.posts.mu.Lock()
				body := h.posts.bodies[placed.ID]
				h.posts.mu.Unlock()
				var sent, stored map[string]any
				if err := json.Unmarshal(body, &sent); err != nil {
					t.Fatal(err)
				}
				b, _ := call.PostCallBody(got)
				if err := json.Unmarshal(b, &stored); err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(stored, sent); d != "" {
					t.Errorf("%s: the webhook differs from the stored record (-stored +sent):\n%s", tc.name, d)
				}
			}
		})
	}
}

// TestEndStoresWhatAModelWrote: a summary with a NUL and invalid UTF-8 (a
// model's bytes) and such an error message (a provider's) cannot fail the
// end's write (PostgreSQL holds neither): the call ends, with the bad
// bytes as U+FFFD, on both engines.
func TestEndStoresWhatAModelWrote(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, open(t), 5)
			summary := "Booked.\x00 Table \xff two."
			placed := h.mustPlace("+14155550123")
			line := h.dialed().Answer()
			h.waitStatus(placed.ID, model.CallInProgress)
			line.End(call.Result{Status: model.CallFailed, HangupCause: "PROVIDER_ERROR", ErrorMessage: "the model said \x00\xc0\x80",
				Outcome: call.Outcome{Summary: &summary, Metrics: map[string]any{"note": "a\x00b"}}})
			got := h.waitPost(placed.ID)
			if got.Status != model.CallFailed || got.Summary == nil || *got.Summary != "Booked.\uFFFD Table \uFFFD two." ||
				got.ErrorMessage == nil || *got.ErrorMessage != "the model said \uFFFD\uFFFD" {
				t.Fatalf("ended %s, summary %q, error %q", got.Status, deref(got.Summary), deref(got.ErrorMessage))
			}
		})
	}
}
