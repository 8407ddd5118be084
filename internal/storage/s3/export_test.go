package s3

import (
	"cmp"
	"net/http"
)

// Tuned is New(cfg) with what only tests change: the part size, the parts
// at once, the attempts and the HTTP client (zero values: the defaults).
func Tuned(cfg Config, partSize int64, concurrency, attempts int, client *http.Client) (*Store, error) {
	st, err := New(cfg)
	if err != nil {
		return nil, err
	}
	st.partSize = cmp.Or(partSize, st.partSize)
	st.concurrency = cmp.Or(concurrency, st.concurrency)
	st.maxAttempts = cmp.Or(attempts, st.maxAttempts)
	if client != nil {
		st.http = client
	}
	return st, nil
}
