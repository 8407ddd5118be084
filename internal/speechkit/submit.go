package speechkit

import (
	"context"
	"errors"
	"strings"

	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
)

// Container is the audio container of a file sent for recognition.
type Container string

// The containers asynchronous recognition accepts (besides raw LPCM, which
// this service does not send). OGG Vorbis is not one of them.
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

// MaxInlineBytes is the most audio Request.Content may carry: SpeechKit's
// limit for a file sent in an API v3 request body is 60 MB (SpeechKit
// "Quotas and limits": "Maximum file size when uploading in an API v3
// request body: 60 MB"; 1 GB by URI). Whether that MB is 10^6 or 2^20 bytes
// is not documented, so the smaller is used.
const MaxInlineBytes = 60_000_000

// DefaultLanguage is the language recognized when Request.Language is empty.
const DefaultLanguage = "ru-RU"

// AutoLanguage asks SpeechKit to detect the language. Text normalization and
// punctuation are not applied in this mode (SpeechKit docs, "Recognition
// result normalization").
const AutoLanguage = "auto"

// languages is SpeechKit's table "Supported recognition languages" for the
// general model (Yandex Cloud docs, speechkit/stt/models.md). Codes are
// case-insensitive there; the key is the lower-case form. pt-BR is left out:
// the docs list it as available only in the general:rc model version.
var languages = func() map[string]string {
	m := map[string]string{}
	for _, code := range []string{
		"auto", "de-DE", "en-US", "es-ES", "fi-FI", "fr-FR", "he-HE", "it-IT",
		"kk-KZ", "nl-NL", "pl-PL", "pt-PT", "ru-RU", "sv-SE", "tr-TR", "uz-UZ",
	} {
		m[strings.ToLower(code)] = code
	}
	return m
}()

// ValidLanguage reports whether code is a language the general model
// recognizes, or "auto". Case does not matter.
func ValidLanguage(code string) bool {
	_, ok := languages[strings.ToLower(code)]
	return ok
}

// Request is one audio file to recognize: by URI or inline, not both.
type Request struct {
	// URI is the Object Storage https URL of the audio. SpeechKit reads it
	// with the caller's service account, which needs read access to the
	// bucket; query parameters are ignored.
	URI string
	// Content is the audio itself, at most MaxInlineBytes.
	Content []byte
	// Container is the audio's container format.
	Container Container
	// Language is a code ValidLanguage accepts; empty means DefaultLanguage.
	Language string
	// Model is the recognition model for this request; empty means the
	// client's Config.Model. DeferredModel asks for the deferred mode.
	Model string
	// Speakers turns on SpeechKit's speaker labeling: each final then
	// carries its speaker ("0" or "1") as its channel_tag. SpeechKit labels
	// mono audio only, and at most two speakers (docs/platform.md); the
	// caller sends it for mono audio.
	Speakers bool
	// Summary, when set, asks for a summary with the recognition; Result
	// puts it in Transcript.Summary.
	Summary *SummaryRequest
}

// DeferredModel is the model of SpeechKit's deferred mode: the audio goes
// to a low-priority queue, is recognized when the service is least busy
// (within a day) and billed at a lower price (SpeechKit docs,
// "Asynchronous recognition modes").
const DeferredModel = "deferred-general"

// Submit starts the recognition of r and returns its operation id, which
// Check, Result and Delete take. Text normalization (numbers as digits),
// literature text (punctuation and capitals) are on, the profanity filter and
// phone-number formatting off; in "auto" language mode normalization is off,
// as SpeechKit does not apply it there.
//
// Errors: errs.Invalid for a request that cannot be sent (no audio, both a
// URI and content, too much content, an unknown container or language);
// otherwise as classify says.
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
	lang := DefaultLanguage
	if r.Language != "" {
		canonical, ok := languages[strings.ToLower(r.Language)]
		if !ok {
			return nil, errs.New(errs.Invalid, CodeUnsupportedLanguage, "the recognizer does not support this language")
		}
		lang = canonical
	}
	norm := &stt.TextNormalizationOptions{
		TextNormalization:   stt.TextNormalizationOptions_TEXT_NORMALIZATION_ENABLED,
		ProfanityFilter:     false,
		LiteratureText:      true,
		PhoneFormattingMode: stt.TextNormalizationOptions_PHONE_FORMATTING_MODE_DISABLED,
	}
	if lang == AutoLanguage {
		norm = &stt.TextNormalizationOptions{
			TextNormalization: stt.TextNormalizationOptions_TEXT_NORMALIZATION_DISABLED,
		}
	}
	model := c.cfg.Model
	if r.Model != "" {
		model = r.Model
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
