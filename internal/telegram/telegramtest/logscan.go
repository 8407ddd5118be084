package telegramtest

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
)

// LogScan collects every log line a test binary writes through its loggers
// and, when the tests are over, fails the run if a line carries the bot
// token (Token).
type LogScan struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines int
}

// NewLogScan returns an empty scan.
func NewLogScan() *LogScan { return &LogScan{} }

// Logger is a debug-level JSON logger whose lines the scan keeps.
func (s *LogScan) Logger(testing.TB) *slog.Logger {
	return slog.New(slog.NewJSONHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Write keeps p.
func (s *LogScan) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines += bytes.Count(p, []byte("\n"))
	return s.buf.Write(p)
}

// Leaks returns the kept lines that carry the token.
func (s *LogScan) Leaks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range strings.Split(s.buf.String(), "\n") {
		if strings.Contains(l, Token) || strings.Contains(l, strings.SplitN(Token, ":", 2)[1]) {
			out = append(out, l)
		}
	}
	return out
}

// Run runs the tests, then the scan: the exit code is 1 if a log line
// carries the token.
func (s *LogScan) Run(m *testing.M) int {
	code := m.Run()
	if leaks := s.Leaks(); len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d log lines carry the bot token:\n%s\n", len(leaks), strings.Join(leaks, "\n"))
		return 1
	}
	s.mu.Lock()
	n := s.lines
	s.mu.Unlock()
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "log scan: %d lines, none carries the bot token\n", n)
	}
	return code
}
