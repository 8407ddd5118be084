package httpapi_test

import (
	"log/slog"
	"os"
	"testing"

	"transcriber/internal/telegram/telegramtest"
)

// Every log line of this package's tests goes through here, and the run
// fails if one carries a secret: a token's secret, a signature, a key.
var logs = telegramtest.NewLogScan()

func TestMain(m *testing.M) {
	slog.SetDefault(logs.Logger(nil))
	os.Exit(logs.Run(m))
}
