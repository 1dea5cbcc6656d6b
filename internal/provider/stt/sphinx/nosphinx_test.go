//go:build nosphinx

package sphinx

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// Built with -tags nosphinx, the engine is unavailable and says why (not
// which packages to install).
func TestLeftOut(t *testing.T) {
	err := Available()
	if !errors.Is(err, stt.ErrUnavailable) || !strings.Contains(err.Error(), "nosphinx") || strings.Contains(err.Error(), "install") {
		t.Errorf("Available: %v", err)
	}
	if _, err := New(Config{}).Open(context.Background(), 8000, "en"); !errors.Is(err, stt.ErrUnavailable) {
		t.Errorf("Open: %v", err)
	}
}
