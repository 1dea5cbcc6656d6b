package browsertest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	parley "github.com/parley-voice/parley"
	"github.com/parley-voice/parley/internal/api"
	"github.com/parley-voice/parley/internal/domain"
	"github.com/parley-voice/parley/internal/recording"
	"github.com/parley-voice/parley/internal/secret"
	"github.com/parley-voice/parley/internal/store"
	"github.com/parley-voice/parley/internal/store/sqlite/sqlitetest"
	"github.com/parley-voice/parley/internal/web"
	"github.com/parley-voice/parley/internal/web/screenshots"
)

// env is the API under /v1 and the dashboard at / over one SQLite store,
// as parley serve mounts them.
type env struct {
	svc domain.Services
	st  store.Store
	url string
}

func newEnv(t *testing.T) *env { return newEnvWith(t, nil) }

// newEnvWith is newEnv with setup run on the services before they are
// served (the call plane of a test that places calls).
func newEnvWith(t *testing.T, setup func(st store.Store, svc *domain.Services)) *env {
	t.Helper()
	st := sqlitetest.Open(t)
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := domain.New(st, box, 10)
	svc.Recordings = &recording.Store{Dir: t.TempDir(), PublicURL: "http://parley.test", Key: box.Derive("recording-links")}
	if setup != nil {
		setup(st, &svc)
	}
	dashboard, err := web.New(web.Config{Services: svc, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", api.New(api.Config{Services: svc, Store: st, OpenAPI: parley.OpenAPI, Logger: log}))
	mux.Handle("/", dashboard)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &env{svc: svc, st: st, url: srv.URL}
}

// tab opens a tab of the shared browser, closed when t ends. Every step
// has a deadline, so a page that never shows what a test waits for fails
// the test instead of hanging it.
func tab(t *testing.T) context.Context {
	t.Helper()
	if browser == nil {
		t.Skip("chromium is missing")
	}
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 45*time.Second)
	t.Cleanup(cancelTimeout)
	return ctx
}

// run runs the steps in order, failing the test at the first error.
func run(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// read runs an action that reads something from the page.
func read[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// screenshot takes what the window shows as docs/screenshots/name.png,
// written when PARLEY_UPDATE_SCREENSHOTS=1 or missing (package screenshots).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	screenshots.Save(t, name, read(t, ctx, chromedp.CaptureScreenshot()))
}
