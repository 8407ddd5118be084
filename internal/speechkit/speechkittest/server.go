// Package speechkittest is an in-process fake of SpeechKit's asynchronous
// recognition: a real gRPC server, in plaintext, implementing the real
// generated services (speechkit.stt.v3.AsyncRecognizer and
// yandex.cloud.operation.OperationService), so the adapter is tested over the
// wire with the same protos it uses against Yandex Cloud.
//
// A test scripts what each RecognizeFile leads to (Server.Script, Plan) and
// reads what the fake saw: the requests, the status checks per operation,
// the deletes and the metadata of every call. The same fake answers
// synchronous recognition, SpeechKit's REST API v1, over HTTP (sync.go:
// SyncHandler, SyncScript, SyncPlan, SyncCalls). The core (New, Serve,
// SyncHandler, Stop) needs no testing.TB, so the local stack can run the
// fake in its own process; Start is the helper for tests, and serves both.
package speechkittest

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"sync"
	"testing"

	stt "github.com/yandex-cloud/go-genproto/yandex/cloud/ai/stt/v3"
	"github.com/yandex-cloud/go-genproto/yandex/cloud/operation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"

	"transcriber/internal/speechkit"
)

// TestKey is the API key of Server.Config.
const TestKey = "speechkit-test-api-key"

// maxMessage lets inline audio up to speechkit.MaxInlineBytes through
// (gRPC servers accept 4 MB by default).
const maxMessage = speechkit.MaxInlineBytes + 1<<20

// Call is the metadata one call carried.
type Call struct {
	Method        string // full gRPC method, e.g. "/speechkit.stt.v3.AsyncRecognizer/RecognizeFile"
	Authorization string
	FolderID      string // x-folder-id
	RequestID     string // x-client-request-id
}

type fakeOp struct {
	plan    Plan
	checks  int // Get calls so far
	deleted bool
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	grpc *grpc.Server
	http *httptest.Server // synchronous recognition, once Start has run
	sync syncFake

	mu       sync.Mutex
	lis      net.Listener
	script   func(*stt.RecognizeFileRequest) Plan
	down     func() bool
	ops      map[string]*fakeOp
	order    []string // operation ids in creation order
	requests []*stt.RecognizeFileRequest
	calls    []Call
	deletes  []string
}

// New returns a fake that is not serving yet; see Serve.
func New() *Server { return newServer(maxMessage) }

func newServer(maxRecv int) *Server {
	s := &Server{ops: map[string]*fakeOp{}}
	s.grpc = grpc.NewServer(
		grpc.MaxRecvMsgSize(maxRecv),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := s.record(ctx, info.FullMethod); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := s.record(ss.Context(), info.FullMethod); err != nil {
				return err
			}
			return h(srv, ss)
		}),
	)
	stt.RegisterAsyncRecognizerServer(s.grpc, recognizer{s: s})
	operation.RegisterOperationServiceServer(s.grpc, operations{s: s})
	return s
}

// Start runs a fake on 127.0.0.1 for the length of the test: gRPC at
// Addr, synchronous recognition at SyncURL.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return start(tb, New())
}

// StartReceivingAtMost is Start with a fake that takes requests of at most
// maxRecv bytes, as a recognizer with a smaller limit than the one
// SpeechKit documents would: a larger request is refused by gRPC itself,
// RESOURCE_EXHAUSTED "grpc: received message larger than max (N vs. M)",
// before any handler or recording sees it.
func StartReceivingAtMost(tb testing.TB, maxRecv int) *Server {
	tb.Helper()
	return start(tb, newServer(maxRecv))
}

func start(tb testing.TB, s *Server) *Server {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("speechkittest: listen: %v", err)
	}
	s.setListener(lis)
	go func() { _ = s.Serve(lis) }()
	hs := httptest.NewServer(s.SyncHandler())
	s.sync.mu.Lock()
	s.http, s.sync.url = hs, hs.URL+SyncPath
	s.sync.mu.Unlock()
	tb.Cleanup(s.Stop)
	return s
}

// Serve answers calls on lis until Stop; it returns what grpc.Server.Serve
// returns.
func (s *Server) Serve(lis net.Listener) error {
	s.setListener(lis)
	return s.grpc.Serve(lis)
}

// Stop closes the listeners and every connection at once; a synchronous
// answer still held is given up.
func (s *Server) Stop() {
	s.grpc.Stop()
	s.sync.mu.Lock()
	hs := s.http
	s.sync.mu.Unlock()
	if hs != nil {
		hs.CloseClientConnections()
		hs.Close()
	}
}

func (s *Server) setListener(lis net.Listener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lis = lis
}

// Addr is the address the fake listens on ("" before Serve).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lis == nil {
		return ""
	}
	return s.lis.Addr().String()
}

// Config is a client configuration for this fake: plaintext, both gRPC
// endpoints at Addr, synchronous recognition at SyncURL, API key TestKey.
func (s *Server) Config() speechkit.Config {
	addr := s.Addr()
	return speechkit.Config{Endpoint: addr, OperationEndpoint: addr, SyncURL: s.SyncURL(), APIKey: TestKey, Insecure: true}
}

// Script sets what each later RecognizeFile leads to; fn sees the request.
// Without a script every request gets PlanFor(request): DefaultPlan for a
// request without speaker labeling or a summary.
func (s *Server) Script(fn func(req *stt.RecognizeFileRequest) Plan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = fn
}

// Down makes every gRPC call answer UNAVAILABLE, as SpeechKit does in an
// outage, while down reports true (asked at each call; nil: never down).
// A call refused so is in Calls, not in RecognizeCalls or Requests.
func (s *Server) Down(down func() bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// RecognizeCalls is the number of RecognizeFile calls, failed ones included.
func (s *Server) RecognizeCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// Requests are copies of the RecognizeFile requests, in order.
func (s *Server) Requests() []*stt.RecognizeFileRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*stt.RecognizeFileRequest, len(s.requests))
	for i, r := range s.requests {
		out[i] = proto.Clone(r).(*stt.RecognizeFileRequest)
	}
	return out
}

// Operations are the ids of the operations made, in order.
func (s *Server) Operations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.order...)
}

// GetCalls is the number of OperationService.Get calls for an operation.
func (s *Server) GetCalls(operationID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if op, ok := s.ops[operationID]; ok {
		return op.checks
	}
	return 0
}

// Deletes are the operation ids of the DeleteRecognition calls, in order,
// FinishAll makes every operation made so far done at its next check, as if
// the recognizer caught up (a test that stops and restarts a client).
func (s *Server) FinishAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, op := range s.ops {
		op.plan.PendingChecks = 0
	}
}

// unknown ones included.
func (s *Server) Deletes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.deletes...)
}

// Calls is the metadata of every call, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// record keeps a call's metadata and, like SpeechKit, refuses a call with no
// credentials.
func (s *Server) record(ctx context.Context, method string) error {
	md, _ := metadata.FromIncomingContext(ctx)
	first := func(key string) string {
		if v := md.Get(key); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	c := Call{
		Method:        method,
		Authorization: first("authorization"),
		FolderID:      first("x-folder-id"),
		RequestID:     first("x-client-request-id"),
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	down := s.down
	s.mu.Unlock()
	if c.Authorization == "" {
		return status.Error(codes.Unauthenticated, "no authorization metadata")
	}
	if down != nil && down() {
		return status.Error(codes.Unavailable, "the fake is down")
	}
	return nil
}

type recognizer struct {
	stt.UnimplementedAsyncRecognizerServer
	s *Server
}

func (r recognizer) RecognizeFile(_ context.Context, req *stt.RecognizeFileRequest) (*operation.Operation, error) {
	s := r.s
	s.mu.Lock()
	s.requests = append(s.requests, proto.Clone(req).(*stt.RecognizeFileRequest))
	script := s.script
	s.mu.Unlock()

	plan := PlanFor(req)
	if script != nil {
		plan = script(req) // outside the lock: the script may call the Server
	}
	if plan.Err != nil {
		return nil, plan.Err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("fakeop%014d", len(s.order)+1)
	s.ops[id] = &fakeOp{plan: plan}
	s.order = append(s.order, id)
	return &operation.Operation{Id: id, Description: "STT v3 async recognition"}, nil
}

func (r recognizer) GetRecognition(req *stt.GetRecognitionRequest, stream grpc.ServerStreamingServer[stt.StreamingResponse]) error {
	s := r.s
	s.mu.Lock()
	op, ok := s.ops[req.GetOperationId()]
	var plan Plan
	var done bool
	if ok {
		plan = op.plan
		done = plan.PendingChecks == 0 || op.checks > plan.PendingChecks
		ok = !op.deleted
	}
	s.mu.Unlock()
	switch {
	case !ok:
		return status.Error(codes.NotFound, "recognition not found")
	case !done:
		// What SpeechKit answers before the operation is done is not
		// documented; the fake refuses, so a caller that skips Check shows.
		return status.Error(codes.FailedPrecondition, "operation is not done")
	case plan.OpErr != nil:
		return plan.OpErr.Err()
	}
	for _, m := range plan.messages() {
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	return plan.ResultErr
}

func (r recognizer) DeleteRecognition(_ context.Context, req *stt.DeleteRecognitionRequest) (*emptypb.Empty, error) {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deletes = append(s.deletes, req.GetOperationId())
	op, ok := s.ops[req.GetOperationId()]
	if !ok || op.deleted {
		return nil, status.Error(codes.NotFound, "recognition not found")
	}
	op.deleted = true
	return &emptypb.Empty{}, nil
}

type operations struct {
	operation.UnimplementedOperationServiceServer
	s *Server
}

func (o operations) Get(_ context.Context, req *operation.GetOperationRequest) (*operation.Operation, error) {
	s := o.s
	s.mu.Lock()
	defer s.mu.Unlock()
	op, ok := s.ops[req.GetOperationId()]
	if !ok {
		return nil, status.Error(codes.NotFound, "operation not found")
	}
	op.checks++
	if op.plan.CheckErr != nil {
		return nil, op.plan.CheckErr
	}
	res := &operation.Operation{Id: req.GetOperationId(), Description: "STT v3 async recognition"}
	if op.checks <= op.plan.PendingChecks {
		return res, nil
	}
	res.Done = true
	if op.plan.OpErr != nil {
		res.Result = &operation.Operation_Error{Error: op.plan.OpErr.Proto()}
		return res, nil
	}
	empty, err := anypb.New(&emptypb.Empty{})
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	res.Result = &operation.Operation_Response{Response: empty}
	return res, nil
}
