package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"transcriber/internal/app"
	"transcriber/internal/clock"
	"transcriber/internal/media/oggopus"
	"transcriber/internal/speechkit"
)

const maxMeasureRuns = 10 // each request is billed

// measureSyncCmd times SpeechKit's synchronous answers to a voice note, as
// the service sends it, beside the load model's assumption: the one
// figure of docs/scale.md no document gives.
func measureSyncCmd(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("measure-sync", flag.ContinueOnError)
	runs := fs.Int("runs", 3, "requests to send, one after another")
	lang := fs.String("lang", "", "the recording's language (default DEFAULT_LANGUAGE)")
	if done, err := parseFlags(fs, args, stdout, usage, usageError); done {
		return err
	}
	if fs.NArg() != 1 {
		return usageError(fmt.Sprintf("measure-sync takes one file, a mono Ogg Opus recording of at most 30 s (got %q)", fs.Args()))
	}
	if *runs < 1 || *runs > maxMeasureRuns {
		return usageError(fmt.Sprintf("measure-sync --runs: want 1 to %d (each request is billed)", maxMeasureRuns))
	}
	path := fs.Arg(0)
	cfg, err := app.FromEnv(getenv)
	if err != nil {
		return err
	}
	audio, whole, err := readVoice(path)
	if err != nil {
		return err
	}
	language := cmp.Or(*lang, cfg.Pipeline.DefaultLanguage, speechkit.DefaultLanguage)
	if !speechkit.ValidLanguage(language) || language == speechkit.AutoLanguage {
		return usageError(fmt.Sprintf("measure-sync --lang: %q is not a language the synchronous API takes", language))
	}
	client, err := speechkit.New(cfg.SpeechKit)
	if err != nil {
		return err
	}
	defer func() { _ = client.Close() }()

	audioTime := time.Duration(whole.Ms()) * time.Millisecond
	fmt.Fprintf(stdout, "%s: %s of audio, one channel, %d bytes; %d requests to %s, language %s\n",
		filepath.Base(path), fmtSeconds(audioTime), len(audio), *runs, cfg.SpeechKit.SyncEndpoint(), language)
	var took []time.Duration
	var billed int64
	clk := clock.System()
	for i := range *runs {
		start := clk.Now()
		res, err := client.RecognizeSync(ctx, speechkit.SyncRequest{
			Audio: audio, DurationMs: whole.Ms(), Language: language,
		})
		d := clk.Now().Sub(start)
		if err != nil {
			return fmt.Errorf("request %d, after %s: %w", i+1, fmtSeconds(d), err)
		}
		took = append(took, d)
		billed += res.BilledSeconds
		fmt.Fprintf(stdout, "request %d: answered in %s, billed %d s, %d characters of text\n",
			i+1, fmtSeconds(d), res.BilledSeconds, len([]rune(res.Text)))
	}
	slices.Sort(took)
	median := took[len(took)/2]
	model := speechkit.DefaultSyncFixed + time.Duration(float64(speechkit.DefaultSyncPerMinute)*audioTime.Minutes())
	fmt.Fprintf(stdout, "median: %s for %s of audio (the load model assumes %s: %s and %s a minute of audio); %d s billed in all\n",
		fmtSeconds(median), fmtSeconds(audioTime), fmtSeconds(model), fmtSeconds(speechkit.DefaultSyncFixed), fmtSeconds(speechkit.DefaultSyncPerMinute), billed)
	return nil
}

// readVoice checks the file is what the service sends synchronously as it
// is: plain mono Ogg Opus (oggopus.Check), at most 1 MB and 30 s.
func readVoice(path string) ([]byte, oggopus.Whole, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, oggopus.Whole{}, err
	}
	defer func() { _ = f.Close() }()
	audio, err := io.ReadAll(io.LimitReader(f, speechkit.MaxSyncBytes+1))
	if err != nil {
		return nil, oggopus.Whole{}, err
	}
	const convert = "; make one with: ffmpeg -i IN -ac 1 -t 30 -c:a libopus -b:a 32k OUT.ogg"
	if len(audio) > speechkit.MaxSyncBytes {
		return nil, oggopus.Whole{}, fmt.Errorf("%s is over the synchronous API's %d bytes%s", path, speechkit.MaxSyncBytes, convert)
	}
	w, err := oggopus.Check(audio)
	switch {
	case err != nil:
		return nil, w, fmt.Errorf("%s is not a plain Ogg Opus file (%w)%s", path, err, convert)
	case w.Channels != 1:
		return nil, w, fmt.Errorf("%s has %d channels, the synchronous API takes one%s", path, w.Channels, convert)
	case time.Duration(w.Ms())*time.Millisecond > speechkit.MaxSyncDuration:
		return nil, w, fmt.Errorf("%s holds %d ms of audio, over the synchronous API's %s%s", path, w.Ms(), speechkit.MaxSyncDuration, convert)
	}
	return audio, w, nil
}

func fmtSeconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
