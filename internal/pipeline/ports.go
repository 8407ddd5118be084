package pipeline

import (
	"context"
	"io"
	"time"

	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/speechkit"
	"transcriber/internal/storage/s3"
	"transcriber/internal/transcript"
)

// The ports: what the pipeline asks of the world, each wired to its
// adapter once per instance (internal/app).

// Objects is the object storage the pipeline reads sources from and writes
// audio and results to. Missing objects are errs.NotFound.
type Objects interface {
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
	Head(ctx context.Context, key string) (s3.ObjectInfo, error)
	Copy(ctx context.Context, src, dst, ifMatch string) error
	Upload(ctx context.Context, key string, r io.Reader, contentType string) (int64, error)
	Put(ctx context.Context, key string, body []byte, contentType string) error
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	Delete(ctx context.Context, key string) error
	URI(key string) string
}

// Media probes and converts audio. Its errors for bad input are
// errs.Permanent with a code and a message a person understands.
type Media interface {
	Probe(ctx context.Context, input string) (ffmpeg.Probe, error)
	// PlanFor plans what to submit; parallel false keeps the pieces as
	// long as SpeechKit takes (ffmpeg.Media.PlanFor).
	PlanFor(p ffmpeg.Probe, parallel bool) (ffmpeg.Plan, error)
	Convert(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error
	// ConvertMono is Convert with every channel mixed down to one: what
	// synchronous recognition takes (ffmpeg.Media.ConvertMono).
	ConvertMono(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error
	// Split converts a plan of several pieces in one pass, cutting each
	// near its planned place where nobody speaks, and hands over each
	// piece, in order, with where it really starts and how long it is.
	Split(ctx context.Context, input string, plan ffmpeg.Plan, piece func(seg ffmpeg.Segment, audio io.Reader) error) error
}

// Recognizer is the speech recognizer's asynchronous API.
type Recognizer interface {
	Submit(ctx context.Context, r speechkit.Request) (operationID string, err error)
	Check(ctx context.Context, operationID string) (done bool, err error)
	Result(ctx context.Context, operationID string) (transcript.Transcript, error)
	Delete(ctx context.Context, operationID string) error
}

// SyncRecognizer is the speech recognizer's synchronous API: a short
// recording in one request, its text in the answer
// (speechkit.Client.RecognizeSync). Its errors are the client's; whatever
// the error, the recording can still be recognized asynchronously.
type SyncRecognizer interface {
	RecognizeSync(ctx context.Context, r speechkit.SyncRequest) (speechkit.SyncResult, error)
}

// Notifier hears about jobs that move and end: the Telegram bot edits its
// status message and delivers the result. Moved is called after a step
// saved a new state (created: the file is accepted; transcribe: it is being
// recognized), Finished once a job ended (done, failed or dead). An error is
// logged, and the job stays as it is: delivery keeps its own record and
// retries (internal/telegram).
type Notifier interface {
	Moved(ctx context.Context, j job.Job) error
	Finished(ctx context.Context, j job.Job) error
}

type noNotifier struct{}

func (noNotifier) Moved(context.Context, job.Job) error    { return nil }
func (noNotifier) Finished(context.Context, job.Job) error { return nil }
