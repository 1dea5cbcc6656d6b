package campaign

import (
	"os"
	"testing"

	"github.com/parley-voice/parley/internal/store/postgres/pgtest"
)

// TestMain drops the PostgreSQL schemas pgtest kept for reuse.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m).Run()) }
