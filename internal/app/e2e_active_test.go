package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"transcriber/internal/job"
)

// burst sends n copies of one request at once over a client that keeps
// its connections alive (opened beforehand by a first burst), and returns
// the statuses and bodies.
func (c *client) burst(hc *http.Client, n int, method, path, body string) (statuses []int, bodies []string) {
	c.t.Helper()
	statuses, bodies = make([]int, n), make([]string, n)
	fails := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
			if err != nil {
				fails[i] = err
				return
			}
			req.Header.Set("Authorization", "Bearer "+c.secret)
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			<-start
			resp, err := hc.Do(req)
			if err != nil {
				fails[i] = err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			statuses[i], bodies[i], fails[i] = resp.StatusCode, string(b), err
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range fails {
		require.NoError(c.t, err)
	}
	return statuses, bodies
}

// The whole service with its counters and the default LIMIT_ACTIVE_JOBS
// of 3: fifty POST /v1/jobs at once on kept-alive connections make 3
// jobs; a job that ends done, one that ends failed and one deleted each
// free a place for the next, and GET /v1/usage counts what is unfinished.
func TestTheActiveJobsLimitOverTheWholeService(t *testing.T) {
	st := newStack(t)
	require.Equal(t, 3, st.app.Config.Limits.ActiveJobs)
	c := st.client()
	audio, err := os.ReadFile(fixtures(t)["voice.ogg"])
	require.NoError(t, err)
	create := `{"filename":"voice.ogg","size_bytes":` + itoa(len(audio)) + `}`

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 50}}
	t.Cleanup(hc.CloseIdleConnections)
	statuses, _ := c.burst(hc, 50, http.MethodGet, "/v1/usage", "")
	for _, s := range statuses {
		require.Equal(t, http.StatusOK, s)
	}
	statuses, bodies := c.burst(hc, 50, http.MethodPost, "/v1/jobs", create)
	var made []apiJob
	for i, s := range statuses {
		if s == http.StatusTooManyRequests {
			continue
		}
		require.Equal(t, http.StatusCreated, s, bodies[i])
		var j apiJob
		require.NoError(t, json.Unmarshal([]byte(bodies[i]), &j))
		made = append(made, j)
	}
	require.Len(t, made, 3, "exactly the limit is made")

	next := func(why string) {
		t.Helper()
		status, body, _ := c.call(http.MethodPost, "/v1/jobs", create, nil)
		require.Equal(t, http.StatusTooManyRequests, status, "at the limit before: %s", body)
		switch why {
		case "done":
			put(t, made[0], audio)
			st.ingest(st.nextEvent())
			st.poll()
			require.Equal(t, job.Done, st.job(made[0].ID).State)
		case "failed":
			put(t, made[1], bytes.Repeat([]byte("x"), len(audio)))
			st.ingest(st.nextEvent())
			require.Equal(t, job.Failed, st.job(made[1].ID).State)
		case "deleted":
			status, body, _ := c.call(http.MethodDelete, "/v1/jobs/"+made[2].ID, "", nil)
			require.Equal(t, http.StatusOK, status, body)
		}
		status, body, _ = c.call(http.MethodPost, "/v1/jobs", create, nil)
		require.Equal(t, http.StatusCreated, status, "a job %s frees its place: %s", why, body)
	}
	next("done")
	next("failed")
	next("deleted")

	var u struct {
		ActiveJobs  int `json:"active_jobs"`
		ActiveLimit int `json:"active_limit"`
	}
	status, body, _ := c.call(http.MethodGet, "/v1/usage", "", &u)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, 3, u.ActiveJobs, body)
	require.Equal(t, 3, u.ActiveLimit)
}
