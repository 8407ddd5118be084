package sqlite_test

import (
	"testing"

	"transcriber/internal/clock"
	"transcriber/internal/status/statustest"
	"transcriber/internal/store/sqlite"
)

func TestStatusContract(t *testing.T) {
	statustest.Run(t, func(t *testing.T, clk clock.Clock) statustest.Stores {
		db := openDB(t, clk)
		return statustest.Stores{Jobs: sqlite.NewJobStore(db), Outbox: sqlite.NewOutbox(db)}
	})
}
