package pipeline

import (
	"bytes"
	"context"
	"fmt"

	"transcriber/internal/job"
	"transcriber/internal/pipeline/admission"
	"transcriber/internal/spend"
	"transcriber/internal/transcript"
)

// finish joins the results of claimed job j's pieces, each shifted by its
// start, into one transcript with speakers and summary, and ends it done.
func (h *held) finish(ctx context.Context, j job.Job) error {
	t := transcript.Transcript{DurationMs: j.DurationMs, Language: h.language(j), BilledSeconds: spend.JobBilledSeconds(j.Segments)}
	var summaries []transcript.Summary
	for _, sg := range j.Segments {
		part, err := h.Recognizer.Result(ctx, sg.OperationID)
		if err != nil {
			return err
		}
		if part.Language != "" {
			t.Language = part.Language // detected, when the job asked for auto
		}
		if part.Summary != nil {
			summaries = append(summaries, *part.Summary)
		}
		part.DurationMs = sg.DurationMs
		nameSpeakers(&part, j.Features)
		t.Append(part, sg.StartMs)
	}
	t.Summary, j.Features.SummaryMissing = h.summaryOf(j, t, summaries)
	_, err := h.finishWith(ctx, j, t)
	return err
}

// finishWith writes t as claimed job j's transcript (results/<id>.json),
// moves its reservation to what was billed, and ends it done; on failure
// it returns j as the caller had it.
func (h *held) finishWith(ctx context.Context, j job.Job, t transcript.Transcript) (job.Job, error) {
	var body bytes.Buffer
	if err := transcript.Render(&body, t, transcript.JSON); err != nil {
		return j, fmt.Errorf("render transcript: %w", err)
	}
	err := h.Objects.Put(ctx, job.ResultKey(j.ID), body.Bytes(), transcript.JSON.ContentType())
	h.heard(ctx, admission.Storage, err)
	if err != nil {
		return j, err
	}
	was := j
	var tokens int64
	if t.Summary != nil {
		tokens = max(t.Summary.Usage.TotalTokens, t.Summary.Usage.InputTextTokens+t.Summary.Usage.CompletionTokens)
	}
	if err := h.admission.Settle(ctx, &j, h.cfg.Limits.Cost(j, tokens), false); err != nil {
		return was, err
	}
	return h.endDone(ctx, was, j, "transcript written", "utterances", len(t.Utterances), "no_speech", t.Empty(),
		"summary", t.Summary != nil, "summary_missing", j.Features.SummaryMissing, "recognition", string(j.Recognition),
		"billed_seconds", spend.JobBilled(j))
}

// nameSpeakers numbers speakers from 1 when the job asked: in mono
// SpeechKit's label arrives as the channel tag; in stereo each channel is
// a speaker.
func nameSpeakers(t *transcript.Transcript, f job.Features) {
	if !f.Speakers {
		return
	}
	for i := range t.Utterances {
		u := &t.Utterances[i]
		u.Speaker = u.Channel + 1
		if f.Mono() {
			u.Channel = 0
		}
	}
}

// Why a summary asked for is missing, as the job's view says.
const (
	summaryOff     = "summaries are not set up on this installation"
	summaryNothing = "there was no speech to summarize"
	summaryNone    = "the recognizer returned no summary"
)

// summaryOf joins the pieces' summaries by blank lines, adding up their
// usage; when the job asked for one and none came, it says why instead
// (the job still ends done).
func (p *Pipeline) summaryOf(j job.Job, t transcript.Transcript, parts []transcript.Summary) (*transcript.Summary, string) {
	if !j.Features.Summary {
		return nil, ""
	}
	if len(parts) == 0 {
		switch {
		case p.cfg.SummaryModel == "":
			return nil, summaryOff
		case t.Empty():
			return nil, summaryNothing
		}
		return nil, summaryNone
	}
	s := parts[0]
	for _, part := range parts[1:] {
		s.Text += "\n\n" + part.Text
		s.Usage = s.Usage.Add(part.Usage)
	}
	return &s, ""
}
