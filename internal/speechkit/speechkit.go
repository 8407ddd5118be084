// Package speechkit is the adapter to Yandex SpeechKit's asynchronous
// recognition, API v3: submit an audio file, poll its operation, read the
// result as a transcript, delete the result; and to its synchronous
// recognition, REST API v1 (sync.go): a short recording in one request, its
// text in the answer.
//
// It speaks gRPC through the generated protos of go-genproto and the light
// lazy clients of go-sdk's gen/ai/sttv3 and gen/operation subpackages; the
// go-sdk root package is never imported, because it pulls in every Yandex
// Cloud service, and the Cloud Functions builder has five minutes at half a
// CPU (docs/platform.md, "Cloud Functions: the Go build").
//
// Every error a method returns is classified by the errs package in one
// place (classify): the kind decides whether the pipeline retries, the code
// is a stable word, and the message never holds SDK text, keys or tokens.
// The API key and IAM tokens are also scrubbed from the wrapped causes, so a
// log line of the full error cannot leak them.
package speechkit

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/url"
	"sync"
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

// Defaults for the zero fields of Config.
const (
	DefaultEndpoint          = "stt.api.cloud.yandex.net:443"
	DefaultOperationEndpoint = "operation.api.cloud.yandex.net:443"
	DefaultModel             = "general"
	// DefaultMetadataURL is the metadata service of Cloud Functions (and
	// Compute), which hands out the IAM token of the function's service
	// account in the Google Compute Engine format.
	DefaultMetadataURL = "http://169.254.169.254/computeMetadata/v1/instance/service-accounts/default/token"
)

// Config says where SpeechKit is and how to authenticate. The entrypoint
// fills it from the environment (SPEECHKIT_*); this package reads no
// environment itself.
type Config struct {
	Endpoint          string      // AsyncRecognizer; default DefaultEndpoint
	OperationEndpoint string      // OperationService; default DefaultOperationEndpoint
	APIKey            string      // when set, every call carries "authorization: Api-Key <key>"
	FolderID          string      // sent as x-folder-id with an IAM token
	Insecure          bool        // plaintext gRPC, for tests and the local fake
	Model             string      // recognition model; default DefaultModel
	MetadataURL       string      // IAM token source when APIKey is empty; default DefaultMetadataURL
	Clock             clock.Clock // decides when a cached IAM token is due for refresh; default clock.System()
	// SyncURL is synchronous recognition's REST endpoint (RecognizeSync);
	// default DefaultSyncURL. https, or http with Insecure.
	SyncURL string
	// SyncTimeout bounds one synchronous request; default
	// DefaultSyncTimeout.
	SyncTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	if c.OperationEndpoint == "" {
		c.OperationEndpoint = DefaultOperationEndpoint
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.MetadataURL == "" {
		c.MetadataURL = DefaultMetadataURL
	}
	if c.Clock == nil {
		c.Clock = clock.System()
	}
	if c.SyncURL == "" {
		c.SyncURL = DefaultSyncURL
	}
	if c.SyncTimeout <= 0 {
		c.SyncTimeout = DefaultSyncTimeout
	}
	return c
}

// Client calls SpeechKit. Make one per instance and reuse it: connections
// are opened on the first call and kept. It is safe for concurrent use.
type Client struct {
	cfg   Config
	auth  *Authorizer
	stt   *sttsdk.AsyncRecognizerClient
	ops   *opsdk.OperationServiceClient
	conns []*lazyConn

	syncURL *url.URL     // RecognizeSync's endpoint
	http    *http.Client // RecognizeSync's client
	closed  atomic.Bool
}

// New returns a client. It does no network I/O: the gRPC connections are
// made on first use, and the IAM token is fetched on the first call that
// needs it.
// SyncEndpoint is where synchronous requests go: SyncURL, or
// DefaultSyncURL when it is empty.
func (c Config) SyncEndpoint() string { return c.withDefaults().SyncURL }

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
	sttConn := &lazyConn{target: cfg.Endpoint, creds: creds}
	opConn := sttConn
	conns := []*lazyConn{sttConn}
	if cfg.OperationEndpoint != cfg.Endpoint {
		opConn = &lazyConn{target: cfg.OperationEndpoint, creds: creds}
		conns = append(conns, opConn)
	}
	c := &Client{
		cfg:   cfg,
		auth:  auth,
		stt:   sttsdk.NewSTT(sttConn.get).AsyncRecognizer(),
		ops:   opsdk.NewOperation(opConn.get).Operation(),
		conns: conns,

		syncURL: syncURL,
		http:    NewHTTPClient(cfg.SyncTimeout),
	}
	return c, nil
}

// Authorizer is the client's credentials, for another API that takes the
// same ones (Translate), so that both share one IAM token cache.
func (c *Client) Authorizer() *Authorizer { return c.auth }

// Close closes the connections. Calls after Close fail.
func (c *Client) Close() error {
	c.closed.Store(true)
	c.http.CloseIdleConnections()
	var all []error
	for _, lc := range c.conns {
		all = append(all, lc.close())
	}
	return errors.Join(all...)
}

// outgoing returns ctx carrying the call's metadata: credentials, the folder
// with an IAM token, and a fresh x-client-request-id that support can find in
// SpeechKit's logs.
func (c *Client) outgoing(ctx context.Context) (context.Context, error) {
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

// credentials returns the value of a call's authorization header, and the
// folder to name with it (Authorizer.Authorization). Both APIs, gRPC and
// REST, authenticate alike.
func (c *Client) credentials(ctx context.Context) (authorization, folder string, err error) {
	authorization, folder, err = c.auth.Authorization(ctx)
	if err != nil {
		return "", "", errs.Wrap(err, errs.Unavailable, codeAuthUnavailable, msgUnavailable)
	}
	return authorization, folder, nil
}

// tlsConfig is the TLS of every connection to SpeechKit: 1.2 at the least.
func tlsConfig() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS12} }

// errClosed is returned by calls made after Close.
var errClosed = errors.New("speechkit client is closed")

// lazyConn opens one gRPC connection on first use and keeps it. A failed
// open is not remembered, so the next call tries again.
type lazyConn struct {
	target string
	creds  credentials.TransportCredentials

	mu     sync.Mutex
	conn   *grpc.ClientConn
	closed bool
}

func (l *lazyConn) get(context.Context) (*grpc.ClientConn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errClosed
	}
	if l.conn == nil {
		conn, err := grpc.NewClient(l.target, grpc.WithTransportCredentials(l.creds))
		if err != nil {
			return nil, err
		}
		l.conn = conn
	}
	return l.conn, nil
}

func (l *lazyConn) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.conn == nil {
		return nil
	}
	err := l.conn.Close()
	l.conn = nil
	return err
}
