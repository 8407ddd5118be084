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

const (
	sigService      = "s3"
	unsignedPayload = "UNSIGNED-PAYLOAD"
	emptySHA256     = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" // of no bytes
)

// signer is the SDK's SigV4 signer set up as its S3 client does (the path
// signed as sent, not escaped again), with one static key.
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

// sign signs req in its headers, X-Amz-Content-Sha256 included (the S3
// client, not the signer, sets it), and puts its query in canonical form.
// Headers set after it are not signed.
func (s signer) sign(req *http.Request, payloadHash string, at time.Time) error {
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	return s.v4.SignHTTP(context.Background(), s.creds, req, payloadHash, sigService, s.region, at)
}

// presign returns req's URL signed in its query for expires (whole
// seconds), its headers and a positive ContentLength signed too.
func (s signer) presign(req *http.Request, expires time.Duration, at time.Time) (string, error) {
	r := req.Clone(context.Background())
	q := r.URL.Query()
	q.Set("X-Amz-Expires", strconv.FormatInt(int64(expires/time.Second), 10))
	r.URL.RawQuery = q.Encode()
	u, _, err := s.v4.PresignHTTP(context.Background(), s.creds, r, unsignedPayload, sigService, s.region, at)
	return u, err
}

// escapeKey escapes a key as the SDK's S3 client does: all but RFC 3986's
// unreserved characters and "/" become %XX.
func escapeKey(key string) string { return httpbinding.EscapePath(key, false) }
