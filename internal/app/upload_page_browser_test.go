package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"transcriber/internal/app"
	"transcriber/internal/job"
	"transcriber/internal/uploadlink"
)

// The upload page in a real browser: a Telegram file too large for the bot
// goes from the page to the storage, and the page follows the job through
// the real pipeline until the transcript is in the chat.
func TestUploadPageInABrowserReachesDone(t *testing.T) {
	b := startBrowser(t)
	secret := []byte("upload-link-secret-of-the-browser-test-0123456789")
	st := newStack(t, func(c *app.Config) { c.API.UploadLinkSecret = secret })
	api := st.apiServer()

	audio, err := os.ReadFile(fixture(t, "voice.ogg", append(tone, "-c:a", "libopus", "-b:a", "24k")...))
	require.NoError(t, err)
	j, created, err := st.store.CreateForMessage(st.ctx, job.Draft{
		Source: job.SourceTelegram, TelegramChatID: 7001, TelegramMessageID: 12,
		SizeBytes: int64(len(audio)), ContentType: "audio/ogg", Filename: "voice.ogg", UploadWindow: 24 * time.Hour,
	})
	require.NoError(t, err)
	require.True(t, created)
	files := t.TempDir()
	right := filepath.Join(files, "voice.ogg")
	require.NoError(t, os.WriteFile(right, audio, 0o600))
	wrong := filepath.Join(files, "another.ogg")
	require.NoError(t, os.WriteFile(wrong, append(audio, 0), 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := b.open(ctx, uploadlink.URL(api.URL, secret, j.ID))
	s := p.waitFor(ctx, "the picker", func(s pageState) bool { return s.Picker })
	require.Contains(t, s.Text, "voice.ogg")
	require.Contains(t, s.Text, fmt.Sprintf("(%d bytes)", len(audio)))

	// Another file is refused before anything is sent.
	p.setFile(ctx, "#file", wrong)
	s = p.waitFor(ctx, "the size refusal", func(s pageState) bool { return strings.Contains(s.Status, "another file") })
	require.Contains(t, s.Status, fmt.Sprintf("%d bytes", len(audio)+1))
	require.Contains(t, s.Status, fmt.Sprintf("%d bytes", len(audio)))
	require.True(t, s.BarHidden, "no upload started")
	require.False(t, st.s3.Has(job.SourceKey(j.ID)))

	// The right one goes up; its landing is the storage trigger's event.
	p.setFile(ctx, "#file", right)
	var ev []byte
	select {
	case ev = <-st.events:
	case <-ctx.Done():
		t.Fatalf("the page's upload made no ObjectCreate event; the page shows %+v; browser log: %v", p.state(ctx), b.logs())
	}
	s = p.waitFor(ctx, "the upload at 100% and the job awaiting ingest", func(s pageState) bool {
		return s.Progress == 100 && strings.Contains(s.Status, "Waiting for the service")
	})
	require.Equal(t, "100%", s.Percent)
	require.Equal(t, audio, st.s3.Object(t, job.SourceKey(j.ID)), "the storage has the file's bytes")

	st.ingest(ev)
	if st.job(j.ID).State != job.Done {
		st.poll()
	}
	got := st.job(j.ID)
	require.Equal(t, job.Done, got.State, "error: %s %s", got.ErrorCode, got.ErrorMessage)
	require.Equal(t, []job.State{job.Done}, st.ended.of(j.ID), "the chat hears of it once")
	require.Equal(t, "Привет мир.", st.result(j.ID).Utterances[0].Normal)

	// The page may first show a status it fetched while ingest ran
	// ("Transcribing… 10%"); it follows the job until it ends.
	s = p.waitFor(ctx, "the done message", func(s pageState) bool { return s.StatusClass == "ok" || s.StatusClass == "error" })
	require.Equal(t, "Done. The transcript is in your Telegram chat.", s.Status)
	require.Equal(t, "ok", s.StatusClass)
	require.Equal(t, 100, s.Progress)
	require.True(t, s.PickerDisabled, "the file input stays off once the upload is done")
	require.Empty(t, b.logs(), "no CSP violation, no exception, no failed request, nothing on the console")
}

// pageState is what the test reads of the page.
type pageState struct {
	Picker         bool   `json:"picker"`
	PickerDisabled bool   `json:"pickerDisabled"`
	BarHidden      bool   `json:"barHidden"`
	Progress       int    `json:"progress"`
	Percent        string `json:"percent"`
	Status         string `json:"status"`
	StatusClass    string `json:"statusClass"`
	Text           string `json:"text"`
}

const readPage = `(() => {
  const el = (id) => document.getElementById(id);
  if (!el("page")) { return {text: document.body ? document.body.innerText : ""}; }
  return {
    picker: !el("pick").hidden, pickerDisabled: el("file").disabled,
    barHidden: el("bar").hidden, progress: el("progress").value, percent: el("percent").textContent,
    status: el("status").textContent, statusClass: el("status").className, text: document.body.innerText,
  };
})()`

// browser is headless Chromium driven over the DevTools protocol through
// --remote-debugging-pipe: commands go in on the browser's fd 3, answers
// and events come out on its fd 4, each a JSON message ended by a NUL. No
// port, no websocket, no dependency.
type browser struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     *os.File // to the browser's fd 3
	out    *os.File // from the browser's fd 4
	exited chan struct{}
	closed chan struct{} // the read loop ended

	wmu sync.Mutex // one message written at a time

	mu      sync.Mutex
	next    int64
	waiting map[int64]chan cdpMessage
	log     []string
}

type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

const chromiumPath = "/usr/bin/chromium"

func startBrowser(t *testing.T) *browser {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skip("needs chromium (apt-get install -y chromium)")
	}
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile")
	stderr, err := os.Create(filepath.Join(dir, "chromium.log"))
	require.NoError(t, err)
	browserIn, in, err := os.Pipe()
	require.NoError(t, err)
	out, browserOut, err := os.Pipe()
	require.NoError(t, err)
	// Without internet, a browser left to itself floods refused
	// connections: everything that phones home is off.
	cmd := exec.Command(chromiumPath,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--disable-extensions", "--no-default-browser-check", "--mute-audio",
		"--lang=en-US", "--user-data-dir="+profile, "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{browserIn, browserOut} // fds 3 and 4
	cmd.Stdout, cmd.Stderr = stderr, stderr
	require.NoError(t, cmd.Start())
	_ = browserIn.Close()
	_ = browserOut.Close()
	_ = stderr.Close()
	b := &browser{t: t, cmd: cmd, in: in, out: out, exited: make(chan struct{}), closed: make(chan struct{}),
		waiting: map[int64]chan cdpMessage{}}
	go func() {
		_ = cmd.Wait()
		close(b.exited)
	}()
	go b.read()
	// Registered after TempDir, so it runs first: the browser is gone
	// before its profile directory is removed.
	t.Cleanup(func() {
		b.close()
		if t.Failed() {
			raw, _ := os.ReadFile(filepath.Join(dir, "chromium.log"))
			var lines []string
			for _, l := range strings.Split(string(raw), "\n") {
				if !strings.Contains(l, "dbus") { // no D-Bus in a container: noise
					lines = append(lines, l)
				}
			}
			if len(lines) > 60 {
				lines = lines[len(lines)-60:]
			}
			t.Logf("chromium's output (end, without D-Bus complaints):\n%s\nthe page's console:\n%s",
				strings.Join(lines, "\n"), strings.Join(b.logs(), "\n"))
		}
	})
	return b
}

// close asks the browser to quit and waits for it; it kills the process
// it started if the browser does not quit.
func (b *browser) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.call(ctx, "", "Browser.close", nil, nil)
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.exited
	}
	_ = b.in.Close()
	_ = b.out.Close()
}

func (b *browser) read() {
	defer close(b.closed)
	r := bufio.NewReader(b.out)
	for {
		raw, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			b.mu.Lock()
			ch := b.waiting[m.ID]
			delete(b.waiting, m.ID)
			b.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		if line := consoleLine(m); line != "" {
			b.mu.Lock()
			b.log = append(b.log, line)
			b.mu.Unlock()
		}
	}
}

// consoleLine is what the page said on its console, an exception it threw,
// or a message of the browser's about it (a CSP violation, a failed
// request); empty for other events.
func consoleLine(m cdpMessage) string {
	switch m.Method {
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		_ = json.Unmarshal(m.Params, &p)
		var parts []string
		for _, a := range p.Args {
			parts = append(parts, fmt.Sprint(a.Value, a.Description))
		}
		return "console." + p.Type + ": " + strings.Join(parts, " ")
	case "Runtime.exceptionThrown":
		var p struct {
			Details struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		_ = json.Unmarshal(m.Params, &p)
		return "exception: " + p.Details.Text + " " + p.Details.Exception.Description
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level  string `json:"level"`
				Source string `json:"source"`
				Text   string `json:"text"`
				URL    string `json:"url"`
			} `json:"entry"`
		}
		_ = json.Unmarshal(m.Params, &p)
		return "log " + p.Entry.Level + " (" + p.Entry.Source + "): " + p.Entry.Text + " " + p.Entry.URL
	}
	return ""
}

func (b *browser) logs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.log...)
}

// call sends one command (to a page's session, or to the browser when
// session is empty) and decodes its result into out.
func (b *browser) call(ctx context.Context, session, method string, params, out any) error {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpMessage, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.waiting, id)
		b.mu.Unlock()
	}()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	b.wmu.Lock()
	_, err = b.in.Write(append(raw, 0))
	b.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-b.closed:
		return fmt.Errorf("%s: %w", method, io.ErrUnexpectedEOF)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// page is one tab.
type page struct {
	b       *browser
	session string
}

// open makes a tab, turns on the events the test reads, and loads url.
func (b *browser) open(ctx context.Context, url string) *page {
	t := b.t
	t.Helper()
	var target struct {
		TargetID string `json:"targetId"`
	}
	require.NoError(t, b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target))
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached))
	p := &page{b: b, session: attached.SessionID}
	for _, domain := range []string{"Runtime", "Log", "Page"} {
		require.NoError(t, b.call(ctx, p.session, domain+".enable", nil, nil))
	}
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	require.NoError(t, b.call(ctx, p.session, "Page.navigate", map[string]any{"url": url}, &nav))
	require.Empty(t, nav.ErrorText, "the page loads")
	return p
}

// state reads the page; a page still loading reads as empty.
func (p *page) state(ctx context.Context) pageState {
	var r struct {
		Result struct {
			Value pageState `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := p.b.call(ctx, p.session, "Runtime.evaluate", map[string]any{"expression": readPage, "returnByValue": true}, &r); err != nil {
		return pageState{Status: "(unreadable: " + err.Error() + ")"}
	}
	if r.ExceptionDetails != nil {
		return pageState{Status: "(unreadable: " + r.ExceptionDetails.Text + ")"}
	}
	return r.Result.Value
}

// waitFor reads the page until ok holds of it, failing the test with the
// last reading when ctx ends first.
func (p *page) waitFor(ctx context.Context, what string, ok func(pageState) bool) pageState {
	t := p.b.t
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		s := p.state(ctx)
		if ok(s) {
			return s
		}
		if s.StatusClass == "error" {
			t.Fatalf("waiting for %s: the page shows an error: %+v; browser log: %v", what, s, p.b.logs())
		}
		for _, l := range p.b.logs() {
			if strings.Contains(l, "Content Security Policy") || strings.HasPrefix(l, "exception") {
				t.Fatalf("waiting for %s: %s; the page shows %+v", what, l, s)
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: the page shows %+v; browser log: %v", what, s, p.b.logs())
		}
	}
}

// setFile puts file on the file input that selector names, as a person
// picking it does (the input's change event fires).
func (p *page) setFile(ctx context.Context, selector, file string) {
	t := p.b.t
	t.Helper()
	var doc struct {
		Root struct {
			NodeID int64 `json:"nodeId"`
		} `json:"root"`
	}
	require.NoError(t, p.b.call(ctx, p.session, "DOM.getDocument", map[string]any{"depth": 0}, &doc))
	var found struct {
		NodeID int64 `json:"nodeId"`
	}
	require.NoError(t, p.b.call(ctx, p.session, "DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": selector}, &found))
	if found.NodeID == 0 {
		t.Fatalf("no element %s on the page", selector)
	}
	require.NoError(t, p.b.call(ctx, p.session, "DOM.setFileInputFiles", map[string]any{"nodeId": found.NodeID, "files": []string{file}}, nil))
}
