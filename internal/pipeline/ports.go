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

// Objects is the object storage; a missing object is errs.NotFound.
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

// Media probes and converts audio (ffmpeg.Media); bad input is
// errs.Permanent with a message a person understands.
type Media interface {
	Probe(ctx context.Context, input string) (ffmpeg.Probe, error)
	// PlanFor plans the pieces; parallel false keeps them as long as
	// SpeechKit takes.
	PlanFor(p ffmpeg.Probe, parallel bool) (ffmpeg.Plan, error)
	Convert(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error
	// ConvertMono mixes every channel into one, for synchronous recognition.
	ConvertMono(ctx context.Context, input string, seg ffmpeg.Segment, w io.Writer) error
	// Split converts a plan of several pieces in one pass, cutting each
	// near its planned place where nobody speaks, and hands them over in order.
	Split(ctx context.Context, input string, plan ffmpeg.Plan, piece func(seg ffmpeg.Segment, audio io.Reader) error) error
}

// Recognizer is the speech recognizer's asynchronous API.
type Recognizer interface {
	Submit(ctx context.Context, r speechkit.Request) (operationID string, err error)
	Check(ctx context.Context, operationID string) (done bool, err error)
	Result(ctx context.Context, operationID string) (transcript.Transcript, error)
	Delete(ctx context.Context, operationID string) error
}

// SyncRecognizer is the synchronous API: a short recording in one request.
type SyncRecognizer interface {
	RecognizeSync(ctx context.Context, r speechkit.SyncRequest) (speechkit.SyncResult, error)
}

// Notifier hears of jobs that move (created, transcribe) and end (done,
// failed, dead). An error is only logged: delivery keeps its own record.
type Notifier interface {
	Moved(ctx context.Context, j job.Job) error
	Finished(ctx context.Context, j job.Job) error
}

type noNotifier struct{}

func (noNotifier) Moved(context.Context, job.Job) error    { return nil }
func (noNotifier) Finished(context.Context, job.Job) error { return nil }
