package s3

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/errs"
)

// fakeS3 is just enough of S3 for uploads, path style, in memory: objects,
// multipart uploads with their parts, and counts of what it was sent. Each
// part is held for partDelay, so parts sent together overlap.
type fakeS3 struct {
	partDelay time.Duration
	failPart  int // answer 500 to this part number (0: none)

	mu          sync.Mutex
	objects     map[string][]byte
	types       map[string]string
	uploads     map[string]map[int][]byte // upload id → part number → bytes
	nextID      int
	inFlight    int
	maxInFlight int
	partSizes   []int // in the order received
	puts        int
	initiated   int
	completed   int
	aborted     int
}

func newFakeS3() *fakeS3 {
	return &fakeS3{objects: map[string][]byte{}, types: map[string]string{}, uploads: map[string]map[int][]byte{}}
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	q := r.URL.Query()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	switch {
	case r.Method == http.MethodPost && q.Has("uploads"):
		f.mu.Lock()
		f.initiated++
		f.nextID++
		id := "u" + strconv.Itoa(f.nextID)
		f.uploads[id] = map[int][]byte{}
		f.types[key] = r.Header.Get("Content-Type")
		f.mu.Unlock()
		_, _ = fmt.Fprintf(w, `<InitiateMultipartUploadResult><Key>%s</Key><UploadId>%s</UploadId></InitiateMultipartUploadResult>`, key, id)

	case r.Method == http.MethodPut && q.Has("partNumber"):
		num, _ := strconv.Atoi(q.Get("partNumber"))
		f.mu.Lock()
		f.inFlight++
		f.maxInFlight = max(f.maxInFlight, f.inFlight)
		f.mu.Unlock()
		time.Sleep(f.partDelay)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.inFlight--
		parts, ok := f.uploads[q.Get("uploadId")]
		switch {
		case !ok:
			writeErr(w, http.StatusNotFound, "NoSuchUpload")
		case num == f.failPart:
			writeErr(w, http.StatusInternalServerError, "InternalError")
		default:
			parts[num] = body
			f.partSizes = append(f.partSizes, len(body))
			w.Header().Set("ETag", fmt.Sprintf(`"etag-%d-%d"`, num, len(body)))
		}

	case r.Method == http.MethodPost && q.Has("uploadId"):
		var doc struct {
			Parts []struct {
				ETag       string `xml:"ETag"`
				PartNumber int    `xml:"PartNumber"`
			} `xml:"Part"`
		}
		if err := xml.Unmarshal(body, &doc); err != nil {
			writeErr(w, http.StatusBadRequest, "MalformedXML")
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		parts, ok := f.uploads[q.Get("uploadId")]
		if !ok {
			writeErr(w, http.StatusNotFound, "NoSuchUpload")
			return
		}
		var object []byte
		for i, p := range doc.Parts {
			data, ok := parts[p.PartNumber]
			if p.PartNumber != i+1 || !ok || p.ETag != fmt.Sprintf(`"etag-%d-%d"`, p.PartNumber, len(data)) {
				writeErr(w, http.StatusBadRequest, "InvalidPart")
				return
			}
			object = append(object, data...)
		}
		if len(doc.Parts) != len(parts) {
			writeErr(w, http.StatusBadRequest, "InvalidPart")
			return
		}
		delete(f.uploads, q.Get("uploadId"))
		f.objects[key] = object
		f.completed++
		_, _ = io.WriteString(w, `<CompleteMultipartUploadResult><Key>`+key+`</Key></CompleteMultipartUploadResult>`)

	case r.Method == http.MethodDelete && q.Has("uploadId"):
		f.mu.Lock()
		defer f.mu.Unlock()
		f.aborted++
		delete(f.uploads, q.Get("uploadId"))
		w.WriteHeader(http.StatusNoContent)

	case r.Method == http.MethodPut:
		f.mu.Lock()
		defer f.mu.Unlock()
		f.puts++
		f.objects[key] = body
		f.types[key] = r.Header.Get("Content-Type")

	default:
		writeErr(w, http.StatusNotImplemented, "NotImplemented")
	}
}

func writeErr(w http.ResponseWriter, status int, code string) {
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `<Error><Code>`+code+`</Code></Error>`)
}

// fakeStore is a Store on a fakeS3 with tiny parts, so tests can make many.
func fakeUploadStore(t *testing.T, f *fakeS3, partSize int64, concurrency int) (*Store, *[]int) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	st, err := Tuned(Config{
		Endpoint: srv.URL, Bucket: "bucket", AccessKeyID: "id", SecretAccessKey: "secret", PathStyle: true,
	}, 0, concurrency, 1, nil)
	require.NoError(t, err)
	st.partSize = partSize // below S3's minimum, which New refuses: fine for the fake
	var buffers []int
	var mu sync.Mutex
	st.onUploadDone = func(n int) {
		mu.Lock()
		defer mu.Unlock()
		buffers = append(buffers, n)
	}
	return st, &buffers
}

func stream(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// onlyReader hides everything but Read.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestUploadParts(t *testing.T) {
	const part = 1000
	cases := []struct {
		size        int
		concurrency int
		parts       []int // nil: one PUT
	}{
		{0, 2, nil},
		{1, 2, nil},
		{part - 1, 2, nil},
		{part, 2, nil}, // exactly one part: one PUT, not a one-part multipart upload
		{part + 1, 2, []int{part, 1}},
		{2 * part, 2, []int{part, part}},
		{3*part + part/2, 2, []int{part, part, part, part / 2}},
		{10*part + 3, 1, append(slices.Repeat([]int{part}, 10), 3)},
		{40*part + 17, 4, append(slices.Repeat([]int{part}, 40), 17)},
		{12 * part, 16, slices.Repeat([]int{part}, 12)},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d bytes, %d at once", tc.size, tc.concurrency), func(t *testing.T) {
			f := newFakeS3()
			f.partDelay = 5 * time.Millisecond
			st, buffers := fakeUploadStore(t, f, part, tc.concurrency)
			data := stream(tc.size)
			// Readers that hand out odd amounts, as pipes do.
			r := io.MultiReader(onlyReader{bytes.NewReader(data[:tc.size/3])}, onlyReader{bytes.NewReader(data[tc.size/3:])})

			n, err := st.Upload(context.Background(), "jobs/1/audio.ogg", r, "audio/ogg")
			require.NoError(t, err)
			require.Equal(t, int64(tc.size), n)
			require.Equal(t, data, f.objects["jobs/1/audio.ogg"])
			require.Equal(t, "audio/ogg", f.types["jobs/1/audio.ogg"])
			require.Empty(t, f.uploads, "no multipart upload left pending")
			require.Zero(t, f.aborted)
			require.Len(t, *buffers, 1)
			require.LessOrEqual(t, (*buffers)[0], tc.concurrency+1, "part buffers made")
			if tc.parts == nil {
				require.Equal(t, 1, f.puts)
				require.Zero(t, f.initiated)
				return
			}
			require.Zero(t, f.puts)
			require.Equal(t, 1, f.initiated)
			require.Equal(t, 1, f.completed)
			got := slices.Clone(f.partSizes)
			slices.Sort(got)
			want := slices.Clone(tc.parts)
			slices.Sort(want)
			require.Equal(t, want, got, "part sizes")
			require.LessOrEqual(t, f.maxInFlight, tc.concurrency, "parts in flight at once")
			if len(tc.parts) >= 2*tc.concurrency {
				require.Equal(t, tc.concurrency, f.maxInFlight, "parts do go out together")
			}
		})
	}
}

func TestUploadAborts(t *testing.T) {
	const part = 1000
	ctx := context.Background()

	t.Run("when a part fails", func(t *testing.T) {
		f := newFakeS3()
		f.failPart = 3
		st, buffers := fakeUploadStore(t, f, part, 2)
		_, err := st.Upload(ctx, "k", bytes.NewReader(stream(20*part)), "")
		require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
		require.Equal(t, 1, f.aborted)
		require.Empty(t, f.uploads)
		require.NotContains(t, f.objects, "k")
		require.Less(t, len(f.partSizes), 19, "reading stops after the failure")
		require.LessOrEqual(t, (*buffers)[0], 3)
	})

	t.Run("when the reader fails", func(t *testing.T) {
		f := newFakeS3()
		st, _ := fakeUploadStore(t, f, part, 2)
		bad := errs.New(errs.Permanent, "no_audio_stream", "the file has no audio")
		_, err := st.Upload(ctx, "k", io.MultiReader(bytes.NewReader(stream(5*part+10)), errReaderInternal{bad}), "")
		require.ErrorIs(t, err, bad)
		require.Equal(t, errs.Permanent, errs.KindOf(err))
		require.Equal(t, 1, f.aborted)
		require.Empty(t, f.uploads)
		require.NotContains(t, f.objects, "k")
	})

	t.Run("when ctx ends, with a fresh context", func(t *testing.T) {
		f := newFakeS3()
		st, _ := fakeUploadStore(t, f, part, 2)
		ctx, cancel := context.WithCancel(ctx)
		r := &cancelAt{r: bytes.NewReader(stream(50 * part)), at: 4 * part, cancel: cancel}
		_, err := st.Upload(ctx, "k", r, "")
		require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
		require.Equal(t, 1, f.aborted)
		require.Empty(t, f.uploads)
		require.NotContains(t, f.objects, "k")
	})

	t.Run("a reader failing before a second part starts nothing", func(t *testing.T) {
		f := newFakeS3()
		st, _ := fakeUploadStore(t, f, part, 2)
		_, err := st.Upload(ctx, "k", io.MultiReader(bytes.NewReader(stream(part+10)), errReaderInternal{io.ErrUnexpectedEOF}), "")
		require.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
		require.Zero(t, f.initiated+f.puts+f.aborted)
	})
}

type errReaderInternal struct{ err error }

func (e errReaderInternal) Read([]byte) (int, error) { return 0, e.err }

// cancelAt cancels once `at` bytes were read, and goes on reading.
type cancelAt struct {
	r      io.Reader
	read   int
	at     int
	cancel context.CancelFunc
}

func (c *cancelAt) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	if c.read >= c.at {
		c.cancel()
	}
	return n, err
}
