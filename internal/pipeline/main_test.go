package pipeline_test

import (
	"log/slog"
	"os"
	"testing"

	"transcriber/internal/telegram/telegramtest"
)

// Every log line of this package's tests goes through here (the pipeline's
// default logger included), and the run fails if one carries a secret.
var logs = telegramtest.NewLogScan()

func TestMain(m *testing.M) {
	slog.SetDefault(logs.Logger(nil))
	os.Exit(logs.Run(m))
}
