package s3

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go/encoding/httpbinding"
)

// Requests are signed with AWS Signature Version 4 by the SDK's signer
// (aws-sdk-go-v2/aws/signer/v4), set up as the SDK's S3 client sets it up:
// the path is signed as sent, without a second escaping.
const (
	sigService      = "s3"
	unsignedPayload = "UNSIGNED-PAYLOAD"
	// emptySHA256 is the hex SHA-256 of no bytes: the payload hash of a
	// request without a body.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// signer signs S3 requests with one static key.
type signer struct {
	v4     *v4.Signer
	creds  aws.Credentials
	region string
}

func newSigner(keyID, secret, region string) signer {
	return signer{
		v4:     v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }),
		creds:  aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret},
		region: region,
	}
}

// sign signs req in its headers at time at: it sets X-Amz-Content-Sha256
// (payloadHash, the hex SHA-256 of the body; the SDK's S3 client sets it
// before signing, the signer does not), X-Amz-Date and Authorization, and
// rewrites req.URL.RawQuery in canonical form, which is what gets sent. The
// host signed is req.Host, else req.URL.Host, without a default port: the
// signer sets req.Host to that host when it strips a port, so the Host sent
// is the one signed. Headers set after sign are not signed.
func (s signer) sign(req *http.Request, payloadHash string, at time.Time) error {
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	return s.v4.SignHTTP(context.Background(), s.creds, req, payloadHash, sigService, s.region, at)
}

// presign returns req's URL signed in its query at time at, valid for
// expires (whole seconds), with an unsigned payload as S3 wants for
// presigned URLs. The headers req carries (and its ContentLength when more
// than zero) are signed: whoever uses the URL must send them with the same
// values. (The signer would move X-Amz-* headers other than S3's signed
// ones into the query; presign is never given any.) req is not changed.
func (s signer) presign(req *http.Request, expires time.Duration, at time.Time) (string, error) {
	r := req.Clone(context.Background())
	q := r.URL.Query()
	// The signer signs the query it is given, and the lifetime is part of it.
	q.Set("X-Amz-Expires", strconv.FormatInt(int64(expires/time.Second), 10))
	r.URL.RawQuery = q.Encode()
	u, _, err := s.v4.PresignHTTP(context.Background(), s.creds, r, unsignedPayload, sigService, s.region, at)
	return u, err
}

// escapeKey escapes an object key for a URL path as the SDK's S3 client
// does: every byte but RFC 3986's unreserved characters and the slash
// becomes %XX, the form S3 signs.
func escapeKey(key string) string { return httpbinding.EscapePath(key, false) }
