package localstack

import (
	"os"
	"testing"

	"transcriber/internal/telegram/telegramtest"
)

// Every log line the stacks of this package's tests write goes through
// here, and the run fails if one carries a secret: the stack's own (its
// object store's key, its upload-link secret, its token), or one logscan
// knows by its shape.
var logs = telegramtest.NewLogScan()

func TestMain(m *testing.M) { os.Exit(logs.Run(m)) }
