package speechkit

import (
	"cmp"
	"context"
	"errors"
	"strings"

	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
)

// Container is the audio container of a file sent for recognition; not
// OGG Vorbis.
type Container string

const (
	OggOpus Container = "OGG_OPUS"
	MP3     Container = "MP3"
	WAV     Container = "WAV"
)

var containerTypes = map[Container]stt.ContainerAudio_ContainerAudioType{
	OggOpus: stt.ContainerAudio_OGG_OPUS,
	MP3:     stt.ContainerAudio_MP3,
	WAV:     stt.ContainerAudio_WAV,
}

// MaxInlineBytes is the API v3 request body's "60 MB" ("Quotas and
// limits"), the smaller reading.
const MaxInlineBytes = 60_000_000

const DefaultLanguage = "ru-RU"

// AutoLanguage detects the language, without normalization or punctuation.
const AutoLanguage = "auto"

// canonical is code as the general model names it ("en-us" gives "en-US"),
// if it takes it: the languages of summaryInstructions.
func canonical(code string) (string, bool) {
	code = strings.ToLower(code)
	if _, ok := summaryInstructions[code]; !ok {
		return "", false
	}
	if lang, region, ok := strings.Cut(code, "-"); ok {
		return lang + "-" + strings.ToUpper(region), true
	}
	return code, true
}

// ValidLanguage reports whether the general model takes code, in any case.
func ValidLanguage(code string) bool {
	_, ok := canonical(code)
	return ok
}

// languageModel is the canonical language (empty is DefaultLanguage) and
// the model (empty is Config.Model).
func (c *Client) languageModel(lang, model string) (string, string, error) {
	lang, ok := canonical(cmp.Or(lang, DefaultLanguage))
	if !ok {
		return "", "", errs.New(errs.Invalid, CodeUnsupportedLanguage, "the recognizer does not support this language")
	}
	return lang, cmp.Or(model, c.cfg.Model), nil
}

// Request is one audio file to recognize: by URI or inline, not both.
type Request struct {
	URI       string // Object Storage URL, read with the service account; query ignored
	Content   []byte // at most MaxInlineBytes
	Container Container
	Language  string // empty is DefaultLanguage
	Model     string // empty is Config.Model
	// Speakers labels each final's speaker ("0" or "1") as its channel_tag;
	// mono audio, two speakers at most (docs/platform.md).
	Speakers bool
	Summary  *SummaryRequest
}

// DeferredModel queues the audio at low priority, recognized within a day
// at a lower price ("Asynchronous recognition modes").
const DeferredModel = "deferred-general"

// Submit starts recognizing r and returns its operation id. Normalization
// and literature text are on (off in "auto"), the profanity filter and
// phone formatting off. A request that cannot be sent is errs.Invalid.
func (c *Client) Submit(ctx context.Context, r Request) (operationID string, err error) {
	req, err := c.recognizeRequest(r)
	if err != nil {
		return "", err
	}
	ctx, err = c.outgoing(ctx)
	if err != nil {
		return "", err
	}
	op, err := c.stt.RecognizeFile(ctx, req)
	if err != nil {
		return "", c.classify(callSubmit, err)
	}
	if e := op.GetError(); e != nil {
		return "", c.classify(callOperation, status.ErrorProto(e))
	}
	if op.GetId() == "" {
		return "", errs.Wrap(errors.New("RecognizeFile returned an operation without an id"),
			errs.Internal, codeInternal, "")
	}
	return op.GetId(), nil
}

func (c *Client) recognizeRequest(r Request) (*stt.RecognizeFileRequest, error) {
	req := &stt.RecognizeFileRequest{}
	switch {
	case r.URI != "" && len(r.Content) > 0:
		return nil, errs.New(errs.Invalid, CodeNoAudio, "the audio must be sent either by link or inline, not both")
	case r.URI != "":
		req.AudioSource = &stt.RecognizeFileRequest_Uri{Uri: r.URI}
	case len(r.Content) > MaxInlineBytes:
		return nil, errs.New(errs.Invalid, CodeAudioTooLarge, "the audio is too large to send inline to the recognizer")
	case len(r.Content) > 0:
		req.AudioSource = &stt.RecognizeFileRequest_Content{Content: r.Content}
	default:
		return nil, errs.New(errs.Invalid, CodeNoAudio, "there is no audio to recognize")
	}
	ct, ok := containerTypes[r.Container]
	if !ok {
		return nil, errs.New(errs.Invalid, CodeUnsupportedFormat, "the recognizer does not accept this audio format")
	}
	lang, model, err := c.languageModel(r.Language, r.Model)
	if err != nil {
		return nil, err
	}
	norm := &stt.TextNormalizationOptions{TextNormalization: stt.TextNormalizationOptions_TEXT_NORMALIZATION_DISABLED}
	if lang != AutoLanguage { // the profanity filter stays off
		norm = &stt.TextNormalizationOptions{TextNormalization: stt.TextNormalizationOptions_TEXT_NORMALIZATION_ENABLED,
			LiteratureText: true, PhoneFormattingMode: stt.TextNormalizationOptions_PHONE_FORMATTING_MODE_DISABLED}
	}
	req.RecognitionModel = &stt.RecognitionModelOptions{
		Model: model,
		AudioFormat: &stt.AudioFormatOptions{
			AudioFormat: &stt.AudioFormatOptions_ContainerAudio{
				ContainerAudio: &stt.ContainerAudio{ContainerAudioType: ct},
			},
		},
		TextNormalization: norm,
		LanguageRestriction: &stt.LanguageRestrictionOptions{
			RestrictionType: stt.LanguageRestrictionOptions_WHITELIST,
			LanguageCode:    []string{lang},
		},
	}
	if r.Speakers {
		req.SpeakerLabeling = &stt.SpeakerLabelingOptions{
			SpeakerLabeling: stt.SpeakerLabelingOptions_SPEAKER_LABELING_ENABLED,
		}
	}
	if r.Summary != nil {
		if r.Summary.ModelURI == "" || r.Summary.Instruction == "" {
			return nil, errs.New(errs.Invalid, CodeNoSummaryModel, "summaries are not set up on this installation")
		}
		req.Summarization = &stt.SummarizationOptions{
			ModelUri:   r.Summary.ModelURI,
			Properties: []*stt.SummarizationProperty{{Instruction: r.Summary.Instruction}},
		}
	}
	return req, nil
}
