// Package telegramtest is a Bot API server for tests: it answers the
// methods the bot uses as Telegram does (multipart or JSON requests, the
// {"ok": …} envelope, error codes with retry_after), serves getFile and file
// downloads, hands out queued updates to getUpdates, records every call, and
// keeps the messages the bot posted as they stand after its edits.
// Failures are scripted per method: a 429 with retry_after, a 403, a 400;
// and so are slow answers: a call applied at once and answered later, or
// only once the client has given up on it.
package telegramtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
)

// Token is the bot token the server accepts. It is shaped like a real one so
// a test that scans logs for it finds it if it leaks.
const Token = "123456789:AAF-test-token-do-not-log-0123456789ab"

// Username is the bot's @username that getMe answers.
const Username = "transcriber_bot"

// Call is one recorded Bot API call.
type Call struct {
	Method string
	Params map[string]string // form or JSON fields; objects as their JSON text
	File   []byte            // an uploaded document's bytes
	Name   string            // its file name
}

// Int is a numeric parameter, 0 when absent.
func (c Call) Int(name string) int64 {
	n, _ := strconv.ParseInt(c.Params[name], 10, 64)
	return n
}

// ReplyTo is the message id in reply_parameters, 0 when absent.
func (c Call) ReplyTo() int64 {
	var rp struct {
		MessageID int64 `json:"message_id"`
	}
	_ = json.Unmarshal([]byte(c.Params["reply_parameters"]), &rp)
	return rp.MessageID
}

// Failure is a scripted error answer.
type Failure struct {
	Code        int // 429, 403, 400, 500 …
	Description string
	RetryAfter  int // seconds, with 429
}

// Server is the fake Bot API.
type Server struct {
	*httptest.Server
	t testing.TB

	mu      sync.Mutex
	calls   []Call
	files   map[string]file // by file id
	fail    map[string][]Failure
	updates []json.RawMessage
	nextID  int64
	gone    map[int64]bool // message ids deleted by the user
	cut     bool           // file downloads break off mid-answer
	webhook WebhookInfo    // what setWebhook set; getWebhookInfo answers it
	msgs    map[int64]*Message
	delay   map[string][]time.Duration // per method, the next calls' answer delays
}

// Message is a message the bot posted, as it stands after its edits: its
// text, or its document and caption.
type Message struct {
	ID      int64
	Chat    int64
	Text    string
	Doc     []byte // the document's bytes; nil for a text message
	DocName string
	Caption string
}

// Late is the delay AnswerAfter takes to answer only once the client has
// given up on the call (its connection closed): Telegram applied the
// message and its answer came too late.
const Late time.Duration = -1

// lateCap bounds how long a Late answer waits for the client to give up,
// so a client that never does cannot hold a test.
const lateCap = 30 * time.Second

// WebhookInfo is what getWebhookInfo answers: the URL setWebhook set
// ("" when none), and the delivery state a test scripts with
// SetWebhookInfo.
type WebhookInfo struct {
	URL                string
	PendingUpdateCount int
	LastErrorDate      int64 // Unix seconds; 0: none
	LastErrorMessage   string
}

type file struct {
	path string
	data []byte
}

// Start runs a server until the test ends.
func Start(t testing.TB) *Server {
	s := &Server{t: t, files: map[string]file{}, fail: map[string][]Failure{}, nextID: 1000, gone: map[int64]bool{},
		msgs: map[int64]*Message{}, delay: map[string][]time.Duration{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// AddFile makes a file downloadable by getFile under id.
func (s *Server) AddFile(id string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[id] = file{path: "documents/" + id, data: data}
}

// Fail makes the next calls of method fail, one failure per call.
func (s *Server) Fail(method string, f ...Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[method] = append(s.fail[method], f...)
}

// AnswerAfter makes the next calls of method, one delay per call, slow:
// each is applied at once (the message posted or edited) and answered d
// later, or, with Late, only once the client has given up on it. A client
// that gives up first gets no answer, though the call took effect.
func (s *Server) AnswerAfter(method string, d ...time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay[method] = append(s.delay[method], d...)
}

// Messages returns the messages of chat as they stand, by id (the order
// they were posted in); a deleted one is left out.
func (s *Server) Messages(chat int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for id, m := range s.msgs {
		if m.Chat == chat && !s.gone[id] {
			out = append(out, *m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Delete marks a message deleted: editing it, or replying to it without
// allow_sending_without_reply, fails as Telegram fails.
func (s *Server) Delete(messageID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone[messageID] = true
}

// CutDownloads makes file downloads break off: the connection closes
// before the answer, as a dropped network does.
func (s *Server) CutDownloads() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut = true
}

// SetWebhookInfo sets what getWebhookInfo answers, URL included, as if
// the webhook had been set and Telegram had tried to deliver to it.
func (s *Server) SetWebhookInfo(w WebhookInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhook = w
}

// Queue adds an update for getUpdates.
func (s *Server) Queue(update []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.updates = append(s.updates, update)
}

// Calls returns the calls so far, of the named methods (all when none).
func (s *Server) Calls(methods ...string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if len(methods) == 0 || slices.Contains(methods, c.Method) {
			out = append(out, c)
		}
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"+Token+"/"); ok {
		s.download(w, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot"+Token+"/")
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"ok": false, "error_code": 401, "description": "Unauthorized"})
		return
	}
	c, err := readCall(r, rest)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + err.Error()})
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	var f *Failure
	if q := s.fail[c.Method]; len(q) > 0 {
		f, s.fail[c.Method] = &q[0], q[1:]
	}
	delay := time.Duration(0)
	if q := s.delay[c.Method]; len(q) > 0 && f == nil {
		delay, s.delay[c.Method] = q[0], q[1:]
	}
	s.mu.Unlock()
	if f != nil {
		body := map[string]any{"ok": false, "error_code": f.Code, "description": f.Description}
		if f.RetryAfter > 0 {
			body["parameters"] = map[string]any{"retry_after": f.RetryAfter}
		}
		writeJSON(w, f.Code, body)
		return
	}
	status, body := s.answer(c)
	if delay != 0 {
		wait(r, delay)
	}
	writeJSON(w, status, body)
}

// wait holds an answer for d, or, for Late, until the client gives up;
// either ends early when the client's connection closes.
func wait(r *http.Request, d time.Duration) {
	if d == Late {
		d = lateCap
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-t.C:
	}
}

// answer applies call c and returns the status and body to answer it with.
func (s *Server) answer(c Call) (int, map[string]any) {
	ok := func(result any) (int, map[string]any) {
		return http.StatusOK, map[string]any{"ok": true, "result": result}
	}
	bad := func(desc string) (int, map[string]any) {
		return http.StatusBadRequest, map[string]any{"ok": false, "error_code": 400, "description": "Bad Request: " + desc}
	}
	chat := c.Int("chat_id")
	if desc := overLimit(c); desc != "" {
		return bad(desc)
	}
	switch c.Method {
	case "sendMessage", "sendDocument":
		if rt := c.ReplyTo(); rt != 0 && s.isGone(rt) && !strings.Contains(c.Params["reply_parameters"], `"allow_sending_without_reply":true`) {
			return bad("message to be replied not found")
		}
		m := Message{Chat: chat, Text: c.Params["text"]}
		if c.Method == "sendDocument" {
			m = Message{Chat: chat, Doc: c.File, DocName: c.Name, Caption: c.Params["caption"]}
		}
		return ok(s.post(m))
	case "editMessageText":
		id := c.Int("message_id")
		if s.isGone(id) {
			return bad("message to edit not found")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		m := s.known(chat, id)
		switch {
		case m.Doc != nil:
			return bad("there is no text in the message to edit")
		case m.Text == c.Params["text"]:
			return bad("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
		}
		m.Text = c.Params["text"]
		return ok(m.result())
	case "editMessageMedia":
		id := c.Int("message_id")
		if s.isGone(id) {
			return bad("message to edit not found")
		}
		var media struct {
			Type    string `json:"type"`
			Media   string `json:"media"`
			Caption string `json:"caption"`
		}
		if err := json.Unmarshal([]byte(c.Params["media"]), &media); err != nil || media.Type != "document" {
			return bad("can't parse InputMedia: the fake takes a document")
		}
		if strings.TrimPrefix(media.Media, "attach://") != c.Name || c.File == nil {
			return bad("can't find the attached file")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		m := s.known(chat, id)
		m.Text, m.Doc, m.DocName, m.Caption = "", c.File, c.Name, media.Caption
		return ok(m.result())
	case "getFile":
		s.mu.Lock()
		f, found := s.files[c.Params["file_id"]]
		s.mu.Unlock()
		if !found {
			return bad("invalid file_id")
		}
		return ok(map[string]any{"file_id": c.Params["file_id"], "file_unique_id": "u" + c.Params["file_id"], "file_size": len(f.data), "file_path": f.path})
	case "getMe":
		return ok(map[string]any{"id": 123456789, "is_bot": true, "first_name": "Transcriber", "username": Username})
	case "answerCallbackQuery", "deleteMessage":
		return ok(true)
	case "setWebhook", "deleteWebhook":
		// The scripted delivery state goes with the old webhook; an empty
		// url, or deleteWebhook, removes it, as at Telegram.
		s.mu.Lock()
		s.webhook = WebhookInfo{URL: c.Params["url"]}
		s.mu.Unlock()
		return ok(true)
	case "getWebhookInfo":
		s.mu.Lock()
		w := s.webhook
		s.mu.Unlock()
		info := map[string]any{"url": w.URL, "has_custom_certificate": false, "pending_update_count": w.PendingUpdateCount}
		if w.LastErrorMessage != "" {
			info["last_error_date"] = w.LastErrorDate
			info["last_error_message"] = w.LastErrorMessage
		}
		return ok(info)
	case "getUpdates":
		s.mu.Lock()
		offset := c.Int("offset")
		var out []json.RawMessage
		for _, u := range s.updates {
			var id struct {
				UpdateID int64 `json:"update_id"`
			}
			_ = json.Unmarshal(u, &id)
			if id.UpdateID >= offset {
				out = append(out, u)
			}
		}
		s.mu.Unlock()
		if out == nil {
			out = []json.RawMessage{}
		}
		return ok(out)
	}
	return bad("method not found in the fake: " + c.Method)
}

// Telegram's length limits, which it counts in UTF-16 code units: text
// "1-4096 characters after entities parsing", a caption 0-1024.
const (
	maxText    = 4096
	maxCaption = 1024
)

// overLimit is Telegram's refusal of a text or caption over its limit;
// empty when the call is within them.
func overLimit(c Call) string {
	switch c.Method {
	case "sendMessage", "editMessageText":
		if len(utf16.Encode([]rune(c.Params["text"]))) > maxText {
			return "message is too long"
		}
	case "sendDocument":
		if len(utf16.Encode([]rune(c.Params["caption"]))) > maxCaption {
			return "message caption is too long"
		}
	}
	return ""
}

func (s *Server) isGone(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone[id]
}

// post gives m the next message id, keeps it, and returns it as the Bot
// API answers a sent message.
func (s *Server) post(m Message) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	m.ID = s.nextID
	s.msgs[m.ID] = &m
	return m.result()
}

// known returns the message id of chat, made as an empty text message
// when the bot did not post it here (a message of the test's own, as the
// one under a button). s.mu is held.
func (s *Server) known(chat, id int64) *Message {
	m, ok := s.msgs[id]
	if !ok {
		m = &Message{ID: id, Chat: chat}
		s.msgs[id] = m
	}
	return m
}

// result is m as the Bot API answers a message.
func (m Message) result() map[string]any {
	r := map[string]any{"message_id": m.ID, "date": 1, "chat": map[string]any{"id": m.Chat, "type": "private"}}
	if m.Doc != nil {
		r["document"] = map[string]any{"file_id": fmt.Sprintf("doc%d", m.ID), "file_unique_id": fmt.Sprintf("udoc%d", m.ID), "file_name": m.DocName}
		if m.Caption != "" {
			r["caption"] = m.Caption
		}
		return r
	}
	r["text"] = m.Text
	return r
}

func (s *Server) download(w http.ResponseWriter, path string) {
	s.mu.Lock()
	var data []byte
	for _, f := range s.files {
		if f.path == path {
			data = f.data
		}
	}
	s.mu.Unlock()
	if data == nil {
		http.NotFound(w, nil)
		return
	}
	s.mu.Lock()
	cut := s.cut
	s.mu.Unlock()
	if hj, ok := w.(http.Hijacker); ok && cut {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// readCall decodes a call's parameters from a multipart form (how the
// go-telegram/bot client sends every method), a URL-encoded form, or JSON.
func readCall(r *http.Request, method string) (Call, error) {
	c := Call{Method: method, Params: map[string]string{}}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "multipart/form-data":
		if err := r.ParseMultipartForm(64 << 20); errors.Is(err, io.EOF) {
			return c, nil // a method without parameters (getMe) sends an empty form
		} else if err != nil {
			return c, err
		}
		for k, v := range r.MultipartForm.Value {
			c.Params[k] = v[0]
		}
		for _, fhs := range r.MultipartForm.File {
			f, err := fhs[0].Open()
			if err != nil {
				return c, err
			}
			c.File, err = io.ReadAll(f)
			_ = f.Close()
			if err != nil {
				return c, err
			}
			c.Name = fhs[0].Filename
		}
	case "application/json":
		var m map[string]json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			return c, err
		}
		for k, v := range m {
			var str string
			if json.Unmarshal(v, &str) == nil {
				c.Params[k] = str
			} else {
				c.Params[k] = string(v)
			}
		}
	default:
		if err := r.ParseForm(); err != nil {
			return c, err
		}
		for k, v := range r.Form {
			c.Params[k] = v[0]
		}
	}
	return c, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Voice is an update with a voice message of the given file from user in
// their private chat (chat id = user id).
func Voice(updateID, user, messageID int64, fileID string, size int, langCode string) []byte {
	return []byte(fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1,`+
		`"from":{"id":%d,"is_bot":false,"first_name":"T","language_code":%q},`+
		`"chat":{"id":%d,"type":"private"},"voice":{"file_id":%q,"file_unique_id":"u%s","duration":4,"mime_type":"audio/ogg","file_size":%d}}}`,
		updateID, messageID, user, langCode, user, fileID, fileID, size))
}

// Video is an update with a video of the given size.
func Video(updateID, user, messageID int64, fileID string, size int64) []byte {
	return []byte(fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1,`+
		`"from":{"id":%d,"is_bot":false,"first_name":"T","language_code":"en"},`+
		`"chat":{"id":%d,"type":"private"},"video":{"file_id":%q,"file_unique_id":"u%s","width":64,"height":48,"duration":4,"mime_type":"video/mp4","file_name":"clip.mp4","file_size":%d}}}`,
		updateID, messageID, user, user, fileID, fileID, size))
}

// Text is an update with a text message (a command) in a chat of chatType.
func Text(updateID, user, chat, messageID int64, chatType, text string) []byte {
	b, _ := json.Marshal(text)
	return []byte(fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1,`+
		`"from":{"id":%d,"is_bot":false,"first_name":"T","language_code":"en"},`+
		`"chat":{"id":%d,"type":%q},"text":%s}}`, updateID, messageID, user, chat, chatType, b))
}

// Button is an update with a press of an inline button with data under
// message messageID in chat, a private chat.
func Button(updateID, user, chat, messageID int64, data string) []byte {
	return ButtonIn(updateID, user, chat, messageID, "private", "", data)
}

// ButtonIn is Button in a chat of chatType, pressed by a user whose
// Telegram speaks langCode ("" for none).
func ButtonIn(updateID, user, chat, messageID int64, chatType, langCode, data string) []byte {
	return []byte(fmt.Sprintf(`{"update_id":%d,"callback_query":{"id":"cb%d","from":{"id":%d,"is_bot":false,"first_name":"T","language_code":%q},`+
		`"chat_instance":"ci","data":%q,"message":{"message_id":%d,"date":1,"chat":{"id":%d,"type":%q},"text":"?"}}}`,
		updateID, updateID, user, langCode, data, messageID, chat, chatType))
}

// Document is an update with a document of type mimeType from user in
// their private chat; size 0 leaves file_size out, as Telegram may.
func Document(updateID, user, messageID int64, fileID, mimeType string, size int64) []byte {
	return NamedDocument(updateID, user, messageID, fileID, mimeType, "talk.mp4", size)
}

// NamedDocument is Document with the file name the sender gave it.
func NamedDocument(updateID, user, messageID int64, fileID, mimeType, name string, size int64) []byte {
	sizeField := ""
	if size != 0 {
		sizeField = fmt.Sprintf(`,"file_size":%d`, size)
	}
	nameJSON, _ := json.Marshal(name)
	return []byte(fmt.Sprintf(`{"update_id":%d,"message":{"message_id":%d,"date":1,`+
		`"from":{"id":%d,"is_bot":false,"first_name":"T","language_code":"en"},`+
		`"chat":{"id":%d,"type":"private"},"document":{"file_id":%q,"file_unique_id":"u%s","file_name":%s,"mime_type":%q%s}}}`,
		updateID, messageID, user, user, fileID, fileID, nameJSON, mimeType, sizeField))
}
