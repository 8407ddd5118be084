package loadsim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"transcriber/internal/errs"
	"transcriber/internal/media/oggopus"
	"transcriber/internal/media/oggopus/oggtest"
	"transcriber/internal/storage/s3"
)

// objectsURL is where the simulated storage says its objects are: the
// media fake and the recognizer find an object again by it.
const objectsURL = "https://storage.loadsim.invalid/data/"

// object is what the simulated storage keeps of an object: no content but
// its size and, for audio, its length and format.
type object struct {
	size       int64
	etag       string
	durationMs int64
	container  string // ffprobe's format_name; "" for what is not a recording
	codec      string
}

// Objects is an in-memory pipeline.Objects. It keeps sizes, not bytes:
// converted audio (see Media) is written as a few bytes that say how long
// it is, and the time converting took is spent here, where the pipeline
// waits for the upload that reads the converter's output.
type Objects struct {
	sched *Sched
	media *Media

	mu    sync.Mutex
	objs  map[string]object
	etags int
}

// NewObjects returns an empty store whose uploads of converted audio take
// media's conversion time on sched.
func NewObjects(sched *Sched, media *Media) *Objects {
	return &Objects{sched: sched, media: media, objs: map[string]object{}}
}

func notFound(key string) error {
	return errs.Wrap(fmt.Errorf("no object %q", key), errs.NotFound, "storage_not_found", "the file was not found in storage")
}

// put stores o under key with a new ETag.
func (o *Objects) put(key string, ob object) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.etags++
	ob.etag = fmt.Sprintf(`"%d"`, o.etags)
	o.objs[key] = ob
}

func (o *Objects) get(key string) (object, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ob, ok := o.objs[key]
	return ob, ok
}

// PutRecording stores an uploaded recording: its size, length and format.
func (o *Objects) PutRecording(key string, size, durationMs int64, container, codec string) {
	o.put(key, object{size: size, durationMs: durationMs, container: container, codec: codec})
}

// PresignGet names the object by its URL: the media fake reads it back.
func (o *Objects) PresignGet(_ context.Context, key string, _ time.Duration) (string, error) {
	return o.URI(key), nil
}

// Head reports the object's size and ETag.
func (o *Objects) Head(_ context.Context, key string) (s3.ObjectInfo, error) {
	ob, ok := o.get(key)
	if !ok {
		return s3.ObjectInfo{}, notFound(key)
	}
	return s3.ObjectInfo{Size: ob.size, ETag: ob.etag}, nil
}

// Copy copies src to dst if src still has the ETag ifMatch.
func (o *Objects) Copy(_ context.Context, src, dst, ifMatch string) error {
	ob, ok := o.get(src)
	if !ok {
		return notFound(src)
	}
	if ifMatch != "" && ifMatch != ob.etag {
		return errs.New(errs.Unavailable, s3.CodeChanged, s3.MsgChanged)
	}
	o.put(dst, ob)
	return nil
}

// Upload reads r to its end and stores what it read. Converted audio (see
// audioOf) streamed from a conversion costs its conversion time here, on
// the caller's goroutine, which waits for the converter's output.
func (o *Objects) Upload(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	if ms, ok := audioLength(body); ok {
		if err := o.sched.Sleep(ctx, o.media.convertTime(ms)); err != nil {
			return 0, err
		}
	}
	return int64(len(body)), o.Put(ctx, key, body, contentType)
}

// Put stores body under key, at once: audio put whole was made before
// (Media.ConvertMono spends its own conversion time) or is a source sent
// as it is.
func (o *Objects) Put(_ context.Context, key string, body []byte, _ string) error {
	ob := object{size: int64(len(body))}
	if ms, ok := audioLength(body); ok {
		ob.durationMs, ob.container, ob.codec = ms, "ogg", "opus"
	}
	o.put(key, ob)
	return nil
}

// Get returns a voice note's bytes (Ogg Opus, as audioOf writes, which
// the pipeline checks and may send as it is) and nothing of any other
// object but that it is there: the pipeline reads other objects only to
// send audio inline, which the simulation does not.
func (o *Objects) Get(_ context.Context, key string) (io.ReadCloser, error) {
	ob, ok := o.get(key)
	if !ok {
		return nil, notFound(key)
	}
	if ob.container == "ogg" && ob.codec == "opus" {
		return io.NopCloser(bytes.NewReader(audioOf(ob.durationMs))), nil
	}
	return io.NopCloser(strings.NewReader("")), nil
}

// Delete removes the object; a missing one is no error.
func (o *Objects) Delete(_ context.Context, key string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.objs, key)
	return nil
}

// URI is the object's URL.
func (o *Objects) URI(key string) string { return objectsURL + key }

// keyOf is the key of an object's URL.
func keyOf(uri string) string { return strings.TrimPrefix(uri, objectsURL) }

// audioOf is what the media fake writes for a converted piece: Ogg Opus
// of silence as long as the piece, a few bytes a second, which the
// pipeline meters as it would real audio.
func audioOf(durationMs int64) []byte { return oggtest.Synth(durationMs, 0) }

// audioLength reads the length of what audioOf wrote.
func audioLength(body []byte) (int64, bool) {
	if !bytes.HasPrefix(body, []byte("OggS")) {
		return 0, false
	}
	m := &oggopus.Meter{}
	if _, err := m.Write(body); err != nil || m.Close() != nil {
		return 0, false
	}
	return m.Ms(), true
}
