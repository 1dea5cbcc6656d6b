package retention

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/parley-voice/parley/internal/model"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/enginetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const day = 24 * time.Hour

// fixture is a store with recordings on disk and a clock tests move.
type fixture struct {
	t    *testing.T
	ctx  context.Context
	st   store.Store
	recs *recording.Store
	now  time.Time
}

func newFixture(t *testing.T, st store.Store) *fixture {
	return &fixture{
		t: t, ctx: t.Context(), st: st, now: time.Now().UTC().Truncate(time.Millisecond),
		recs: &recording.Store{Dir: t.TempDir(), PublicURL: "http://parley.test", Key: bytes.Repeat([]byte{3}, 32)},
	}
}

func (f *fixture) org(name string, recordingDays, transcriptDays *int) model.Organization {
	f.t.Helper()
	o := model.Organization{Name: name, ConcurrencyLimit: 5, RecordingRetentionDays: recordingDays, TranscriptRetentionDays: transcriptDays}
	if err := f.st.Update(f.ctx, func(tx store.Tx) error { return tx.CreateOrg(f.ctx, &o) }); err != nil {
		f.t.Fatal(err)
	}
	return o
}

// call stores an answered call of org that ended ago before now (live when
// ago is negative), recorded on disk, with a transcript line.
func (f *fixture) call(orgID string, ago time.Duration) model.Call {
	f.t.Helper()
	id := model.NewID()
	start := f.now.Add(-ago - time.Minute)
	c := model.Call{
		ID: id, OrgID: orgID, AgentID: model.NewID(), AgentName: "Front desk", Direction: model.Inbound,
		Status: model.CallCompleted, FromNumber: "+14155550100", ToNumber: "+14155550177", Prompt: "p",
		Variables: map[string]any{}, Metrics: map[string]any{},
		Transcript:   []map[string]any{{"seq": 0.0, "role": "agent", "text": "Hello."}},
		RecordingURL: ptr(f.recs.URL(id, start)), StartedAt: &start, CreatedAt: start, UpdatedAt: start,
	}
	if ago >= 0 {
		end := f.now.Add(-ago)
		c.EndedAt = &end
	} else {
		c.Status = model.CallInProgress
	}
	if err := f.st.Update(f.ctx, func(tx store.Tx) error { return tx.CreateCall(f.ctx, &c) }); err != nil {
		f.t.Fatal(err)
	}
	w, err := f.recs.Create(orgID, id, 8000)
	if err != nil {
		f.t.Fatal(err)
	}
	w.Write(make([]int16, 160), make([]int16, 160))
	if err := w.Close(); err != nil {
		f.t.Fatal(err)
	}
	return f.get(c)
}

func (f *fixture) get(c model.Call) model.Call {
	f.t.Helper()
	got, err := store.Read(f.ctx, f.st, func(tx store.Tx) (model.Call, error) { return tx.GetCall(f.ctx, c.OrgID, c.ID) })
	if err != nil {
		f.t.Fatalf("the call record of %s: %v", c.ID, err)
	}
	return got
}

func (f *fixture) hasFile(c model.Call) bool {
	_, err := os.Stat(f.recs.Path(c.OrgID, c.ID))
	return err == nil
}

// wantCall checks what retention left of c: recording and transcript kept
// or gone, and every other field as it was.
func (f *fixture) wantCall(c model.Call, recordingKept, transcriptKept bool) {
	f.t.Helper()
	got := f.get(c)
	want := c
	if !recordingKept {
		want.RecordingURL = nil
	}
	if !transcriptKept {
		want.Transcript = []map[string]any{}
	}
	if (got.RecordingURL != nil) != (want.RecordingURL != nil) || len(got.Transcript) != len(want.Transcript) {
		f.t.Errorf("call ended %s ago: recordingUrl %v, %d transcript entries; want recording kept %v, transcript kept %v",
			f.now.Sub(*c.EndedAt), got.RecordingURL, len(got.Transcript), recordingKept, transcriptKept)
	}
	got.RecordingURL, want.RecordingURL, got.Transcript, want.Transcript = nil, nil, nil, nil
	if !equalCalls(got, want) {
		f.t.Errorf("retention changed more of call %s than its recording and transcript:\n got %+v\nwant %+v", c.ID, got, want)
	}
	if f.hasFile(c) != recordingKept {
		f.t.Errorf("call ended %s ago: recording file there %v, want %v", f.now.Sub(*c.EndedAt), f.hasFile(c), recordingKept)
	}
}

func equalCalls(a, b model.Call) bool {
	a.UpdatedAt, b.UpdatedAt = a.UpdatedAt.UTC(), b.UpdatedAt.UTC()
	return a.Status == b.Status && a.UpdatedAt.Equal(b.UpdatedAt) && a.EndedAt.Equal(*b.EndedAt) &&
		a.FromNumber == b.FromNumber && a.AgentName == b.AgentName && len(a.Metrics) == len(b.Metrics)
}

func ptr[T any](v T) *T { return &v }

// counter reads a counter from reg as /metrics shows it, by its kind
// label ("" for none).
func counter(t *testing.T, reg *prometheus.Registry, name, kind string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			label := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "kind" {
					label = l.GetValue()
				}
			}
			if label == kind {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no %s{kind=%q} in the registry", name, kind)
	return 0
}

func (f *fixture) sweeper(node string, recs Recordings, clock func() time.Time, m *Metrics) *Sweeper {
	if clock == nil {
		clock = func() time.Time { return f.now }
	}
	return New(Options{Store: f.st, Recordings: recs, Node: node, Batch: 2, LeaseTTL: time.Minute, Now: clock, Metrics: m,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

func TestSweepDeletesWhatExpired(t *testing.T) {
	for name, open := range enginetest.Engines(t, "retention") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, open(t))
			acme := f.org("acme", ptr(30), ptr(7))
			onlyTranscripts := f.org("initech", nil, ptr(1))
			forever := f.org("globex", nil, nil)
			var old []model.Call
			for range 5 { // more than a batch of 2
				old = append(old, f.call(acme.ID, 40*day))
			}
			month := f.call(acme.ID, 30*day+time.Minute)  // just past 30 days
			week := f.call(acme.ID, 10*day)               // past 7 days, within 30
			fresh := f.call(acme.ID, 6*day)               // within both
			live := f.call(acme.ID, -1)                   // has not ended
			theirs := f.call(onlyTranscripts.ID, 400*day) // its recordings are kept forever
			kept := f.call(forever.ID, 3000*day)          // nothing expires
			reg := prometheus.NewRegistry()
			s := f.sweeper("node-a", f.recs, nil, NewMetrics(reg))

			r, err := s.Sweep(f.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := (Result{Ran: true, Recordings: 6, Transcripts: 8}); r != want {
				t.Fatalf("sweep = %+v, want %+v", r, want)
			}
			for _, c := range append(old, month) {
				f.wantCall(c, false, false)
			}
			f.wantCall(week, true, false)
			f.wantCall(fresh, true, true)
			f.wantCall(theirs, true, false)
			f.wantCall(kept, true, true)
			if got := f.get(live); got.RecordingURL == nil || len(got.Transcript) != 1 || !f.hasFile(live) {
				t.Fatalf("a live call lost its recording or transcript: %+v", got)
			}
			if got := counter(t, reg, "parley_retention_deleted_total", "recording"); got != 6 {
				t.Errorf("parley_retention_deleted_total{kind=recording} = %v, want 6", got)
			}
			if got := counter(t, reg, "parley_retention_deleted_total", "transcript"); got != 8 {
				t.Errorf("parley_retention_deleted_total{kind=transcript} = %v, want 8", got)
			}

			// Nothing is left to do, until time passes.
			if r, err := s.Sweep(f.ctx); err != nil || r != (Result{Ran: true}) {
				t.Fatalf("second sweep = %+v, %v; want nothing done", r, err)
			}
			f.now = f.now.Add(22 * day)
			if r, err := s.Sweep(f.ctx); err != nil || r != (Result{Ran: true, Recordings: 1, Transcripts: 1}) {
				t.Fatalf("sweep 22 days later = %+v, %v; want the week-old call's recording and the fresh call's transcript", r, err)
			}
			f.wantCall(week, false, false)
			f.wantCall(fresh, true, false)
		})
	}
}

// failing fails to delete the recording of one call.
type failing struct {
	Recordings
	callID string
}

func (f failing) Delete(ctx context.Context, orgID, callID string) error {
	if callID == f.callID {
		return errors.New("the object store is down")
	}
	return f.Recordings.Delete(ctx, orgID, callID)
}

// A recording the store will not delete keeps its recordingUrl and stops
// its organization's recordings there, for the next pass to retry; what
// came before it is done, and other work goes on.
func TestSweepRetriesAFailedDeletion(t *testing.T) {
	for name, open := range enginetest.Engines(t, "retention") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, open(t))
			acme := f.org("acme", ptr(1), ptr(1))
			first, stuck, after := f.call(acme.ID, 9*day), f.call(acme.ID, 8*day), f.call(acme.ID, 7*day)
			reg := prometheus.NewRegistry()
			s := f.sweeper("node-a", failing{f.recs, stuck.ID}, nil, NewMetrics(reg))
			r, err := s.Sweep(f.ctx)
			if err == nil || r != (Result{Ran: true, Recordings: 1, Transcripts: 3}) {
				t.Fatalf("sweep = %+v, %v; want the first recording and every transcript, and an error", r, err)
			}
			if got := counter(t, reg, "parley_retention_errors_total", ""); got != 1 {
				t.Errorf("parley_retention_errors_total = %v, want 1", got)
			}
			f.wantCall(first, false, false)
			f.wantCall(stuck, true, false)
			f.wantCall(after, true, false)

			s = f.sweeper("node-a", f.recs, nil, nil) // the store is back
			if r, err := s.Sweep(f.ctx); err != nil || r != (Result{Ran: true, Recordings: 2}) {
				t.Fatalf("sweep once the store is back = %+v, %v", r, err)
			}
			f.wantCall(stuck, false, false)
			f.wantCall(after, false, false)
		})
	}
}

// gate holds deletions until released, telling who entered.
type gate struct {
	Recordings
	entered chan string
	release chan struct{}
	deletes atomic.Int32
}

func newGate(r Recordings) *gate {
	return &gate{Recordings: r, entered: make(chan string, 16), release: make(chan struct{})}
}

func (g *gate) Delete(ctx context.Context, orgID, callID string) error {
	g.deletes.Add(1)
	g.entered <- callID
	<-g.release
	return g.Recordings.Delete(ctx, orgID, callID)
}

type sweepResult struct {
	r   Result
	err error
}

func sweepAsync(ctx context.Context, s *Sweeper) <-chan sweepResult {
	out := make(chan sweepResult, 1)
	go func() {
		r, err := s.Sweep(ctx)
		out <- sweepResult{r, err}
	}()
	return out
}

// Two servers' sweepers on one database: while one sweeps, the other's
// pass does nothing; once it is done, the other may; a sweeper whose lease
// ran out (a paused or dead server) is taken over and writes nothing more.
func TestOneSweeperAtATime(t *testing.T) {
	for name, open := range enginetest.Engines(t, "retention") {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, open(t))
			acme := f.org("acme", ptr(1), nil)
			c := f.call(acme.ID, 2*day)

			ga, gb := newGate(f.recs), newGate(f.recs)
			a := f.sweeper("node-a", ga, nil, nil)
			b := f.sweeper("node-b", gb, nil, nil)
			doneA := sweepAsync(f.ctx, a)
			<-ga.entered // node-a is sweeping
			if r, err := b.Sweep(f.ctx); err != nil || r.Ran || gb.deletes.Load() != 0 {
				t.Fatalf("node-b swept while node-a held the lease: %+v, %v, %d deletions", r, err, gb.deletes.Load())
			}
			close(ga.release)
			if got := <-doneA; got.err != nil || got.r != (Result{Ran: true, Recordings: 1}) {
				t.Fatalf("node-a's sweep = %+v, %v", got.r, got.err)
			}
			f.wantCall(c, false, true)
			if r, err := b.Sweep(f.ctx); err != nil || r != (Result{Ran: true}) {
				t.Fatalf("node-b's sweep once node-a was done = %+v, %v; want it run, with nothing left", r, err)
			}

			// node-a stalls mid-batch past its lease; node-b takes over.
			d := f.call(acme.ID, 2*day)
			ga = newGate(f.recs)
			a = f.sweeper("node-a", ga, nil, nil)
			doneA = sweepAsync(f.ctx, a)
			<-ga.entered
			later := f.now.Add(2 * time.Minute) // node-a's lease (1 min) ran out
			b = f.sweeper("node-b", gb, func() time.Time { return later }, nil)
			doneB := sweepAsync(f.ctx, b)
			<-gb.entered // node-b holds the lease now, and is deleting d's recording too
			close(ga.release)
			if got := <-doneA; !errors.Is(got.err, errLeaseLost) || got.r.Recordings != 0 {
				t.Fatalf("node-a, back after its lease ran out = %+v, %v; want nothing written and errLeaseLost", got.r, got.err)
			}
			if got := f.get(d); got.RecordingURL == nil {
				t.Fatal("node-a wrote without the lease")
			}
			close(gb.release)
			if got := <-doneB; got.err != nil || got.r != (Result{Ran: true, Recordings: 1}) {
				t.Fatalf("node-b's sweep = %+v, %v", got.r, got.err)
			}
			f.wantCall(d, false, true)
		})
	}
}
