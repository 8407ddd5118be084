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

// Finish (transcribe → done): every piece's result, each held within its
// piece and shifted by its start, joined into one transcript with its
// speakers and summary, written to results/<job_id>.json; the job is
// saved done and its ending settled (settle.go). A synchronous
// recognition, whose answer is the transcript, ends the same way
// (finishWith).

// finish writes the transcript of claimed job j, whose recognitions are
// all done, saves it done, and settles its ending.
func (p *Pipeline) finish(ctx context.Context, j job.Job) error {
	t := transcript.Transcript{DurationMs: j.DurationMs, Language: p.language(j), BilledSeconds: spend.JobBilledSeconds(j.Segments)}
	var summaries []transcript.Summary
	for _, sg := range j.Segments {
		part, err := p.Recognizer.Result(ctx, sg.OperationID)
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
	t.Summary, j.Features.SummaryMissing = p.summaryOf(j, t, summaries)
	_, err := p.finishWith(ctx, j, t)
	return err
}

// finishWith writes t as claimed job j's transcript, saves j done and
// settles its ending, and returns j as saved; on failure, j as the caller
// had it, claim included.
func (p *Pipeline) finishWith(ctx context.Context, j job.Job, t transcript.Transcript) (job.Job, error) {
	var body bytes.Buffer
	if err := transcript.Render(&body, t, transcript.JSON); err != nil {
		return j, fmt.Errorf("render transcript: %w", err)
	}
	err := p.Objects.Put(ctx, job.ResultKey(j.ID), body.Bytes(), transcript.JSON.ContentType())
	p.heard(ctx, admission.Storage, err)
	if err != nil {
		return j, err
	}
	was := j
	// The reservation is moved to what the answers billed: the job's cost.
	var tokens int64
	if t.Summary != nil {
		tokens = max(t.Summary.Usage.TotalTokens, t.Summary.Usage.InputTextTokens+t.Summary.Usage.CompletionTokens)
	}
	if err := p.admission.Settle(ctx, &j, p.cfg.Limits.Cost(j, tokens), false); err != nil {
		return was, err
	}
	j.State = job.Done
	j.ErrorCode, j.ErrorMessage = "", ""
	done, err := p.save(ctx, j, job.Next{})
	if err != nil {
		return was, err
	}
	p.jobLog(done).InfoContext(ctx, "transcript written", "utterances", len(t.Utterances), "no_speech", t.Empty(),
		"summary", t.Summary != nil, "summary_missing", done.Features.SummaryMissing, "recognition", string(done.Recognition),
		"billed_seconds", spend.JobBilled(done))
	p.ended(ctx, was, done)
	return done, nil
}

// nameSpeakers sets each utterance's speaker when the job asked for them:
// in mono audio SpeechKit's label, which arrives as the channel tag ("0",
// "1"), and the utterance is on the one channel; in stereo the channel,
// each channel one speaker. Numbers start at 1. A job that did not ask is
// left as it is.
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

// Why a summary asked for is missing, as the job's view says it.
const (
	summaryOff     = "summaries are not set up on this installation"
	summaryNothing = "there was no speech to summarize"
	summaryNone    = "the recognizer returned no summary"
)

// summaryOf is the summary of job j's transcript t from the summaries its
// segments' results carried: one segment's as it is; several joined in
// order by a blank line, their token usage added up. When the job asked
// for one and none came, it returns why instead: a missing summary leaves
// the job done.
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
