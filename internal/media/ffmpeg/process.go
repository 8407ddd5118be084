package ffmpeg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"
)

// copyBufferSize is the one buffer between ffmpeg's stdout and the writer:
// the size of a Linux pipe, so each read takes what the pipe holds.
const copyBufferSize = 64 << 10

// waitDelay bounds how long Wait waits for ffmpeg's pipes to close once the
// process has been killed.
const waitDelay = 5 * time.Second

// runResult is what one run of ffmpeg or ffprobe left behind.
type runResult struct {
	Written  int64  // bytes copied from stdout to the writer
	WriteErr error  // the writer's error, which ended the run early
	Err      error  // starting or waiting for the process failed (*exec.ExitError for a non-zero exit)
	Stderr   string // the tail of stderr, with the input scrubbed out
	MaxRSS   int64  // the process's peak resident memory in bytes; 0 where the platform does not say
}

// run starts tool with args, copies its stdout to out through one
// fixed-size buffer, and waits for it. The writer sets the pace: while it
// is busy, ffmpeg blocks on the full pipe. If the writer fails or ctx ends,
// the process is killed (exec.CommandContext), and Wait reaps it either
// way, so no zombie is left. Wait comes only after stdout is read to its
// end, as os/exec requires.
func run(ctx context.Context, tool string, args []string, input string, out io.Writer, stderrLimit int) runResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.WaitDelay = waitDelay
	stderr := newTail(stderrLimit)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return runResult{Err: err}
	}
	if err := cmd.Start(); err != nil {
		return runResult{Err: err}
	}

	var res runResult
	buf := make([]byte, copyBufferSize)
	for {
		n, rerr := stdout.Read(buf)
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				res.WriteErr = werr
				cancel() // ffmpeg would block on the full pipe for ever
				break
			}
			res.Written += int64(n)
		}
		if rerr != nil {
			break // io.EOF: ffmpeg closed stdout (it ended, or was killed)
		}
	}
	res.Err = cmd.Wait()
	if cmd.ProcessState != nil {
		res.MaxRSS = maxRSS(cmd.ProcessState)
	}
	res.Stderr = scrub(stderr.String(), input)
	return res
}

// refused reports whether the process ran and ended with an exit status of
// its own, rather than by a signal or not at all.
func (r runResult) refused() bool {
	var exit *exec.ExitError
	return errors.As(r.Err, &exit) && exit.ExitCode() > 0
}

// processError is the cause kept for logs: which tool, how it ended, and
// the tail of what it said (already scrubbed of the input).
type processError struct {
	tool   string
	err    error
	stderr string
}

func (e *processError) Error() string {
	msg := e.tool + ": " + e.err.Error()
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	return msg
}

func (e *processError) Unwrap() error { return e.err }

// failure classifies a run that did not succeed, in the order that
// matters: the caller's context first (a cancelled run is neither the
// input's fault nor ffmpeg's), then the writer, then the process.
func (r runResult) failure(ctx context.Context, tool string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", tool, err) // errs.KindOf: Unavailable
	}
	if r.WriteErr != nil {
		// The writer's own error, with its kind (an upload that failed is
		// the storage adapter's Unavailable, not a media problem).
		return fmt.Errorf("write %s output: %w", tool, r.WriteErr)
	}
	cause := &processError{tool: tool, err: r.Err, stderr: r.Stderr}
	var exit *exec.ExitError
	if !errors.As(r.Err, &exit) {
		return wrap(ErrFailed, cause, "") // it did not start: a deployment problem
	}
	switch classify(r.Stderr) {
	case refusedFormat:
		return wrap(ErrUnsupported, cause, "")
	case networkFailure:
		return wrap(ErrSourceUnavailable, cause, "")
	case dataFailure:
		return wrap(ErrUnreadable, cause, "")
	default:
		return wrap(ErrFailed, cause, "")
	}
}

// tail is an io.Writer that keeps the last limit bytes written to it.
type tail struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int64
}

func newTail(limit int) *tail { return &tail{limit: limit} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.limit {
		t.dropped += int64(len(t.buf) + len(p) - t.limit)
		t.buf = append(t.buf[:0], p[len(p)-t.limit:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.limit; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns what was kept. When the start was dropped, the first,
// partial line goes too: a line cut in the middle could hold the end of a
// URL without its start, which scrub could not recognize.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	if t.dropped == 0 {
		return s
	}
	cut := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			cut = i + 1
			break
		}
	}
	if cut == 0 {
		return fmt.Sprintf("[%d bytes of stderr dropped]", t.dropped+int64(len(s)))
	}
	return fmt.Sprintf("[%d bytes of stderr dropped]\n", t.dropped+int64(cut)) + s[cut:]
}
