package api

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/parley-voice/parley/internal/store/postgres/pgtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(pgtest.Main(m)) // pgtest drops the PostgreSQL schemas it kept
}
