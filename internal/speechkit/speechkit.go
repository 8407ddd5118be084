// Package speechkit is the adapter to Yandex SpeechKit: asynchronous
// recognition over gRPC API v3 and synchronous over REST API v1 (sync.go).
// It imports only go-sdk's gen packages: the root overruns the Cloud
// Functions build (docs/platform.md). Every error goes through classify:
// the kind decides retries, the code is stable, the message holds no SDK
// text, and keys and tokens are scrubbed from the causes.
package speechkit

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	sttsdk "github.com/yandex-cloud/go-sdk/gen/ai/sttv3"
	opsdk "github.com/yandex-cloud/go-sdk/gen/operation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"transcriber/internal/clock"
	"transcriber/internal/errs"
	"transcriber/internal/ident"
)

const (
	DefaultEndpoint          = "stt.api.cloud.yandex.net:443"
	DefaultOperationEndpoint = "operation.api.cloud.yandex.net:443"
	DefaultModel             = "general"
	// DefaultMetadataURL hands out the service account's IAM token (GCE format).
	DefaultMetadataURL = "http://169.254.169.254/computeMetadata/v1/instance/service-accounts/default/token"
)

// Config says where SpeechKit is and how to authenticate (SPEECHKIT_*).
type Config struct {
	Endpoint          string        // AsyncRecognizer; default DefaultEndpoint
	OperationEndpoint string        // OperationService; default DefaultOperationEndpoint
	APIKey            string        // when set, every call carries "authorization: Api-Key <key>"
	FolderID          string        // sent as x-folder-id with an IAM token
	Insecure          bool          // plaintext gRPC, for tests and the local fake
	Model             string        // recognition model; default DefaultModel
	MetadataURL       string        // IAM token source when APIKey is empty; default DefaultMetadataURL
	Clock             clock.Clock   // decides when a cached IAM token is due for refresh; default clock.System()
	SyncURL           string        // RecognizeSync's endpoint; default DefaultSyncURL; https, or http with Insecure
	SyncTimeout       time.Duration // bounds one synchronous request; default DefaultSyncTimeout
}

func (c Config) withDefaults() Config {
	c.Endpoint = cmp.Or(c.Endpoint, DefaultEndpoint)
	c.OperationEndpoint = cmp.Or(c.OperationEndpoint, DefaultOperationEndpoint)
	c.Model = cmp.Or(c.Model, DefaultModel)
	c.SyncURL = cmp.Or(c.SyncURL, DefaultSyncURL)
	c.SyncTimeout = cmp.Or(max(c.SyncTimeout, 0), DefaultSyncTimeout)
	return c
}

// Client calls SpeechKit; one per instance, safe for concurrent use.
type Client struct {
	cfg   Config
	auth  *Authorizer
	stt   *sttsdk.AsyncRecognizerClient
	ops   *opsdk.OperationServiceClient
	conns []*grpc.ClientConn

	syncURL *url.URL     // RecognizeSync's endpoint
	http    *http.Client // RecognizeSync's client
	closed  atomic.Bool
}

func (c Config) SyncEndpoint() string { return c.withDefaults().SyncURL }

// New returns a client without network I/O: grpc.NewClient connects and
// the IAM token comes on first use.
func New(cfg Config) (*Client, error) {
	cfg = cfg.withDefaults()
	auth, err := NewAuthorizer(cfg.APIKey, cfg.FolderID, cfg.MetadataURL, cfg.Clock)
	if err != nil {
		return nil, err
	}
	syncURL, err := parseSyncURL(cfg.SyncURL, cfg.Insecure)
	if err != nil {
		return nil, err
	}
	var creds credentials.TransportCredentials
	if cfg.Insecure {
		creds = insecure.NewCredentials()
	} else {
		creds = credentials.NewTLS(tlsConfig())
	}
	sttConn, err := grpc.NewClient(cfg.Endpoint, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("speechkit: endpoint: %w", err)
	}
	opConn, conns := sttConn, []*grpc.ClientConn{sttConn}
	if cfg.OperationEndpoint != cfg.Endpoint {
		if opConn, err = grpc.NewClient(cfg.OperationEndpoint, grpc.WithTransportCredentials(creds)); err != nil {
			return nil, errors.Join(fmt.Errorf("speechkit: operation endpoint: %w", err), sttConn.Close())
		}
		conns = append(conns, opConn)
	}
	return &Client{
		cfg:     cfg,
		auth:    auth,
		stt:     sttsdk.NewSTT(fixedConn(sttConn)).AsyncRecognizer(),
		ops:     opsdk.NewOperation(fixedConn(opConn)).Operation(),
		conns:   conns,
		syncURL: syncURL,
		http:    NewHTTPClient(cfg.SyncTimeout),
	}, nil
}

// Authorizer is the client's credentials, shared with Translate (one token cache).
func (c *Client) Authorizer() *Authorizer { return c.auth }

// Close closes the connections. Calls after Close fail.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.http.CloseIdleConnections()
	var all []error
	for _, conn := range c.conns {
		all = append(all, conn.Close())
	}
	return errors.Join(all...)
}

func fixedConn(conn *grpc.ClientConn) func(context.Context) (*grpc.ClientConn, error) {
	return func(context.Context) (*grpc.ClientConn, error) { return conn, nil }
}

// outgoing adds credentials, the folder and a fresh x-client-request-id,
// which support finds in SpeechKit's logs.
func (c *Client) outgoing(ctx context.Context) (context.Context, error) {
	if c.closed.Load() {
		return nil, errs.Wrap(errClosed, errs.Internal, codeInternal, "")
	}
	auth, folder, err := c.credentials(ctx)
	if err != nil {
		return nil, err
	}
	kv := []string{"x-client-request-id", ident.New(), "authorization", auth}
	if folder != "" {
		kv = append(kv, "x-folder-id", folder)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...), nil
}

// credentials is Authorizer.Authorization with its error classified.
func (c *Client) credentials(ctx context.Context) (authorization, folder string, err error) {
	if authorization, folder, err = c.auth.Authorization(ctx); err != nil {
		err = errs.Wrap(err, errs.Unavailable, codeAuthUnavailable, msgUnavailable)
	}
	return authorization, folder, err
}

func tlsConfig() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS12} }

var errClosed = errors.New("speechkit client is closed")
