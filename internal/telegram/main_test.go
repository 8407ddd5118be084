package telegram_test

import (
	"log/slog"
	"os"
	"testing"

	"transcriber/internal/telegram/telegramtest"
)

// Every log line of this package's tests goes through here, and the run
// fails if one carries the bot token.
var logs = telegramtest.NewLogScan()

func testLog(t testing.TB) *slog.Logger { return logs.Logger(t) }

func TestMain(m *testing.M) { os.Exit(logs.Run(m)) }
