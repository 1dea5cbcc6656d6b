package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"
)

// chromium is Debian's browser (scripts/packages.txt).
const chromium = "/usr/bin/chromium"

// browser is the one browser every test of the package opens tabs in;
// nil when chromium is missing outside CI.
var browser context.Context

func TestMain(m *testing.M) {
	if _, err := exec.LookPath(chromium); err != nil {
		if os.Getenv("CI") == "true" {
			fmt.Fprintln(os.Stderr, "chromium is missing: CI must run the browser tests (scripts/deps.sh installs it)")
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "chromium is missing: skipping the browser tests (apt-get install chromium)")
		os.Exit(m.Run()) // each test skips
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // tests run as root in containers
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		fmt.Fprintln(os.Stderr, "start chromium:", err)
		cancel()
		cancelAlloc()
		os.Exit(1)
	}
	browser = ctx
	code := m.Run()
	cancel()
	cancelAlloc()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
