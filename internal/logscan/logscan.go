// Package logscan fails a test binary whose logs carry a secret: a value
// registered with Secret, or anything shaped like a credential.
package logscan

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// shapes are secrets known by form, whatever the test's values.
var shapes = []struct {
	name string
	re   *regexp.Regexp
}{
	{"API token secret", regexp.MustCompile(`trk_[A-Za-z0-9_-]{20,}`)},
	{"callback secret", regexp.MustCompile(`whsec_[A-Za-z0-9+/]{20,}`)},
	{"X-Amz-Signature value", regexp.MustCompile(`(?i)X-Amz-Signature(=|%3D|":\s*")[0-9a-f]{8,}`)},
	{"X-Amz-Credential value", regexp.MustCompile(`(?i)X-Amz-Credential(=|%3D|":\s*")[A-Za-z0-9]`)},
	{"SigV4 Authorization signature", regexp.MustCompile(`Signature=[0-9a-f]{64}`)},
	{"upload link token", regexp.MustCompile(`/upload/[0-9a-z]{26}\?t=[A-Za-z0-9_-]{8,}`)},
}

// Scan keeps the log lines of one test binary.
type Scan struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	lines   int
	secrets map[string]string // value → what it is
}

func New() *Scan { return &Scan{secrets: map[string]string{}} }

// Secret registers values no line may carry; under 6 bytes would match by chance.
func (s *Scan) Secret(what string, values ...string) *Scan {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		if len(v) >= 6 {
			s.secrets[v] = what
		}
	}
	return s
}

// Logger is a debug-level JSON logger whose lines the scan keeps.
func (s *Scan) Logger(testing.TB) *slog.Logger {
	return slog.New(slog.NewJSONHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Write keeps log lines from anywhere (a process's stderr).
func (s *Scan) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines += bytes.Count(p, []byte("\n"))
	return s.buf.Write(p)
}

var _ io.Writer = (*Scan)(nil)

// Leaks returns each line that carries a secret, with what.
func (s *Scan) Leaks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range strings.Split(s.buf.String(), "\n") {
		if what := s.carries(l); what != "" {
			out = append(out, what+": "+l)
		}
	}
	return out
}

func (s *Scan) carries(line string) string {
	for v, what := range s.secrets {
		if strings.Contains(line, v) {
			return what
		}
	}
	for _, sh := range shapes {
		if sh.re.MatchString(line) {
			return sh.name
		}
	}
	return ""
}

// Run runs the tests, then fails if a line carries a secret.
func (s *Scan) Run(m *testing.M) int {
	code := m.Run()
	if leaks := s.Leaks(); len(leaks) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d log lines carry a secret:\n%s\n", len(leaks), strings.Join(leaks, "\n"))
		return 1
	}
	s.mu.Lock()
	n := s.lines
	s.mu.Unlock()
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "log scan: %d lines, none carries a secret\n", n)
	}
	return code
}
