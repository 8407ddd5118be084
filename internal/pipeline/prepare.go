package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"transcriber/internal/errs"
	"transcriber/internal/job"
	"transcriber/internal/media/ffmpeg"
	"transcriber/internal/media/oggopus"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/speechkit"
)

// Plan and convert (created → converted): the source is probed, its
// length reserved against the spend limits, and the audio made: converted
// to OGG/Opus in one piece or several, metered on its way to storage. A
// fast job short enough for synchronous recognition gets its one piece
// made in memory, so the call can send it at once (recognize_sync.go):
// a plain mono Ogg Opus file, which is what a Telegram voice note is,
// goes as it is, checked and counted packet by packet (asIs); anything
// else is converted with every channel mixed into one.

// prepare probes the source and makes the audio the recognizer takes:
// converted pieces streamed from ffmpeg to storage. For a job that may be
// recognized synchronously (quick) it also returns that audio, as stored;
// nil for any other.
func (p *Pipeline) prepare(ctx context.Context, j job.Job) (job.Job, []byte, error) {
	j, reused, err := p.reuseDone(ctx, j)
	if reused || err != nil {
		return j, nil, err
	}
	if done, audio, ok, err := p.asIs(ctx, j); ok || err != nil {
		return done, audio, err
	}
	src, err := p.Objects.PresignGet(ctx, job.AcceptedKey(j.ID), p.cfg.SourceURLTTL)
	if err != nil {
		return j, nil, err
	}
	probe, err := p.Media.Probe(ctx, src)
	if err != nil {
		return j, nil, err
	}
	// SpeechKit labels speakers and summarizes file by file: a job that
	// asks for either is not cut into short pieces.
	parallel := !j.Features.Speakers && !j.Features.Summary
	plan, err := p.Media.PlanFor(probe, parallel)
	if err != nil {
		return j, nil, err
	}
	if parallel && len(plan.Segments) > 1 && !p.admission.RoomForPieces(ctx, len(plan.Segments)) {
		if plan, err = p.Media.PlanFor(probe, false); err != nil {
			return j, nil, err
		}
		p.jobLog(j).InfoContext(ctx, "the request quota's window is over half used; the recording goes in as few pieces as it can",
			"segments", len(plan.Segments))
	}
	j.DurationMs = probe.DurationMs
	// What is submitted is the first audio stream, converted with mono
	// kept mono and more than two channels made stereo; for synchronous
	// recognition, which takes one channel, every channel mixed into one.
	quick := len(plan.Segments) == 1 && p.quick(j)
	if len(probe.Audio) > 0 {
		j.Features.Channels = min(probe.Audio[0].Channels, 2)
	}
	if quick {
		j.Features.Channels = 1
	}
	pieces := make([]int64, len(plan.Segments))
	for i, sg := range plan.Segments {
		pieces[i] = sg.DurationMs
	}
	if j, err = p.reserve(ctx, j, pieces, quick); err != nil {
		return j, nil, err
	}
	var audio []byte
	if quick {
		j.Segments, audio, err = p.makeQuickAudio(ctx, j, src, plan)
	} else {
		j.Segments, err = p.makeAudio(ctx, j, src, plan)
	}
	if err != nil {
		return j, nil, err
	}
	j, err = p.audioReady(ctx, j, "probed_ms", probe.DurationMs, "container", plan.Container, "probe_container", probe.Container)
	return j, audio, err
}

// audioReady saves job j, its segments made, converted. From here the
// job's length is what its audio holds, as counted on its way to storage:
// what is shown, billed and submitted. Before the save its reservation is
// moved to what that audio is billed at most (admission.Settle): raised
// against the limits, or the job fails with nothing sent; lowered, the
// rest given back once saved. attrs say how the audio was made, for the
// log.
func (p *Pipeline) audioReady(ctx context.Context, j job.Job, attrs ...any) (job.Job, error) {
	j.DurationMs = job.AudioMs(j.Segments)
	reserved := j
	if err := p.admission.Settle(ctx, &j, p.admission.Needs(j, p.syncable(j)), true); err != nil {
		return reserved, err
	}
	p.jobLog(j).InfoContext(ctx, "audio ready", append([]any{"duration_ms", j.DurationMs, "segments", len(j.Segments)}, attrs...)...)
	j.State = job.Converted
	j, err := p.save(ctx, j, job.Next{Keep: true})
	if err != nil {
		return j, err
	}
	p.admission.Release(ctx, reserved, &j)
	return j, nil
}

// asIs makes the one piece of a job that may be recognized synchronously
// from its source as it is, with no ffprobe and no ffmpeg, when the source
// is a plain Ogg Opus file of one channel (oggopus.Check: one logical
// stream, checksums right, a header, granule positions and packets that
// all say the same length) within the synchronous limits: what Telegram
// stores a voice note as. Its length is what its packets hold, counted
// before anything is reserved; the piece stored is the source's bytes, so
// the asynchronous way, if the synchronous API refuses it, submits the
// same file. ok is false, with the job untouched, for any other source (or
// one that could not be read: the conversion then meets the same storage
// and says so); the file is then probed and converted.
func (p *Pipeline) asIs(ctx context.Context, j job.Job) (_ job.Job, _ []byte, ok bool, _ error) {
	longest := j
	longest.DurationMs = p.cfg.SyncMaxDuration.Milliseconds()
	if !p.quick(longest) || j.SizeBytes > speechkit.MaxSyncBytes {
		return j, nil, false, nil
	}
	log := p.jobLog(j)
	src, err := p.readOgg(ctx, job.AcceptedKey(j.ID))
	if err != nil || src == nil {
		if err != nil {
			log.InfoContext(ctx, "the source is not read as it is; it is converted", "reason", err.Error())
		}
		return j, nil, false, nil
	}
	w, err := oggopus.Check(src)
	if err == nil && w.Channels != 1 {
		err = fmt.Errorf("%d channels", w.Channels)
	}
	if err != nil {
		log.InfoContext(ctx, "the source is not sent as it is; it is converted", "reason", err.Error())
		return j, nil, false, nil
	}
	j.DurationMs = w.Ms()
	if !p.quick(j) {
		return j, nil, false, nil // longer than the synchronous limit: probed and converted
	}
	j.Features.Channels = 1
	// Reserved by the count itself: what leaves is held to the reservation
	// where it leaves (admission.TakeSync, as Take for a submission), for a
	// retried ingest whose earlier attempt reserved by a probe too.
	if j, err = p.reserve(ctx, j, []int64{w.Ms()}, true); err != nil {
		return j, nil, true, err
	}
	key := job.AudioKey(j.ID, 0)
	if err := p.Objects.Put(ctx, key, src, "audio/ogg"); err != nil {
		return j, nil, true, err
	}
	j.Segments = []job.Segment{{Seq: 0, DurationMs: w.Ms(), Container: ffmpeg.ContainerOggOpus, AudioKey: key}}
	j, err = p.audioReady(ctx, j, "as_it_is", true)
	return j, src, true, err
}

// reserve counts what the job's audio, as pieces (their lengths in ms),
// is billed at most against the spend limits once its length is known,
// before it is converted or submitted (admission.Reserve; sync: a
// synchronous try first), and records the reservation on the job in the
// same save: a job that has one (a retried ingest) is not counted again,
// and one that would pass a limit fails as quota_exceeded or
// budget_exceeded with nothing counted.
func (p *Pipeline) reserve(ctx context.Context, j job.Job, pieces []int64, sync bool) (job.Job, error) {
	took, err := p.admission.Reserve(ctx, &j, pieces, sync)
	if err != nil || !took {
		return j, err
	}
	saved, err := p.save(ctx, j, job.Next{Keep: true})
	if err != nil {
		return j, err
	}
	p.jobLog(saved).InfoContext(ctx, "reserved", "seconds", saved.ReservedSeconds, "micros", saved.ReservedMicros, "day", saved.ReservedDay)
	return saved, nil
}

// makeAudio converts the audio plan says for job j from the source at
// src, uploads it, and returns its segments: one converted piece, or, for a
// plan of several pieces, the pieces Split cuts (each at a quiet moment near
// its planned place, so its real start is Split's), each uploaded as soon
// as it is made. Every byte goes through a meter (package oggopus) that
// counts the audio packet by packet, whatever the file's header or
// timestamps say: a segment's length is what the meter counted, and the
// upload stops with admission.ErrOverReserved once the audio passes what j
// may submit (admission.AudioAllowance).
func (p *Pipeline) makeAudio(ctx context.Context, j job.Job, src string, plan ffmpeg.Plan) ([]job.Segment, error) {
	if len(plan.Segments) == 0 {
		return nil, fmt.Errorf("the media plan has no segments")
	}
	left := admission.AudioAllowance(j, len(plan.Segments))
	segment := func(i int, sg ffmpeg.Segment, m *oggopus.Meter) job.Segment {
		left -= m.Ms()
		return job.Segment{Seq: i, StartMs: sg.StartMs, DurationMs: m.Ms(), Container: plan.Container, AudioKey: job.AudioKey(j.ID, i)}
	}
	if len(plan.Segments) == 1 {
		m := &oggopus.Meter{LimitMs: left}
		if err := metered(p.convert(ctx, src, plan.Segments[0], job.AudioKey(j.ID, 0), m), m); err != nil {
			return nil, err
		}
		return []job.Segment{segment(0, plan.Segments[0], m)}, nil
	}
	var segs []job.Segment
	err := p.Media.Split(ctx, src, plan, func(sg ffmpeg.Segment, audio io.Reader) error {
		i := len(segs)
		m := &oggopus.Meter{LimitMs: max(left, 1)}
		_, err := p.Objects.Upload(ctx, job.AudioKey(j.ID, i), &meterReader{r: audio, m: m}, "audio/ogg")
		if err = metered(err, m); err != nil {
			return err
		}
		segs = append(segs, segment(i, sg, m))
		return nil
	})
	if err != nil {
		return nil, metered(err, nil)
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("the recording was split into no pieces")
	}
	return segs, nil
}

// makeQuickAudio makes the one piece of a job that may be recognized
// synchronously: the plan's one segment of the source at src converted
// with every channel mixed into one, what the synchronous API takes,
// into memory through the meter (so its length is counted, and stops at
// what j may submit, as for every recording), then stored as the piece's
// audio. It returns the segment and the audio. The bytes sent
// synchronously are the bytes stored, and the piece goes the asynchronous
// way as it is if the synchronous API refuses it. Memory is bounded by
// the allowance: at most SPEECHKIT_SYNC_MAX_DURATION and a second of
// Opus at the conversion's bit rate (about 125 KB at 32 kbit/s).
func (p *Pipeline) makeQuickAudio(ctx context.Context, j job.Job, src string, plan ffmpeg.Plan) ([]job.Segment, []byte, error) {
	sg := plan.Segments[0]
	m := &oggopus.Meter{LimitMs: admission.AudioAllowance(j, 1)}
	var audio bytes.Buffer
	// The meter first: audio past the allowance is refused before it is
	// kept.
	err := p.Media.ConvertMono(ctx, src, sg, io.MultiWriter(m, &audio))
	if err = metered(err, m); err != nil {
		return nil, nil, err
	}
	key := job.AudioKey(j.ID, 0)
	if err := p.Objects.Put(ctx, key, audio.Bytes(), "audio/ogg"); err != nil {
		return nil, nil, err
	}
	return []job.Segment{{Seq: 0, StartMs: sg.StartMs, DurationMs: m.Ms(), Container: plan.Container, AudioKey: key}}, audio.Bytes(), nil
}

// metered is err from a conversion or upload through m, with the meter's
// verdict: admission.ErrOverReserved when the audio passed the allowance;
// an internal error when what ffmpeg wrote is not Ogg Opus the meter can
// count (ffmpeg's output, not the sender's: a fault of ours).
func metered(err error, m *oggopus.Meter) error {
	if err == nil && m != nil {
		err = m.Close()
	}
	switch {
	case errors.Is(err, oggopus.ErrOverLimit):
		return admission.ErrOverReserved
	case errors.Is(err, oggopus.ErrMalformed):
		return errs.Wrap(err, errs.Internal, "audio_unmeasured", "the converted audio could not be measured")
	}
	return err
}

// meterReader passes what it reads through a meter, and fails as the
// meter does.
type meterReader struct {
	r io.Reader
	m *oggopus.Meter
}

func (r *meterReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 {
		if _, merr := r.m.Write(b[:n]); merr != nil {
			return 0, merr
		}
	}
	return n, err
}

// convert streams ffmpeg's output through the meter m into a multipart
// upload: no temp file, memory bounded by the upload's parts whatever the
// input's length. The meter sits between ffmpeg and the upload, so a
// write it refuses stops ffmpeg before that audio is stored.
func (p *Pipeline) convert(ctx context.Context, src string, sg ffmpeg.Segment, key string, m *oggopus.Meter) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	var (
		wg         sync.WaitGroup
		convertErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		convertErr = p.Media.Convert(cctx, src, sg, io.MultiWriter(m, pw))
		_ = pw.CloseWithError(convertErr) // nil closes cleanly and ends the upload
	}()
	_, uploadErr := p.Objects.Upload(cctx, key, pr, "audio/ogg")
	if uploadErr != nil {
		cancel() // stop ffmpeg
		_ = pr.CloseWithError(uploadErr)
	}
	wg.Wait()
	switch {
	case uploadErr != nil && (convertErr == nil || errors.Is(convertErr, context.Canceled)) && ctx.Err() == nil:
		return uploadErr // ffmpeg only stopped because the upload did
	case convertErr != nil:
		return convertErr // the input's fault is the truer cause
	}
	return uploadErr
}
