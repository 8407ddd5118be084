package ffmpeg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// runResult is what one run of ffmpeg or ffprobe left behind.
type runResult struct {
	WriteErr error  // the writer's, which ended the run
	Err      error  // of start or wait (*exec.ExitError for a non-zero exit)
	Stderr   string // the tail, scrubbed
}

// ranHook, set by the benchmarks alone, sees each process that ran.
var ranHook func(*os.ProcessState)

// run copies tool's stdout to out at the writer's pace (ffmpeg blocks on
// the full pipe). A failed writer or ctx kills it; Wait reaps it after
// stdout ends, as os/exec requires.
func run(ctx context.Context, tool string, args []string, input string, out io.Writer) runResult {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.WaitDelay = waitDelay
	stderr := &tail{limit: DefaultStderrLimit}
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
			if _, res.WriteErr = out.Write(buf[:n]); res.WriteErr != nil {
				cancel() // else ffmpeg blocks on the full pipe for ever
				break
			}
		}
		if rerr != nil {
			break
		}
	}
	res.Err = cmd.Wait()
	if ranHook != nil && cmd.ProcessState != nil {
		ranHook(cmd.ProcessState)
	}
	res.Stderr = scrub(stderr.String(), input)
	return res
}

// refused reports whether the process exited with a status of its own.
func (r runResult) refused() bool {
	var exit *exec.ExitError
	return errors.As(r.Err, &exit) && exit.ExitCode() > 0
}

// processError is the cause kept for logs.
func processError(tool string, err error, stderr string) error {
	if stderr == "" {
		return fmt.Errorf("%s: %w", tool, err)
	}
	return fmt.Errorf("%s: %w: %s", tool, err, stderr)
}

// err classifies a run: the context first (nobody's fault), then the
// writer (keeping its kind), then the process; a clean exit whose input
// read broke off is ErrSourceUnavailable.
func (r runResult) err(ctx context.Context, tool string) error {
	if r.Err == nil && r.WriteErr == nil {
		if !inputReadBroke(r.Stderr) {
			return nil
		}
		return wrap(ErrSourceUnavailable, processError(tool, errors.New("reading the input broke off"), r.Stderr))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", tool, err) // errs.KindOf: Unavailable
	}
	if r.WriteErr != nil {
		return fmt.Errorf("write %s output: %w", tool, r.WriteErr)
	}
	cause := processError(tool, r.Err, r.Stderr)
	var exit *exec.ExitError
	if !errors.As(r.Err, &exit) {
		return wrap(ErrFailed, cause) // did not start: deployment
	}
	return wrap(classify(r.Stderr), cause)
}

// tail keeps the last limit bytes written.
type tail struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int64
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String drops a partial first line: it could hold a URL's end that scrub
// cannot recognize.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	if t.dropped == 0 {
		return s
	}
	cut := strings.IndexByte(s, '\n') + 1
	if cut == 0 {
		return fmt.Sprintf("[%d bytes of stderr dropped]", t.dropped+int64(len(s)))
	}
	return fmt.Sprintf("[%d bytes of stderr dropped]\n", t.dropped+int64(cut)) + s[cut:]
}
