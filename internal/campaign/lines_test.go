package campaign

import (
	"testing"

	"github.com/parley-voice/parley/internal/model"
)

func TestLines(t *testing.T) {
	for _, c := range []struct{ limit, pct, want int }{
		{10, 20, 8},
		{10, 0, 10},
		{10, 25, 7}, // 2.5 lines reserved: 3
		{10, 90, 1},
		{1, 20, 1}, // at least one
		{3, 20, 2},
		{100, 20, 80},
		{5, 100, 1},
		{0, 20, 1},
	} {
		if got := Lines(c.limit, c.pct); got != c.want {
			t.Errorf("Lines(%d, %d) = %d, want %d", c.limit, c.pct, got, c.want)
		}
	}
}

func TestConcurrency(t *testing.T) {
	for _, c := range []struct {
		max         *int
		limit, want int
	}{
		{nil, 10, 10},
		{new(3), 10, 3},
		{new(50), 10, 10},
		{new(10), 10, 10},
	} {
		if got := Concurrency(model.CampaignConfig{MaxConcurrency: c.max}, c.limit); got != c.want {
			t.Errorf("Concurrency(%v, %d) = %d, want %d", c.max, c.limit, got, c.want)
		}
	}
}
