package app_test

import (
	"os"
	"testing"

	"transcriber/internal/telegram/telegramtest"
)

// Every log line of the end-to-end tests goes through here, and the run
// fails if one carries the bot token.
var logs = telegramtest.NewLogScan()

func TestMain(m *testing.M) { os.Exit(logs.Run(m)) }
