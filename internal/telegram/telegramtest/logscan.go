package telegramtest

import (
	"strings"

	"transcriber/internal/logscan"
	"transcriber/internal/speechkit/speechkittest"
	"transcriber/internal/storage/s3/s3test"
)

// LogScan is a log scan (package logscan) that also knows the secrets of
// the in-process servers the bot's tests run against.
type LogScan = logscan.Scan

// NewLogScan returns a scan that fails the run on a line carrying the bot
// token (whole, or the part after its colon), the in-process S3 server's
// secret key or the SpeechKit fake's API key, besides every secret that
// logscan knows by its shape.
func NewLogScan() *LogScan {
	return logscan.New().
		Secret("bot token", Token, strings.SplitN(Token, ":", 2)[1]).
		Secret("S3 secret key", s3test.SecretAccessKey).
		Secret("SpeechKit API key", speechkittest.TestKey)
}
