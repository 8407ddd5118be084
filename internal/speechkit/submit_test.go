package speechkit_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"transcriber/internal/errs"
	"transcriber/internal/speechkit"
	"transcriber/internal/speechkit/speechkittest"
)

func mustClient(tb testing.TB, cfg speechkit.Config) *speechkit.Client {
	tb.Helper()
	c, err := speechkit.New(cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

func mustSubmit(tb testing.TB, c *speechkit.Client, r speechkit.Request) string {
	tb.Helper()
	id, err := c.Submit(context.Background(), r)
	require.NoError(tb, err)
	require.NotEmpty(tb, id)
	return id
}

// requireErr checks err's kind and code, and that what a person sees holds
// none of the SDK's or server's text.
func requireErr(tb testing.TB, err error, kind errs.Kind, code string) {
	tb.Helper()
	require.Error(tb, err)
	require.Equal(tb, kind, errs.KindOf(err), "kind of %v", err)
	require.Equal(tb, code, errs.CodeOf(err), "code of %v", err)
	require.NotContains(tb, errs.MessageOf(err), "fake says")
}

var uriRequest = speechkit.Request{
	URI:       "https://storage.yandexcloud.net/bucket/jobs/01j/audio.ogg",
	Container: speechkit.OggOpus,
	Language:  "ru-RU",
}

func TestSubmit(t *testing.T) {
	t.Run("by URI sends the audio link, format, language, model and normalization", func(t *testing.T) {
		srv := speechkittest.Start(t)
		c := mustClient(t, srv.Config())

		id := mustSubmit(t, c, uriRequest)

		require.Equal(t, []string{id}, srv.Operations())
		reqs := srv.Requests()
		require.Len(t, reqs, 1)
		req := reqs[0]
		require.Equal(t, uriRequest.URI, req.GetUri())
		require.Empty(t, req.GetContent())
		m := req.GetRecognitionModel()
		require.Equal(t, "general", m.GetModel())
		require.Equal(t, stt.ContainerAudio_OGG_OPUS, m.GetAudioFormat().GetContainerAudio().GetContainerAudioType())
		require.Equal(t, stt.LanguageRestrictionOptions_WHITELIST, m.GetLanguageRestriction().GetRestrictionType())
		require.Equal(t, []string{"ru-RU"}, m.GetLanguageRestriction().GetLanguageCode())
		n := m.GetTextNormalization()
		require.Equal(t, stt.TextNormalizationOptions_TEXT_NORMALIZATION_ENABLED, n.GetTextNormalization())
		require.True(t, n.GetLiteratureText())
		require.False(t, n.GetProfanityFilter())
		require.Equal(t, stt.TextNormalizationOptions_PHONE_FORMATTING_MODE_DISABLED, n.GetPhoneFormattingMode())
	})

	t.Run("inline content is sent as content", func(t *testing.T) {
		srv := speechkittest.Start(t)
		c := mustClient(t, srv.Config())
		audio := []byte("RIFF....WAVEfmt fake audio")

		mustSubmit(t, c, speechkit.Request{Content: audio, Container: speechkit.WAV})

		req := srv.Requests()[0]
		require.Equal(t, audio, req.GetContent())
		require.Empty(t, req.GetUri())
		require.Equal(t, stt.ContainerAudio_WAV, req.GetRecognitionModel().GetAudioFormat().GetContainerAudio().GetContainerAudioType())
	})

	t.Run("an empty language means ru-RU and a language's case is made canonical", func(t *testing.T) {
		srv := speechkittest.Start(t)
		c := mustClient(t, srv.Config())

		mustSubmit(t, c, speechkit.Request{URI: uriRequest.URI, Container: speechkit.MP3})
		mustSubmit(t, c, speechkit.Request{URI: uriRequest.URI, Container: speechkit.MP3, Language: "EN-us"})

		reqs := srv.Requests()
		require.Equal(t, []string{"ru-RU"}, reqs[0].GetRecognitionModel().GetLanguageRestriction().GetLanguageCode())
		require.Equal(t, []string{"en-US"}, reqs[1].GetRecognitionModel().GetLanguageRestriction().GetLanguageCode())
		require.Equal(t, stt.ContainerAudio_MP3, reqs[1].GetRecognitionModel().GetAudioFormat().GetContainerAudio().GetContainerAudioType())
	})

	t.Run("auto language turns normalization off", func(t *testing.T) {
		srv := speechkittest.Start(t)
		c := mustClient(t, srv.Config())

		mustSubmit(t, c, speechkit.Request{URI: uriRequest.URI, Container: speechkit.OggOpus, Language: "auto"})

		m := srv.Requests()[0].GetRecognitionModel()
		require.Equal(t, []string{"auto"}, m.GetLanguageRestriction().GetLanguageCode())
		require.Equal(t, stt.TextNormalizationOptions_TEXT_NORMALIZATION_DISABLED, m.GetTextNormalization().GetTextNormalization())
		require.False(t, m.GetTextNormalization().GetLiteratureText())
	})

	t.Run("the configured model is sent", func(t *testing.T) {
		srv := speechkittest.Start(t)
		cfg := srv.Config()
		cfg.Model = "deferred-general"
		c := mustClient(t, cfg)

		mustSubmit(t, c, uriRequest)

		require.Equal(t, "deferred-general", srv.Requests()[0].GetRecognitionModel().GetModel())
	})

	t.Run("a request's model overrides the configured one; none keeps it", func(t *testing.T) {
		srv := speechkittest.Start(t)
		c := mustClient(t, srv.Config())

		deferred := uriRequest
		deferred.Model = speechkit.DeferredModel
		mustSubmit(t, c, deferred)
		mustSubmit(t, c, uriRequest)

		reqs := srv.Requests()
		require.Equal(t, "deferred-general", reqs[0].GetRecognitionModel().GetModel())
		require.Equal(t, "general", reqs[1].GetRecognitionModel().GetModel())
	})

	t.Run("a request that cannot be sent is invalid and never reaches the recognizer", func(t *testing.T) {
		srv := speechkittest.Start(t)
		c := mustClient(t, srv.Config())
		cases := map[string]struct {
			req  speechkit.Request
			code string
		}{
			"no audio":          {speechkit.Request{Container: speechkit.WAV}, speechkit.CodeNoAudio},
			"link and content":  {speechkit.Request{URI: uriRequest.URI, Content: []byte{1}, Container: speechkit.WAV}, speechkit.CodeNoAudio},
			"too much content":  {speechkit.Request{Content: make([]byte, speechkit.MaxInlineBytes+1), Container: speechkit.WAV}, speechkit.CodeAudioTooLarge},
			"unknown container": {speechkit.Request{URI: uriRequest.URI, Container: "OGG_VORBIS"}, speechkit.CodeUnsupportedFormat},
			"no container":      {speechkit.Request{URI: uriRequest.URI}, speechkit.CodeUnsupportedFormat},
			"unknown language":  {speechkit.Request{URI: uriRequest.URI, Container: speechkit.WAV, Language: "xx-XX"}, speechkit.CodeUnsupportedLanguage},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				_, err := c.Submit(context.Background(), tc.req)
				requireErr(t, err, errs.Invalid, tc.code)
			})
		}
		require.Zero(t, srv.RecognizeCalls())
	})

	t.Run("content of exactly the limit is sent", func(t *testing.T) {
		if testing.Short() {
			t.Skip("sends 60 MB over gRPC; skipped with -short")
		}
		srv := speechkittest.Start(t)
		c := mustClient(t, srv.Config())

		mustSubmit(t, c, speechkit.Request{Content: make([]byte, speechkit.MaxInlineBytes), Container: speechkit.WAV})

		require.Len(t, srv.Requests()[0].GetContent(), speechkit.MaxInlineBytes)
	})
}

func TestSubmitErrors(t *testing.T) {
	cases := []struct {
		code     codes.Code
		wantKind errs.Kind
		wantCode string
	}{
		{codes.Unavailable, errs.Unavailable, speechkit.CodeUnavailable},
		{codes.DeadlineExceeded, errs.Unavailable, speechkit.CodeUnavailable},
		{codes.ResourceExhausted, errs.Unavailable, speechkit.CodeRecognitionQuota},
		{codes.Aborted, errs.Unavailable, speechkit.CodeUnavailable},
		{codes.Internal, errs.Unavailable, speechkit.CodeUnavailable},
		{codes.Unknown, errs.Unavailable, speechkit.CodeUnavailable},
		{codes.InvalidArgument, errs.Permanent, speechkit.CodeRejected},
		{codes.FailedPrecondition, errs.Permanent, speechkit.CodeRejected},
		{codes.OutOfRange, errs.Permanent, speechkit.CodeRejected},
		{codes.Unimplemented, errs.Permanent, speechkit.CodeRejected},
		{codes.NotFound, errs.Permanent, speechkit.CodeRejected},
		{codes.Unauthenticated, errs.Unavailable, speechkit.CodeAccessDenied},
		{codes.PermissionDenied, errs.Unavailable, speechkit.CodeAccessDenied},
		{codes.DataLoss, errs.Internal, "speechkit_error"},
	}
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	for _, tc := range cases {
		t.Run(tc.code.String(), func(t *testing.T) {
			srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
				return speechkittest.Plan{Err: status.Error(tc.code, "fake says no")}
			})

			_, err := c.Submit(context.Background(), uriRequest)

			requireErr(t, err, tc.wantKind, tc.wantCode)
			require.Contains(t, err.Error(), "fake says no", "the cause stays in the error for logs")
		})
	}
}

func TestCheck(t *testing.T) {
	t.Run("pending checks answer not done, then done", func(t *testing.T) {
		srv := speechkittest.Start(t)
		srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
			p := speechkittest.DefaultPlan()
			p.PendingChecks = 3
			return p
		})
		c := mustClient(t, srv.Config())
		id := mustSubmit(t, c, uriRequest)

		for i := 0; i < 3; i++ {
			done, err := c.Check(context.Background(), id)
			require.NoError(t, err)
			require.False(t, done, "check %d", i+1)
		}
		done, err := c.Check(context.Background(), id)
		require.NoError(t, err)
		require.True(t, done)
		require.Equal(t, 4, srv.GetCalls(id))
	})

	t.Run("an operation that failed on the audio is done and permanent", func(t *testing.T) {
		srv := speechkittest.Start(t)
		srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
			return speechkittest.Plan{PendingChecks: 1, OpErr: status.New(codes.InvalidArgument, "fake says bad audio")}
		})
		c := mustClient(t, srv.Config())
		id := mustSubmit(t, c, uriRequest)

		done, err := c.Check(context.Background(), id)
		require.NoError(t, err)
		require.False(t, done)
		done, err = c.Check(context.Background(), id)
		require.True(t, done)
		requireErr(t, err, errs.Permanent, speechkit.CodeRejected)
		require.Equal(t, "the recognizer could not process this audio", errs.MessageOf(err))
	})

	t.Run("an operation that failed transiently is done and asks for a new submit", func(t *testing.T) {
		srv := speechkittest.Start(t)
		srv.Script(func(*stt.RecognizeFileRequest) speechkittest.Plan {
			return speechkittest.Plan{OpErr: status.New(codes.Internal, "fake says oops")}
		})
		c := mustClient(t, srv.Config())
		id := mustSubmit(t, c, uriRequest)

		done, err := c.Check(context.Background(), id)

		require.True(t, done)
		requireErr(t, err, errs.Unavailable, speechkit.CodeRecognitionFailed)
	})

	t.Run("an unknown operation has expired", func(t *testing.T) {
		srv := speechkittest.Start(t)
		c := mustClient(t, srv.Config())

		done, err := c.Check(context.Background(), "nosuchoperation")

		require.False(t, done)
		requireErr(t, err, errs.Permanent, speechkit.CodeExpired)
	})

	t.Run("an empty operation id is invalid", func(t *testing.T) {
		srv := speechkittest.Start(t)
		c := mustClient(t, srv.Config())

		_, err := c.Check(context.Background(), "")
		requireErr(t, err, errs.Invalid, speechkit.CodeNoOperation)
		_, err = c.Result(context.Background(), "")
		requireErr(t, err, errs.Invalid, speechkit.CodeNoOperation)
		requireErr(t, c.Delete(context.Background(), ""), errs.Invalid, speechkit.CodeNoOperation)
		require.Empty(t, srv.Calls())
	})
}

func TestDelete(t *testing.T) {
	srv := speechkittest.Start(t)
	c := mustClient(t, srv.Config())
	id := mustSubmit(t, c, uriRequest)

	require.NoError(t, c.Delete(context.Background(), id))
	require.NoError(t, c.Delete(context.Background(), id), "deleting what is gone is not an error")
	require.NoError(t, c.Delete(context.Background(), "nosuchoperation"))

	require.Equal(t, []string{id, id, "nosuchoperation"}, srv.Deletes())
	_, err := c.Result(context.Background(), id)
	requireErr(t, err, errs.Permanent, speechkit.CodeExpired)
}

func TestValidLanguage(t *testing.T) {
	for _, code := range []string{
		"ru-RU", "en-US", "de-DE", "es-ES", "fi-FI", "fr-FR", "he-HE", "it-IT",
		"kk-KZ", "nl-NL", "pl-PL", "pt-PT", "sv-SE", "tr-TR", "uz-UZ", "auto",
		"RU-ru", "AUTO",
	} {
		require.True(t, speechkit.ValidLanguage(code), code)
	}
	for _, code := range []string{"", "ru", "en-GB", "pt-BR", "kk-KK", "xx-XX", "auto "} {
		require.False(t, speechkit.ValidLanguage(code), code)
	}
}

func TestNewDoesNoNetwork(t *testing.T) {
	// Nothing listens on these addresses; construction and Close must not care.
	c, err := speechkit.New(speechkit.Config{APIKey: "k", Endpoint: "127.0.0.1:1", OperationEndpoint: "127.0.0.1:2", Insecure: true})
	require.NoError(t, err)
	require.NoError(t, c.Close())

	_, err = speechkit.New(speechkit.Config{MetadataURL: "::not a url"})
	require.Error(t, err)
}

func TestClosedClientFails(t *testing.T) {
	srv := speechkittest.Start(t)
	c, err := speechkit.New(srv.Config())
	require.NoError(t, err)
	mustSubmit(t, c, uriRequest)
	require.NoError(t, c.Close())

	_, err = c.Submit(context.Background(), uriRequest)

	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "closed"), err.Error())
	require.Equal(t, 1, srv.RecognizeCalls())
}
