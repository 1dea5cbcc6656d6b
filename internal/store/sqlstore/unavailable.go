package sqlstore

import (
	"fmt"

	"github.com/parley-voice/parley/internal/store"
)

// wrap is err, a failure of what, wrapped with context: as
// store.ErrUnavailable when the dialect says the database could not take
// the work (the driver's message kept as text, as tx.fail keeps it), else
// as it is.
func wrap(d Dialect, err error, what string) error {
	if d.Unavailable(err) {
		return fmt.Errorf("%s: %w: %v", what, store.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
