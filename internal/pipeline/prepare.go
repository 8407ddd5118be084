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

// prepare (created → converted) probes the source, reserves its length
// and makes the audio: Ogg Opus in one piece or several, metered on its
// way to storage. A quick job's one piece, made in memory (a mono Ogg
// Opus voice note as it is, anything else mixed to one channel), is also
// returned for recognizeSync.
func (h *held) prepare(ctx context.Context, j job.Job) (job.Job, []byte, error) {
	j, reused, err := h.reuseDone(ctx, j, nil)
	if reused || err != nil {
		return j, nil, err
	}
	if done, audio, ok, err := h.asIs(ctx, j); ok || err != nil {
		return done, audio, err
	}
	src, err := h.Objects.PresignGet(ctx, job.AcceptedKey(j.ID), DefaultSourceURLTTL)
	if err != nil {
		return j, nil, err
	}
	probe, err := h.Media.Probe(ctx, src)
	if err != nil {
		return j, nil, err
	}
	// SpeechKit labels speakers and summarizes file by file: not cut short.
	parallel := !j.Features.Speakers && !j.Features.Summary
	plan, err := h.Media.PlanFor(probe, parallel)
	if err != nil {
		return j, nil, err
	}
	if parallel && len(plan.Segments) > 1 && !h.admission.RoomForPieces(ctx, len(plan.Segments)) {
		if plan, err = h.Media.PlanFor(probe, false); err != nil {
			return j, nil, err
		}
		h.jobLog(j).InfoContext(ctx, "fewest pieces", "reason", "request_window_busy", "segments", len(plan.Segments))
	}
	j.DurationMs = probe.DurationMs
	// The first audio stream, at most stereo; one channel for synchronous.
	quick := len(plan.Segments) == 1 && h.quick(j)
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
	if j, err = h.reserve(ctx, j, pieces, quick); err != nil {
		return j, nil, err
	}
	var audio []byte
	if quick {
		j.Segments, audio, err = h.makeQuickAudio(ctx, j, src, plan)
	} else {
		j.Segments, err = h.makeAudio(ctx, j, src, plan)
	}
	if err != nil {
		return j, nil, err
	}
	j, err = h.audioReady(ctx, j, "probed_ms", probe.DurationMs, "container", plan.Container, "probe_container", probe.Container)
	return j, audio, err
}

// audioReady saves j converted, its length what its audio holds as
// metered, its reservation moved to that audio's most (raised within the
// limits or the job fails; lowered, the rest given back once saved).
func (h *held) audioReady(ctx context.Context, j job.Job, attrs ...any) (job.Job, error) {
	j.DurationMs = job.AudioMs(j.Segments)
	reserved := j
	if err := h.admission.Settle(ctx, &j, h.admission.Needs(j, h.syncable(j)), true); err != nil {
		return reserved, err
	}
	h.jobLog(j).InfoContext(ctx, "audio ready", append([]any{"duration_ms", j.DurationMs, "segments", len(j.Segments)}, attrs...)...)
	j.State = job.Converted
	j, err := h.save(ctx, j, job.Next{Keep: true})
	if err != nil {
		return j, err
	}
	h.admission.Release(ctx, reserved, j)
	return j, nil
}

// asIs makes a quick job's one piece from a plain mono Ogg Opus source
// (oggopus.Check; a Telegram voice note) as it is, without ffmpeg: its
// length is its packets', and an asynchronous retry sends the same bytes.
// ok is false, j untouched, for any other source or one not read (the
// conversion then meets the same storage and says so).
func (h *held) asIs(ctx context.Context, j job.Job) (_ job.Job, _ []byte, ok bool, _ error) {
	longest := j
	longest.DurationMs = h.cfg.SyncMaxDuration.Milliseconds()
	if !h.quick(longest) || j.SizeBytes > speechkit.MaxSyncBytes {
		return j, nil, false, nil
	}
	log := h.jobLog(j)
	src, err := h.readOgg(ctx, job.AcceptedKey(j.ID))
	if err != nil || src == nil {
		if err != nil {
			log.InfoContext(ctx, "source converted", "reason", err.Error())
		}
		return j, nil, false, nil
	}
	w, err := oggopus.Check(src)
	if err == nil && w.Channels != 1 {
		err = fmt.Errorf("%d channels", w.Channels)
	}
	if err != nil {
		log.InfoContext(ctx, "source converted", "reason", err.Error())
		return j, nil, false, nil
	}
	j.DurationMs = w.Ms()
	if !h.quick(j) {
		return j, nil, false, nil // longer than the synchronous limit
	}
	j.Features.Channels = 1
	// Reserved by the count itself; TakeSync holds what leaves to it.
	if j, err = h.reserve(ctx, j, []int64{w.Ms()}, true); err != nil {
		return j, nil, true, err
	}
	key := job.AudioKey(j.ID, 0)
	if err := h.Objects.Put(ctx, key, src, "audio/ogg"); err != nil {
		return j, nil, true, err
	}
	j.Segments = []job.Segment{{Seq: 0, DurationMs: w.Ms(), Container: ffmpeg.ContainerOggOpus, AudioKey: key}}
	j, err = h.audioReady(ctx, j, "as_it_is", true)
	return j, src, true, err
}

// reserve counts the most j's pieces (ms) are billed (admission.Reserve)
// and saves it on j; a job that has a reservation is not counted again.
func (h *held) reserve(ctx context.Context, j job.Job, pieces []int64, sync bool) (job.Job, error) {
	took, err := h.admission.Reserve(ctx, &j, pieces, sync)
	if err != nil || !took {
		return j, err
	}
	saved, err := h.save(ctx, j, job.Next{Keep: true})
	if err != nil {
		return j, err
	}
	h.jobLog(saved).InfoContext(ctx, "reserved", "seconds", saved.ReservedSeconds, "micros", saved.ReservedMicros, "day", saved.ReservedDay)
	return saved, nil
}

// makeAudio converts plan's pieces of src and uploads each as it is made,
// through a meter (oggopus) counting packets whatever the header says: a
// segment's length is the meter's, and past admission.AudioAllowance the
// upload stops with admission.ErrOverReserved.
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
		// A write the meter refuses fails the read (0 bytes): that audio is never uploaded.
		_, err := p.Objects.Upload(ctx, job.AudioKey(j.ID, i), io.TeeReader(audio, m), "audio/ogg")
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

// makeQuickAudio converts a quick job's one piece to one channel in memory
// through the meter (bounded by the allowance: about 125 KB), stores it,
// and returns it: the bytes sent synchronously are the bytes stored.
func (p *Pipeline) makeQuickAudio(ctx context.Context, j job.Job, src string, plan ffmpeg.Plan) ([]job.Segment, []byte, error) {
	sg := plan.Segments[0]
	m := &oggopus.Meter{LimitMs: admission.AudioAllowance(j, 1)}
	var audio bytes.Buffer
	// The meter first: audio past the allowance is never kept.
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

// metered adds the meter's verdict to err: admission.ErrOverReserved past
// the allowance; an internal error when ffmpeg's output is not Ogg Opus
// (ours, not the sender's fault).
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

// convert streams ffmpeg's output through meter m into a multipart upload:
// no temp file, memory bounded by the parts; a write the meter refuses
// stops ffmpeg before that audio is stored.
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
		return uploadErr // ffmpeg stopped because the upload did
	case convertErr != nil:
		return convertErr // the truer cause
	}
	return uploadErr
}
